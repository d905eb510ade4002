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

/* Room for k more bytes; -1 once the buffer is unusable (b->bad). */
static int reserve(struct pb *b, size_t k) {
  if (b->bad)
    return -1;
  if (ct_buf_reserve(&b->buf, k)) {
    b->bad = 1;
    return -1;
  }
  return 0;
}

static void raw_varint(struct pb *b, uint64_t v) {
  if (reserve(b, 10))
    return;
  do {
    uint8_t c = v & 0x7f;
    v >>= 7;
    b->buf.p[b->buf.n++] = (uint8_t)(c | (v ? 0x80 : 0));
  } while (v);
}

void pb_reset(struct pb *b) {
  b->buf.n = 0;
  b->buf.err = 0;
  b->depth = 0;
  b->bad = 0;
}

void pb_free(struct pb *b) {
  ct_buf_free(&b->buf);
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
    b->buf.p[b->buf.n++] = (uint8_t)(v >> (8 * i));
}

void pb_bytes(struct pb *b, uint32_t field, const void *s, size_t n) {
  raw_varint(b, (uint64_t)field << 3 | WT_LEN);
  raw_varint(b, n);
  if (reserve(b, n))
    return;
  memcpy(b->buf.p + b->buf.n, s, n);
  b->buf.n += n;
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
  b->open[b->depth++] = b->buf.n;
  b->buf.n += LEN_SLOT;
}

void pb_end(struct pb *b) {
  if (b->bad || b->depth == 0) {
    b->bad = 1;
    return;
  }
  size_t at = b->open[--b->depth];
  uint64_t len = b->buf.n - at - LEN_SLOT;
  for (int i = 0; i < LEN_SLOT; i++) {
    b->buf.p[at + i] = (uint8_t)((len & 0x7f) | (i < LEN_SLOT - 1 ? 0x80 : 0));
    len >>= 7;
  }
}
