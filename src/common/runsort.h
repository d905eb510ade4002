/* runsort.h - the one sort of arrays that are a few sorted runs (the
 * engine's pass: one run a ring and block, records or packs): a stable
 * natural merge, a pass over the array per doubling of its runs, about one
 * comparison an element where qsort took n log n (a quarter of the
 * formatter's time for records, a tenth for packs). Header-only: a macro
 * makes the function for an element type and its key. */
#ifndef CT_COMMON_RUNSORT_H
#define CT_COMMON_RUNSORT_H

#include <stddef.h>

/* Defines `static type *name##_in(type *a, type *tmp, size_t n)`: a[0, n)
 * sorted by the member key (an unsigned integer), ties in their order in a
 * (the left run wins), using tmp (room for n) as the other half of each
 * round. Returns the array that holds the result: a, or tmp (then a holds
 * garbage); a when a is already in order (no copy). And `static void
 * name(type **a, size_t *cap_a, type **tmp, size_t *cap_tmp, size_t n)`:
 * the same on two growable arrays (*tmp grown to n by the caller), swapped
 * with their capacities when the result is in *tmp, so *a holds it. */
#define CT_RUNSORT_DEFINE(name, type, key)                                                         \
  static type *name##_in(type *a, type *tmp, size_t n) {                                           \
    type *src = a, *dst = tmp;                                                                     \
    if (n < 2)                                                                                     \
      return a;                                                                                    \
    for (;;) {                                                                                     \
      size_t out = 0, s = 0, runs = 0;                                                             \
      while (s < n) { /* run boundaries are found afresh each round: adjacent runs merge */        \
        size_t m = s + 1;                                                                          \
        while (m < n && src[m].key >= src[m - 1].key)                                              \
          m++;                                                                                     \
        if (s == 0 && m == n)                                                                      \
          return src;                                                                              \
        size_t e = m;                                                                              \
        if (e < n)                                                                                 \
          for (e++; e < n && src[e].key >= src[e - 1].key;)                                        \
            e++;                                                                                   \
        size_t i = s, j = m;                                                                       \
        while (i < m && j < e)                                                                     \
          dst[out++] = src[j].key < src[i].key ? src[j++] : src[i++];                              \
        while (i < m)                                                                              \
          dst[out++] = src[i++];                                                                   \
        while (j < e)                                                                              \
          dst[out++] = src[j++];                                                                   \
        s = e;                                                                                     \
        runs++;                                                                                    \
      }                                                                                            \
      type *t = src;                                                                               \
      src = dst;                                                                                   \
      dst = t;                                                                                     \
      if (runs == 1)                                                                               \
        return src;                                                                                \
    }                                                                                              \
  }                                                                                                \
  static void name(type **a, size_t *cap_a, type **tmp, size_t *cap_tmp, size_t n) {               \
    if (name##_in(*a, *tmp, n) == *a)                                                              \
      return;                                                                                      \
    type *t = *a;                                                                                  \
    size_t tc = *cap_a;                                                                            \
    *a = *tmp;                                                                                     \
    *cap_a = *cap_tmp;                                                                             \
    *tmp = t;                                                                                      \
    *cap_tmp = tc;                                                                                 \
  }

#endif
