/* test-reader-hostile.c - every reader of a binary trace (report, html,
 * export csv/sqlite/jsonl/perfetto) on 500 crafted traces, the seed fixed (a
 * failure replays the same case): truncations, bytes flipped under a fixed
 * checksum, varint overruns, huge chunk lengths and counts, bad ops, line
 * entries holding a newline, invalid UTF-8, NUL, no object or a huge size,
 * a mangled meta line, on chunks of every age (CHK1; wake-chunks: a version
 * 3 run's, its wakers by slot; pack-chunks: a `corotracer run --pack` run's
 * CHK4 chunks, whose pack entries get mutations of their own: a header's nrec,
 * nbytes, nent, zero byte or station, entry bytes, the entry's byte count). Each reader runs in
 * this process as the binary runs it, under ASan+UBSan in the sanitizer build, each call bounded by
 * an alarm (a hang kills the test); what must hold of them: lib/readers-hostile.h. The long run
 * over arbitrary bytes: tests/fuzz/fuzz-readers.c. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/readers-hostile.h"
#include "lib/rnd.h"

#define CASES 600
#define BASES 5

/* A growable file image. */
struct img {
  uint8_t *p;
  size_t n, cap;
};

static void put(struct img *f, const void *p, size_t n) {
  if (f->n + n > f->cap) {
    f->cap = (f->n + n) * 2;
    f->p = realloc(f->p, f->cap);
    ASSERT_PTR_NE(f->p, NULL);
  }
  memcpy(f->p + f->n, p, n);
  f->n += n;
}

/* The seed corpus's chunks after a file header: a valid trace. */
static void load_base(struct img *f, const char *name) {
  struct ctr_file_hdr h = {.version = CTR_VERSION};
  char buf[65536];
  memcpy(h.magic, CTR_MAGIC, CTR_MAGIC_LEN);
  put(f, &h, sizeof h);
  snprintf(buf, sizeof buf, "tests/fuzz/corpus/ctrace/%s", name);
  int fd = open(buf, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ssize_t k;
  while ((k = read(fd, buf, sizeof buf)) > 0)
    put(f, buf, (size_t)k);
  close(fd);
}

/* The offsets of f's chunk headers (those that frame whole); their count. */
static size_t chunks(const struct img *f, size_t *at, size_t max) {
  size_t n = 0;
  for (size_t o = sizeof(struct ctr_file_hdr); n < max && o + 16 <= f->n;) {
    struct ctr_chunk_hdr h;
    memcpy(&h, f->p + o, sizeof h);
    if (!ctr_chunk_tag_known(h.tag) || h.len > f->n - o - 16)
      break;
    at[n++] = o;
    o += 16 + h.len;
  }
  return n;
}

/* The chunk header at o (copied: it may sit at any alignment). */
static struct ctr_chunk_hdr hdr_at(const struct img *f, size_t o) {
  struct ctr_chunk_hdr h;
  memcpy(&h, f->p + o, sizeof h);
  return h;
}

/* The chunk at o's checksum made right again. */
static void fix(struct img *f, size_t o) {
  struct ctr_chunk_hdr h;
  memcpy(&h, f->p + o, sizeof h);
  h.check = ctr_chunk_check(h.tag, f->p + o + 16, h.len);
  memcpy(f->p + o, &h, sizeof h);
}

/* A line entry with these bytes (a declared size of size) put first in the
 * chunk at o, its header and checksum made right. */
static void inject(struct img *f, size_t o, const char *s, size_t n, uint64_t size) {
  uint8_t e[16 + 256];
  size_t k = 0;
  e[k++] = CTR_OP_LINE;
  for (uint64_t v = size; k < 12; v >>= 7) {
    e[k++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
    if (!(v >> 7))
      break;
  }
  memcpy(e + k, s, n);
  k += n;
  struct img g = {0};
  put(&g, f->p, o + 16);
  put(&g, e, k);
  put(&g, f->p + o + 16, f->n - o - 16);
  free(f->p);
  *f = g;
  struct ctr_chunk_hdr h;
  memcpy(&h, f->p + o, sizeof h);
  h.len += (uint32_t)k;
  h.count++;
  memcpy(f->p + o, &h, sizeof h);
  fix(f, o);
}

static const char *const lines[] = {
    "{\"type\":\"end\",\"exit\":{\"code\":0}}\n{\"type\":\"end\",\"lost\":999}",
    "{\"type\":\"meta\",\"host\":\"\xff\xfe\"}",
    "{\"type\":\"process\",\"pid\":1,\"event\":\"a\xc0\x80\"}",
    "{\"type\":\"process\",\"pid\":1}\r\n",
    "[1,2]",
    "{\"a\":1}{\"b\":2}",
    "{\"type\":\"end\"",
    "{\"k\":\"\xed\xa0\x80\"}",
    "",
    "{\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"};

/* The chunk at o's first pack entry (op byte CTR_OP_LINE | CTR_F_PACK, then
 * varints tid, ns0, mult, n and n bytes holding a pack header): the offset
 * of its n and of its bytes (*n, *body), or 0 when the chunk has none. */
static int find_pack(const struct img *f, size_t o, size_t *n, size_t *body) {
  const uint8_t *b = f->p + o + 16, *e = b + hdr_at(f, o).len;
  for (const uint8_t *p = b; p < e; p++) {
    uint64_t v, len;
    const uint8_t *q = p + 1;
    if (*p != (CTR_OP_LINE | CTR_F_PACK) || !(q = ctr_get_varint(q, e, &v)) ||
        !(q = ctr_get_varint(q, e, &v)) || !(q = ctr_get_varint(q, e, &v)))
      continue;
    const uint8_t *at = q;
    if (!(q = ctr_get_varint(q, e, &len)) || len < sizeof(struct ctp_pack) ||
        len > (uint64_t)(e - q) || q[offsetof(struct ctp_pack, kind)] != CTP_KIND_PACK)
      continue;
    *n = (size_t)(at - f->p);
    *body = (size_t)(q - f->p);
    return 1;
  }
  return 0;
}

/* A pack of f (the first in a chunk chosen by r, or in the first chunk
 * after it that has one) mutated as a scribbler in the target's memory
 * would have it, its chunk's checksum made right: 1 when the pack's
 * contents changed (the decoder refuses the pack, or some of its events, and
 * reads on: clean), 2 when its byte count did (the chunk's framing: damage),
 * 0 when f has no pack. */
static int mutate_pack(struct img *f, uint64_t *r, const char **what) {
  size_t at[256], nc = chunks(f, at, 256), n, body, o = 0;
  size_t k = nc ? ct_rnd(r) % nc : 0, i = 0;
  for (; i < nc && !find_pack(f, o = at[(k + i) % nc], &n, &body); i++)
    ;
  if (i == nc)
    return 0;
  uint8_t *pk = f->p + body;
  static const size_t fields[] = {
      offsetof(struct ctp_pack, nrec),     offsetof(struct ctp_pack, nbytes),
      offsetof(struct ctp_pack, nent),     offsetof(struct ctp_pack, nwake),
      offsetof(struct ctp_pack, nsolo),    offsetof(struct ctp_pack, from),
      offsetof(struct ctp_pack, from) + 2, offsetof(struct ctp_pack, span) + 3,
      offsetof(struct ctp_pack, ts0) + 7};
  switch (ct_rnd(r) % 4) {
  case 0:
    *what = "a pack header's field, checksum fixed";
    pk[fields[ct_rnd(r) % (sizeof fields / sizeof fields[0])]] = (uint8_t)ct_rnd(r);
    break;
  case 1: {
    *what = "a pack's entry bytes, checksum fixed";
    size_t len = pk[offsetof(struct ctp_pack, nbytes)];
    for (int i = 1 + (int)(ct_rnd(r) % 3); i > 0 && len; i--)
      pk[sizeof(struct ctp_pack) + ct_rnd(r) % len] = (uint8_t)ct_rnd(r);
    break;
  }
  case 2:
    *what = "a pack's byte count, checksum fixed";
    f->p[n] = (uint8_t)((f->p[n] & 0x80) | ((f->p[n] + 1 + ct_rnd(r) % 3) & 0x7f));
    fix(f, o);
    return 2;
  default:
    *what = "a pack's stations, checksum fixed";
    pk[offsetof(struct ctp_pack, from)] ^= (uint8_t)(1 + ct_rnd(r) % 255);
    pk[sizeof(struct ctp_pack) + 1] = 0x7f; /* a plain first entry's `to` or delta, far off */
    break;
  }
  fix(f, o);
  return 1;
}

/* One crafted trace from a base (the mutation's name in *what). */
static void craft(struct img *f, uint64_t *r, const char **what) {
  size_t at[256], nc = chunks(f, at, 256);
  size_t o = nc ? at[ct_rnd(r) % nc] : 0;
  uint32_t len = nc ? hdr_at(f, o).len : 0;
  switch (nc ? ct_rnd(r) % 9 : 2) { /* (no whole chunk left: bytes flipped) */
  case 0:
    *what = "truncated";
    f->n = ct_rnd(r) % 4 == 0 ? ct_rnd(r) % 40 : ct_rnd(r) % f->n;
    return;
  case 1:
    *what = "bytes flipped, checksum fixed";
    for (int i = 1 + (int)(ct_rnd(r) % 4); i > 0 && len; i--)
      f->p[o + 16 + ct_rnd(r) % len] ^= (uint8_t)(1 + ct_rnd(r) % 255);
    fix(f, o);
    return;
  case 2:
    *what = "bytes flipped";
    for (int i = 1 + (int)(ct_rnd(r) % 3); i > 0; i--)
      f->p[ct_rnd(r) % f->n] ^= (uint8_t)(1 + ct_rnd(r) % 255);
    return;
  case 3: {
    *what = "varint overrun, checksum fixed";
    size_t s = len ? ct_rnd(r) % len : 0;
    for (size_t i = s; i < len && i < s + 11; i++)
      f->p[o + 16 + i] = 0xff;
    fix(f, o);
    return;
  }
  case 4: {
    static const uint32_t lens[] = {UINT32_MAX, CTR_CHUNK_MAX, CTR_CHUNK_MAX + 1, 1u << 30};
    *what = "huge length";
    uint32_t v = ct_rnd(r) % 2 ? lens[ct_rnd(r) % 4] : len + 1 + (uint32_t)(ct_rnd(r) % 64);
    memcpy(f->p + o + 4, &v, 4);
    return;
  }
  case 5: {
    *what = "huge or wrong count";
    uint32_t v = (uint32_t[]){
        0, UINT32_MAX, len, len + 1, hdr_at(f, o).count + 1, hdr_at(f, o).count - 1}[ct_rnd(r) % 6];
    memcpy(f->p + o + 8, &v, 4);
    return;
  }
  case 6:
    *what = "bad op, checksum fixed";
    if (len)
      f->p[o + 16 + (ct_rnd(r) % 2 ? 0 : ct_rnd(r) % len)] = (uint8_t)ct_rnd(r);
    fix(f, o);
    return;
  case 7: {
    size_t i = ct_rnd(r) % (sizeof lines / sizeof lines[0]), n = strlen(lines[i]);
    uint64_t size = ct_rnd(r) % 4 ? n : (ct_rnd(r) % 2 ? (1ull << 40) : n + 1 + ct_rnd(r) % 9);
    *what = size == n ? "a bad line entry" : "a line entry of a huge size";
    inject(f, o, lines[i], n, size);
    return;
  }
  default:
    *what = "the meta line mangled, checksum fixed";
    if (hdr_at(f, at[0]).len < 8)
      return;
    /* The first entry of the first chunk: the meta line, after its op and size. */
    for (int i = 1 + (int)(ct_rnd(r) % 3); i > 0; i--)
      f->p[at[0] + 16 + 3 + ct_rnd(r) % (hdr_at(f, at[0]).len - 3)] = 0xff;
    fix(f, at[0]);
    return;
  }
}

static struct rh h;

static void cleanup(void) {
  rh_close(&h);
}

int main(void) {
  static const char *const names[BASES] = {"hello-chunks", "sdk-chunks", "churn-chunks",
                                           "wake-chunks", "pack-chunks"};
  struct img base[BASES] = {{0}};
  uint64_t seed = 0x34c0ffee, counts[3] = {0};
  char label[160];
  setvbuf(stdout, NULL, _IOLBF, 0);
  rh_open(&h);
  CHECK_ATFAIL(cleanup);
  for (int i = 0; i < BASES; i++)
    load_base(&base[i], names[i]);
  for (int c = 0; c < CASES; c++) {
    struct img f = {0};
    const char *what = "base";
    int b = c % BASES;
    put(&f, base[b].p, base[b].n);
    if (c < 2) { /* the empty file, the header alone: every run of the test has them */
      f.n = c ? sizeof(struct ctr_file_hdr) : 0;
      what = c ? "the file header alone" : "empty";
    } else if (c == 2) { /* found by fuzz-readers: the report said two lines */
      static const char proc[] = "{\"type\":\"process\",\"pid\":1}";
      inject(&f, sizeof(struct ctr_file_hdr), lines[4], strlen(lines[4]), strlen(lines[4]));
      inject(&f, sizeof(struct ctr_file_hdr), proc, sizeof proc - 1, sizeof proc - 1);
      what = "a line of no trace, then damage";
    } else if (b == BASES - 1 && c / BASES % 2) {
      /* Half of pack-chunks' cases: a pack mutated alone. One whose
       * contents changed reads clean (its events refused, counted in the
       * end line's bad_records): a target's scribble in a pack must not
       * end the trace (found by test-engine-hostile's rogue packs). */
      int m = mutate_pack(&f, &seed, &what);
      snprintf(label, sizeof label, "case %d: %s, %s (%zu bytes)", c, names[b], what, f.n);
      printf("%s\n", label);
      int got = rh_check(&h, f.p, f.n, label);
      if (m == 1 && got != 0)
        FAIL("%s: read %s, want clean", label, got == 1 ? "damaged" : "as nothing");
      counts[got]++;
      free(f.p);
      continue;
    } else {
      craft(&f, &seed, &what);
      if (ct_rnd(&seed) % 5 == 0) /* two at once */
        craft(&f, &seed, &what);
    }
    snprintf(label, sizeof label, "case %d: %s, %s (%zu bytes)", c, names[b], what, f.n);
    printf("%s\n", label);
    counts[rh_check(&h, f.p, f.n, label)]++;
    free(f.p);
  }
  printf("%d cases x 6 readers: %llu read clean, %llu damaged after records (exit 0), %llu with "
         "nothing before the damage (exit 2)\n",
         CASES, (unsigned long long)counts[0], (unsigned long long)counts[1],
         (unsigned long long)counts[2]);
  for (int i = 0; i < BASES; i++)
    free(base[i].p);
  rh_close(&h);
  return 0;
}
