/* hist.c - log-linear buckets: values below 8 exactly, above that 8 per octave. */
#include "analysis/hist.h"

static unsigned bucket_of(uint64_t v) {
  if (v < 8)
    return (unsigned)v;
  unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= 3 */
  return (e - 2) * 8 + (unsigned)((v >> (e - 3)) & 7);
}

void ct_hist_add(struct ct_hist *h, uint64_t v) {
  h->count[bucket_of(v)]++;
  h->n++;
  if (v > h->max)
    h->max = v;
  if (h->n == 1 || v < h->min)
    h->min = v;
}

uint64_t ct_hist_quantile(const struct ct_hist *h, double q) {
  if (!h->n)
    return 0;
  uint64_t rank = (uint64_t)(q * (double)h->n + 0.999999);
  if (rank < 1)
    rank = 1;
  uint64_t seen = 0;
  for (unsigned b = 0; b < CT_HIST_BUCKETS; b++) {
    seen += h->count[b];
    if (seen < rank)
      continue;
    if (b < 8)
      return b;
    unsigned e = b / 8 + 2, sub = b % 8;
    uint64_t low = (uint64_t)(8 + sub) << (e - 3), mid = low + ((1ull << (e - 3)) >> 1);
    return mid > h->max ? h->max : mid < h->min ? h->min : mid;
  }
  return h->max;
}
