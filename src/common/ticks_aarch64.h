/* ticks_aarch64.h - AArch64: the virtual counter (cntvct_el0), readable from
 * user space on Linux. Included by ticks.h. */
#ifndef CT_TICKS_AARCH64_H
#define CT_TICKS_AARCH64_H

#define CT_TICKS_CLOCK CTP_CLOCK_CNTVCT

/* No isb before the read: as with rdtsc on x86-64, a stamp may be taken a
 * few instructions early or late, far below the conversion error. */
static inline uint64_t ct_ticks(void) {
  uint64_t v;
  __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
}

static inline void ct_cpu_relax(void) {
  __asm__ volatile("yield" ::: "memory");
}

static inline void ct_prefetch_w(const void *p) {
  __builtin_prefetch(p, 1, 3); /* prfm pstl1keep */
}

#endif
