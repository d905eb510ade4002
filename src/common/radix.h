/* radix.h - an LSD radix sort of 32-bit keys (the engine's released
 * stations, rings_format.c release). Header-only, as grow.h. */
#ifndef CT_COMMON_RADIX_H
#define CT_COMMON_RADIX_H

#include <stddef.h>
#include <stdint.h>

/* The n keys at a, none above top, in ascending order: a byte a round, only
 * the rounds top has bytes for (a station index below 2^24: three), each a
 * count and a stable scatter into the other buffer. tmp holds n keys too.
 * Returns the buffer that holds them sorted (a or tmp). */
static inline uint32_t *ct_radix_u32(uint32_t *a, uint32_t *tmp, size_t n, uint32_t top) {
  for (unsigned sh = 0; sh < 32 && (sh == 0 || top >> sh); sh += 8) {
    size_t count[257] = {0};
    for (size_t k = 0; k < n; k++)
      count[(a[k] >> sh & 0xff) + 1]++;
    for (unsigned d = 1; d < 257; d++)
      count[d] += count[d - 1];
    for (size_t k = 0; k < n; k++)
      tmp[count[a[k] >> sh & 0xff]++] = a[k];
    uint32_t *t = a;
    a = tmp;
    tmp = t;
  }
  return a;
}

#endif /* CT_COMMON_RADIX_H */
