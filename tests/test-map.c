/* test-map.c - unit test of the report's hash map (src/analysis/map.c): put,
 * get, growth past many rehashes, 128-bit keys that differ in either half,
 * zero-filled fresh values, filtering (and its shrinking), an empty map. */
#include <stdint.h>
#include <string.h>

#include "analysis/map.h"
#include "lib/check.h"

struct val {
  uint64_t a, b, hits;
};

static int keep_even(void *ctx, const void *v) {
  (*(int *)ctx)++;
  return ((const struct val *)v)->a % 2 == 0;
}

int main(void) {
  struct ct_map m;
  int fresh;
  ct_map_init(&m, sizeof(struct val));
  ASSERT_NULL(ct_map_get(&m, 1, 2)); /* empty, nothing allocated */
  ASSERT_OK(ct_map_filter(&m, keep_even, &fresh));

  /* 100000 keys: many doublings. Keys share one half, so both halves count. */
  enum { N = 100000 };
  for (uint64_t i = 0; i < N; i++) {
    struct val *v = ct_map_put(&m, i, i % 3 == 0 ? 7 : i * 0x100000001ull, &fresh);
    ASSERT_NOT_NULL(v);
    ASSERT_EQ(fresh, 1);
    ASSERT_UINT64_EQ(v->hits, 0); /* fresh values are zero-filled */
    v->a = i;
    v->b = i % 3 == 0 ? 7 : i * 0x100000001ull;
  }
  ASSERT_UINT64_EQ(m.n, N);
  ASSERT_UINT64_LE(m.n * 4, m.cap * 3); /* load factor at most 3/4 */
  for (uint64_t i = 0; i < N; i++) {
    uint64_t b = i % 3 == 0 ? 7 : i * 0x100000001ull;
    struct val *v = ct_map_get(&m, i, b);
    ASSERT_NOT_NULL(v);
    ASSERT_UINT64_EQ(v->a, i);
    ASSERT_UINT64_EQ(v->b, b);
    ASSERT_NULL(ct_map_get(&m, i, b + 1));
    /* put of a present key: the same value, not fresh */
    struct val *again = ct_map_put(&m, i, b, &fresh);
    ASSERT_PTR_EQ(again, v);
    ASSERT_EQ(fresh, 0);
    again->hits++;
  }
  ASSERT_NULL(ct_map_get(&m, N, 7));

  /* Iteration sees every value once. */
  uint64_t seen = 0, hits = 0;
  for (size_t i = 0; i < m.n; i++) {
    seen++;
    hits += ((struct val *)ct_map_at(&m, i))->hits;
  }
  ASSERT_UINT64_EQ(seen, N);
  ASSERT_UINT64_EQ(hits, N);

  /* Filter: the kept half is still found, the rest is gone, and the table
   * shrinks to what is kept. */
  size_t before = m.cap;
  int calls = 0;
  ASSERT_OK(ct_map_filter(&m, keep_even, &calls));
  ASSERT_GE(calls, N);
  ASSERT_UINT64_EQ(m.n, N / 2);
  ASSERT_UINT64_LE(m.cap, before);
  for (uint64_t i = 0; i < N; i++) {
    uint64_t b = i % 3 == 0 ? 7 : i * 0x100000001ull;
    struct val *v = ct_map_get(&m, i, b);
    if (i % 2) {
      ASSERT_NULL(v);
    } else {
      ASSERT_NOT_NULL(v);
      ASSERT_UINT64_EQ(v->a, i);
    }
  }
  /* Filtering everything away leaves a usable empty map. */
  struct val *v = ct_map_put(&m, 1, 1, &fresh);
  ASSERT_NOT_NULL(v);
  v->a = 1;
  calls = 0;
  ASSERT_OK(ct_map_filter(&m, keep_even, &calls));
  ASSERT_OK(ct_map_filter(&m, keep_even, &calls));
  ct_map_free(&m);
  ASSERT_NULL(ct_map_get(&m, 0, 7));
  ASSERT_UINT64_EQ(m.vsize, sizeof(struct val)); /* free keeps the value size */
  ASSERT_NOT_NULL(ct_map_put(&m, 3, 4, &fresh));
  ASSERT_EQ(fresh, 1);
  ct_map_free(&m);
  puts("test-map: ok");
  return 0;
}
