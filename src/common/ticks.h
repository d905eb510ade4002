/* ticks.h - the tick counter a v2 probe stamps records with (ctp_rec.ts), and
 * the CPU's spin-wait hint, for the probe and the engine alike.
 *
 *   CT_TICKS_CLOCK      the enum ctp_clock this CPU's counter is: CTP_CLOCK_TSC
 *                       (x86-64 rdtsc), CTP_CLOCK_CNTVCT (AArch64 cntvct_el0), or
 *                       CTP_CLOCK_MONO where there is none (generic)
 *   ct_ticks()          read that counter: no fence, no syscall (a few ns)
 *   ct_mono_ns()        CLOCK_MONOTONIC in ns (vDSO), every platform
 *   ct_mono_s()         the same in seconds (the readers' --stats and progress)
 *   ct_cpu_relax()      the spin-loop hint (pause, yield) or nothing
 *   ct_prefetch_w(p)    a hint: the line at p will be written soon (no fault)
 *
 * The engine converts ticks to CLOCK_MONOTONIC ns with its own calibration
 * (docs/PROTOCOL.md "Clock"); whether the TSC is invariant is the engine's
 * call (ctp_header.clock), not this header's. One platform file is chosen
 * here, at include level; each defines the four platform names above. */
#ifndef CT_TICKS_H
#define CT_TICKS_H

#include <stdint.h>
#include <time.h>

#include "common/ctp.h"

static inline uint64_t ct_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no syscall */
  return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static inline double ct_mono_s(void) {
  return (double)ct_mono_ns() / 1e9;
}

#if defined(__x86_64__)
#include "common/ticks_x86_64.h"
#elif defined(__aarch64__)
#include "common/ticks_aarch64.h"
#else
#include "common/ticks_generic.h"
#endif

#endif /* CT_TICKS_H */
