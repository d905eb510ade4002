/* floor-probe.c - the floor of issue #32's throughput goals, as a program
 * links it: the C API's calls that bench-seedclaim's program
 * (../shared/bench/seedclaim.c), the demo's scheduler (bench-demo-switch)
 * and the Boost.Fiber adapter (bench-fiber, issue #33's channel) make, each
 * doing only what any tracer of a switch must, one read of the probe's
 * clock (ct_ticks) kept in a thread-local.
 * Linked instead of libcorotracer.a, it gives the "floor" runs: the
 * throughput a tracer with no cost but its timestamp would reach in the same
 * rounds, on the same cores, at the same load (the 800 / 809.5 took
 * the clock read's cost from a quiet machine). Not a tracer: it records
 * nothing, and the engine is not run. */
#include <stdlib.h>

#include "common/ticks.h"
#include "corotracer.h"

struct corotracer_co {
  uint64_t id;
};

static _Thread_local uint64_t floor_ts, floor_n;

/* The clock read, kept where the compiler cannot drop it. */
static void stamp(void) {
  floor_ts = ct_ticks();
  floor_n++;
}

int corotracer_init(void) {
  return 0;
}

/* 1: the program's check that it runs traced (it is, by a clock read). */
int corotracer_enabled(void) {
  return 1;
}

uint64_t corotracer_id(const corotracer_co *co) {
  return co ? co->id : 0;
}

corotracer_co *corotracer_create(uint64_t id, const char *label, const void *site) {
  (void)label, (void)site;
  corotracer_co *co = malloc(sizeof *co);
  if (co)
    co->id = id;
  stamp();
  return co;
}

void corotracer__suspend(corotracer_co *co, const void *site, enum corotracer_wait wait,
                         uint64_t obj) {
  (void)co, (void)site, (void)wait, (void)obj;
  stamp();
}

void corotracer__resume(corotracer_co *co) {
  (void)co;
  stamp();
}

void corotracer__wake(corotracer_co *co, const void *site) {
  (void)co, (void)site;
  stamp();
}

void corotracer__destroy(corotracer_co *co) {
  stamp();
  free(co);
}

void corotracer__switch(corotracer_co *from, const void *site, enum corotracer_wait wait,
                        uint64_t obj, unsigned flags, corotracer_co *to) {
  (void)from, (void)site, (void)wait, (void)obj, (void)flags, (void)to;
  stamp();
}

/* This thread's clock reads as "recorded" (the calling thread's only). */
void corotracer_stats(uint64_t *recorded, uint64_t *dropped) {
  if (recorded)
    *recorded = floor_n;
  if (dropped)
    *dropped = 0;
}
