/* ticks_x86_64.h - x86-64: the time-stamp counter (rdtsc). Included by ticks.h. */
#ifndef CT_TICKS_X86_64_H
#define CT_TICKS_X86_64_H

#define CT_TICKS_CLOCK CTP_CLOCK_TSC

/* rdtsc, not rdtscp or lfence+rdtsc: an event's stamp may move by a few
 * cycles against the stores around it, which is far below the engine's
 * conversion error, and a fence would double the hot path's cost. */
static inline uint64_t ct_ticks(void) {
  uint32_t lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return ((uint64_t)hi << 32) | lo;
}

static inline void ct_cpu_relax(void) {
  __asm__ volatile("pause" ::: "memory");
}

/* prefetchw (the line in exclusive state, ready for the store), which the
 * compiler emits for __builtin_prefetch only with -mprfchw; a CPU without it
 * executes the encoding as a NOP. */
static inline void ct_prefetch_w(const void *p) {
  __asm__ volatile("prefetchw %0" ::"m"(*(const char *)p));
}

#endif
