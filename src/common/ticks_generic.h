/* ticks_generic.h - any other CPU: no tick counter the engine can calibrate,
 * so "ticks" are CLOCK_MONOTONIC ns. Included by ticks.h. */
#ifndef CT_TICKS_GENERIC_H
#define CT_TICKS_GENERIC_H

#define CT_TICKS_CLOCK CTP_CLOCK_MONO

static inline uint64_t ct_ticks(void) {
  return ct_mono_ns();
}

static inline void ct_cpu_relax(void) {
}

static inline void ct_prefetch_w(const void *p) {
  __builtin_prefetch(p, 1, 3);
}

#endif
