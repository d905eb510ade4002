/* bench-server.c - a server's shape for the tracer's cost (issue #32): a coroutine per
 * request, as the demo server makes them, instead of seedclaim's long-lived coroutines. T
 * threads, each a scheduler keeping R requests in flight; each turn takes one connection at
 * random: an idle one gets a new request (create, resume, W iterations of work, suspend
 * waiting on the connection's fd, COROTRACER_WAIT_FD), a waiting one is ready (wake, resume, W
 * more, exit, destroy). A request is 7 events: create, resume, suspend, wake, resume, exit,
 * destroy. The fds are the connections' numbers, not opened: the benchmark measures the
 * tracer, not the kernel. Built against the public API only (bench/build.mk). Prints the
 * line seedclaim prints (seedline.h), its "switches" counting requests.
 * Usage: bench-server T R W [SECONDS] */
#include <corotracer.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "seedline.h"

#define FD_BASE 16 /* connection i waits on fd FD_BASE + i */

static int inflight;
static long work;
static atomic_int stop;
static atomic_long total;

/* W iterations of arithmetic, the request's work, on x. */
static unsigned long long serve(unsigned long long x) {
  for (long w = 0; w < work; w++)
    x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

/* One scheduler thread until stop; the requests still waiting then are
 * finished (woken, exited, destroyed) but not counted. arg: the thread's index. */
static void *run(void *arg) {
  long index = (long)(intptr_t)arg;
  corotracer_co **conn = calloc((size_t)inflight, sizeof *conn);
  char *busy = calloc((size_t)inflight, 1);
  if (!conn || !busy)
    goto out;
  uint64_t rng = 0x9e3779b97f4a7c15ull + (uint64_t)index, id = (uint64_t)index << 40;
  unsigned long long x = 1;
  long n = 0;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    for (int k = 0; k < 64; k++) {
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      int i = (int)(rng % (uint64_t)inflight);
      if (!busy[i]) {
        conn[i] = corotracer_create(++id, "request", NULL);
        corotracer_resume(conn[i]);
        x = serve(x);
        corotracer_suspend(conn[i], NULL, COROTRACER_WAIT_FD, (uint64_t)(FD_BASE + i));
        busy[i] = 1;
      } else {
        corotracer_wake(conn[i], NULL);
        corotracer_resume(conn[i]);
        x = serve(x);
        corotracer_exit(conn[i], NULL);
        corotracer_destroy(conn[i]);
        busy[i] = 0;
        n++;
      }
    }
  }
  for (int i = 0; i < inflight; i++) {
    if (busy[i]) {
      corotracer_wake(conn[i], NULL);
      corotracer_resume(conn[i]);
      corotracer_exit(conn[i], NULL);
      corotracer_destroy(conn[i]);
    }
  }
  seed_keep(x);
  atomic_fetch_add(&total, n);
out:
  free(conn);
  free(busy);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: bench-server T R W [SECONDS]\n");
    return 2;
  }
  int t = atoi(argv[1]);
  inflight = atoi(argv[2]);
  work = atol(argv[3]);
  double secs = argc > 4 ? atof(argv[4]) : 3;
  if (t < 1 || t > SEED_MAX_THREADS || inflight < 1 || work < 0 || secs <= 0) {
    fprintf(stderr, "usage: bench-server T R W [SECONDS]\n");
    return 2;
  }
  return seed_run("bench-server", t, run, secs, &stop, &total);
}
