/* test-ctrace.c - the binary trace against the JSONL one: events of every
 * kind, wait and odd value, and coroutines with any label, go through the
 * engine's encoder and come back from the decoder as the same struct
 * ct_ev_item / ct_coro_item (up to what a JSONL line shows), and as the same
 * struct ct_line that ct_parse_line makes of the line records.c writes; a cut or damaged file gives
 * a reason with the byte offset and every whole chunk before it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/trace.h"
#include "engine/sink.h"
#include "format/ctrace_enc.h"
#include "format/ctw.h"
#include "format/records.h"
#include "format/writer.h"
#include "lib/check.h"
#include "lib/rnd.h"

#define NEV 200000
#define CORO_EVERY 50 /* a coroutine entry after every 50th event */

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
  return ct_rnd(&rng);
}

/* Mostly what a run looks like (a few coroutines and sites, growing ts and
 * ev), sometimes anything at all. */
static void make_event(struct ct_ev_item *e, uint64_t i) {
  static const uint64_t sites[] = {0x55d0c0a01234, 0x55d0c0a01300, 0x7f0012345678, 0};
  static uint64_t ts = 1000000, evs[8];
  uint64_t r = rnd(), pick = r % 8;
  memset(e, 0, sizeof *e);
  ts += r >> 60;
  e->ts = ts;
  e->probe_id = pick + 1;
  e->tid = 4711 + (r >> 8) % 2;
  e->kind = (uint8_t)((r >> 12) % 6);
  e->active = e->kind == 3;
  e->addr = e->active ? 0 : sites[(r >> 16) % 4];
  e->wait = (uint8_t)((r >> 20) % 4);
  e->obj = (r >> 24) % 3 ? (r >> 30) % 64 : rnd();
  e->ev = evs[pick]++;
  e->seq = (r >> 40) % 2 ? 2 * (e->ev + 1) : 2 * (e->ev / 8 + 1);
  if (i % 97 == 0) { /* hostile: any value anywhere */
    e->ts = rnd() >> (r % 64);
    e->probe_id = rnd() >> (r % 64);
    e->tid = rnd() >> ((r >> 6) % 64);
    e->addr = rnd();
    e->seq = rnd();
    e->ev = rnd();
    e->obj = i % 3 ? rnd() : 1ull << 63;
    e->kind = (uint8_t)rnd();
    e->wait = (uint8_t)rnd();
    e->active = (uint8_t)rnd();
  }
}

/* e as the JSONL line shows it: what the binary keeps. */
static void normalize(struct ct_ev_item *e) {
  if (e->kind >= CTP_KIND_MAX_)
    e->kind = 0;
  if (e->kind != CTP_KIND_SUSPEND || e->wait >= CTP_WAIT_MAX_)
    e->wait = 0;
  int obj = (e->kind == CTP_KIND_SUSPEND && (e->wait == 1 || e->wait == 2)) ||
            e->kind == CTP_KIND_WAKE || e->kind == CTP_KIND_CREATE;
  if (!obj)
    e->obj = 0;
  e->active = e->active != 0;
  e->gen = 0;
}

/* A coroutine, sometimes with hostile fields and label bytes. */
static void make_coro(struct ct_coro_item *c, uint64_t i) {
  static const char *labels[] = {"conn", "a\"b\\c\n", "\xff\xfe bad utf8 \xe2\x82",
                                 "\xc3\xa9t\xc3\xa9", ""};
  uint64_t r = rnd();
  memset(c, 0, sizeof *c);
  c->probe_id = i + 1;
  c->birth_ts = 1000000 + i * 7;
  c->create_site = r % 3 ? 0x55d0c0a01234 : rnd();
  c->parent = (r >> 8) % 4;
  c->station = (uint32_t)(r >> 16) % 1024;
  c->pid = 4711;
  c->gen = (uint32_t)(r >> 32) % 3;
  c->has_label = (r >> 40) % 4 != 0;
  if (i % 7 == 0) { /* any bytes, cut at the label area's end */
    for (size_t k = 0; k < sizeof c->label; k++)
      c->label[k] = (char)rnd();
  } else {
    strcpy(c->label, labels[(r >> 44) % 5]);
  }
  if (i % 11 == 0) {
    c->probe_id = rnd();
    c->birth_ts = rnd();
    c->parent = rnd();
    c->station = (uint32_t)rnd();
    c->pid = (uint32_t)rnd();
    c->gen = (uint32_t)rnd();
  }
}

/* c as its JSONL line shows it: the label up to its NUL, none without one. */
static void normalize_coro(struct ct_coro_item *c) {
  size_t n = c->has_label ? strnlen(c->label, sizeof c->label - 1) : 0;
  memset(c->label + n, 0, sizeof c->label - n);
}

/* The fields of a (known by their have bits) as in b. */
static void same_line(const struct ct_line *a, const struct ct_line *b, uint64_t i) {
  ASSERT_UINT64_EQ(a->have, b->have);
  ASSERT_EQ(a->type, b->type);
  ASSERT_EQ(a->kind, b->kind);
  ASSERT_EQ(a->is_active, b->is_active);
  ASSERT_EQ(a->wait, b->wait);
  ASSERT_EQ(a->obj_is_str, b->obj_is_str);
  const uint64_t *fa[] = {&a->probe_id, &a->tid,  &a->addr, &a->seq,  &a->ts,
                          &a->ev,       &a->site, &a->obj,  &a->from, &a->parent};
  const uint64_t *fb[] = {&b->probe_id, &b->tid,  &b->addr, &b->seq,  &b->ts,
                          &b->ev,       &b->site, &b->obj,  &b->from, &b->parent};
  for (size_t k = 0; k < sizeof fa / sizeof fa[0]; k++)
    if (*fa[k] != *fb[k])
      FAIL("event %llu: field %zu: %llu != %llu", (unsigned long long)i, k,
           (unsigned long long)*fa[k], (unsigned long long)*fb[k]);
}

struct got {
  struct ct_ev_item *ev;
  struct ct_coro_item *co;
  uint64_t n, nco, lines;
};

static int on_entry(void *ctx, const struct ct_ev_item *ev, const struct ct_coro_item *co,
                    const char *line, size_t n) {
  struct got *g = ctx;
  (void)line;
  (void)n;
  if (ev)
    g->ev[g->n++] = *ev;
  else if (co)
    g->co[g->nco++] = *co;
  else
    g->lines++;
  return 0;
}

static uint64_t nlines;
static int on_line(void *ctx, uint64_t lineno, enum ct_line_err err, const struct ct_line *l) {
  (void)ctx;
  (void)lineno;
  (void)err;
  (void)l;
  nlines++;
  return 0;
}

static char path[] = "/tmp/test-ctrace.XXXXXX";
static void rm_file(void) {
  unlink(path);
}

/* Reads the first n bytes of the file (flipping byte flip when < n): the
 * entries delivered, and the reason. */
static uint64_t read_prefix(const char *all, size_t n, size_t flip, struct ct_read_diag *d) {
  char cut[] = "/tmp/test-ctrace-cut.XXXXXX";
  int fd = mkstemp(cut);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, all, n), (ssize_t)n);
  if (flip < n) {
    char c = (char)(all[flip] ^ 0x20);
    ASSERT_EQ(pwrite(fd, &c, 1, (off_t)flip), 1);
  }
  lseek(fd, 0, SEEK_SET);
  uint64_t bytes = 0;
  nlines = 0;
  ASSERT_OK(ct_trace_read_diag(fd, 0, on_line, NULL, NULL, &bytes, d));
  close(fd);
  unlink(cut);
  return nlines;
}

/* A file of one chunk (its tag tag) of one entry of op (a wake, or 7: a
 * suspend with a wait), coroutine 5's first event, whose last part (the
 * waker, or the wait byte and object) is the n bytes w: read with the
 * readers' loop, its obj into *from. Returns the events read; the reason in
 * *d. */
static uint64_t read_one(uint32_t tag, uint8_t op, const uint8_t *w, size_t n, uint64_t *from,
                         struct ct_read_diag *d) {
  uint8_t img[128], *p = img + sizeof(struct ctr_file_hdr) + sizeof(struct ctr_chunk_hdr);
  uint8_t *p0 = p;
  struct ctr_file_hdr fh = {.version = CTR_VERSION};
  memcpy(fh.magic, CTR_MAGIC, CTR_MAGIC_LEN);
  memcpy(img, &fh, sizeof fh);
  *p++ = op | CTR_F_NEXT_EV | CTR_F_ADDR; /* ev 0, addr 0: a fresh slot's */
  *p++ = CTR_CORO_NEW;
  *p++ = 5;                        /* probe_id */
  p = ctr_put_varint(p, 2 * 1000); /* ts 1000 */
  p = ctr_put_varint(p, 4711);     /* tid */
  memcpy(p, w, n);
  p += n;
  struct ctr_chunk_hdr ch = {.tag = tag,
                             .len = (uint32_t)(p - p0),
                             .count = 1,
                             .check = ctr_chunk_check(tag, p0, (size_t)(p - p0))};
  memcpy(img + sizeof fh, &ch, sizeof ch);
  char cut[] = "/tmp/test-ctrace-wake.XXXXXX";
  int fd = mkstemp(cut);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, img, (size_t)(p - img)), (ssize_t)(p - img));
  lseek(fd, 0, SEEK_SET);
  struct ct_ev_item ev = {0};
  struct got g = {.ev = &ev};
  uint64_t bytes = 0;
  ASSERT_OK(ct_trace_read_entries(fd, 0, on_entry, &g, &bytes, d));
  close(fd);
  unlink(cut);
  *from = ev.obj;
  if (g.n)
    ASSERT_EQ(ev.kind, op == CTR_OP_SUSPEND_W ? CTP_KIND_SUSPEND : op);
  return g.n;
}

/* A wake's waker (format/ctrace.h CTR_WAKER_*) and a wait's object again
 * (CTR_WAIT_AGAIN): each form decodes to its object, a chunk of version 1
 * and 2 to the varint it had, a slot that holds no coroutine or a byte of no
 * form to the one line naming the entry. */
static void check_wakers(void) {
  const uint64_t big = 0x8000000000000123ull; /* a probe_id: above 2^63 */
  uint8_t self[] = {(uint8_t)ctr_coro_slot(5)}, none[] = {CTR_WAKER_NONE};
  uint8_t id[11] = {CTR_WAKER_ID}, old[10], empty[] = {(uint8_t)(ctr_coro_slot(5) ^ 1)};
  uint8_t bad[] = {0x81}, cut[] = {CTR_WAKER_ID, 0x80};
  size_t nid = (size_t)(ctr_put_varint(id + 1, big) - id);
  size_t nold = (size_t)(ctr_put_varint(old, big) - old);
  struct ct_read_diag d;
  uint64_t from;
  ASSERT_UINT64_EQ(read_one(CTR_CHUNK_TAG, CTR_OP_WAKE, self, sizeof self, &from, &d), 1);
  ASSERT_STR_EQ(d.why, "");
  ASSERT_UINT64_EQ(from, 5);
  ASSERT_UINT64_EQ(read_one(CTR_CHUNK_TAG, CTR_OP_WAKE, none, sizeof none, &from, &d), 1);
  ASSERT_UINT64_EQ(from, 0);
  ASSERT_UINT64_EQ(read_one(CTR_CHUNK_TAG, CTR_OP_WAKE, id, nid, &from, &d), 1);
  ASSERT_UINT64_EQ(from, big);
  ASSERT_UINT64_EQ(read_one(CTR_CHUNK_TAG_V1, CTR_OP_WAKE, old, nold, &from, &d), 1);
  ASSERT_STR_EQ(d.why, "");
  ASSERT_UINT64_EQ(from, big);
  const struct {
    const uint8_t *w;
    size_t n;
  } hostile[] = {{empty, sizeof empty}, {bad, sizeof bad}, {cut, sizeof cut}, {cut, 0}};
  for (size_t k = 0; k < sizeof hostile / sizeof hostile[0]; k++) {
    ASSERT_UINT64_EQ(read_one(CTR_CHUNK_TAG, CTR_OP_WAKE, hostile[k].w, hostile[k].n, &from, &d),
                     0);
    if (!strstr(d.why, "offset 16: entry 1 does not decode"))
      FAIL("hostile waker %zu: '%s'", k, d.why);
  }
  /* A wait's object again: the coroutine's last (none yet: 0); not on a
   * wait without one, nor in a version 2 chunk. */
  uint8_t again[] = {CTP_WAIT_PTR | CTR_WAIT_AGAIN}, exit[] = {CTP_WAIT_EXIT | CTR_WAIT_AGAIN};
  ASSERT_UINT64_EQ(read_one(CTR_CHUNK_TAG, CTR_OP_SUSPEND_W, again, 1, &from, &d), 1);
  ASSERT_UINT64_EQ(from, 0);
  ASSERT_UINT64_EQ(read_one(CTR_CHUNK_TAG, CTR_OP_SUSPEND_W, exit, 1, &from, &d), 0);
  ASSERT_STR_EQ(d.why, "offset 16: entry 1 does not decode");
  ASSERT_UINT64_EQ(read_one(CTR_CHUNK_TAG_V1, CTR_OP_SUSPEND_W, again, 1, &from, &d), 0);
  ASSERT_STR_EQ(d.why, "offset 16: entry 1 does not decode");
  /* The encoder: a waker the cache holds is its slot, one byte; a wait on
   * the coroutine's last object is its wait byte alone; both read back. */
  char tmp[] = "/tmp/test-ctrace-enc.XXXXXX";
  int fd = mkstemp(tmp);
  ASSERT_GE(fd, 0);
  struct ct_writer w = {.fd = fd, .buf = malloc(CT_W_BUF), .binary = 1};
  struct ct_ctw *enc;
  ASSERT_OK(ct_ctw_open(&enc, &w));
  ASSERT_OK(ct_ctw_header(enc));
  const uint64_t chan = 0x7ff67131cc78;
  struct ct_ev_item in[] = {
      {.ts = 10,
       .probe_id = big,
       .tid = 1,
       .addr = 0x1234,
       .seq = 2,
       .obj = chan,
       .kind = 2,
       .wait = CTP_WAIT_PTR},
      {.ts = 11, .probe_id = big + 1, .tid = 1, .addr = 0x1234, .seq = 2, .kind = 2},
      {.ts = 12,
       .probe_id = big + 1,
       .tid = 1,
       .addr = 0x1234,
       .seq = 4,
       .ev = 1,
       .obj = big,
       .kind = CTP_KIND_WAKE},
      {.ts = 13,
       .probe_id = big,
       .tid = 1,
       .addr = 0x1234,
       .seq = 4,
       .ev = 1,
       .obj = chan,
       .kind = 2,
       .wait = CTP_WAIT_PTR}};
  const size_t len[] = {0, 0, 3 /* byte, ts, waker */, 4 /* byte, slot, ts, wait byte */};
  for (size_t k = 0; k < sizeof in / sizeof in[0]; k++) {
    size_t before = enc->len;
    ct_ctw_event(enc, &in[k]);
    if (len[k])
      ASSERT_UINT64_EQ(enc->len - before, len[k]);
  }
  ASSERT_OK(ct_ctw_flush(enc));
  ASSERT_OK(ct_writer_flush(&w));
  struct ct_ev_item out[4];
  struct got g = {.ev = out};
  uint64_t bytes = 0;
  lseek(fd, 0, SEEK_SET);
  ASSERT_OK(ct_trace_read_entries(fd, 0, on_entry, &g, &bytes, &d));
  ASSERT_STR_EQ(d.why, "");
  ASSERT_UINT64_EQ(g.n, 4);
  for (size_t k = 0; k < 4; k++)
    if (memcmp(&in[k], &out[k], sizeof in[k]))
      FAIL("event %zu of the encoder's differs after the round trip", k);
  ct_ctw_free(enc);
  free(w.buf);
  close(fd);
  unlink(tmp);
}

int main(void) {
  check_wakers();
  struct ct_ev_item *in = calloc(NEV, sizeof *in);
  struct ct_coro_item *cin = calloc(NEV / CORO_EVERY, sizeof *cin);
  struct got g = {.ev = calloc(NEV, sizeof *g.ev), .co = calloc(NEV / CORO_EVERY, sizeof *g.co)};
  ASSERT_PTR_NE(in, NULL);
  ASSERT_PTR_NE(g.ev, NULL);
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  CHECK_ATFAIL(rm_file);
  struct ct_writer w = {.fd = fd, .buf = malloc(CT_W_BUF), .binary = 1};
  struct ct_writer text = {.fd = -1, .buf = malloc(CT_W_BUF)};
  struct ct_ctw *enc;
  ASSERT_OK(ct_ctw_open(&enc, &w));
  ASSERT_OK(ct_ctw_header(enc));
  ct_ctw_text(enc, "{\"type\":\"meta\",\"run_id\":\"x\"}\n{\"type\":\"pro", 41);
  ct_ctw_text(enc, "cess\",\"pid\":1}\n", 15);
  for (uint64_t i = 0; i < NEV; i++) {
    make_event(&in[i], i);
    ct_ctw_event(enc, &in[i]);
    /* The JSONL line of the event, parsed, is the line the binary stands for. */
    struct ct_line a, b;
    text.len = 0;
    ct_rec_event(&text, &in[i]);
    ASSERT_EQ(text.buf[text.len - 1], '\n');
    enum ct_line_err ea = ct_parse_line(text.buf, text.len - 1, &a);
    enum ct_line_err eb = ct_line_from_event(&in[i], &b);
    ASSERT_EQ(ea, eb);
    if (ea == CT_LINE_OK || ea == CT_LINE_TORN)
      same_line(&a, &b, i);
    if (i % CORO_EVERY)
      continue;
    /* A coroutine: its line parsed is the line its entry stands for. */
    struct ct_coro_item *c = &cin[i / CORO_EVERY];
    char label[CT_CTR_LABEL_MAX];
    make_coro(c, i);
    ct_ctw_coro(enc, c);
    text.len = 0;
    ct_rec_coroutine(&text, c);
    ASSERT_EQ(ct_parse_line(text.buf, text.len - 1, &a), CT_LINE_OK);
    ASSERT_EQ(ct_line_from_coro(c, &b, label), CT_LINE_OK);
    ASSERT_UINT64_EQ(a.have, b.have);
    ASSERT_EQ(a.type, b.type);
    const uint64_t *fa[] = {&a.probe_id, &a.station,     &a.pid,
                            &a.birth_ts, &a.create_site, &a.parent};
    const uint64_t *fb[] = {&b.probe_id, &b.station,     &b.pid,
                            &b.birth_ts, &b.create_site, &b.parent};
    for (size_t k = 0; k < sizeof fa / sizeof fa[0]; k++)
      ASSERT_UINT64_EQ(*fa[k], *fb[k]);
    if (CT_HAS(&a, CT_K_LABEL)) {
      ASSERT_EQ(a.label.n, b.label.n);
      ASSERT_EQ(a.label.esc, b.label.esc);
      ASSERT_EQ(memcmp(a.label.p, b.label.p, a.label.n), 0);
    }
  }
  ASSERT_OK(ct_ctw_flush(enc));
  ct_ctw_free(enc);
  ASSERT_OK(ct_writer_flush(&w));
  off_t size = lseek(fd, 0, SEEK_END);
  printf("%d events: %lld bytes, %.2f bytes per event\n", NEV, (long long)size, (double)size / NEV);

  /* Decoded: the same events, both lines. */
  struct ct_read_diag d;
  uint64_t bytes = 0;
  lseek(fd, 0, SEEK_SET);
  ASSERT_OK(ct_trace_read_entries(fd, 0, on_entry, &g, &bytes, &d));
  ASSERT_STR_EQ(d.why, "");
  ASSERT_EQ(d.binary, 1);
  ASSERT_UINT64_EQ(g.n, NEV);
  ASSERT_UINT64_EQ(g.lines, 2);
  ASSERT_UINT64_EQ(g.nco, NEV / CORO_EVERY);
  for (uint64_t i = 0; i < NEV / CORO_EVERY; i++) {
    normalize_coro(&cin[i]);
    if (memcmp(&cin[i], &g.co[i], sizeof cin[i]))
      FAIL("coroutine %llu differs after the round trip", (unsigned long long)i);
  }
  for (uint64_t i = 0; i < NEV; i++) {
    normalize(&in[i]);
    if (memcmp(&in[i], &g.ev[i], sizeof in[i]))
      FAIL("event %llu differs after the round trip", (unsigned long long)i);
  }

  /* Cut anywhere, or one byte flipped: a reason naming the offset, every
   * whole chunk before it read. */
  char *all = malloc((size_t)size);
  ASSERT_EQ(pread(fd, all, (size_t)size, 0), (ssize_t)size);
  uint64_t whole = read_prefix(all, (size_t)size, (size_t)size, &d);
  ASSERT_UINT64_EQ(whole, NEV + NEV / CORO_EVERY + 2);
  ASSERT_STR_EQ(d.why, "");
  uint64_t prev = 0;
  for (size_t n = 1; n < (size_t)size; n += 1 + n / 3) {
    uint64_t got = read_prefix(all, n, (size_t)size, &d);
    if (!d.why[0] || !strstr(d.why, "offset "))
      FAIL("cut at %zu: no reason with an offset: '%s'", n, d.why);
    ASSERT_LE(d.offset, n);
    ASSERT_GE(got, prev); /* more bytes, never fewer entries */
    ASSERT_LT(got, whole);
    prev = got;
  }
  for (size_t at = 16; at < (size_t)size; at += 1 + (size_t)size / 7) {
    uint64_t got = read_prefix(all, (size_t)size, at, &d);
    if (!strstr(d.why, "offset "))
      FAIL("byte %zu flipped: no reason: '%s'", at, d.why);
    ASSERT_LT(got, whole);
    ASSERT_LE(d.offset, at);
  }
  /* A reader that cannot show the reason fails instead of going silent. */
  char cut[] = "/tmp/test-ctrace-cut.XXXXXX";
  int cfd = mkstemp(cut);
  ASSERT_EQ(write(cfd, all, (size_t)size - 1), (ssize_t)size - 1);
  lseek(cfd, 0, SEEK_SET);
  ASSERT_EQ(ct_trace_read(cfd, 0, on_line, NULL, &bytes), -EBADMSG);
  close(cfd);
  unlink(cut);
  close(fd);
  rm_file();
  free(all);
  free(in);
  free(cin);
  free(g.ev);
  free(g.co);
  free(w.buf);
  free(text.buf);
  puts("test-ctrace: ok");
  return 0;
}
