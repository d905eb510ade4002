/* sdk-writer.c - a target for the v2 acceptance tests, written with the
 * public SDK only (include/corotracer.h), as a user would.
 *
 *   sdk-writer spaced THREADS EVENTS GAP_NS OUT
 *       THREADS threads, one coroutine each, EVENTS events per coroutine
 *       (create, suspends and resumes, destroy), at least GAP_NS of busy
 *       waiting between two events of a thread (no catch-up burst after the
 *       thread was preempted: the spacing is a floor, not a schedule).
 *   sdk-writer churn COROS OUT
 *       COROS short-lived coroutines one after the other on one thread:
 *       create, resume, suspend (exit), destroy (4 events each).
 *
 *   sdk-writer stall EVENTS DIR
 *       One coroutine; DIR/ready ("pid P") once traced, then waits for DIR/go
 *       (the caller stops or kills the engine meanwhile), then EVENTS events
 *       back to back (they fill the ring, a lossless wait times out), then
 *       EVENTS more, timed: DIR/ns gets "ns N" (N ns per event of those;
 *       bench/bench-stall.sh).
 *
 *   sdk-writer steps EVENTS STEPS DIR
 *       One coroutine; DIR/ready ("pid P") once traced; then for each step
 *       S of 1..STEPS: waits for DIR/go.S, writes EVENTS events back to back,
 *       creates DIR/done.S (the caller stops and resumes the engine between
 *       steps). DIR/written gets the events recorded, destroy included.
 *
 *   sdk-writer active COROS ACTIVE SECS DIR
 *       COROS coroutines alive; every ms ACTIVE of them resume and suspend
 *       (2 x ACTIVE events per ms, the thread sleeps in between) for SECS;
 *       DIR/ready ("pid P") once all are created (bench/bench-active.sh).
 *
 *   sdk-writer server THREADS INFLIGHT REQUESTS PAUSE_US OUT
 *       bench/bench-server.c's shape: THREADS threads, each keeping INFLIGHT
 *       requests in flight (at most THREADS x INFLIGHT coroutines alive), each
 *       turn taking one at random: an idle one gets a new request (create,
 *       resume, suspend on an fd), a waiting one finishes (wake, resume, exit,
 *       destroy); REQUESTS requests a thread, then those still waiting finish.
 *       PAUSE_US of sleep after each finished request (0: none). OUT gets
 *       "requests N recorded R dropped D" (corotracer_stats once all threads
 *       are done: D is every event the probe dropped).
 *
 *   sdk-writer parked EVENTS SECS
 *       A flight window's snapshot (tests/test-flight.sh): coroutine "lost"
 *       parks on fd 7 and is never woken; "woken" parks on a pointer and a
 *       thread wakes it; then "busy" writes EVENTS events back to back (they
 *       push the first two out of a small window), the thread sleeps until
 *       SECS after the first park, and "woken" runs, returns and is destroyed.
 *
 *   sdk-writer switch THREADS COROS ROUNDS OUT
 *       THREADS threads, each with COROS coroutines handed the thread in
 *       turn by corotracer_switch for ROUNDS rounds (a scheduler's yields;
 *       every 5th a wait on an fd, every 11th on a pointer, every 13th on a
 *       coroutine, each then woken by the next coroutine), then each
 *       coroutine returns and is destroyed (tests/test-ctrace-switch.sh).
 *
 *   sdk-writer yield THREADS COROS ROUNDS OUT
 *       The same, but only every 97th switch waits (on an fd), the others
 *       are yields: long runs of a scheduler's hot switches (packs under
 *       corotracer run --pack, tests/test-pack-roundtrip.sh).
 *
 *   sdk-writer migrate THREADS COROS ROUNDS OUT
 *       As yield but without waits, and one more coroutine handed from
 *       thread to thread (a work-stealing scheduler's): at the start of
 *       round j thread j % THREADS waits for its turn, runs it between two
 *       of its own, and passes it on, woken by the coroutine it switched to
 *       (a standalone wake, in the pack). Every
 *       switch hot, at one site: under corotracer run --pack the coroutine
 *       leaves one thread's open pack and is resumed in another's
 *       (docs/ROUTE1.md "Latency", tests/test-pack-roundtrip.sh).
 *
 *   sdk-writer handoff THREADS COROS ROUNDS OUT
 *       As migrate, but the baton is resumed by a switch with a wait on an
 *       fd (a record, and its wake) and suspended by a hot switch: under
 *       corotracer run --pack the thread that takes the baton publishes its
 *       resume at once, while the baton's suspend before it sits in the
 *       previous thread's open pack, which stays open while that thread
 *       sleeps 60 ms after its turn (an untraced blocking call; past the
 *       engine's 50 ms flush interval, so passes end chunks): the pass
 *       bound, docs/ROUTE1.md "Latency", tests/test-pack-bound.sh.
 *
 *   sdk-writer block COROS SWITCHES DIR
 *       A thread whose coroutine blocks in an untraced call right after a
 *       scheduler's yields (docs/ROUTE1.md "Latency"): COROS coroutines,
 *       SWITCHES hot switches among them, DIR/ready ("pid P"), then the
 *       thread sleeps, its last switches in an open pack under corotracer
 *       run --pack (tests/test-pack-open.sh), until DIR/go appears: then
 *       SWITCHES more, and each coroutine returns and is destroyed.

 *
 * OUT gets "written N": the events the SDK was asked to record (all of them
 * when no coroutine was refused a station). Exit 3 when not traced. */
#include <corotracer.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctlib.h"
#include "rnd.h"

struct targ {
  uint64_t events, gap, id;
  uint64_t written;
};

static void *spaced(void *arg) {
  struct targ *a = arg;
  corotracer_co *co = corotracer_create(a->id, "spaced", NULL);
  if (!co)
    return NULL;
  a->written = 1;
  for (uint64_t k = 1; k + 1 < a->events; k++, a->written++) {
    if (a->gap) {
      uint64_t until = ct_now_ns() + a->gap;
      while (ct_now_ns() < until) {
      }
    }
    if (k % 2)
      corotracer_suspend(co, NULL, COROTRACER_WAIT_NONE, 0);
    else
      corotracer_resume(co);
  }
  corotracer_destroy(co);
  a->written++;
  return NULL;
}

struct sarg {
  uint64_t inflight, requests, pause_us, seed;
};

/* A waiting request finishes: wake, resume, exit, destroy. */
static void finish(corotracer_co *co) {
  corotracer_wake(co, NULL);
  corotracer_resume(co);
  corotracer_exit(co, NULL);
  corotracer_destroy(co);
}

/* One server thread (see the top). */
static void *server(void *arg) {
  const struct sarg *a = arg;
  corotracer_co **conn = calloc(a->inflight, sizeof *conn);
  char *busy = calloc(a->inflight, 1);
  if (!conn || !busy)
    ct_die("out of memory");
  uint64_t rng = a->seed, done = 0;
  while (done < a->requests) {
    uint64_t i = ct_rnd(&rng) % a->inflight;
    if (!busy[i]) {
      conn[i] = corotracer_create(0, "request", NULL);
      corotracer_resume(conn[i]);
      corotracer_suspend(conn[i], NULL, COROTRACER_WAIT_FD, 16 + i);
      busy[i] = 1;
      continue;
    }
    finish(conn[i]);
    busy[i] = 0;
    done++;
    if (a->pause_us)
      usleep((useconds_t)a->pause_us);
  }
  for (uint64_t i = 0; i < a->inflight; i++)
    if (busy[i])
      finish(conn[i]);
  free(conn);
  free(busy);
  return NULL;
}

/* THREADS server threads; their totals and the probe's counts to out. */
static void servers(int n, const struct sarg *a, const char *out) {
  if (n < 1 || n > 64 || a->inflight < 1)
    ct_die("THREADS must be 1..64, INFLIGHT at least 1");
  pthread_t t[64];
  struct sarg args[64];
  for (int k = 0; k < n; k++) {
    args[k] = *a;
    args[k].seed = 0x9e3779b97f4a7c15ull + (uint64_t)k;
    if (pthread_create(&t[k], NULL, server, &args[k]))
      ct_die("pthread_create");
  }
  for (int k = 0; k < n; k++)
    pthread_join(t[k], NULL);
  uint64_t rec = 0, drop = 0;
  corotracer_stats(&rec, &drop);
  FILE *f = fopen(out, "we");
  if (!f ||
      fprintf(f, "requests %llu recorded %llu dropped %llu\n",
              (unsigned long long)((uint64_t)n * a->requests), (unsigned long long)rec,
              (unsigned long long)drop) < 0 ||
      fclose(f))
    ct_die("%s: %s", out, strerror(errno));
}

/* COROS alive, ACTIVE of them busy every ms, for SECS. */
static uint64_t active(uint64_t coros, uint64_t act, double secs, const char *dir) {
  corotracer_co **co = calloc(coros, sizeof *co);
  if (!co)
    ct_die("out of memory");
  for (uint64_t k = 0; k < coros; k++)
    co[k] = corotracer_create(0, NULL, NULL);
  char path[4096], tmp[4096];
  snprintf(path, sizeof path, "%s/ready", dir);
  snprintf(tmp, sizeof tmp, "%s/ready.tmp", dir);
  FILE *f = fopen(tmp, "we");
  if (!f || fprintf(f, "pid %ld\n", (long)getpid()) < 0 || fclose(f) || rename(tmp, path))
    ct_die("%s: %s", path, strerror(errno));
  uint64_t written = 0, end = ct_now_ns() + (uint64_t)(secs * 1e9);
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  while (ct_now_ns() < end) {
    for (uint64_t k = 0; k < act && k < coros; k++) {
      corotracer_resume(co[k]);
      corotracer_suspend(co[k], NULL, COROTRACER_WAIT_NONE, 0);
      written += 2;
    }
    next.tv_nsec += 1000000;
    if (next.tv_nsec >= 1000000000) {
      next.tv_sec++;
      next.tv_nsec -= 1000000000;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR) {
    }
  }
  return written;
}

/* DIR/NAME holding the line "KEY V": written aside, then renamed (a reader sees
 * all of it or nothing). */
static void put_file(const char *dir, const char *name, const char *key, uint64_t v) {
  char path[4096], tmp[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s/%s.tmp", dir, name);
  FILE *f = fopen(tmp, "we");
  if (!f || fprintf(f, "%s %llu\n", key, (unsigned long long)v) < 0 || fclose(f) ||
      rename(tmp, path))
    ct_die("%s: %s", path, strerror(errno));
}

/* EVENTS back to back after DIR/go appears; ns per event to DIR/ns. */
static void stall(uint64_t events, const char *dir) {
  corotracer_co *co = corotracer_create(1, "stall", NULL);
  if (!co)
    ct_die("not traced");
  put_file(dir, "ready", "pid", (uint64_t)getpid());
  char path[4096], tmp[4096];
  snprintf(path, sizeof path, "%s/go", dir);
  while (access(path, F_OK) != 0)
    usleep(1000);
  uint64_t t0 = 0;
  for (int pass = 0; pass < 2; pass++) {
    t0 = ct_now_ns(); /* the second pass is timed: the first filled the ring and timed out */
    for (uint64_t k = 0; k + 1 < events; k += 2) {
      corotracer_suspend(co, NULL, COROTRACER_WAIT_NONE, 0);
      corotracer_resume(co);
    }
  }
  uint64_t ns = ct_now_ns() - t0;
  snprintf(path, sizeof path, "%s/ns", dir);
  snprintf(tmp, sizeof tmp, "%s/ns.tmp", dir);
  FILE *f = fopen(tmp, "we");
  if (!f || fprintf(f, "ns %.2f\n", (double)ns / (double)(events ? events : 1)) < 0 || fclose(f) ||
      rename(tmp, path))
    ct_die("%s: %s", path, strerror(errno));
}

/* EVENTS back to back at each of STEPS go files (see the top). */
static void steps(uint64_t events, unsigned nsteps, const char *dir) {
  corotracer_co *co = corotracer_create(1, "steps", NULL);
  if (!co)
    ct_die("not traced");
  put_file(dir, "ready", "pid", (uint64_t)getpid());
  uint64_t written = 1;
  for (unsigned s = 1; s <= nsteps; s++) {
    char path[4096], name[32];
    snprintf(path, sizeof path, "%s/go.%u", dir, s);
    while (access(path, F_OK) != 0)
      usleep(1000);
    for (uint64_t k = 0; k < events; k++, written++) {
      if (written % 2)
        corotracer_suspend(co, NULL, COROTRACER_WAIT_NONE, 0);
      else
        corotracer_resume(co);
    }
    snprintf(name, sizeof name, "done.%u", s);
    put_file(dir, name, "step", s);
  }
  corotracer_destroy(co);
  put_file(dir, "written", "written", written + 1);
}

/* The snapshot's story (see the top). */
static void parked(uint64_t events, double secs) {
  uint64_t t0 = ct_now_ns();
  corotracer_co *lost = corotracer_create(1001, "lost", NULL);
  corotracer_co *woken = corotracer_create(1002, "woken", NULL);
  corotracer_co *busy = corotracer_create(1003, "busy", NULL);
  if (!lost || !woken || !busy)
    ct_die("not traced");
  corotracer_resume(lost);
  corotracer_suspend(lost, NULL, COROTRACER_WAIT_FD, 7);
  corotracer_resume(woken);
  corotracer_suspend(woken, NULL, COROTRACER_WAIT_PTR, 0x1234);
  corotracer_wake(woken, NULL);
  for (uint64_t k = 0; k + 1 < events; k += 2) {
    corotracer_resume(busy);
    corotracer_suspend(busy, NULL, COROTRACER_WAIT_NONE, 0);
  }
  uint64_t until = t0 + (uint64_t)(secs * 1e9);
  while (ct_now_ns() < until)
    usleep(10000);
  corotracer_resume(woken);
  corotracer_exit(woken, NULL);
  corotracer_destroy(woken);
  corotracer_resume(busy);
  corotracer_exit(busy, NULL);
  corotracer_destroy(busy);
}

struct swarg {
  uint64_t coros, rounds, id, written;
  int yield;   /* sdk-writer yield: every 97th switch waits on an fd, no other wait */
  int migrate; /* sdk-writer migrate (1) or handoff (2): the baton coroutine in turn */
};

/* The thread whose turn it is to create its coroutines (sdk-writer switch):
 * one after the other, and none switches before all have (no station is
 * released and taken again meanwhile), so that each run gives each
 * coroutine the same station (tests/test-pack-roundtrip.sh compares runs). */
static atomic_uint create_turn = 1;
static unsigned create_threads;

/* sdk-writer migrate: the coroutine handed between threads, and the round
 * whose turn with it is next. */
static corotracer_co *baton_co;
static atomic_uint baton = 1;

/* A hot switch, always from this one call site (a pack has one site),
 * after 10 us of busy work: a pack then stays open a good part of a
 * millisecond, long enough for the engine to pass between two threads'
 * packs. */
static __attribute__((noinline)) void hot_switch(corotracer_co *from, corotracer_co *to) {
  uint64_t until = ct_now_ns() + 10000;
  while (ct_now_ns() < until)
    ;
  corotracer_switch(from, NULL, COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, to);
}

/* sdk-writer switch: one thread's scheduler loop. */
static void *switcher(void *arg) {
  struct swarg *a = arg;
  corotracer_co *co[256];
  while (atomic_load_explicit(&create_turn, memory_order_acquire) != a->id)
    sched_yield();
  for (uint64_t k = 0; k < a->coros; k++)
    if (!(co[k] = corotracer_create(a->id * 1000 + k, "sw", NULL)))
      ct_die("not traced");
  atomic_store_explicit(&create_turn, (unsigned)a->id + 1, memory_order_release);
  while (atomic_load_explicit(&create_turn, memory_order_acquire) != create_threads + 1)
    sched_yield();
  a->written = a->coros;
  corotracer_switch(NULL, NULL, COROTRACER_WAIT_NONE, 0, 0, co[0]);
  a->written++;
  for (uint64_t s = 1; s < a->rounds * a->coros; s++) {
    corotracer_co *from = co[(s - 1) % a->coros], *to = co[s % a->coros];
    if (a->migrate) {
      /* Round j's turn with the baton is thread j % THREADS's: each run
       * hands it the same times, in the same order. */
      uint64_t j = s / a->coros;
      if (s % a->coros == 0 && j % create_threads == a->id - 1) {
        while (atomic_load_explicit(&baton, memory_order_acquire) != j)
          sched_yield();
        if (a->migrate == 2) {
          /* handoff: resumed by a record (published at once: it closes
           * this thread's pack), suspended by a hot switch (in the pack
           * this thread then holds open while it sleeps, below). */
          corotracer_switch(from, NULL, COROTRACER_WAIT_FD, 7, 0, baton_co);
          corotracer_wake(from, NULL);
        } else {
          hot_switch(from, baton_co);
        }
        /* Released after its suspend: the next thread resumes it only then. */
        hot_switch(baton_co, to);
        /* migrate: woken by the coroutine that runs here now (a standalone
         * wake in this thread's pack), resumed on the next thread. */
        if (a->migrate == 1) {
          corotracer_wake(baton_co, NULL);
          a->written++;
        }
        atomic_store_explicit(&baton, (unsigned)j + 1, memory_order_release);
        a->written += 3;
        /* handoff: the open pack unpublished while the next thread resumes
         * the baton and publishes that; past the engine's flush interval
         * (50 ms), so the pass that takes the resume ends a chunk. */
        if (a->migrate == 2)
          nanosleep(&(struct timespec){0, 60000000}, NULL);
      } else {
        hot_switch(from, to);
      }
    } else if (a->yield) {
      if (s % 97 == 0)
        corotracer_switch(from, NULL, COROTRACER_WAIT_FD, s % 50, 0, to);
      else
        corotracer_switch(from, NULL, COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, to);
      if (s % 97 == 0)
        corotracer_wake(from, NULL);
    } else if (s % 11 == 0) {
      corotracer_switch(from, NULL, COROTRACER_WAIT_PTR, 0x10000 + s, 0, to); /* 3 records */
      corotracer_wake(from, NULL);
    } else if (s % 13 == 0) { /* a join: the wait object is a coroutine's probe_id */
      corotracer_switch(from, NULL, COROTRACER_WAIT_COROUTINE, a->id * 1000, 0, to);
      corotracer_wake(from, NULL);
    } else if (s % 5 == 0) {
      corotracer_switch(from, NULL, COROTRACER_WAIT_FD, s % 50, 0, to);
      corotracer_wake(from, NULL);
    } else {
      corotracer_switch(from, NULL, COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, to);
    }
    a->written += 3;
  }
  corotracer_switch(co[(a->rounds * a->coros - 1) % a->coros], NULL, COROTRACER_WAIT_NONE, 0, 0,
                    NULL);
  a->written++;
  for (uint64_t k = 0; k < a->coros; k++) {
    corotracer_resume(co[k]);
    corotracer_exit(co[k], NULL);
    corotracer_destroy(co[k]);
    a->written += 3;
  }
  return NULL;
}

/* sdk-writer block: the switches, then a sleep that never ends. */
static void block(uint64_t coros, uint64_t switches, const char *dir) {
  corotracer_co *co[256];
  if (coros < 2 || coros > 256)
    ct_die("COROS must be 2..256");
  if (corotracer_init() != 0)
    exit(3);
  for (uint64_t k = 0; k < coros; k++)
    if (!(co[k] = corotracer_create(k + 1, "blk", NULL)))
      ct_die("not traced");
  corotracer_switch(NULL, NULL, COROTRACER_WAIT_NONE, 0, 0, co[0]);
  /* The engine takes those records, then passes with nothing new: the pack
   * is then taken in a pass that has no record of its own (it once stayed
   * in the capture, never handed to the formatter). */
  nanosleep(&(struct timespec){0, 300000000}, NULL);
  for (uint64_t s = 1; s <= switches; s++)
    corotracer_switch(co[(s - 1) % coros], NULL, COROTRACER_WAIT_NONE, 0,
                      COROTRACER_SWITCH_RUNNABLE, co[s % coros]);
  char path[4096];
  snprintf(path, sizeof path, "%s/ready", dir);
  FILE *f = fopen(path, "we");
  if (!f || fprintf(f, "pid %ld\n", (long)getpid()) < 0 || fclose(f))
    ct_die("%s: %s", path, strerror(errno));
  snprintf(path, sizeof path, "%s/go", dir);
  while (access(path, F_OK) != 0)
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  for (uint64_t s = switches + 1; s <= 2 * switches; s++)
    corotracer_switch(co[(s - 1) % coros], NULL, COROTRACER_WAIT_NONE, 0,
                      COROTRACER_SWITCH_RUNNABLE, co[s % coros]);
  corotracer_switch(co[2 * switches % coros], NULL, COROTRACER_WAIT_NONE, 0, 0, NULL);
  for (uint64_t k = 0; k < coros; k++) {
    corotracer_resume(co[k]);
    corotracer_exit(co[k], NULL);
    corotracer_destroy(co[k]);
  }
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "block") == 0) {
    block(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10), argv[4]);
    return 0;
  }
  int migrate = argc == 6 && strcmp(argv[1], "migrate") == 0   ? 1
                : argc == 6 && strcmp(argv[1], "handoff") == 0 ? 2
                                                               : 0;
  int yield = argc == 6 && strcmp(argv[1], "yield") == 0;
  if (argc == 6 && (yield || migrate || strcmp(argv[1], "switch") == 0)) {
    int n = atoi(argv[2]);
    struct swarg a[16];
    pthread_t t[16];
    uint64_t coros = strtoull(argv[3], NULL, 10), written = 0;
    if (n < 1 || n > 16 || coros < 2 || coros > 256)
      ct_die("THREADS must be 1..16, COROS 2..256");
    if (corotracer_init() != 0)
      return 3;
    create_threads = (unsigned)n;
    if (migrate) {
      if (!(baton_co = corotracer_create(999, "baton", NULL)))
        ct_die("not traced");
      written++;
    }
    for (int k = 0; k < n; k++) {
      a[k] = (struct swarg){coros, strtoull(argv[4], NULL, 10), 1u + k, 0, yield, migrate};
      if (pthread_create(&t[k], NULL, switcher, &a[k]))
        ct_die("pthread_create");
    }
    for (int k = 0; k < n; k++) {
      pthread_join(t[k], NULL);
      written += a[k].written;
    }
    if (migrate) { /* suspended, runnable: it runs once more and returns */
      corotracer_resume(baton_co);
      corotracer_exit(baton_co, NULL);
      corotracer_destroy(baton_co);
      written += 3;
    }
    FILE *f = fopen(argv[5], "we");
    if (!f || fprintf(f, "%llu\n", (unsigned long long)written) < 0 || fclose(f))
      ct_die("%s: %s", argv[5], strerror(errno));
    return 0;
  }
  if (argc == 7 && strcmp(argv[1], "server") == 0) {
    if (corotracer_init() != 0)
      return 3;
    struct sarg a = {strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10),
                     strtoull(argv[5], NULL, 10), 0};
    servers(atoi(argv[2]), &a, argv[6]);
    return 0;
  }
  if (argc == 4 && strcmp(argv[1], "parked") == 0) {
    if (corotracer_init() != 0)
      return 3;
    parked(strtoull(argv[2], NULL, 10), atof(argv[3]));
    return 0;
  }
  if (argc == 4 && strcmp(argv[1], "stall") == 0) {
    if (corotracer_init() != 0)
      return 3;
    stall(strtoull(argv[2], NULL, 10), argv[3]);
    return 0;
  }
  if (argc == 5 && strcmp(argv[1], "steps") == 0) {
    if (corotracer_init() != 0)
      return 3;
    steps(strtoull(argv[2], NULL, 10), (unsigned)strtoul(argv[3], NULL, 10), argv[4]);
    return 0;
  }
  if (argc == 6 && strcmp(argv[1], "active") == 0) {
    if (corotracer_init() != 0)
      return 3;
    active(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10), atof(argv[4]), argv[5]);
    return 0;
  }
  int sp = argc == 6 && strcmp(argv[1], "spaced") == 0;
  int churn = argc == 4 && strcmp(argv[1], "churn") == 0;
  if (!sp && !churn) {
    fprintf(stderr, "usage: sdk-writer spaced THREADS EVENTS GAP_NS OUT | churn COROS OUT\n");
    return 2;
  }
  if (corotracer_init() != 0)
    return 3;
  uint64_t written = 0;
  if (sp) {
    int n = atoi(argv[2]);
    if (n < 1 || n > 64)
      ct_die("THREADS must be 1..64");
    pthread_t t[64];
    struct targ a[64];
    for (int k = 0; k < n; k++) {
      a[k] = (struct targ){strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10), 100u + k, 0};
      if (pthread_create(&t[k], NULL, spaced, &a[k]))
        ct_die("pthread_create");
    }
    for (int k = 0; k < n; k++) {
      pthread_join(t[k], NULL);
      written += a[k].written;
    }
  } else {
    uint64_t n = strtoull(argv[2], NULL, 10);
    for (uint64_t k = 0; k < n; k++) {
      corotracer_co *co = corotracer_create(0, NULL, NULL);
      if (!co)
        continue;
      corotracer_resume(co);
      corotracer_exit(co, NULL);
      corotracer_destroy(co);
      written += 4;
    }
  }
  FILE *f = fopen(argv[argc - 1], "we");
  if (!f || fprintf(f, "%llu\n", (unsigned long long)written) < 0 || fclose(f))
    ct_die("%s: %s", argv[argc - 1], strerror(errno));
  return 0;
}
