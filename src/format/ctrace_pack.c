/* ctrace_pack.c - the binary decoder's pack expansion (docs/ROUTE1.md): a pack entry holds
 * a thread's hot switches as its probe encoded them; here they become the three events each
 * (suspend, wake, resume) that the engine's formatter would have written, with the facts it
 * no longer keeps for them: the coroutine of a station (the last coroutine line in time
 * order), each coroutine's event numbering (its ordinary events' ev, shifted by its pack
 * events before them) and the clamp of its time. Every byte is input: checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/ctrace_pack.h"
#include "format/pack_entry.h"

/* A coroutine's numbering: the ev after its last ordinary event's (as the
 * formatter numbered it), its pack events given so far, its last ts. */
struct ctr_cs {
  uint64_t probe_id, ord_next, packed, last_ns;
};

/* A station: the coroutine of its last coroutine line (probe_id 0: none)
 * and that line's gen, and its pack events given so far (all incarnations). */
struct ctr_st {
  uint64_t probe_id, packed;
  uint32_t gen;
};

/* An open pack: a cursor on its entries, and the events of the entry under
 * it (their stations, resolved when given; waker: a standalone wake's
 * waker station, its obj once resolved, else UINT32_MAX); from_gen and
 * from, the header's, until its first event is given (then 0: checked). */
struct ctr_open {
  const uint8_t *p, *e;
  uint64_t tid, ns0, mult, ts0, ticks, site, pobj; /* pobj: ctp_pk_pobj's state */
  uint32_t cur, left, from_gen, from, waker;
  struct ct_ev_item it[3];
  uint32_t st[3];
  unsigned n, i;
};

struct ctr_stream {
  struct ctr_st *sp; /* by station */
  uint32_t nsp;
  uint64_t packed;   /* pack events given so far */
  uint64_t refused;  /* packs (their rest) and pack events refused: end's bad_records */
  uint64_t claimed;  /* pack events their headers claim (the formatter's harvested) */
  int seeded;        /* a flight dump's snapshot or window record: packs dropped before */
  char line[512];    /* a station_end or end line with them counted */
  struct ctr_cs *cs; /* open addressing on probe_id (0: empty) */
  size_t ccap, cused;
  struct ctr_open *op; /* in the order they were opened (ties: the first) */
  unsigned nop, cop, pick;
};

struct ctr_stream *ctr_stream_new(void) {
  return calloc(1, sizeof(struct ctr_stream));
}

void ctr_stream_free(struct ctr_stream *s) {
  if (!s)
    return;
  free(s->sp);
  free(s->cs);
  free(s->op);
  free(s);
}

void ctr_stream_chunk(struct ctr_stream *s) {
  s->nop = 0;
}

unsigned ctr_stream_open(const struct ctr_stream *s) {
  return s->nop;
}

/* Coroutine probe_id's numbering, added when add (NULL: absent, or no
 * memory to add it). */
static struct ctr_cs *cs_get(struct ctr_stream *s, uint64_t probe_id, int add) {
  if (!probe_id)
    return NULL;
  if (add && 2 * (s->cused + 1) > s->ccap) {
    size_t nc = s->ccap ? 2 * s->ccap : 1024;
    struct ctr_cs *n = calloc(nc, sizeof *n);
    if (!n)
      return NULL;
    for (size_t k = 0; k < s->ccap; k++)
      for (size_t j = (s->cs[k].probe_id * 0x9e3779b97f4a7c15ull) & (nc - 1); s->cs[k].probe_id;
           j = (j + 1) & (nc - 1))
        if (!n[j].probe_id) {
          n[j] = s->cs[k];
          break;
        }
    free(s->cs);
    s->cs = n;
    s->ccap = nc;
  }
  if (!s->ccap)
    return NULL;
  for (size_t j = (probe_id * 0x9e3779b97f4a7c15ull) & (s->ccap - 1);;
       j = (j + 1) & (s->ccap - 1)) {
    if (s->cs[j].probe_id == probe_id)
      return &s->cs[j];
    if (!s->cs[j].probe_id) {
      if (!add)
        return NULL;
      s->cused++;
      s->cs[j] = (struct ctr_cs){.probe_id = probe_id};
      return &s->cs[j];
    }
  }
}

/* Pack r's header checked and counted (its claims, a refusal) and its
 * cursor made in *o: 1, 0 when its header cannot be true (refused,
 * counted), -1 when r is shorter than a header. */
static int open_pack(struct ctr_stream *s, const struct ctr_pack_ref *r, struct ctr_open *o) {
  struct ctp_pack h;
  if (r->n < sizeof h)
    return -1;
  memcpy(&h, r->p, sizeof h);
  s->claimed += ctp_pack_events(&h); /* as the formatter counted it (rings_pack.c) */
  if (h.kind != CTP_KIND_PACK || h.nent == 0 || h.nbytes != r->n - sizeof h ||
      h.nbytes > CTP_PACK_BYTES || h.nsolo > h.nent) {
    s->refused++; /* its bytes are the probe's, maybe a scribbler's: the trace goes on */
    return 0;
  }
  *o = (struct ctr_open){.p = r->p + sizeof h,
                         .e = r->p + r->n,
                         .tid = r->tid,
                         .ns0 = r->ns0,
                         .mult = r->mult,
                         .ts0 = h.ts0,
                         .ticks = h.ts0,
                         .site = h.site,
                         .cur = h.from,
                         .left = h.nent,
                         .from_gen = h.from_gen,
                         .from = h.from};
  return 1;
}

int ctr_stream_add(struct ctr_stream *s, const struct ctr_pack_ref *r) {
  if (s->nop == s->cop) {
    unsigned nc = s->cop ? 2 * s->cop : 16;
    struct ctr_open *n = realloc(s->op, nc * sizeof *n);
    if (!n)
      return -1;
    s->op = n;
    s->cop = nc;
  }
  int k = open_pack(s, r, &s->op[s->nop]);
  s->nop += k > 0;
  return k < 0 ? -1 : 0;
}

/* o's next entry into *en, its time in *ts, o moved past it: 1, 0 when o
 * has no more, -1 when the entry does not decode. */
static inline int next_entry(struct ctr_open *o, struct ctp_pk_entry *en, uint64_t *ts) {
  if (o->left == 0)
    return 0;
  const uint8_t *p = ctp_pk_get(o->p, o->e, o->cur, o->pobj, en);
  if (!p)
    return -1;
  if (--o->left == 0 && p != o->e)
    return -1; /* bytes no entry covers */
  o->ticks += en->dts;
  *ts = o->ns0 + (uint64_t)(((unsigned __int128)(o->ticks - o->ts0) * o->mult) >> 32);
  o->cur = ctp_pk_cur(en);
  o->pobj = ctp_pk_pobj(o->pobj, en);
  o->p = p;
  return 1;
}

/* The events of o's next entry staged (o->it): 1, 0 when it has no more,
 * -1 when the entry does not decode. The items are the ones the engine's
 * formatter builds for a switch record's three records (a standalone
 * wake's: its wake record), but for probe_id, ev and seq, and a wake's
 * waker (ctr_stream_take). */
static int stage(struct ctr_open *o) {
  if (o->i < o->n)
    return 1;
  struct ctp_pk_entry en;
  uint64_t ts;
  int r = next_entry(o, &en, &ts);
  if (r <= 0)
    return r;
  uint64_t site = o->site + (uint64_t)en.dsite;
  unsigned n = 0;
  o->waker = UINT32_MAX;
  if (en.solo) {
    o->it[n] = (struct ct_ev_item){.ts = ts, .tid = o->tid, .addr = site, .kind = CTP_KIND_WAKE};
    o->st[n++] = en.to;
    o->waker = en.from;
  } else {
    o->it[n] = (struct ct_ev_item){.ts = ts,
                                   .tid = o->tid,
                                   .addr = site,
                                   .obj = en.obj,
                                   .kind = CTP_KIND_SUSPEND,
                                   .wait = en.wait};
    o->st[n++] = en.from;
    if (en.wake) {
      o->it[n] = (struct ct_ev_item){.ts = ts, .tid = o->tid, .addr = site, .kind = CTP_KIND_WAKE};
      o->st[n++] = en.from;
    }
    o->it[n] = (struct ct_ev_item){.ts = ts, .tid = o->tid, .kind = CTP_KIND_RESUME, .active = 1};
    o->st[n++] = en.to;
  }
  o->n = n;
  o->i = 0;
  return 1;
}

int ctr_stream_peek(struct ctr_stream *s, uint64_t *ts) {
  unsigned best = UINT32_MAX;
  for (unsigned k = 0; k < s->nop;) {
    int r = stage(&s->op[k]);
    /* An entry that does not decode: the pack's rest is refused, counted
     * (shared memory is the target's to scribble on; the chunk is fine). */
    s->refused += r < 0;
    if (r <= 0) { /* done: out, the others' order kept */
      memmove(&s->op[k], &s->op[k + 1], (s->nop - k - 1) * sizeof *s->op);
      s->nop--;
      continue;
    }
    if (best == UINT32_MAX || s->op[k].it[s->op[k].i].ts < s->op[best].it[s->op[best].i].ts)
      best = k;
    k++;
  }
  if (best == UINT32_MAX)
    return 0;
  s->pick = best;
  *ts = s->op[best].it[s->op[best].i].ts;
  return 1;
}

/* Whether o is refused at its first event: the probe wrote its header's
 * `from` station's gen in from_gen (low 16 bits; 0: not known, the later
 * part of a pack the engine split). Another incarnation's there now: the
 * pack is not this trace's (a scribbler's, or a station map gone wrong),
 * refused whole, counted; its events are then lost (ctr_stream_line). */
static int gen_refused(struct ctr_stream *s, const struct ctr_open *o) {
  uint32_t st = o->from;
  if (o->from_gen && st < s->nsp && s->sp[st].probe_id && s->sp[st].gen &&
      (uint16_t)s->sp[st].gen != o->from_gen) {
    s->refused++;
    return 1;
  }
  return 0;
}

/* n pack events (1, or 2: a suspend and its wake) of station st's
 * coroutine at *ts: numbered (*ev, the first's), their time clamped as the
 * formatter clamps (never before the coroutine's last event), counted.
 * Returns the coroutine, or NULL for a station no coroutine line named
 * (refused, counted, once an event). */
static inline struct ctr_cs *number(struct ctr_stream *s, uint32_t st, unsigned n, uint64_t *ts,
                                    uint64_t *ev) {
  struct ctr_cs *c = st < s->nsp ? cs_get(s, s->sp[st].probe_id, 0) : NULL;
  if (!c) {
    s->refused += n;
    return NULL;
  }
  *ev = c->ord_next + c->packed;
  c->packed += n;
  s->sp[st].packed += n;
  s->packed += n;
  if (*ts < c->last_ns)
    *ts = c->last_ns;
  c->last_ns = *ts;
  return c;
}

/* The coroutine of waker station st, a standalone wake's obj: 0 for one no
 * coroutine line named, as a wake by no coroutine is. */
static inline uint64_t waker_id(const struct ctr_stream *s, uint32_t st) {
  return st < s->nsp ? s->sp[st].probe_id : 0;
}

int ctr_stream_take(struct ctr_stream *s, struct ct_ev_item *ev) {
  struct ctr_open *o = &s->op[s->pick];
  uint32_t st = o->st[o->i];
  if (gen_refused(s, o)) {
    memmove(o, o + 1, (size_t)(s->nop - s->pick - 1) * sizeof *o);
    s->nop--;
    return 0;
  }
  o->from_gen = 0;
  *ev = o->it[o->i++];
  struct ctr_cs *c = number(s, st, 1, &ev->ts, &ev->ev);
  if (!c)
    return 0;
  /* A standalone wake names its waker, the running coroutine: one no
   * coroutine line named is 0, as a wake by no coroutine is. */
  if (o->waker != UINT32_MAX && o->i == 1)
    ev->obj = waker_id(s, o->waker);
  ev->probe_id = c->probe_id;
  ev->seq = 2 * (ev->ev + 1);
  return 1;
}

int ctr_stream_walk(struct ctr_stream *s, const struct ctr_pack_ref *r,
                    void (*fn)(void *ctx, const struct ctr_pack_sw *sw), void *ctx) {
  struct ctr_open o;
  int k = open_pack(s, r, &o);
  if (k <= 0)
    return k;
  struct ctr_pack_sw sw = {.tid = o.tid};
  if (gen_refused(s, &o))
    return 0;
  struct ctp_pk_entry en;
  uint64_t ts;
  while ((k = next_entry(&o, &en, &ts)) > 0) {
    struct ctr_cs *c = NULL;
    sw.site = o.site + (uint64_t)en.dsite;
    sw.obj = en.solo ? waker_id(s, en.from) : en.obj;
    sw.wait = en.wait;
    sw.wake = en.wake;
    sw.solo = en.solo;
    sw.raw = sw.ts[0] = sw.ts[1] = ts;
    if (!en.solo)
      c = number(s, en.from, 1u + en.wake, &sw.ts[0], &sw.ev[0]);
    sw.id[0] = c ? c->probe_id : 0;
    c = number(s, en.to, 1, &sw.ts[1], &sw.ev[1]);
    sw.id[1] = c ? c->probe_id : 0;
    fn(ctx, &sw);
  }
  s->refused += k < 0; /* an entry that does not decode: the pack's rest refused, counted */
  return 0;
}

/* The unsigned number after key in the line l (n bytes): its offset and
 * length (*at, *len), or 0 when the line has none. */
static int num_at(const char *l, size_t n, const char *key, size_t *at, size_t *len) {
  size_t kn = strlen(key);
  for (size_t i = 0; i + kn < n; i++)
    if (!memcmp(l + i, key, kn)) {
      size_t j = i + kn;
      while (j < n && l[j] >= '0' && l[j] <= '9')
        j++;
      if (j == i + kn || j - i - kn > 20)
        return 0;
      *at = i + kn;
      *len = j - *at;
      return 1;
    }
  return 0;
}

/* Line l with add[k] added to the number after keys[k] (at most four, in
 * the line's order, NULL-ended when fewer; a sum below 0 is 0), into
 * s->line; 0, or -1 when it does not fit or a number is not there. */
static int add_to(struct ctr_stream *s, const char *l, size_t n, const char *const keys[4],
                  const int64_t add[4], size_t *out) {
  size_t o = 0, from = 0;
  for (int k = 0; k < 4 && keys[k]; k++) {
    size_t at, len;
    if (!num_at(l + from, n - from, keys[k], &at, &len))
      return -1;
    at += from;
    char num[24];
    memcpy(num, l + at, len);
    num[len] = 0;
    unsigned long long v = strtoull(num, NULL, 10);
    v = add[k] < 0 && (unsigned long long)-add[k] > v ? 0 : v + (unsigned long long)add[k];
    int w = snprintf(NULL, 0, "%llu", v);
    if (o + (at - from) + (size_t)w + 1 > sizeof s->line)
      return -1;
    memcpy(s->line + o, l + from, at - from);
    o += at - from;
    snprintf(s->line + o, (size_t)w + 1, "%llu", v);
    o += (size_t)w;
    from = at + len;
  }
  if (o + (n - from) > sizeof s->line)
    return -1;
  memcpy(s->line + o, l + from, n - from);
  *out = o + (n - from);
  return 0;
}

/* The unsigned number after key in line l (n bytes) into *v: 1, or 0 when
 * the line has none. */
static int num_get(const char *l, size_t n, const char *key, uint64_t *v) {
  size_t at, len;
  char num[24];
  if (!num_at(l, n, key, &at, &len))
    return 0;
  memcpy(num, l + at, len);
  num[len] = 0;
  *v = strtoull(num, NULL, 10);
  return 1;
}

/* Station st names coroutine probe_id, of gen, from now on (gen 0: not
 * known, its packs' from_gen unchecked; no memory, or a station no file can
 * have: left as it was). */
static void sp_set(struct ctr_stream *s, uint64_t st, uint64_t probe_id, uint64_t gen) {
  if (st >= CTP_STATIONS_MAX)
    return;
  if (st >= s->nsp) {
    uint32_t nn = s->nsp ? s->nsp : 1024;
    while (nn <= st)
      nn *= 2;
    struct ctr_st *n = realloc(s->sp, nn * sizeof *n);
    if (!n)
      return;
    memset(n + s->nsp, 0, (nn - s->nsp) * sizeof *n);
    s->sp = n;
    s->nsp = nn;
  }
  s->sp[st].probe_id = probe_id;
  s->sp[st].gen = (uint32_t)gen;
}

/* A dump's snapshot line (docs/FLIGHT.md "A dump"): its window starts mid-run,
 * its packs name stations whose coroutine lines were dropped before it. The
 * line gives the coroutine's station (when its coroutine line is known), its
 * last ev, the pack events among its events ("packed": its ev beyond the
 * formatter's numbering, flight_snap.c) and its last time, which is what
 * the stream state would hold had it read the dropped chunks (as Go's
 * tracer writes each goroutine's status at a generation's start). Every
 * number is input: a wrong one misnumbers, never overruns. */
static void seed(struct ctr_stream *s, const char *l, size_t n) {
  uint64_t id, st, ev = 0, packed = 0, ts = 0, tid;
  if (!num_get(l, n, ",\"probe_id\":", &id) || !id)
    return;
  uint64_t gen = 0;
  (void)num_get(l, n, ",\"gen\":", &gen);
  if (num_get(l, n, ",\"station\":", &st))
    sp_set(s, st, id, gen);
  s->seeded = 1;
  struct ctr_cs *c = cs_get(s, id, 1);
  if (!c)
    return;
  (void)num_get(l, n, ",\"ev\":", &ev);
  (void)num_get(l, n, ",\"packed\":", &packed);
  (void)num_get(l, n, ",\"ts\":", &ts);
  /* No event yet (its coroutine line alone): numbered from 0, as after a
   * coroutine line. */
  int any = num_get(l, n, ",\"tid\":", &tid) || ev;
  packed = any && packed <= ev + 1 ? packed : 0;
  *c = (struct ctr_cs){
      .probe_id = id, .ord_next = any ? ev + 1 - packed : 0, .packed = packed, .last_ns = ts};
}

/* Contract: see ctrace_pack.h. Only ever forward: a gap entry behind the
 * coroutine's numbering (input) changes nothing. */
void ctr_stream_gap(struct ctr_stream *s, const struct ct_ev_item *g) {
  struct ctr_cs *c = cs_get(s, g->probe_id, 0);
  if (c && g->ev > c->ord_next)
    c->ord_next = g->ev;
}

uint64_t ctr_stream_packed(struct ctr_stream *s, uint64_t probe_id) {
  struct ctr_cs *c = cs_get(s, probe_id, 0);
  return c ? c->packed : 0;
}

void ctr_stream_line(struct ctr_stream *s, const char **line, size_t *n) {
  static const char se[] = "{\"type\":\"station_end\",", end[] = "{\"type\":\"end\",";
  static const char *const both[4] = {",\"events\":", ",\"harvested\":", NULL, NULL};
  static const char *const ends[4] = {
      ",\"events\":", ",\"harvested\":", ",\"lost\":", ",\"bad_records\":"};
  static const char meta[] = "{\"type\":\"meta\",";
  static const char snap[] = "{\"type\":\"snapshot\",";
  static const char window[] = "{\"type\":\"window\",";
  const char *l = *line;
  size_t len = *n, at, sl, out;
  if (len > sizeof snap && !memcmp(l, snap, sizeof snap - 1)) {
    seed(s, l, len);
  } else if (len > sizeof window && !memcmp(l, window, sizeof window - 1)) {
    /* A flight dump's window record, before its chunks (flight.c
     * ct_flight_begin): chunks dropped before the window put their packs in
     * the end's harvested, whether or not a snapshot record seeds the
     * stream. A dump of the older layout has it last, after the end: too
     * late to change anything, as that layout was read. */
    uint64_t dropped = 0;
    if (num_get(l, len, ",\"dropped_chunks\":", &dropped) && dropped)
      s->seeded = 1;
  } else if (len > sizeof meta && !memcmp(l, meta, sizeof meta - 1)) {
    /* A run appended (run --append): its stations, coroutines and counts are its own. */
    if (s->nsp)
      memset(s->sp, 0, s->nsp * sizeof *s->sp);
    if (s->ccap)
      memset(s->cs, 0, s->ccap * sizeof *s->cs);
    s->cused = 0;
    s->packed = 0;
    s->claimed = 0;
    s->refused = 0;
    s->seeded = 0;
  } else if (len > sizeof se && !memcmp(l, se, sizeof se - 1)) {
    /* The engine counted its station's ordinary events only. */
    if (!num_at(l, len, ",\"station\":", &at, &sl))
      return;
    uint64_t st = strtoull(l + at, NULL, 10);
    uint64_t add = st < s->nsp ? s->sp[st].packed : 0;
    if (add && add_to(s, l, len, both, (const int64_t[4]){(int64_t)add, (int64_t)add}, &out) == 0) {
      *line = s->line;
      *n = out;
    }
  } else if (len > sizeof end && !memcmp(l, end, sizeof end - 1)) {
    /* events sums the station_end lines: the pack events come on top, as
     * their headers claim them; harvested counted those claims (the
     * formatter reads no entry): the events refused here are lost, not
     * harvested, so that events = harvested + lost still; each refusal is
     * a bad record. */
    int64_t r = (int64_t)(s->claimed - s->packed), claims = (int64_t)s->claimed;
    uint64_t ev, hv, lost;
    /* A flight dump: the packs dropped before its window were claimed in
     * harvested too, but their events are in no station_end line read
     * here: events is what harvested and lost say (the window's refusals
     * moved from one to the other as above). */
    if (s->seeded && num_get(l, len, ends[0], &ev) && num_get(l, len, ends[1], &hv) &&
        num_get(l, len, ends[2], &lost))
      claims = (int64_t)(hv + lost - ev);
    const int64_t add[4] = {claims, -r, r, (int64_t)s->refused};
    if ((s->claimed || s->seeded) && add_to(s, l, len, ends, add, &out) == 0) {
      *line = s->line;
      *n = out;
    }
  }
}

void ctr_stream_post(struct ctr_stream *s, int k, struct ct_ev_item *ev,
                     const struct ct_coro_item *co) {
  if (k == 3) {
    struct ctr_cs *c = cs_get(s, co->probe_id, 1);
    if (c)
      *c = (struct ctr_cs){.probe_id = co->probe_id}; /* a new incarnation counts from 0 */
    sp_set(s, co->station, co->probe_id, co->gen);
    return;
  }
  if (k != 1)
    return;
  struct ctr_cs *c = cs_get(s, ev->probe_id, 0);
  if (!c)
    return;
  uint64_t own = ev->ev;
  if (c->packed) {
    ev->ev += c->packed;
    if (ev->seq == 2 * (own + 1))
      ev->seq = 2 * (ev->ev + 1);
  }
  c->ord_next = own + 1;
  if (ev->ts > c->last_ns)
    c->last_ns = ev->ts;
}
