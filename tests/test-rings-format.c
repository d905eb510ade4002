/* test-rings-format.c - the formatter's fast paths, for a burst of one
 * coroutine (rings_format.c's emit_same) and for coroutines taking turns
 * (emit_hit; binary trace only), against its general path (emit_all):
 * the same passes of capture blocks, handed as blocks the formatter may keep
 * (their runs are merged in place) and as blocks it may not (a batch), both
 * through the fast paths, must give the binary trace, byte for byte, that
 * the general path gives (every record through emit_all: the case of a JSONL
 * copy, here to /dev/null). The passes (seeded) are bursts of a few
 * coroutines on 3 rings with everything that must leave the fast paths
 * mid-stretch: drops counted between passes (a gap), a count gone down,
 * records of a past or a new incarnation, a lost create, a second create, a
 * destroy and its station's reuse, bad kinds, waits and station indexes, a
 * station never allocated, new sites, chunk ends, a clock re-anchored back
 * (ns clamped), runs out of time order, coroutines taking each other's
 * encoder slot over, and two coroutines of one thread taking turns record by
 * record (fibers handing the thread back and forth: emit_two), switch
 * records (three events each, some with a bad wait or station, some
 * between two coroutines of one probe_id). The fast
 * paths' segments say whether they are sorted, as the harvest's do (its one
 * run taken unread); the general path's do not (the formatter finds the runs). */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/trace.h"
#include "common/coverage.h"
#include "common/ctp.h"
#include "engine/clock.h"
#include "engine/harvest.h"
#include "engine/procs.h"
#include "engine/rings_int.h"
#include "engine/sink.h"
#include "format/ctrace_enc.h"
#include "lib/check.h"
#include "lib/fmt-map.h"
#include "lib/rnd.h"

#define NST 16u       /* stations; the last 2 never allocated */
#define NRING 3u      /* rings (writer threads) */
#define PASSES 400u   /* passes per run */
#define PER_RING 700u /* most records of a ring per pass */

static uint64_t rng;
static uint64_t rnd(void) {
  return ct_rnd(&rng);
}

/* The trace's bytes (the encoder's chunks, redirected here). */
struct out {
  uint8_t *p;
  size_t n, cap;
};
static void on_chunk(void *ctx, const uint8_t *p, size_t n, const struct ct_ctw_chunk *c) {
  (void)c;
  struct out *o = ctx;
  if (o->n + n > o->cap) {
    o->cap = 2 * (o->n + n);
    o->p = realloc(o->p, o->cap);
    ASSERT_NOT_NULL(o->p);
  }
  memcpy(o->p + o->n, p, n);
  o->n += n;
}
static void on_line(void *ctx, const char *s, size_t n) {
  (void)ctx;
  (void)s;
  (void)n;
}

/* What the writers of the generated passes believe of a station. */
struct wst {
  uint32_t gen; /* the incarnation they write */
  int created;
};

/* One record of station i (or a bad index) for ring k's burst. */
static void make_rec(struct ctp_rec *r, void *map, struct wst *w, uint32_t i, uint64_t ts) {
  static const uint64_t sites[] = {0x55d0c0a01234, 0x55d0c0a01300, 0x55d0c0a01388};
  struct ctp_station *s = ctp_station_at(map, i);
  uint64_t x = rnd();
  memset(r, 0, sizeof *r);
  r->ts = ts;
  r->station = i;
  r->gen = (uint16_t)w[i].gen;
  static const uint8_t kinds[] = {CTP_KIND_SUSPEND, CTP_KIND_RESUME, CTP_KIND_WAKE};
  r->kind = kinds[x % 3];
  r->wait = (uint8_t)((x >> 8) % CTP_WAIT_MAX_);
  r->site = sites[(x >> 12) % 3];
  r->obj = (x >> 16) % 4 ? (x >> 20) % 100 : x;
  if (r->kind == CTP_KIND_RESUME)
    r->site = 0;
  switch ((x >> 32) % 200) {
  case 0: /* a new site */
    r->site = rnd() | 1;
    break;
  case 1: /* bad kind */
    r->kind = (uint8_t)(x >> 40) % 2 ? 0 : CTP_KIND_SWITCH + 1 + (uint8_t)(x >> 41) % 5;
    break;
  case 2: /* bad wait */
    r->wait = CTP_WAIT_MAX_ + (uint8_t)(x >> 40) % 200;
    break;
  case 3: /* bad station index, or one never allocated */
    r->station = (x >> 40) % 2 ? NST - 1 - (uint32_t)(x >> 41) % 2 : (uint32_t)(x >> 42) | NST;
    break;
  case 4: /* a record of the past incarnation */
    r->gen = (uint16_t)(w[i].gen - 1);
    break;
  case 5: /* the station's next incarnation, its create lost */
    w[i].gen++;
    s->gen = w[i].gen;
    r->gen = (uint16_t)w[i].gen;
    break;
  case 6: /* a (second) create */
    r->kind = CTP_KIND_CREATE;
    w[i].created = 1;
    break;
  case 7: /* a destroy; the next record is a create of the next incarnation */
    r->kind = CTP_KIND_DESTROY;
    w[i].created = 0;
    w[i].gen++;
    break;
  case 8: /* a switch record from i to another coroutine, sometimes bad */
  case 9:
  case 10:
  case 11: {
    uint32_t j = (i + 1 + (uint32_t)(x >> 40) % 3) % (NST - 2);
    if (!w[i].created || !w[j].created)
      break;
    struct ctp_swrec sw = {.ts = ts,
                           .from = i,
                           .from_gen = (uint16_t)w[i].gen,
                           .kind = CTP_KIND_SWITCH,
                           .wait = (uint8_t)(r->wait | ((x >> 44) & 1 ? CTP_SW_WAKE : 0)),
                           .site = sites[(x >> 12) % 3],
                           .to = (x >> 45) % 64 ? j : NST - 1, /* never allocated */
                           .to_gen = (uint16_t)w[j].gen,
                           .obj = (uint16_t)(x >> 48)};
    if ((x >> 51) % 64 == 0)
      sw.wait = CTP_WAIT_MAX_; /* bad wait */
    memcpy(r, &sw, sizeof sw);
    break;
  }
  default:
    if (!w[i].created) {
      s->gen = w[i].gen;
      r->kind = CTP_KIND_CREATE;
      w[i].created = 1;
    }
  }
}

static void put_seg(uint8_t *blk, size_t *len, uint32_t kind, uint32_t n, uint32_t tid) {
  struct seg sg = {.kind = kind, .n = n, .tid = tid, .ring = tid};
  memcpy(blk + *len, &sg, sizeof sg);
  *len += sizeof sg;
}

/* One run of the scenario (seed fixed): passes handed to the formatter as
 * blocks it may keep (keep 1) or not, with a JSONL copy or not; the trace's
 * bytes into *o. */
/* Station i's probe id: stations 2j and 2j + 1 share an encoder slot
 * (ctr_coro_slot), so coroutines in turn take each other's slot over. */
static uint64_t probe_of(uint32_t i) {
  uint64_t p = 1000 + 1000 * (i / 2);
  uint32_t slot = ctr_coro_slot(p);
  if (i % 2)
    do
      p++;
    while (ctr_coro_slot(p) != slot);
  return p;
}

static void run(int keep, int jsonl, struct out *o) {
  rng = 0x9e3779b97f4a7c15ull;
  size_t len;
  void *map = ct_fmt_map(NST, NRING, &len);
  ASSERT_NOT_NULL(map);
  struct ctp_header *hdr = map;
  hdr->allocated_count = NST - 2;
  struct wst w[NST];
  for (uint32_t i = 0; i < NST; i++) {
    struct ctp_station *s = ctp_station_at(map, i);
    s->probe_id = probe_of(i == NST - 3 ? NST - 4 : i); /* two coroutines of one name */
    s->pid = 42;
    s->gen = 1;
    atomic_store_explicit(&s->ext_flags, CTP_STF_EXT | CTP_STF_RINGS, memory_order_release);
    w[i] = (struct wst){.gen = 1};
  }
  struct ct_sink sink;
  memset(&sink, 0, sizeof sink);
  ASSERT_OK(ct_ctw_open(&sink.enc, NULL));
  struct ct_ctw_to to = {.chunk = on_chunk, .line = on_line, .ctx = o};
  ct_ctw_redirect(sink.enc, &to);
  if (jsonl) {
    sink.jw.fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    ASSERT_GE(sink.jw.fd, 0);
    sink.jw.buf = malloc(CT_W_BUF);
    ASSERT_NOT_NULL(sink.jw.buf);
  }
  struct ct_procs procs = {0};
  struct ct_clock clock;
  ct_clock_init(&clock, CTP_CLOCK_MONO);
  struct ct_harvest h;
  ASSERT_OK(ct_harvest_init(&h, map, len, NST, &procs, &sink, &clock));
  size_t cap = NRING * (PER_RING + 1) * sizeof(struct ctp_rec) + SEG_END_BYTES;
  uint8_t *blk = aligned_alloc(64, cap);
  ASSERT_NOT_NULL(blk);
  /* Ticks: ~0.7 ns each, anchored mid-pass (either side of the anchor). */
  struct ct_clock ck = {.kind = CTP_CLOCK_TSC, .mult = 3006477107ull, .ma = 1000000000ull};
  uint64_t ts[NRING], cur[NRING], alt[NRING];
  int turns[NRING], sel[NRING];
  for (uint32_t k = 0; k < NRING; k++) {
    ts[k] = 1000000 + k;
    cur[k] = k;
    alt[k] = k + 1;
    turns[k] = sel[k] = 0;
  }
  uint32_t sorted = 0, segs = 0; /* segments said sorted, all */
  for (uint32_t pass = 0; pass < PASSES; pass++) {
    size_t bl = 0;
    /* A third of the passes are ring 0's alone: the trace's last entry is
     * then often its coroutine's, as the next pass starts. */
    int solo = rnd() % 3 == 0;
    for (uint32_t k = 0; k < (solo ? 1 : NRING); k++) {
      uint32_t n = (uint32_t)(rnd() % PER_RING) + 1;
      struct seg *sg = (struct seg *)(blk + bl);
      put_seg(blk, &bl, SEG_RECS, n, 7000 + k);
      struct ctp_rec *recs = (struct ctp_rec *)(blk + bl);
      for (uint32_t j = 0; j < n; j++) {
        uint64_t x = rnd();
        if (x % 64 == 0) /* another coroutine of this thread */
          cur[k] = (x >> 8) % (NST - 2);
        if (x % 64 == 1) { /* two of its coroutines taking turns, or no longer */
          turns[k] = !turns[k];
          alt[k] = (x >> 8) % (NST - 2);
        }
        /* Mostly the other one's turn; now and then the same one's again. */
        sel[k] ^= turns[k] && (x >> 40) % 6 != 0;
        if ((x >> 16) % 500 == 0) /* out of time order: a new run */
          ts[k] -= (x >> 24) % 5000;
        ts[k] += (x >> 32) % 40;
        make_rec(&recs[j], map, w, (uint32_t)(sel[k] ? alt[k] : cur[k]), ts[k]);
      }
      /* A bad first record: the next, of its station, is the first emit
       * sees after drops counted between passes (the fast path's test). */
      if (rnd() % 2 == 0)
        recs[0].wait = CTP_WAIT_MAX_;
      sg->sorted = !jsonl;
      for (uint32_t j = 1; j < n; j++)
        if (recs[j].ts < recs[j - 1].ts)
          sg->sorted = 0;
      sorted += sg->sorted;
      segs++;
      bl += n * sizeof(struct ctp_rec);
    }
    /* The pass's clock: the anchor at the rings' ts, sometimes a step back. */
    ck.ta = ts[0] - 3000 + rnd() % 2000;
    ck.ma += rnd() % 4 == 0 ? 0 : 10000 + rnd() % 3000;
    put_seg(blk, &bl, SEG_END, 0, 0);
    memset(blk + bl, 0, SEG_END_BYTES - sizeof(struct seg));
    memcpy(blk + bl, &ck, sizeof ck);
    bl += SEG_END_BYTES - sizeof(struct seg);
    ct_rings_on_block(&h, (const char *)blk, bl, keep);
    /* Between passes: drops (a gap before the station's next record), now
     * and then a count gone down; the target takes the released stations. */
    for (uint32_t i = 0; i < NST; i++) {
      struct ctp_station *s = ctp_station_at(map, i);
      uint64_t x = rnd(), lost = atomic_load_explicit(&s->v2_lost, memory_order_relaxed);
      if (x % 8 == 0 || (i == cur[0] && x % 2))
        lost += 1 + (x >> 8) % 3;
      else if ((x >> 16) % 300 == 0 && lost)
        lost--;
      atomic_store_explicit(&s->v2_lost, lost, memory_order_relaxed);
    }
    struct ctp_queue *q = ctp_queue_at(map, hdr->station_q_off);
    atomic_store(&q->head, atomic_load(&q->tail));
  }
  ASSERT_OK(ct_ctw_flush(sink.enc));
  ASSERT_UINT64_GT(h.v2_harvested, (uint64_t)PASSES * NRING * PER_RING / 4);
  ASSERT_UINT64_GT(h.bad, 0);
  ASSERT_UINT64_GT(h.stale, 0);
  ASSERT_UINT64_GT(h.incarnations, NST);
  if (!jsonl) { /* both kinds of segment */
    ASSERT_UINT64_GT(sorted, segs / 4);
    ASSERT_UINT64_GT(segs - sorted, segs / 4);
  }
  ct_ctw_free(sink.enc);
  if (jsonl) {
    ASSERT_OK(ct_writer_flush(&sink.jw));
    ASSERT_UINT64_GT(sink.jw.pos, 0);
    free(sink.jw.buf);
    close(sink.jw.fd);
  }
  ct_harvest_free(&h);
  free(blk);
  free(map);
}

/* Stations destroyed in one pass, in no order, come back in station order
 * once the next pass is written (release: consecutive creates then take
 * neighbouring stations, four to a page of the shared memory). */
static void release_order(void) {
  static const uint32_t order[] = {9, 3, 12, 7, 5, 1};
  enum { N = sizeof order / sizeof order[0] };
  size_t len;
  void *map = ct_fmt_map(NST, NRING, &len);
  ASSERT_NOT_NULL(map);
  struct ctp_header *hdr = map;
  hdr->allocated_count = NST;
  struct ct_sink sink;
  memset(&sink, 0, sizeof sink);
  ASSERT_OK(ct_ctw_open(&sink.enc, NULL));
  struct out o = {0};
  struct ct_ctw_to to = {.chunk = on_chunk, .line = on_line, .ctx = &o};
  ct_ctw_redirect(sink.enc, &to);
  struct ct_procs procs = {0};
  struct ct_clock clock;
  ct_clock_init(&clock, CTP_CLOCK_MONO);
  struct ct_harvest h;
  ASSERT_OK(ct_harvest_init(&h, map, len, NST, &procs, &sink, &clock));
  uint8_t blk[sizeof(struct seg) + 2 * N * sizeof(struct ctp_rec) + 2 * SEG_END_BYTES];
  size_t bl = 0;
  put_seg(blk, &bl, SEG_RECS, 2 * N, 7000);
  for (unsigned k = 0; k < 2 * N; k++) {
    uint32_t i = order[k / 2];
    struct ctp_station *s = ctp_station_at(map, i);
    s->probe_id = probe_of(i);
    s->gen = 1;
    atomic_store_explicit(&s->ext_flags, CTP_STF_EXT | CTP_STF_RINGS, memory_order_release);
    struct ctp_rec r = {
        .ts = 1000 + k, .station = i, .gen = 1, .kind = k % 2 ? CTP_KIND_DESTROY : CTP_KIND_CREATE};
    memcpy(blk + bl, &r, sizeof r);
    bl += sizeof r;
  }
  for (unsigned p = 0; p < 2; p++) { /* the pass of the destroys, then the next */
    put_seg(blk, &bl, SEG_END, 0, 0);
    memset(blk + bl, 0, SEG_END_BYTES - sizeof(struct seg));
    memcpy(blk + bl, &clock, sizeof clock);
    bl += SEG_END_BYTES - sizeof(struct seg);
  }
  ct_rings_on_block(&h, (const char *)blk, bl, 0);
  struct ctp_queue *q = ctp_queue_at(map, hdr->station_q_off);
  ASSERT_UINT64_EQ(atomic_load(&q->tail), N);
  for (unsigned e = 1; e < N; e++)
    ASSERT_UINT64_GT(atomic_load(&q->ent[e]), atomic_load(&q->ent[e - 1]));
  ct_ctw_free(sink.enc);
  ct_harvest_free(&h);
  free(map);
  free(o.p);
}

/* a's bytes are b's (what names a). */
static void same(const struct out *a, const struct out *b, const char *what) {
  ASSERT_UINT64_GT(a->n, 4 * CT_CTW_CHUNK); /* several chunks */
  size_t n = a->n < b->n ? a->n : b->n;
  for (size_t k = 0; k < n; k++)
    if (a->p[k] != b->p[k])
      FAIL("%s: the traces differ first at byte %zu (%zu and %zu bytes)", what, k, a->n, b->n);
  ASSERT_UINT64_EQ(a->n, b->n);
}

/* One decoded entry: an event's fields, a coroutine's, or a line's bytes. */
struct ent {
  int k;
  struct ct_ev_item ev;
  uint64_t probe_id, station, gen;
  const char *s;
  size_t n;
};

/* The entries of trace o (chunks, no file header), one after the other;
 * returns how many (into *es, grown). */
static size_t decode(const struct out *o, struct ent **es) {
  static struct ct_ctr_iter it;
  size_t cnt = 0, cap = 0, pos = 0, clen;
  char why[200];
  *es = NULL;
  while (pos < o->n) {
    ASSERT_EQ(ct_ctr_chunk(o->p + pos, o->n - pos, pos, &clen, why, sizeof why), 1);
    ct_ctr_begin(&it, o->p + pos);
    for (;;) {
      if (cnt == cap) {
        cap = cap ? 2 * cap : 1 << 16;
        *es = realloc(*es, cap * sizeof **es);
        ASSERT_NOT_NULL(*es);
      }
      struct ent *e = &(*es)[cnt];
      struct ct_coro_item co;
      memset(e, 0, sizeof *e);
      e->k = ct_ctr_entry(&it, &e->ev, &co, &e->s, &e->n);
      ASSERT_GE(e->k, 0);
      if (e->k == 0)
        break;
      if (e->k == 3) {
        e->probe_id = co.probe_id;
        e->station = co.station;
        e->gen = co.gen;
      }
      cnt++;
    }
    pos += clen;
  }
  return cnt;
}

/* a and b decode to the same entries, field by field: the fast paths'
 * switch entries give the events the general path wrote one by one. */
static void same_entries(const struct out *a, const struct out *b, const char *what) {
  struct ent *x, *y;
  size_t n = decode(a, &x), m = decode(b, &y);
  ASSERT_UINT64_GT(n, 0);
  for (size_t k = 0; k < n && k < m; k++) {
    const struct ent *p = &x[k], *q = &y[k];
    const struct ct_ev_item *u = &p->ev, *v = &q->ev;
    if (p->k != q->k || p->probe_id != q->probe_id || p->station != q->station ||
        p->gen != q->gen || p->n != q->n || (p->n && memcmp(p->s, q->s, p->n)) ||
        (p->k == 1 && (u->ts != v->ts || u->probe_id != v->probe_id || u->tid != v->tid ||
                       u->addr != v->addr || u->seq != v->seq || u->ev != v->ev ||
                       u->kind != v->kind || u->wait != v->wait || u->active != v->active ||
                       (u->wait != CTP_WAIT_NONE && u->wait != CTP_WAIT_EXIT && u->obj != v->obj) ||
                       (u->kind == CTP_KIND_WAKE && u->obj != v->obj))))
      FAIL("%s: entry %zu differs (kind %d/%d, probe %llu/%llu, ev %llu/%llu)", what, k, p->k, q->k,
           (unsigned long long)u->probe_id, (unsigned long long)v->probe_id,
           (unsigned long long)u->ev, (unsigned long long)v->ev);
  }
  ASSERT_UINT64_EQ(n, m);
  free(x);
  free(y);
}

uint64_t ct_cov_hits[CT_COV_N_];

int main(void) {
  struct out kept = {0}, batch = {0}, general = {0};
  release_order();
  run(1, 0, &kept);
  run(0, 0, &batch);
  run(1, 1, &general);
  same(&kept, &batch, "kept blocks and a batch");
  same_entries(&kept, &general, "kept blocks");
  same_entries(&batch, &general, "a batch");
  /* Every fast-path branch was taken (a stub that always bails out, or a
   * stretch never started, leaves its counter at 0). */
  static const char *names[CT_COV_N_] = {"switch: from current",
                                         "switch: thread new",
                                         "switch: detail",
                                         "switch: to predicted",
                                         "switch: to by slot",
                                         "switch: to new",
                                         "emit_hit",
                                         "emit_all",
                                         "emit_same",
                                         "emit_two",
                                         "switch entry",
                                         "switch split"};
  for (unsigned k = 0; k < CT_COV_N_; k++) {
    printf("     %-22s %llu\n", names[k], (unsigned long long)ct_cov_hits[k]);
    if (!ct_cov_hits[k])
      FAIL("coverage: %s never taken", names[k]);
  }
  printf("ok: %zu bytes (%zu in one entry a record), the same events\n", general.n, kept.n);
  free(kept.p);
  free(batch.p);
  free(general.p);
  return 0;
}
