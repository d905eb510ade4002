/* bench-demo-switch.c - context switches per second of the demo scheduler
 * (examples/demo), for bench/bench-demo.sh to compare untraced against traced
 * (`corotracer run -- bench-demo-switch`). Two loads on one worker thread, so
 * the number is the switch path itself, not thread hand-offs:
 *   yield     2 coroutines, each sch_yield() in a loop (suspend, wake, resume)
 *   pingpong  2 coroutines wake each other and park (the park/wake path)
 * Prints one line per load: "NAME switches_per_sec=X traced=0|1".
 * Usage: bench-demo-switch [ITERATIONS [DELAY_MS]]; with DELAY_MS it prints
 * "attached" once the probe is attached, then sleeps DELAY_MS before measuring
 * (the script stops the engine meanwhile, to time the probe alone). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../examples/demo/scheduler.h"

static long iterations = 1000000;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void yielder(void *unused) {
  (void)unused;
  for (long i = 0; i < iterations; i++)
    sch_yield();
}

struct pp {
  _Atomic int turn;
  sch_co *co[2];
  _Atomic int ready;
};
struct pp_side {
  struct pp *p;
  int me;
};

static void pinger(void *arg) {
  struct pp_side *s = arg;
  struct pp *p = s->p;
  while (!atomic_load(&p->ready))
    sch_yield();
  for (long i = 0; i < iterations; i++) {
    while (atomic_load(&p->turn) != s->me) {
      sch_park_prepare(NULL, COROTRACER_WAIT_PTR, (uint64_t)(uintptr_t)p);
      sch_park();
    }
    atomic_store(&p->turn, !s->me);
    if (s->me == 1 && i == iterations - 1)
      break; /* side 0 is done: do not wake it */
    sch_wake(p->co[!s->me]);
  }
}

/* Run one load; returns switches per second. */
static double run(const char *name) {
  struct sch_stats a, b;
  struct pp p = {0};
  struct pp_side side[2] = {{&p, 0}, {&p, 1}};
  sch_get_stats(&a);
  uint64_t t0 = now_ns();
  int ok;
  if (strcmp(name, "yield") == 0) {
    ok = sch_spawn(yielder, NULL, "yield", NULL) && sch_spawn(yielder, NULL, "yield", NULL);
  } else {
    p.co[0] = sch_spawn(pinger, &side[0], "ping", NULL);
    p.co[1] = sch_spawn(pinger, &side[1], "pong", NULL);
    ok = p.co[0] && p.co[1];
    atomic_store(&p.ready, 1);
  }
  if (!ok) {
    fprintf(stderr, "bench-demo-switch: spawn failed\n");
    exit(1);
  }
  if (sch_wait_idle(120000) != 0) {
    fprintf(stderr, "bench-demo-switch: %s did not finish\n", name);
    exit(1);
  }
  double secs = (double)(now_ns() - t0) / 1e9;
  sch_get_stats(&b);
  return (double)(b.switches - a.switches) / secs;
}

int main(int argc, char **argv) {
  long delay_ms = 0;
  if (argc > 1)
    iterations = atol(argv[1]);
  if (argc > 2)
    delay_ms = atol(argv[2]);
  if (iterations < 1 || delay_ms < 0) {
    fprintf(stderr, "usage: bench-demo-switch [ITERATIONS [DELAY_MS]]\n");
    return 2;
  }
  if (delay_ms > 0) {
    corotracer_init(); /* attach now, before the delay */
    printf("attached\n");
    fflush(stdout);
    struct timespec d = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
    while (nanosleep(&d, &d) != 0) {
    }
  }
  struct sch_opts o = {.workers = 1};
  int rc = sch_start(&o);
  if (rc != 0) {
    fprintf(stderr, "bench-demo-switch: sch_start: %s\n", strerror(-rc));
    return 1;
  }
  int traced = corotracer_enabled();
  const char *loads[] = {"yield", "pingpong"};
  for (int i = 0; i < 2; i++)
    printf("%s switches_per_sec=%.0f traced=%d\n", loads[i], run(loads[i]), traced);
  sch_stop();
  return 0;
}
