/* clock.h - conversion of v2 records' ticks to CLOCK_MONOTONIC ns (clock.c), and ct_now_ns. */
#ifndef CT_ENGINE_CLOCK_H
#define CT_ENGINE_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "common/ctp.h"

/* Conversion of a v2 record's ticks to CLOCK_MONOTONIC ns: the slope of the
 * whole run (first pair to latest), anchored at the latest pair. */
struct ct_clock {
  uint32_t kind;   /* enum ctp_clock */
  uint64_t m0, t0; /* first (mono ns, ticks) pair, before the target starts */
  uint64_t ma, ta; /* latest pair: the anchor */
  uint64_t mult;   /* ns per tick, 32.32 fixed point */
};
/* The clock this machine's records should use: CTP_CLOCK_TSC only on x86-64
 * with constant_tsc and nonstop_tsc in /proc/cpuinfo, CNTVCT on AArch64,
 * else CTP_CLOCK_MONO. */
uint32_t ct_clock_pick(void);
/* Two pairs 10 ms apart (sleeps 10 ms unless kind is MONO). */
void ct_clock_init(struct ct_clock *c, uint32_t kind);
/* A new anchor pair; the slope from the first pair to it. */
void ct_clock_update(struct ct_clock *c);
/* Now, in the clock's ticks. */
uint64_t ct_clock_now(const struct ct_clock *c);
/* ticks -> CLOCK_MONOTONIC ns (any input: wraps, never traps). */
static inline uint64_t ct_clock_ns(const struct ct_clock *c, uint64_t t) {
  if (c->kind == CTP_CLOCK_MONO)
    return t;
  if (t >= c->ta)
    return c->ma + (uint64_t)(((unsigned __int128)(t - c->ta) * c->mult) >> 32);
  uint64_t d = (uint64_t)(((unsigned __int128)(c->ta - t) * c->mult) >> 32);
  return d < c->ma ? c->ma - d : 0;
}

/* clk's current time in ns (modules.c). */
uint64_t ct_now_ns(clockid_t clk);

#endif /* CT_ENGINE_CLOCK_H */
