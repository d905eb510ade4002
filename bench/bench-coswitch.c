/* bench-coswitch.c - the seeds' benchmark loop (../shared/bench/seedclaim.c) in the shapes
 * seedclaim cannot run: any number of coroutines per thread (seedclaim stops at 256), a random
 * order among them (each next coroutine drawn at random: the cache-unfriendly shape of issue
 * #32, 1,000 coroutines on 2 threads), and a fixed count of switches instead of a duration (the
 * back-to-back burst: one thread, 5 10^6 switches, no work). Built against the public API only,
 * as a user builds (bench/build.mk). T threads, each switching among C coroutines with
 * corotracer_switch (runnable), W iterations of arithmetic between switches. Prints the line
 * seedclaim prints (seedline.h):
 *   switches S per_sec R cpu_s U wall_s X traced B recorded E dropped D
 * Usage: bench-coswitch [-r] [-n SWITCHES] T C W [SECONDS]
 *   -r  random order (default round-robin)
 *   -n  each thread stops after SWITCHES switches (default: after SECONDS, 3) */
#include <corotracer.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "seedline.h"

static int ncos, random_order;
static long work, count;
static atomic_int stop;
static atomic_long total;

/* The next coroutine after cur: the following one, or one drawn at random
 * (xorshift64, never cur itself, so every switch changes coroutine). */
static int next_co(int cur, uint64_t *rng) {
  if (!random_order || ncos < 2)
    return cur + 1 == ncos ? 0 : cur + 1;
  *rng ^= *rng << 13;
  *rng ^= *rng >> 7;
  *rng ^= *rng << 17;
  int n = (int)(*rng % (uint64_t)(ncos - 1));
  return n >= cur ? n + 1 : n;
}

/* One thread: its C coroutines, switched until stop (or count switches),
 * then all exited and destroyed. arg: the thread's index. */
static void *run(void *arg) {
  long index = (long)(intptr_t)arg;
  corotracer_co **co = calloc((size_t)ncos, sizeof *co);
  if (!co)
    return NULL;
  for (int i = 0; i < ncos; i++)
    co[i] = corotracer_create((uint64_t)(index * 1000000 + i + 1), "task", NULL);
  corotracer_resume(co[0]);
  uint64_t rng = 0x9e3779b97f4a7c15ull + (uint64_t)index;
  unsigned long long x = 1;
  long n = 0;
  int cur = 0;
  /* Batches of 256 as in seedclaim: the stop flag is read once a batch. */
  while (count ? n < count : !atomic_load_explicit(&stop, memory_order_relaxed)) {
    for (int k = 0; k < 256 && (!count || n < count); k++) {
      for (long w = 0; w < work; w++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
      int next = next_co(cur, &rng);
      corotracer_switch(co[cur], NULL, COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE,
                        co[next]);
      cur = next;
      n++;
    }
  }
  corotracer_suspend(co[cur], NULL, COROTRACER_WAIT_NONE, 0);
  for (int i = 0; i < ncos; i++) {
    corotracer_exit(co[i], NULL);
    corotracer_destroy(co[i]);
  }
  free(co);
  seed_keep(x);
  atomic_fetch_add(&total, n);
  return NULL;
}

int main(int argc, char **argv) {
  int opt;
  while ((opt = getopt(argc, argv, "rn:")) != -1) {
    if (opt == 'r')
      random_order = 1;
    else if (opt == 'n')
      count = atol(optarg);
    else
      goto usage;
  }
  if (argc - optind < 3 || argc - optind > 4)
    goto usage;
  int t = atoi(argv[optind]);
  ncos = atoi(argv[optind + 1]);
  work = atol(argv[optind + 2]);
  double secs = argc - optind > 3 ? atof(argv[optind + 3]) : 3;
  if (t < 1 || t > SEED_MAX_THREADS || ncos < 1 || work < 0 || count < 0 || secs <= 0)
    goto usage;
  return seed_run("bench-coswitch", t, run, count ? 0 : secs, &stop, &total);
usage:
  fprintf(stderr, "usage: bench-coswitch [-r] [-n SWITCHES] T C W [SECONDS]\n");
  return 2;
}
