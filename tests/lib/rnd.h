/* rnd.h - the C tests' seeded pseudo-random numbers (xorshift64): a seed
 * that fails replays the same case. */
#ifndef CT_TESTS_RND_H
#define CT_TESTS_RND_H

#include <stdint.h>

/* The next number of the sequence in *state (never 0: seed it with any
 * non-zero value). */
static inline uint64_t ct_rnd(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

#endif
