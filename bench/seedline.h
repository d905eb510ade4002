/* seedline.h - what bench-coswitch.c and bench-server.c share (public API only): the run of
 * T threads, and the result line the seeds' seedclaim.c prints, so that
 * bench/bench-seedclaim.sh reads the three programs alike:
 *   switches S per_sec R cpu_s U wall_s X traced B recorded E dropped D
 * (U: this process's CPU time; E, D: the probe's own counts, corotracer_stats). */
#ifndef SEEDLINE_H
#define SEEDLINE_H
#include <corotracer.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

/* Where the threads leave the result of their work, so the compiler keeps
 * it; atomic, as several threads write it. */
static _Atomic unsigned long long seed_sink;
static inline void seed_keep(unsigned long long x) {
  atomic_fetch_xor_explicit(&seed_sink, x, memory_order_relaxed);
}

/* CLOCK_MONOTONIC in seconds. */
static inline double seed_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Sleep for secs (the timed run's length). */
static inline void seed_sleep(double secs) {
  struct timespec d = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
  nanosleep(&d, NULL);
}

/* Print the result line: n units (switches, or requests) in the wall time
 * since t0, with this process's CPU time and the probe's counts. */
static inline void seed_print(long n, double t0) {
  double wall = seed_now() - t0;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
  uint64_t rec = 0, drop = 0;
  corotracer_stats(&rec, &drop);
  printf("switches %ld per_sec %.0f cpu_s %.3f wall_s %.3f traced %d recorded %llu dropped %llu\n",
         n, (double)n / wall, cpu, wall, corotracer_enabled(), (unsigned long long)rec,
         (unsigned long long)drop);
}

#define SEED_MAX_THREADS 64

/* Run fn on t threads (1..SEED_MAX_THREADS, each given its index), then
 * print the result line of *total units: corotracer_init, the threads
 * started, after secs *stop set (secs 0: the threads stop by themselves),
 * the threads joined. 0, or 1 when a thread could not start (one line on
 * stderr naming the program; the threads started are stopped and joined). */
static inline int seed_run(const char *name, int t, void *(*fn)(void *), double secs,
                           atomic_int *stop, atomic_long *total) {
  pthread_t th[SEED_MAX_THREADS];
  int started = 0, rc = 0;
  corotracer_init();
  double t0 = seed_now();
  for (; started < t; started++) {
    if (pthread_create(&th[started], NULL, fn, (void *)(intptr_t)started) != 0) {
      fprintf(stderr, "%s: pthread_create failed\n", name);
      rc = 1;
      break;
    }
  }
  if (secs > 0 && !rc)
    seed_sleep(secs);
  if (secs > 0 || rc)
    atomic_store(stop, 1);
  for (int i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  if (!rc)
    seed_print(atomic_load(total), t0);
  return rc;
}
#endif
