/* test-flight-window-memory.c - the flight window's memory over a long run
 * (issue #34 item 13). The window took each chunk from malloc, each of its
 * own size, and freed the oldest as it turned: in the 30-minute soak the
 * holes grew the formatter's heap by ~0.3 MB a minute, free bytes malloc
 * held and never used again in whole. Now its chunks fill a ring in order
 * (src/engine/flight_ring.c). 20000 chunks of sizes as an encoder closes
 * them (full ones, flushes of a gentle flow, now and then a long line's past
 * a full chunk's room) go through a 2 MiB window, each followed by the live
 * findings' copy of it, freed a chunk later, as the watch thread frees it:
 * - once the window is full, joining it takes no allocation (but a long
 *   line's, past the ring's block);
 * - the window holds the newest chunks, each byte as it came, within its size. */
#include <stdlib.h>
#include <string.h>

#include "engine/flight.h"
#include "format/ctrace.h"
#include "lib/check.h"

/* Allocations by the linked objects while counting is on (-Wl,--wrap). */
static int counting;
static long allocs;
void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n) {
  allocs += counting;
  return __real_malloc(n);
}
void *__wrap_calloc(size_t k, size_t n) {
  allocs += counting;
  return __real_calloc(k, n);
}
void *__wrap_realloc(void *p, size_t n) {
  allocs += counting;
  return __real_realloc(p, n);
}
void __wrap_free(void *p) {
  __real_free(p);
}

#define WINDOW (2u << 20)
#define CHUNKS 20000u
#define WARM 2000u
#define ROOM (sizeof(struct ctr_chunk_hdr) + (64u << 10))

/* xorshift64: the same sizes every run. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Chunk i's size: full a third of the time, a long line's one in 500, else
 * a flush's, 64 bytes to a full chunk. */
static size_t size_of(uint32_t i, uint64_t r) {
  if (i % 500 == 499)
    return ROOM + 4096 + (size_t)(r % 65536);
  if (r % 3 == 0)
    return ROOM;
  return 64 + (size_t)(r >> 8) % (ROOM - 64);
}

/* Chunk seq's byte at offset k (its header's tag is not a chunk's: the
 * snapshot skips it). */
static uint8_t byte_at(uint64_t seq, size_t k) {
  return (uint8_t)(seq * 131 + k * 7 + (k >> 9));
}

int main(void) {
  static struct ct_flight f;
  ASSERT_OK(ct_flight_init(&f, "unused.ctrace", WINDOW, 0, 0));
  uint8_t *src = malloc(2 * ROOM + 65536), *copy = NULL;
  ASSERT_PTR_NE(src, NULL);
  long long_lines = 0, allocs_warm = 0;
  for (uint32_t i = 0; i < CHUNKS; i++) {
    size_t n = size_of(i, next());
    for (size_t k = 0; k < n; k++)
      src[k] = byte_at(i + 1, k); /* seq: 1, 2, ... */
    long_lines += n > ROOM && i >= WARM;
    counting = i >= WARM;
    ct_flight_chunk(&f, src, n, &(struct ct_ctw_chunk){0});
    counting = 0;
    free(copy); /* the watch's copy of the chunk before, as it frees it */
    ASSERT_PTR_NE((copy = malloc(n)), NULL);
    memcpy(copy, src, n);
    if (i + 1 == WARM)
      allocs_warm = allocs;
  }
  free(copy);
  printf("test-flight-window-memory: %ld allocations joining the window after chunk %u (%ld "
         "long lines)\n",
         allocs - allocs_warm, WARM, long_lines);
  ASSERT_EQ(allocs - allocs_warm, long_lines);
  /* The newest chunks, whole, in order, within the window. */
  uint64_t seq = 0, bytes = 0;
  for (const struct fl_chunk *c = f.head; c; c = c->next) {
    ASSERT_UINT64_EQ(c->seq, seq ? seq + 1 : c->seq);
    seq = c->seq;
    for (size_t k = 0; k < c->len; k++)
      if (c->data[k] != byte_at(c->seq, k))
        FAIL("chunk %llu byte %zu: %u, not %u", (unsigned long long)c->seq, k, c->data[k],
             byte_at(c->seq, k));
    bytes += c->len;
  }
  ASSERT_UINT64_EQ(seq, CHUNKS);
  ASSERT_UINT64_LE(bytes, WINDOW);
  ASSERT_UINT64_GT(bytes, WINDOW / 2);
  free(src);
  ct_flight_free(&f);
  return 0;
}
