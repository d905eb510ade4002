/* seedline.h - what bench-coswitch.c and bench-server.c share (public API only): the clock,
 * the run's end, and the result line the seeds' seedclaim.c prints, so that
 * bench/bench-seedclaim.sh reads the three programs alike:
 *   switches S per_sec R cpu_s U wall_s X traced B recorded E dropped D
 * (U: this process's CPU time; E, D: the probe's own counts, corotracer_stats). */
#ifndef SEEDLINE_H
#define SEEDLINE_H
#include <corotracer.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

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
#endif
