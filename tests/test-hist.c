/* test-hist.c - unit test of the duration histogram (src/analysis/hist.c):
 * exact below 8, exact min/max, quantiles within the promised ~6% on several
 * distributions, extremes (0 and 2^64-1), the empty histogram. */
#include <stdint.h>
#include <string.h>

#include "analysis/hist.h"
#include "lib/check.h"

/* |got - want| <= want / 16 (6.25%: half a bucket of 8 per octave). */
static void near(uint64_t got, uint64_t want, int line) {
  uint64_t d = got > want ? got - want : want - got;
  if (d > want / 16)
    check_fail_(__FILE__, line, "quantile %lu, want %lu +- 6%%", (unsigned long)got,
                (unsigned long)want);
}
#define ASSERT_NEAR(got, want) near((got), (want), __LINE__)

int main(void) {
  static struct ct_hist h;
  ASSERT_UINT64_EQ(ct_hist_quantile(&h, 0.5), 0); /* empty */

  /* One value: every quantile is that value. */
  ct_hist_add(&h, 123456789);
  ASSERT_UINT64_EQ(ct_hist_quantile(&h, 0.01), 123456789);
  ASSERT_UINT64_EQ(ct_hist_quantile(&h, 1), 123456789);

  /* Small values are exact. */
  memset(&h, 0, sizeof h);
  for (uint64_t v = 0; v < 8; v++)
    ct_hist_add(&h, v);
  ASSERT_UINT64_EQ(h.min, 0);
  ASSERT_UINT64_EQ(h.max, 7);
  ASSERT_UINT64_EQ(ct_hist_quantile(&h, 0.125), 0);
  ASSERT_UINT64_EQ(ct_hist_quantile(&h, 0.5), 3);
  ASSERT_UINT64_EQ(ct_hist_quantile(&h, 1), 7);

  /* 1..100000 uniformly: quantile q is about q * 100000. */
  memset(&h, 0, sizeof h);
  for (uint64_t v = 1; v <= 100000; v++)
    ct_hist_add(&h, v);
  ASSERT_UINT64_EQ(h.n, 100000);
  ASSERT_NEAR(ct_hist_quantile(&h, 0.5), 50000);
  ASSERT_NEAR(ct_hist_quantile(&h, 0.9), 90000);
  ASSERT_NEAR(ct_hist_quantile(&h, 0.99), 99000);
  ASSERT_UINT64_EQ(ct_hist_quantile(&h, 1), 100000); /* the maximum is exact */

  /* Powers of two from 1 ns to 2^40 ns: each quantile lands on its octave. */
  memset(&h, 0, sizeof h);
  for (int e = 0; e <= 40; e++)
    ct_hist_add(&h, 1ull << e);
  for (int e = 0; e <= 40; e++)
    ASSERT_NEAR(ct_hist_quantile(&h, (e + 1) / 41.0), 1ull << e);

  /* A long tail: 99% at 1 ms, 1% at 10 s. */
  memset(&h, 0, sizeof h);
  for (int i = 0; i < 9900; i++)
    ct_hist_add(&h, 1000000);
  for (int i = 0; i < 100; i++)
    ct_hist_add(&h, 10000000000ull);
  ASSERT_NEAR(ct_hist_quantile(&h, 0.5), 1000000);
  ASSERT_NEAR(ct_hist_quantile(&h, 0.99), 1000000);
  ASSERT_NEAR(ct_hist_quantile(&h, 0.995), 10000000000ull);

  /* The extremes have buckets. */
  memset(&h, 0, sizeof h);
  ct_hist_add(&h, UINT64_MAX);
  ct_hist_add(&h, 0);
  ASSERT_UINT64_EQ(h.min, 0);
  ASSERT_UINT64_EQ(h.max, UINT64_MAX);
  ASSERT_UINT64_EQ(ct_hist_quantile(&h, 0.5), 0);
  ASSERT_NEAR(ct_hist_quantile(&h, 1), UINT64_MAX); /* its bucket's midpoint */
  puts("test-hist: ok");
  return 0;
}
