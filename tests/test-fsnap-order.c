/* test-fsnap-order.c - the flight snapshot's tracker walks a dropped chunk's packs switch by
 * switch in the chunk's order (src/engine/flight_snap.c, ctr_stream_walk), where the decoder's
 * merge gives every event in time (ctrace_dec.c merged()). Its snapshot must be the merge's,
 * byte for byte, whatever order the chunks hold a coroutine's facts in. The engine's own
 * traces rarely put them out of order (tests/test-fsnap-packs.sh), so here the chunks are
 * written as the engine writes them but in a hostile order: 3 threads, each with a pack
 * open for up to 40 switches among 24 coroutines handed between the threads (a coroutine's
 * later switches on one thread in a pack written before the earlier ones of another),
 * ordinary events of any coroutine at any time between them (written at once, so before
 * the packs that hold what came before them), waits, wakes on both sides, ties of time,
 * coroutines born on the way (their lines written at once too), and chunks cut anywhere
 * (a pack open across them). Stations reused (a destroy, then a new incarnation) and gap
 * entries, written at once or, as the engine writes a create's line and a pass's gaps,
 * after the packs open at their time (which may hold the new coroutine's first switches,
 * or its coroutine's switches past the gap): such a chunk has rebinds (struct
 * ct_ctw_chunk), which the walk must not take in its order; so do standalone wakes (in
 * half the streams, one entry in 5: the walk would number a wake in one thread's pack
 * before the wakee's suspend in another's written after it). After every chunk, both
 * trackers' snapshot lines (ct_fsnap_expand: the merge's; the walk) sorted and compared.
 * 400 streams of 400 steps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/flight.h"
#include "format/ctrace.h"
#include "format/ctw.h"
#include "format/pack_entry.h"
#include "format/writer.h"
#include "lib/check.h"

#define NCO 24u /* coroutines at the start */
#define NEW 16u /* coroutines born on the way (their lines among the packs) */
#define NTH 3u
#define STREAMS 400u
#define STEPS 400u

static struct ct_fsnap *walk, *merge;
static uint64_t chunks, compared, lines, rebound;

/* The snapshot lines of a payload (put of ct_fsnap_emit) appended to the
 * buffer ctx (struct text), one a line. */
struct text {
  char *p;
  size_t n, cap;
};
static int collect(void *ctx, const uint8_t *p, size_t n, uint32_t k) {
  struct text *t = ctx;
  const uint8_t *e = p + n;
  for (uint32_t i = 0; i < k; i++) {
    uint64_t len;
    if (p >= e || *p != CTR_OP_LINE || !(p = ctr_get_varint(p + 1, e, &len)) ||
        len > (uint64_t)(e - p))
      return -1;
    if (t->n + len + 1 > t->cap) {
      t->cap = 2 * (t->n + len + 1);
      if (!(t->p = realloc(t->p, t->cap)))
        return -1;
    }
    memcpy(t->p + t->n, p, len);
    t->n += len;
    t->p[t->n++] = '\n';
    p += len;
  }
  return 0;
}

static int by_line(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A table's snapshot as its lines sorted (the table's order is its own), in
 * t (NUL-separated), *n lines; the line starts into at. */
static void snapshot(struct ct_fsnap *f, struct text *t, char ***at, size_t *n) {
  uint64_t count, untracked;
  t->n = 0;
  ASSERT_OK(ct_fsnap_emit(f, collect, t, &count, &untracked));
  *n = 0;
  *at = realloc(*at, (count + 1) * sizeof **at);
  ASSERT(*at);
  for (size_t i = 0; i < t->n; i++) {
    if (i == 0 || t->p[i - 1] == 0)
      (*at)[(*n)++] = t->p + i;
    if (t->p[i] == '\n')
      t->p[i] = 0;
  }
  ASSERT_UINT64_EQ(*n, count);
  qsort(*at, *n, sizeof **at, by_line);
}

static void on_chunk(void *ctx, const uint8_t *p, size_t n, const struct ct_ctw_chunk *c) {
  (void)ctx;
  static struct text a, b;
  static char **la, **lb;
  size_t na, nb;
  ct_fsnap_apply(walk, p, n, c->rebinds);
  ct_fsnap_apply(merge, p, n, c->rebinds);
  chunks++;
  rebound += c->rebinds > 0;
  snapshot(walk, &a, &la, &na);
  snapshot(merge, &b, &lb, &nb);
  for (size_t i = 0; i < na && i < nb; i++)
    if (strcmp(la[i], lb[i])) {
      fprintf(stderr, "chunk %llu: the walk's\n  %s\nthe merge's\n  %s\n",
              (unsigned long long)chunks, la[i], lb[i]);
      break;
    }
  ASSERT_UINT64_EQ(na, nb);
  for (size_t i = 0; i < na; i++)
    ASSERT_EQ(strcmp(la[i], lb[i]), 0);
  compared++;
  lines += na;
}

static void on_line(void *ctx, const char *s, size_t n) {
  (void)ctx, (void)s, (void)n;
}

/* A thread's open pack: its entries' bytes, count, wakes, first and last
 * time, the station its last entry resumed and the obj state. */
struct open {
  uint8_t b[1024];
  size_t n;
  unsigned nent, nwake, nsolo;
  uint64_t ts0, last, pobj;
  uint32_t from, cur;
};

static uint64_t rnd = 88172645463325252ull;
static uint64_t next(void) {
  rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
  return rnd;
}

/* A coroutine line or a gap entry held until the packs open at its time are
 * written (wait: a bit for each thread whose pack was open then), as the
 * engine writes a create's line and a pass's gaps after the packs that
 * began before them. */
struct held {
  unsigned wait;
  int gap;
  struct ct_coro_item co;    /* !gap */
  uint64_t probe_id, ev, ns; /* gap */
};
#define HELD 8u
static struct held held[HELD];
static unsigned nheld;

static void put_held(struct ct_ctw *enc, const struct held *h) {
  if (h->gap)
    ct_ctw_gap(enc, h->probe_id, h->ev, h->ns);
  else
    ct_ctw_coro(enc, &h->co);
}

/* Thread th's pack is written: the held entries that waited only for it
 * follow it. */
static void release_held(struct ct_ctw *enc, unsigned th) {
  unsigned k = 0;
  for (unsigned i = 0; i < nheld; i++) {
    held[i].wait &= ~(1u << th);
    if (!held[i].wait)
      put_held(enc, &held[i]);
    else
      held[k++] = held[i];
  }
  nheld = k;
}

/* Thread th's pack written (as the engine writes a pack it harvested). */
static void put_pack(struct ct_ctw *enc, struct open *o, unsigned th) {
  struct ctp_pack h = {.ts0 = o->ts0,
                       .from = o->from,
                       .kind = CTP_KIND_PACK,
                       .nrec = (uint8_t)((o->n + 31) / 32),
                       .site = 0x4000 + th,
                       .span = (uint32_t)(o->last - o->ts0),
                       .nbytes = (uint8_t)o->n,
                       .nent = (uint8_t)o->nent,
                       .nwake = (uint8_t)o->nwake,
                       .nsolo = (uint8_t)o->nsolo};
  uint8_t p[sizeof h + sizeof o->b];
  memcpy(p, &h, sizeof h);
  memcpy(p + sizeof h, o->b, o->n);
  /* 1 ns a tick: ns0 is the first entry's time, ticks are ns. */
  ct_ctw_pack(enc, 100 + th, o->ts0, UINT64_C(1) << 32, p, sizeof h + o->n);
  o->n = o->nent = o->nwake = o->nsolo = 0;
  release_held(enc, th);
}

/* Entry h written now, or held until the packs open now are written. */
static void put_or_hold(struct ct_ctw *enc, const struct open *op, struct held h, int now) {
  h.wait = 0;
  for (unsigned th = 0; th < NTH && !now; th++)
    h.wait |= op[th].nent ? 1u << th : 0;
  if (!h.wait || nheld == HELD)
    put_held(enc, &h);
  else
    held[nheld++] = h;
}

/* One stream of STEPS steps into fresh tables, compared after each chunk;
 * with rebinding, coroutines born, reused stations and gaps on the way;
 * with solos, standalone wakes in the packs. */
static void stream(int rebinding, int solos) {
  struct ct_writer w = {.fd = -1, .buf = malloc(CT_W_BUF), .binary = 1};
  struct ct_ctw *enc;
  ASSERT_OK(ct_fsnap_new(&walk));
  ASSERT_OK(ct_fsnap_new(&merge));
  ct_fsnap_expand(merge, 1);
  ASSERT_OK(ct_ctw_open(&enc, &w));
  ct_ctw_redirect(enc, &(struct ct_ctw_to){.chunk = on_chunk, .line = on_line});
  ct_ctw_packs(enc);
  uint64_t now = 1000000, own[NCO + NEW] = {0}, pid_of[NCO + NEW], next_pid = 1;
  uint32_t ncos = NCO, gen[NCO + NEW];
  for (uint32_t i = 0; i < NCO + NEW; i++)
    pid_of[i] = next_pid++, gen[i] = 1;
  for (uint32_t i = 0; i < NCO; i++) {
    struct ct_coro_item co = {.probe_id = pid_of[i],
                              .station = i,
                              .gen = 1,
                              .pid = 7,
                              .birth_ts = now,
                              .create_site = 0x2000};
    ct_ctw_coro(enc, &co);
  }
  struct open op[NTH];
  memset(op, 0, sizeof op);
  for (unsigned th = 0; th < NTH; th++)
    op[th].cur = th;
  for (uint32_t step = 0; step < STEPS; step++) {
    uint64_t r = next();
    unsigned th = (unsigned)(r % NTH), what = (unsigned)(r >> 8) % 100;
    now += (r >> 16) % 3; /* ties too */
    struct open *o = &op[th];
    if (what < 65) { /* a hot switch into th's pack */
      struct ctp_pk_entry en = {.from = (r >> 20) % 4 ? o->cur : (uint32_t)((r >> 24) % ncos),
                                .to = (uint32_t)((r >> 30) % ncos),
                                .wake = (r >> 36) % 3 == 0};
      unsigned wk = (unsigned)(r >> 40) % 4;
      en.wait = wk == 1 ? CTP_WAIT_FD : wk == 2 ? CTP_WAIT_PTR : CTP_WAIT_NONE;
      en.obj = wk == 1 ? (r >> 44) % 50 : wk == 2 ? 0x7f0000001000ull + ((r >> 44) % 8) * 64 : 0;
      /* A standalone wake (CTP_PK_SOLO: `to` woken by `from`, which runs
       * on) one entry in 5, and an entry at its own site one in 4. */
      if (solos && (r >> 50) % 5 == 0)
        en.solo = 1, en.wait = CTP_WAIT_NONE, en.obj = 0, en.wake = 0;
      en.dsite = (r >> 54) % 4 == 0 ? (int64_t)((r >> 56) % 64) - 32 : 0;
      if (!o->nent) {
        o->ts0 = o->last = now;
        o->from = en.from;
        o->cur = en.from;
        o->pobj = 0;
      }
      en.dts = now - o->last;
      o->n = (size_t)(ctp_pk_put(o->b + o->n, &en, o->cur, o->pobj) - o->b);
      o->pobj = ctp_pk_pobj(o->pobj, &en);
      o->cur = ctp_pk_cur(&en);
      o->last = now;
      o->nwake += en.wake;
      o->nsolo += en.solo;
      if (++o->nent == 40 || o->n + CTP_PK_ENTRY_WIDE > CTP_PACK_BYTES)
        put_pack(enc, o, th);
    } else if (what < 86 || (what < 90 && !rebinding)) { /* an ordinary event, written at once */
      uint32_t c = (uint32_t)((r >> 20) % ncos);
      unsigned k = (unsigned)(r >> 28) % 3;
      struct ct_ev_item ev = {.ts = now, .probe_id = pid_of[c], .tid = 100 + th, .ev = own[c]++};
      ev.seq = 2 * (ev.ev + 1);
      if (k == 0) {
        ev.kind = CTP_KIND_SUSPEND;
        ev.wait = CTP_WAIT_FD;
        ev.obj = c;
        ev.addr = 0x3000;
      } else if (k == 1) {
        ev.kind = CTP_KIND_WAKE;
        ev.obj = 1 + (r >> 32) % ncos;
        ev.addr = 0x3100;
      } else {
        ev.kind = CTP_KIND_RESUME;
        ev.active = 1;
      }
      ct_ctw_event(enc, &ev);
    } else if (what < 88) { /* a coroutine born, or a station's next incarnation */
      int fresh = ncos < NCO + NEW && (r >> 20) % 2;
      uint32_t c = fresh ? ncos++ : (uint32_t)((r >> 24) % ncos);
      if (!fresh) { /* a reuse: the old one destroyed first */
        struct ct_ev_item ev = {.ts = now,
                                .probe_id = pid_of[c],
                                .tid = 100 + th,
                                .ev = own[c],
                                .kind = CTP_KIND_DESTROY};
        ev.seq = 2 * (ev.ev + 1);
        ct_ctw_event(enc, &ev);
        pid_of[c] = next_pid++;
        gen[c]++;
        own[c] = 0;
        now++;
      }
      struct held h = {.co = {.probe_id = pid_of[c],
                              .station = c,
                              .gen = gen[c],
                              .pid = 7,
                              .birth_ts = now,
                              .create_site = 0x2000}};
      put_or_hold(enc, op, h, (r >> 30) % 2);
    } else if (what < 90) { /* events lost: a gap entry */
      uint32_t c = (uint32_t)((r >> 20) % ncos);
      own[c] += 1 + (r >> 28) % 3;
      put_or_hold(enc, op, (struct held){.gap = 1, .probe_id = pid_of[c], .ev = own[c], .ns = now},
                  (r >> 30) % 2);
    } else if (what < 96) {
      if (o->nent)
        put_pack(enc, o, th);
    } else {
      ASSERT_OK(ct_ctw_flush(enc)); /* a chunk ends: the packs still open go on */
    }
  }
  for (unsigned th = 0; th < NTH; th++)
    if (op[th].nent)
      put_pack(enc, &op[th], th);
  ASSERT_OK(ct_ctw_flush(enc));
  ct_ctw_free(enc);
  ct_fsnap_free(walk);
  ct_fsnap_free(merge);
  free(w.buf);
}

int main(void) {
  for (uint32_t s = 0; s < STREAMS; s++)
    stream(s & 1, (s >> 1) & 1);
  ASSERT(lines > 0);
  ASSERT(rebound > 0 && rebound < chunks * 3 / 4); /* the walk and the merge both had chunks */
  printf("test-fsnap-order: %llu chunks (%llu with rebinds), %llu snapshots of %llu lines the "
         "same: ok\n",
         (unsigned long long)chunks, (unsigned long long)rebound, (unsigned long long)compared,
         (unsigned long long)lines);
  return 0;
}
