/* test-ctrace-like.c - coroutine entries like the chunk's last one
 * (format/ctrace_like.h, binary trace version 4):
 * - a server's shape (a coroutine a request, five threads' probe_ids taking
 *   turns, so that their high parts rotate through the four slots; now and
 *   then another label, site, parent, pid or gen) goes through the encoder
 *   and comes back from the decoder as the same coroutines and events, in
 *   chunks whose first coroutine entry is full and the others like it;
 * - it costs at most 36 bytes a request (coroutine entry, create, resume,
 *   suspend on an fd, destroy; 32.3 when written): full entries and a create
 *   naming its new coroutine by its probe_id took 49.2;
 * - hand-made like entries the encoder never writes (like nothing, a high
 *   part's slot not taken, a label like none, a low part or station out of
 *   range, cut anywhere) do not decode, and 100,000 mutated chunks of them
 *   end in the chunk's end or "does not decode", never outside the chunk
 *   (the ASan build runs it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/ctrace_dec.h"
#include "format/ctrace_enc.h"
#include "format/ctrace_like.h"
#include "lib/check.h"
#include "lib/rnd.h"

#define NREQ 20000
#define EV_PER 4 /* create, resume, suspend (fd), destroy */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

struct chunks {
  uint8_t *p;
  size_t n, cap, count;
};

static void on_chunk(void *ctx, const uint8_t *p, size_t n, const struct ct_ctw_chunk *c) {
  struct chunks *k = ctx;
  (void)c;
  if (k->n + n > k->cap) {
    k->cap = 2 * (k->n + n);
    k->p = realloc(k->p, k->cap);
    ASSERT_PTR_NE(k->p, NULL);
  }
  memcpy(k->p + k->n, p, n);
  k->n += n;
  k->count++;
}

/* Request i's coroutine: thread i % 5's next probe_id, the next station, the
 * shared fields but now and then. */
static void make_coro(struct ct_coro_item *c, uint64_t i, uint64_t *count) {
  uint64_t r = ct_rnd(&rng), t = i % 5;
  memset(c, 0, sizeof *c);
  c->probe_id = t << CTR_LK_HI_SHIFT | count[t]++;
  c->station = (uint32_t)((1000 + i) % 131072);
  c->gen = (uint32_t)(i / 3000) + (r % 97 == 0);
  c->pid = r % 89 == 0 ? 4712 : 4711;
  c->birth_ts = 1000000 + i * 900;
  c->create_site = r % 13 == 0 ? 0x55d0c0a09999 : 0x55d0c0a01234;
  c->parent = r % 17 == 0 ? r >> 20 : 0;
  c->has_label = r % 31 != 0;
  strcpy(c->label, r % 7 == 0 ? "other" : "request");
  if (r % 101 == 0)
    c->station = (uint32_t)(r >> 32); /* far from the last */
}

static void make_ev(struct ct_ev_item *e, const struct ct_coro_item *c, uint64_t k) {
  static const uint8_t kinds[EV_PER] = {CTP_KIND_CREATE, CTP_KIND_RESUME, CTP_KIND_SUSPEND,
                                        CTP_KIND_DESTROY};
  uint8_t kind = kinds[k];
  *e = (struct ct_ev_item){.ts = c->birth_ts + k * 200,
                           .probe_id = c->probe_id,
                           .tid = 100 + (c->probe_id >> CTR_LK_HI_SHIFT),
                           .addr = kind == CTP_KIND_RESUME    ? 0
                                   : kind == CTP_KIND_CREATE  ? c->create_site
                                   : kind == CTP_KIND_SUSPEND ? 0x55d0c0a05678
                                                              : 0x55d0c0a0abcd,
                           .ev = k,
                           .seq = 2 * (k + 1),
                           .obj = kind == CTP_KIND_CREATE    ? c->parent
                                  : kind == CTP_KIND_SUSPEND ? 7
                                                             : 0,
                           .kind = kind,
                           .wait = kind == CTP_KIND_SUSPEND ? CTP_WAIT_FD : 0,
                           .active = kind == CTP_KIND_RESUME};
}

/* The chunks in k decoded: coroutines into co, events into ev; counts the
 * like entries. */
static void decode(const struct chunks *k, struct ct_coro_item *co, size_t *nco,
                   struct ct_ev_item *ev, size_t *nev, size_t *nlike) {
  struct ct_ctr_iter *it = calloc(1, sizeof *it);
  ASSERT_PTR_NE(it, NULL);
  ct_ctr_init(it);
  for (size_t off = 0; off < k->n;) {
    struct ctr_chunk_hdr h;
    memcpy(&h, k->p + off, sizeof h);
    ct_ctr_begin(it, k->p + off);
    int first = 1;
    for (;;) {
      if (it->p < it->e && (*it->p & 7) == CTR_OP_LINE && (*it->p & CTR_F_CORO)) {
        int like = (*it->p & CTR_F_LIKE) != 0;
        ASSERT_EQ(like, !first); /* the chunk's first full, the others like */
        *nlike += (size_t)like;
        first = 0;
      }
      const char *line;
      size_t n;
      int rc = ct_ctr_entry(it, &ev[*nev], &co[*nco], &line, &n);
      if (rc == 0)
        break;
      ASSERT_GE(rc, 1);
      if (rc == 1)
        (*nev)++;
      else if (rc == 3)
        (*nco)++;
    }
    off += sizeof h + h.len;
  }
  ct_ctr_fini(it);
  free(it);
}

static void round_trip(void) {
  struct ct_coro_item *cin = calloc(NREQ, sizeof *cin), *cout = calloc(NREQ + 1, sizeof *cout);
  struct ct_ev_item *ein = calloc(NREQ * EV_PER, sizeof *ein);
  struct ct_ev_item *eout = calloc(NREQ * EV_PER + 1, sizeof *eout);
  ASSERT_PTR_NE(cin, NULL);
  ASSERT_PTR_NE(cout, NULL);
  ASSERT_PTR_NE(ein, NULL);
  ASSERT_PTR_NE(eout, NULL);
  struct ct_writer w = {.fd = -1};
  struct ct_ctw *enc;
  ASSERT_OK(ct_ctw_open(&enc, &w));
  struct chunks k = {0};
  ct_ctw_redirect(enc, &(struct ct_ctw_to){.chunk = on_chunk, .ctx = &k});
  uint64_t count[5] = {0};
  size_t nin = 0;
  for (uint64_t i = 0; i < NREQ; i++) {
    make_coro(&cin[i], i, count);
    ct_ctw_coro(enc, &cin[i]);
    for (uint64_t e = 0; e < EV_PER; e++) {
      make_ev(&ein[nin], &cin[i], e);
      ct_ctw_event(enc, &ein[nin++]);
    }
  }
  ASSERT_OK(ct_ctw_flush(enc));
  ct_ctw_free(enc);
  size_t payload = k.n - k.count * sizeof(struct ctr_chunk_hdr);
  printf("%d requests: %zu bytes in %zu chunks, %.2f bytes a request\n", NREQ, k.n, k.count,
         (double)payload / NREQ);
  if (payload > 36u * NREQ)
    FAIL("%.2f bytes a request, more than 36", (double)payload / NREQ);

  size_t nco = 0, nev = 0, nlike = 0;
  decode(&k, cout, &nco, eout, &nev, &nlike);
  ASSERT_UINT64_EQ(nco, NREQ);
  ASSERT_UINT64_EQ(nev, nin);
  ASSERT_UINT64_EQ(nlike, NREQ - k.count);
  for (size_t i = 0; i < NREQ; i++) {
    if (!cin[i].has_label)
      memset(cin[i].label, 0, sizeof cin[i].label); /* no label: none comes back */
    if (memcmp(&cin[i], &cout[i], sizeof cin[i]))
      FAIL("coroutine %zu differs after the round trip", i);
  }
  for (size_t i = 0; i < nin; i++)
    if (memcmp(&ein[i], &eout[i], sizeof ein[i]))
      FAIL("event %zu differs after the round trip", i);
  free(k.p);
  free(cin);
  free(cout);
  free(ein);
  free(eout);
}

/* A full coroutine entry of probe_id (label "req", gen 1, pid 7, site new)
 * at p; returns the end. */
static uint8_t *full(uint8_t *p, uint64_t probe_id, uint32_t station) {
  *p++ = CTR_OP_LINE | CTR_F_CORO | CTR_F_ACTIVE;
  p = ctr_put_varint(p, probe_id);
  p = ctr_put_varint(p, station);
  p = ctr_put_varint(p, 1);
  p = ctr_put_varint(p, 7);
  p = ctr_put_varint(p, 0);
  p = ctr_put_varint(p, 0);
  memset(p, 0x11, 8);
  p += 8;
  p = ctr_put_varint(p, 0);
  p = ctr_put_varint(p, 3);
  memcpy(p, "req", 3);
  return p + 3;
}

/* The entries' results of the chunk payload pay (n bytes, count entries),
 * framed as CHK3: each entry's ct_ctr_entry value into rc (up to max);
 * returns how many; the last coroutine into *last. */
static size_t run_chunk(const uint8_t *pay, size_t n, uint32_t count, int *rc, size_t max,
                        struct ct_coro_item *last) {
  uint8_t *buf = malloc(sizeof(struct ctr_chunk_hdr) + n);
  ASSERT_PTR_NE(buf, NULL);
  struct ctr_chunk_hdr h = {
      .tag = CTR_CHUNK_TAG, .len = (uint32_t)n, .count = count, .check = ctr_check(pay, n)};
  memcpy(buf, &h, sizeof h);
  memcpy(buf + sizeof h, pay, n); /* exactly n: ASan sees a read past it */
  static struct ct_ctr_iter it;
  ct_ctr_init(&it);
  ct_ctr_begin(&it, buf);
  size_t k = 0;
  while (k < max) {
    struct ct_ev_item ev;
    struct ct_coro_item co;
    const char *line;
    size_t ln;
    int r = ct_ctr_entry(&it, &ev, &co, &line, &ln);
    rc[k++] = r;
    if (r == 3 && last)
      *last = co;
    if (r <= 0)
      break;
  }
  ct_ctr_fini(&it);
  free(buf);
  return k;
}

/* A like entry after full(5 << 40 | 9, station 20): byte b, flags f, then
 * the varints v (nv of them); returns the results of the two entries. */
static int like_after_full(uint8_t b, uint8_t f, const uint64_t *v, size_t nv,
                           struct ct_coro_item *last) {
  uint8_t pay[256], *p = full(pay, 5ull << CTR_LK_HI_SHIFT | 9, 20);
  *p++ = b;
  *p++ = f;
  for (size_t i = 0; i < nv; i++)
    p = ctr_put_varint(p, v[i]);
  int rc[4];
  size_t k = run_chunk(pay, (size_t)(p - pay), 2, rc, 4, last);
  ASSERT_GE(k, 2);
  ASSERT_EQ(rc[0], 3);
  return rc[1];
}

static void hostile(void) {
  const uint8_t lk = CTR_OP_LINE | CTR_F_CORO | CTR_F_LIKE, lkl = lk | CTR_F_ACTIVE;
  const uint8_t same = CTR_LK_PID | CTR_LK_GEN | CTR_LK_SITE | CTR_LK_PARENT;
  struct ct_coro_item c;
  /* The well-formed one: probe_id one past, station one past, birth +3. */
  uint64_t ok[] = {ctr_zigzag(1), ctr_zigzag(1), ctr_zigzag(3)};
  ASSERT_EQ(like_after_full(lkl, same | CTR_LK_LABEL, ok, 3, &c), 3);
  ASSERT_UINT64_EQ(c.probe_id, 5ull << CTR_LK_HI_SHIFT | 10);
  ASSERT_EQ(c.station, 21);
  ASSERT_EQ(c.gen, 1);
  ASSERT_EQ(c.pid, 7);
  ASSERT_UINT64_EQ(c.birth_ts, 3);
  ASSERT_UINT64_EQ(c.create_site, 0x1111111111111111ull);
  ASSERT_STR_EQ(c.label, "req");
  /* A high part's slot not taken (one was). */
  ASSERT_EQ(like_after_full(lkl, same | CTR_LK_LABEL | 1, ok, 3, &c), -1);
  /* A label like none: the entry says none, or the last had none (below). */
  ASSERT_EQ(like_after_full(lk, same | CTR_LK_LABEL, ok, 3, &c), -1);
  /* The low part below 0, the station below 0 or past 2^32. */
  uint64_t lo_neg[] = {ctr_zigzag(-10), ctr_zigzag(1), 0};
  ASSERT_EQ(like_after_full(lkl, same | CTR_LK_LABEL, lo_neg, 3, &c), -1);
  uint64_t st_neg[] = {ctr_zigzag(1), ctr_zigzag(-21), 0};
  ASSERT_EQ(like_after_full(lkl, same | CTR_LK_LABEL, st_neg, 3, &c), -1);
  uint64_t st_big[] = {ctr_zigzag(1), ctr_zigzag((int64_t)1 << 32), 0};
  ASSERT_EQ(like_after_full(lkl, same | CTR_LK_LABEL, st_big, 3, &c), -1);
  /* gen and pid past 32 bits. */
  uint64_t big[] = {ctr_zigzag(1), 0, 1ull << 32, 0};
  ASSERT_EQ(
      like_after_full(lkl, CTR_LK_PID | CTR_LK_SITE | CTR_LK_PARENT | CTR_LK_LABEL, big, 4, &c),
      -1);
  ASSERT_EQ(
      like_after_full(lkl, CTR_LK_GEN | CTR_LK_SITE | CTR_LK_PARENT | CTR_LK_LABEL, big, 4, &c),
      -1);
  /* A new high part: a varint probe_id, which then takes slot 1. */
  uint64_t hi[] = {7ull << CTR_LK_HI_SHIFT | 3, 0, 0};
  ASSERT_EQ(like_after_full(lkl, same | CTR_LK_LABEL | CTR_LK_NEW_HI, hi, 3, &c), 3);
  ASSERT_UINT64_EQ(c.probe_id, 7ull << CTR_LK_HI_SHIFT | 3);

  /* Like nothing: a chunk's first coroutine entry. */
  uint8_t pay[256], *p = pay;
  *p++ = lkl;
  *p++ = same | CTR_LK_LABEL | CTR_LK_NEW_HI;
  p = ctr_put_varint(p, 5);
  *p++ = 0;
  *p++ = 0;
  int rc[4];
  run_chunk(pay, (size_t)(p - pay), 1, rc, 4, NULL);
  ASSERT_EQ(rc[0], -1);
  /* Like a last without a label, saying the label is the last's. */
  p = pay;
  *p++ = CTR_OP_LINE | CTR_F_CORO;
  p = ctr_put_varint(p, 5);
  for (int i = 0; i < 5; i++)
    *p++ = 0; /* station, gen, pid, birth, a new site: */
  memset(p, 0x11, 8);
  p += 8;
  *p++ = 0;
  *p++ = lkl;
  *p++ = same | CTR_LK_LABEL;
  p = ctr_put_varint(p, ctr_zigzag(1));
  *p++ = 0;
  *p++ = 0;
  run_chunk(pay, (size_t)(p - pay), 2, rc, 4, NULL);
  ASSERT_EQ(rc[0], 3);
  ASSERT_EQ(rc[1], -1);

  /* Cut anywhere, then mutated: never outside the chunk. */
  p = full(pay, 5ull << CTR_LK_HI_SHIFT | 9, 20);
  for (int i = 0; i < 6; i++) {
    *p++ = i % 2 ? lk : lkl;
    *p++ = (uint8_t)(i % 3 ? same : CTR_LK_PARENT);
    p = ctr_put_varint(p, ctr_zigzag(i + 1));
    p = ctr_put_varint(p, ctr_zigzag(1));
    if (!(i % 3)) {
      p = ctr_put_varint(p, 2);
      p = ctr_put_varint(p, 8);
    }
    p = ctr_put_varint(p, ctr_zigzag(4));
    if (!(i % 3))
      p = ctr_put_varint(p, 1); /* the first site */
    if (i % 2 == 0) {
      p = ctr_put_varint(p, 2);
      memcpy(p, "ab", 2);
      p += 2;
    }
  }
  size_t n = (size_t)(p - pay);
  int all[8];
  ASSERT_EQ(run_chunk(pay, n, 7, all, 8, NULL), 8);
  for (int i = 0; i < 7; i++)
    ASSERT_EQ(all[i], 3);
  ASSERT_EQ(all[7], 0);
  for (size_t cut = 0; cut < n; cut++) {
    size_t k = run_chunk(pay, cut, 7, all, 8, NULL);
    ASSERT_EQ(all[k - 1], -1); /* the entry the cut falls in */
  }
  uint8_t m[256];
  for (int round = 0; round < 100000; round++) {
    memcpy(m, pay, n);
    for (int f = 1 + (int)(ct_rnd(&rng) % 4); f > 0; f--)
      m[ct_rnd(&rng) % n] ^= (uint8_t)(1u << ct_rnd(&rng) % 8);
    size_t k = run_chunk(m, n, 7, all, 8, NULL);
    for (size_t i = 0; i < k; i++)
      ASSERT_GE(all[i], -2);
  }
}

int main(void) {
  round_trip();
  hostile();
  printf("ok\n");
  return 0;
}
