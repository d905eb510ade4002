/* hist.h - log-linear histogram of durations: bounded memory (4 KiB), about
 * 6% relative error on quantiles, exact maximum. Module code, no globals. */
#ifndef CT_ANALYSIS_HIST_H
#define CT_ANALYSIS_HIST_H

#include <stdint.h>

#define CT_HIST_BUCKETS 496 /* 8 linear buckets per power of two, 0 .. 2^64 */

struct ct_hist {
  uint64_t n, min, max;
  uint64_t count[CT_HIST_BUCKETS];
};

/* The bucket of v: values below 8 exactly, above that 8 per octave. */
static inline unsigned ct_hist_bucket(uint64_t v) {
  if (v < 8)
    return (unsigned)v;
  unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= 3 */
  return (e - 2) * 8 + (unsigned)((v >> (e - 3)) & 7);
}

/* Adds v (inline, read speed: one per completed suspension). */
static inline void ct_hist_add(struct ct_hist *h, uint64_t v) {
  h->count[ct_hist_bucket(v)]++;
  h->n++;
  if (v > h->max)
    h->max = v;
  if (h->n == 1 || v < h->min)
    h->min = v;
}

/* The q-quantile (0 < q <= 1) estimated as its bucket's midpoint, clamped
 * to [min, max] (so exact for one value); 0 when empty. */
uint64_t ct_hist_quantile(const struct ct_hist *h, double q);

#endif
