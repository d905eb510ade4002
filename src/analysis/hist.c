/* hist.c - log-linear buckets (hist.h): the quantiles. */
#include "analysis/hist.h"

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
