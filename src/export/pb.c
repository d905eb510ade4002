/* pb.c - the protobuf wire encoding: varint tags, fixed64, length-delimited
 * fields; nested lengths are reserved as 5-byte varints and patched on
 * pb_end, so a message is written in one pass. */
#include "export/pb.h"

#include "analysis/trace.h"

#include <stdlib.h>
#include <string.h>

#define WT_VARINT 0
#define WT_I64 1
#define WT_LEN 2
#define LEN_SLOT 5 /* a padded varint holds any 32-bit length */

static int reserve(struct pb *b, size_t k) {
  if (b->bad)
    return -1;
  if (b->n + k <= b->cap)
    return 0;
  size_t nc = b->cap ? b->cap * 2 : 4096;
  while (nc < b->n + k)
    nc *= 2;
  uint8_t *np = realloc(b->p, nc);
  if (!np) {
    b->bad = 1;
    return -1;
  }
  b->p = np;
  b->cap = nc;
  return 0;
}

static void raw_varint(struct pb *b, uint64_t v) {
  if (reserve(b, 10))
    return;
  do {
    uint8_t c = v & 0x7f;
    v >>= 7;
    b->p[b->n++] = (uint8_t)(c | (v ? 0x80 : 0));
  } while (v);
}

void pb_reset(struct pb *b) {
  b->n = 0;
  b->depth = 0;
  b->bad = 0;
}

void pb_free(struct pb *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

void pb_varint(struct pb *b, uint32_t field, uint64_t v) {
  raw_varint(b, (uint64_t)field << 3 | WT_VARINT);
  raw_varint(b, v);
}

void pb_fixed64(struct pb *b, uint32_t field, uint64_t v) {
  raw_varint(b, (uint64_t)field << 3 | WT_I64);
  if (reserve(b, 8))
    return;
  for (int i = 0; i < 8; i++)
    b->p[b->n++] = (uint8_t)(v >> (8 * i));
}

void pb_bytes(struct pb *b, uint32_t field, const void *s, size_t n) {
  raw_varint(b, (uint64_t)field << 3 | WT_LEN);
  raw_varint(b, n);
  if (reserve(b, n))
    return;
  memcpy(b->p + b->n, s, n);
  b->n += n;
}

void pb_string(struct pb *b, uint32_t field, const char *s) {
  size_t n = strlen(s), i = 0, k;
  while (i < n && (k = ct_utf8_len(s + i, n - i)))
    i += k;
  if (i == n) {
    pb_bytes(b, field, s, n);
    return;
  }
  char *t = malloc(3 * n + 1); /* a debug-info name that is not UTF-8 */
  if (!t) {
    b->bad = 1;
    return;
  }
  pb_bytes(b, field, t, ct_utf8_clean(s, n, t, 3 * n + 1));
  free(t);
}

void pb_begin(struct pb *b, uint32_t field) {
  raw_varint(b, (uint64_t)field << 3 | WT_LEN);
  if (b->depth == PB_DEPTH)
    b->bad = 1;
  if (reserve(b, LEN_SLOT))
    return;
  b->open[b->depth++] = b->n;
  b->n += LEN_SLOT;
}

void pb_end(struct pb *b) {
  if (b->bad || b->depth == 0) {
    b->bad = 1;
    return;
  }
  size_t at = b->open[--b->depth];
  uint64_t len = b->n - at - LEN_SLOT;
  for (int i = 0; i < LEN_SLOT; i++) {
    b->p[at + i] = (uint8_t)((len & 0x7f) | (i < LEN_SLOT - 1 ? 0x80 : 0));
    len >>= 7;
  }
}
