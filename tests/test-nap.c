/* test-nap.c - unit test of the harvest loop's nap (src/run/nap.h) against
 * the rings' fill as the harvest counts it (ct_ring_fill8): a writer at a
 * steady rate, from a trickle to one that fills a ring in a few naps, on
 * rings of 128 records to 1 Mi, scan after scan as run_main.c's loop takes
 * them:
 * - no nap lets a ring get more than half full (the loop comes back before
 *   any ring laps, without the writer's nudge; from 2026-11-28 to 11-30 the
 *   nap asked for an eighth of a ring counted in records, every nap was the
 *   longest, and bursts were lost on a loaded machine);
 * - nor is the loop back much sooner than it must be: once steady, a nap
 *   lets the ring fill at least an eighth, or is the longest.
 * Rates whose half ring takes less than the shortest nap keep the loop
 * scanning (no nap): the first bound is theirs only while it naps. */
#include "engine/harvest.h"
#include "lib/check.h"
#include "run/nap.h"

/* Records a writer at `rate` records a second writes in ns. */
static uint64_t written(uint64_t rate, uint64_t ns) {
  return (uint64_t)((double)rate * (double)ns / 1e9);
}

/* One writer, `scans` scans: the loop's naps checked as above. Returns the
 * number of naps (scans that slept). */
static unsigned run(uint64_t cap, uint64_t rate, unsigned scans) {
  uint64_t nap = 0; /* a process that just attached: no nap */
  unsigned naps = 0;
  for (unsigned i = 0; i < scans; i++) {
    /* A scan follows the nap, or at once (a busy loop's scan takes about
     * the shortest nap). */
    uint64_t elapsed = nap >= CT_NAP_MIN_NS ? nap : CT_NAP_MIN_NS;
    uint64_t got = written(rate, elapsed);
    if (got > cap)
      got = cap; /* a ring holds no more (the rest lost) */
    if (!got)
      got = 1; /* the loop naps only after a scan that found events */
    nap = ct_next_nap(nap, elapsed, ct_ring_fill8(got, cap), CT_RING_SLEEP_NS);
    if (nap < CT_NAP_MIN_NS)
      continue; /* busy: scans again at once */
    naps++;
    uint64_t during = written(rate, nap);
    if (during > cap / 2 + 1)
      FAIL("ring of %llu at %llu records/s: scan %u naps %llu ns, %llu records meanwhile "
           "(more than half the ring)",
           (unsigned long long)cap, (unsigned long long)rate, i, (unsigned long long)nap,
           (unsigned long long)during);
    if (i >= scans / 2 && nap < CT_RING_SLEEP_NS && during < cap / 8)
      FAIL("ring of %llu at %llu records/s: scan %u naps only %llu ns (%llu records: less "
           "than an eighth of the ring, steady)",
           (unsigned long long)cap, (unsigned long long)rate, i, (unsigned long long)nap,
           (unsigned long long)during);
  }
  return naps;
}

int main(void) {
  static const uint64_t caps[] = {128, 4096, 32768, 1u << 20};
  unsigned checked = 0;
  for (unsigned c = 0; c < sizeof caps / sizeof *caps; c++)
    for (uint64_t rate = 100; rate <= 100000000000ull; rate = rate * 3 + 7) {
      unsigned naps = run(caps[c], rate, 64);
      /* A writer slower than half a ring per shortest nap lets the loop nap. */
      if (written(rate, CT_NAP_MIN_NS) < caps[c] / 4)
        ASSERT(naps > 32);
      checked += naps;
    }
  /* A trickle on a big ring: the longest nap, reached by doubling. */
  ASSERT_UINT64_EQ(
      ct_next_nap(CT_RING_SLEEP_NS, CT_RING_SLEEP_NS, ct_ring_fill8(1, 32768), CT_RING_SLEEP_NS),
      CT_RING_SLEEP_NS);
  ASSERT(checked > 1000);
  return 0;
}
