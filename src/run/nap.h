/* nap.h - how long the harvest loop naps between scans (run_main.c), apart so
 * that tests/test-nap.c can check it against the rings' fill. */
#ifndef CT_RUN_NAP_H
#define CT_RUN_NAP_H

#include <stdint.h>

/* While events flow the loop naps between scans (ppoll, which serves signals
 * and connections too), for as long as the fullest ring took to get
 * CT_NAP_FILL of its 8 slots filled (a ring's fill in eighths: rings.c,
 * ct_ring_fill8): it comes back before any ring laps and leaves the CPU to the
 * program meanwhile. */
#define CT_NAP_FILL 4u
/* A nap this short is not worth a sleep (wake-up cost, timer slack): scan
 * again at once instead. */
#define CT_NAP_MIN_NS 20000u
/* Longest nap; also the first one after a sleep is 2 * CT_NAP_MIN_NS, and a
 * nap at most doubles from one scan to the next (a lull may end in a burst).
 * The nap's rate estimate looks back, and a writer that was preempted during
 * it comes back at full speed: only this cap bounds how long the engine stays
 * away while events flow, hence the lossless rate of docs/ENGINE.md "Bound". */
#define CT_NAP_MAX_NS 250000u
/* The same when only rings carry events: as long as a sleep while a ring is
 * owned (CT_RING_SLEEP_NS). A writer that jumps from a trickle to full speed
 * within one nap does not wait for its end: past a quarter of its ring it
 * sends a byte (the `napping` nudge, docs/PROTOCOL.md); the rate estimate
 * shortens the nap for a steady fast writer. */
/* Longest sleep while a thread owns a ring: its writer does not fence before
 * reading tracer_sleeping, so an event written as we fall asleep may wake
 * nobody (docs/PROTOCOL.md "v2", step 4); it waits at most this long. */
#define CT_RING_SLEEP_NS 100000000u

/* The next nap after a scan that found events, the last one `nap`: the
 * fullest ring got `peak` new events in `elapsed` ns (in eighths of a ring:
 * ct_ring_fill8); come back when it would hold CT_NAP_FILL of them, half a
 * ring, packs or not, and at most nap_max. An eighth of a ring counted in
 * records instead (2026-11-28, for packs) made every nap the longest one,
 * ended only by the writer's nudge at a quarter ring: a burst of plain
 * records then filled passes past the blocks the formatter may keep, its
 * copies and sorts fell behind on a loaded machine, the capture spilled and
 * the rings overflowed (a 10^7-event burst lost 0.1-4.2 M events in 7 of 24
 * runs beside a CI; none in 20 with this). */
static inline uint64_t ct_next_nap(uint64_t nap, uint64_t elapsed, uint64_t peak,
                                   uint64_t nap_max) {
  /* peak + 1: `peak` new indexes in `elapsed` may be one event short of the
   * true rate (an event just after the scan), and with peak == 1 the rate
   * estimate would be off by a factor of 2: the nap then let a ring fill
   * all 8 slots (issue #11). */
  uint64_t want = elapsed * CT_NAP_FILL / (peak + 1);
  uint64_t grow = 2 * (nap > CT_NAP_MIN_NS ? nap : CT_NAP_MIN_NS);
  if (want > grow)
    want = grow;
  return want < nap_max ? want : nap_max;
}

#endif
