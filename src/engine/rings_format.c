/* rings_format.c - the engine's side of v2, the formatter thread's half:
 * when it gets to a pass's capture blocks (rings.c fills them), it merges
 * them by time, attributes each record to its station's incarnation, writes
 * its line or binary entry, and releases destroyed stations one full pass
 * later. Every index the target wrote is checked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/radix.h"
#include "common/runsort.h"
#include "engine/rings_int.h"
#include "engine/sink.h"
#include "format/ctrace_enc.h"
#include "format/records.h"

CT_RUNSORT_DEFINE(sort_records, struct ct_rrec, r.ts)

/* The pass's records in time order, ties in capture order. Each ring's
 * records are already in time order, so the batch is a few sorted runs (one
 * per ring and block): merged (runsort.h). ENOMEM: left unmerged, its
 * records then come out of time order, counted nowhere but harmless to the
 * trace's framing. */
static void sort_pass(struct ct_harvest *h) {
  size_t n = h->nbatch, k = 1;
  while (k < n && h->batch[k].r.ts >= h->batch[k - 1].r.ts)
    k++;
  if (k >= n || ct_grow((void **)&h->merge, &h->capmerge, n, sizeof(*h->merge), CT_GROW_FIRST))
    return;
  sort_records(&h->batch, &h->capbatch, &h->merge, &h->capmerge, n);
}

/* Station i's drop count as the numbering takes it in (st its state): its
 * v2_lost; under --pack the count its last gap entry took in, st->dropped,
 * since there the pass's gap entries number the losses (ct_rings_gaps):
 * neither emit_all nor the fast paths read v2_lost, whose line (one of the
 * station's 1 KiB, a page of the shared memory for every 4 stations) was
 * then a cold line and a TLB miss at every record of a server's short-lived
 * coroutines. */
static inline uint64_t drops(const struct ct_harvest *h, uint32_t i,
                             const struct ct_station_state *st) {
  if (h->pack)
    return st->dropped;
  return atomic_load_explicit(&ctp_station_at(h->base, i)->v2_lost, memory_order_relaxed);
}

/* A new incarnation of station i starts (its create record, or a later
 * record when the create was lost): its coroutine line. */
static void incarnate(struct ct_harvest *h, uint32_t i, uint32_t gen, uint64_t birth_ns,
                      uint64_t first_ev) {
  struct ct_station_state *st = &h->st[i];
  struct ctp_station *s = ctp_station_at(h->base, i);
  /* Published before the create record (release of ext_flags, then the
   * ring head we acquired); the station is not reused before we release it. */
  uint32_t flags = atomic_load_explicit(&s->ext_flags, memory_order_acquire);
  struct ct_coro_item c = {.probe_id = LOAD(&s->probe_id),
                           .birth_ts = birth_ns,
                           .create_site = LOAD(&s->create_site),
                           .parent = LOAD(&s->parent_id),
                           .station = i,
                           .pid = LOAD(&s->pid),
                           .gen = gen,
                           .has_label = (flags & CTP_STF_LABEL) != 0};
  /* Up to its NUL, which is all a line of it holds (the rest stays 0): a
   * short name is a few loads instead of 64, at every create. */
  for (unsigned k = 0; c.has_label && k < CTP_LABEL_MAX - 1 && (c.label[k] = LOAD(&s->label[k]));
       k++)
    ;
  if (!st->live || st->destroyed)
    atomic_fetch_add_explicit(
        &h->v2_alive, 1,
        memory_order_relaxed); /* else the last incarnation's destroy was lost: it ends here */
  st->probe_id = c.probe_id;
  st->pid = c.pid;
  st->gen = gen;
  st->live = 1;
  st->destroyed = 0;
  st->queued = 0;
  st->next_ev = first_ev;
  st->last_ts = 0;
  /* st->dropped stays the count at the station's last record (0 on a fresh
   * station): read here, the baseline took in every drop since the create
   * was written, and an engine that lags a burst formats a create long after
   * (issue #34 N6: no gap at all, then false "resumed while running"). A
   * past incarnation's late drop only makes a gap here too: not judged. */
  st->coro_done = 1;
  h->incarnations++;
  ct_sink_out_coro(h->sink, &c);
}

/* The record's station index, or -1 when the record is bad. */
static int64_t check(struct ct_harvest *h, const struct ctp_rec *r) {
  if (r->kind < CTP_KIND_CREATE || r->kind >= CTP_KIND_MAX_ || r->wait >= CTP_WAIT_MAX_)
    return -1;
  uint32_t i = r->station;
  if (i >= h->n)
    return -1;
  if (i >= h->c_used) {
    uint32_t a = atomic_load_explicit(&h->hdr->allocated_count, memory_order_acquire);
    h->c_used = a < h->n ? a : h->n;
    if (i >= a)
      return -1; /* never allocated */
  }
  struct ctp_station *s = ctp_station_at(h->base, i);
  if (!h->st[i].live &&
      !(atomic_load_explicit(&s->ext_flags, memory_order_acquire) & CTP_STF_RINGS))
    return -1;
  return i;
}

/* Attribute one record and write its line (formatter thread): emit's
 * general path, every case. */
static __attribute__((noinline)) void emit_all(struct ct_harvest *h, const struct ctp_rec *rp,
                                               uint32_t tid) {
  /* A copy: our stores below (uint64_t fields) could alias the record's, and
   * each would make the compiler read it again. */
  const struct ctp_rec rc = *rp, *r = &rc;
  int64_t idx = check(h, r);
  CT_COVER(CT_COV_EMIT_ALL);
  if (idx < 0) {
    h->bad++;
    return;
  }
  uint32_t i = (uint32_t)idx;
  struct ct_station_state *st = &h->st[i];
  uint64_t ns = ct_clock_ns(&h->cclock, r->ts);
  int current = st->live && (uint16_t)st->gen == r->gen;
  if (r->kind == CTP_KIND_CREATE) {
    if (current && !st->queued) {
      st->stale++; /* a second create of one incarnation */
      h->stale++;
      return;
    }
    uint32_t g = LOAD(&ctp_station_at(h->base, i)->gen);
    incarnate(h, i, (uint16_t)g == r->gen ? g : r->gen, ns, 0);
  } else if (!current || st->queued) {
    /* Not the incarnation we know: a record of a past one (stale), or the
     * first we see of the station's current one, whose create was lost. */
    uint32_t g = LOAD(&ctp_station_at(h->base, i)->gen);
    if ((uint16_t)g != r->gen || (current && st->queued)) {
      st->stale++;
      h->stale++;
      return;
    }
    incarnate(h, i, g, ns, 1); /* ev 0, the create, is missing: a gap */
  }
  /* Events of this station the writers dropped since its last record: a gap
   * in ev, so readers see where events are missing. A drop by the thread of
   * this record is seen (its fetch_add precedes the head store we acquired);
   * one by another thread may show a record later. Not before a create: a
   * drop counted since the station's last record goes before the next one,
   * not before ev 0. Under --pack the pass's gap entries say it instead
   * (ct_rings_gaps), with the count the harvest read where the loss lies:
   * read here, after the copy, a drop later than this record (the engine
   * stopped a while) had its gap before it, and a pack-only neighbour's
   * events after it judged across the hole. */
  uint64_t dropped = drops(h, i, st);
  if (r->kind != CTP_KIND_CREATE && dropped != st->dropped) {
    /* Only ever added to, one per drop: a count that went down or jumped
     * beyond any program's rate was written over; no gap from it. */
    if (dropped > st->dropped && ct_count_sane(h, dropped - st->dropped))
      st->next_ev += dropped - st->dropped;
    else if (!st->c_corrupt) {
      st->c_corrupt = 1;
      ct_harvest_corrupt(h);
    }
    st->dropped = dropped;
  }
  /* Each pass re-anchors the conversion: a few ns of step there must not
   * put a coroutine's event before its previous one. */
  if (ns < st->last_ts)
    ns = st->last_ts;
  st->last_ts = ns;
  /* The binary trace encodes from the fields; an item only for JSONL. */
  struct ct_sink *sk = h->sink;
  if (sk->enc)
    ct_ctw_v2(sk->enc, ns, st->probe_id, tid, r->kind, r->wait, r->site, r->obj, st->next_ev);
  if (!sk->enc || sk->jw.buf) {
    struct ct_ev_item it = {.ts = ns,
                            .probe_id = st->probe_id,
                            .tid = tid,
                            .addr = r->kind == CTP_KIND_RESUME ? 0 : r->site,
                            .seq = 2 * (st->next_ev + 1),
                            .obj = r->obj,
                            .ev = st->next_ev,
                            .gen = st->gen,
                            .kind = r->kind,
                            .wait = r->wait,
                            .active = r->kind == CTP_KIND_RESUME};
    if (!sk->enc)
      ct_rec_event(&sk->fw, &it);
    if (sk->jw.buf)
      ct_rec_event(&sk->jw, &it);
  }
  st->next_ev++;
  st->harvested++;
  h->v2_harvested++;
  if (r->kind == CTP_KIND_DESTROY && !st->destroyed) {
    st->destroyed = 1;
    atomic_fetch_sub_explicit(&h->v2_alive, 1, memory_order_relaxed);
    if (ct_grow((void **)&h->rel_now, &h->caprel_now, h->nrel_now + 1, sizeof(uint32_t),
                CT_GROW_FIRST) == 0)
      h->rel_now[h->nrel_now++] = i;
  }
}

/* emit's common case, coroutines taking turns, with no incarnation or drop
 * logic: a suspend, resume or wake (wait in range) of a station below
 * c_used (check's bounds), live, not queued, of the incarnation we know,
 * whose drop count is the one last read; binary trace only, and the
 * encoder's slot hit (ct_ctw_v2_hit). The state it leaves, and the bytes,
 * are emit_all's. Returns 0, nothing changed, when emit_all must take r. */
static inline __attribute__((always_inline)) int emit_hit(struct ct_harvest *h,
                                                          const struct ctp_rec *r, uint32_t tid) {
  const uint32_t i = r->station;
  const uint8_t kind = r->kind, wait = r->wait;
  struct ct_sink *sk = h->sink;
  if ((kind != CTP_KIND_SUSPEND && kind != CTP_KIND_RESUME && kind != CTP_KIND_WAKE) ||
      wait >= CTP_WAIT_MAX_ || i >= h->c_used || !sk->enc || sk->jw.buf)
    return 0;
  struct ct_station_state *st = &h->st[i];
  if (!st->live || st->queued || (uint16_t)st->gen != r->gen || drops(h, i, st) != st->dropped)
    return 0;
  uint64_t ns = ct_clock_ns(&h->cclock, r->ts), ev = st->next_ev;
  if (ns < st->last_ts)
    ns = st->last_ts;
  if (!ct_ctw_v2_hit(sk->enc, ns, st->probe_id, tid, kind, wait, r->site, r->obj, ev))
    return 0;
  st->last_ts = ns;
  st->next_ev = ev + 1;
  st->harvested++;
  h->v2_harvested++;
  CT_COVER(CT_COV_EMIT_HIT);
  return 1;
}

/* A switch record's three events as one switch entry (ct_ctw_switch), in
 * emit_hit's common case for both coroutines: binary trace only, both
 * stations below c_used, live, not queued, of the incarnation we know,
 * their drop counts the ones last read, two of them with two probe_ids, and
 * ts not before either's last event (one ts for the three). Their states move on as
 * emit_hit's would for each event. Returns 0, nothing changed, else. */
static inline int switch_entry(struct ct_harvest *h, const struct ctp_swrec *sw, uint8_t wait,
                               int wake, uint32_t tid) {
  struct ct_sink *sk = h->sink;
  const uint32_t f = sw->from, t = sw->to;
  if (!sk->enc || sk->jw.buf || f >= h->c_used || t >= h->c_used || f == t)
    return 0;
  struct ct_station_state *fs = &h->st[f], *ts = &h->st[t];
  if (!fs->live || fs->queued || (uint16_t)fs->gen != sw->from_gen || !ts->live || ts->queued ||
      (uint16_t)ts->gen != sw->to_gen || drops(h, f, fs) != fs->dropped ||
      drops(h, t, ts) != ts->dropped)
    return 0;
  uint64_t ns = ct_clock_ns(&h->cclock, sw->ts);
  /* Two stations may carry one probe_id (the program names coroutines):
   * the entry names coroutines by it, so they must differ. */
  if (ns < fs->last_ts || ns < ts->last_ts || fs->probe_id == ts->probe_id)
    return 0;
  ct_ctw_switch(sk->enc, ns, tid, fs->probe_id, fs->next_ev, wake, wait, sw->site, sw->obj,
                ts->probe_id, ts->next_ev);
  fs->last_ts = ts->last_ts = ns;
  fs->next_ev += 1u + (unsigned)wake;
  fs->harvested += 1u + (unsigned)wake;
  ts->next_ev++;
  ts->harvested++;
  h->v2_harvested += 2u + (unsigned)wake;
  CT_COVER(CT_COV_SW_ENTRY);
  return 1;
}

/* A switch record's three events one by one, as their own records would be
 * written (emit_hit, else emit_all): the suspend of `from`, its wake when
 * CTP_SW_WAKE, the resume of `to`, all at its ts. Out of line: inlined into
 * emit_switch, its three emit_hit copies made the switch entry's path save
 * and spill more registers at every record (bench-format -S: 4-10 % of the
 * formatter's time). */
static __attribute__((noinline)) void
emit_switch_split(struct ct_harvest *h, const struct ctp_swrec *sw, uint8_t wait, uint32_t tid) {
  CT_COVER(CT_COV_SW_SPLIT);
  struct ctp_rec ev[3] = {
      {.ts = sw->ts,
       .station = sw->from,
       .gen = sw->from_gen,
       .kind = CTP_KIND_SUSPEND,
       .wait = wait,
       .site = sw->site,
       .obj = sw->obj},
      {.ts = sw->ts,
       .station = sw->from,
       .gen = sw->from_gen,
       .kind = CTP_KIND_WAKE,
       .site = sw->site},
      {.ts = sw->ts, .station = sw->to, .gen = sw->to_gen, .kind = CTP_KIND_RESUME}};
  for (unsigned k = 0; k < 3; k++)
    if ((k != 1 || (sw->wait & CTP_SW_WAKE)) && !emit_hit(h, &ev[k], tid))
      emit_all(h, &ev[k], tid);
}

/* A switch record (struct ctp_swrec): one switch entry (switch_entry), else
 * its three events one by one (emit_switch_split). A wait out of range makes
 * it one bad record; a bad station, one per event of that station. */
static __attribute__((noinline)) void emit_switch(struct ct_harvest *h, const struct ctp_rec *r,
                                                  uint32_t tid) {
  struct ctp_swrec sw;
  memcpy(&sw, r, sizeof sw);
  uint8_t wait = sw.wait & (uint8_t)~CTP_SW_WAKE;
  int wake = (sw.wait & CTP_SW_WAKE) != 0;
  if (wait >= CTP_WAIT_MAX_) {
    h->bad++;
    return;
  }
  if (!switch_entry(h, &sw, wait, wake, tid))
    emit_switch_split(h, &sw, wait, tid);
}

/* Attribute one record and write its line (formatter thread). */
static inline void emit(struct ct_harvest *h, const struct ctp_rec *r, uint32_t tid) {
  if (__builtin_expect(r->kind == CTP_KIND_SWITCH, 0))
    emit_switch(h, r, tid);
  else if (!emit_hit(h, r, tid))
    emit_all(h, r, tid);
}

/* Released stations ahead of the one looked at whose state is fetched. */
#define RELEASE_AHEAD 8

/* Two station lists (and their capacities) trade places. */
static void swap_lists(uint32_t **a, size_t *ca, uint32_t **b, size_t *cb) {
  uint32_t *t = *a;
  size_t tc = *ca;
  *a = *b;
  *ca = *cb;
  *b = t;
  *cb = tc;
}

/* Stations destroyed in the previous pass: this pass drained every ring to a
 * head loaded after that pass ended, so nothing of their incarnation is still
 * coming (docs/PROTOCOL.md "Station reuse"). Back to the free-station queue. */
static void release(struct ct_harvest *h) {
  uint64_t before = h->released;
  /* In station order (they came in the order of their destroys, at random
   * on a server): the probe pops them in that order, so a create's station
   * is the neighbour of the one before in the shared memory (4 a page) and
   * in our states, and the creates' reads of stations (the probe's, and
   * ours in incarnate) share pages instead of taking a TLB miss each (on a
   * VM a two-level walk); our state lines below are read in order too. The
   * capacity of rel_prev and rel_tmp trade places with them. */
  size_t n = h->nrel_prev;
  if (n > 1 && !ct_grow((void **)&h->rel_tmp, &h->caprel_tmp, n, sizeof(uint32_t), CT_GROW_FIRST) &&
      ct_radix_u32(h->rel_prev, h->rel_tmp, n, h->n - 1) != h->rel_prev) {
    swap_lists(&h->rel_prev, &h->caprel_prev, &h->rel_tmp, &h->caprel_tmp);
  }
  for (size_t k = 0; k < h->nrel_prev; k++) {
    /* Their states were last touched a pass ago, when the destroys came: a
     * miss each (a server's pass releases hundreds; the demo: ~1 in 10
     * records). Entries are our own, below n. */
    if (k + RELEASE_AHEAD < h->nrel_prev)
      prefetch(&h->st[h->rel_prev[k + RELEASE_AHEAD]].destroyed);
    uint32_t i = h->rel_prev[k];
    struct ct_station_state *st = &h->st[i];
    if (!st->destroyed || st->queued)
      continue;
    if (ct_rings_push(h, h->sq, &h->sq_tail, h->n, i) == 0) {
      st->queued = 1;
      h->released++;
    }
  }
  if (h->released != before && h->lossless)
    ct_harvest_wake_waiters(h); /* a writer may wait for a station */
  swap_lists(&h->rel_prev, &h->caprel_prev, &h->rel_now, &h->caprel_now);
  h->nrel_prev = h->nrel_now;
  h->nrel_now = 0;
}

/* Start the cache misses emit will take on record r: the engine's state of
 * its station, the station's drop count, for a create the station's first
 * line and label (incarnate), for a switch the same of its `to` station. A server's coroutines are
 * many, each with a few events: these lines are cold (the demo under redis-benchmark: a new station
 * every ten records). Any index below n is in the mapping. */
static inline void prefetch_rec(const struct ct_harvest *h, const struct ctp_rec *r,
                                size_t stride) {
  /* The record before it, stride bytes back (in the batch, a ct_rrec's). */
  if (r->station == ((const struct ctp_rec *)((const char *)r - stride))->station)
    return; /* the record before it fetches the same lines (a burst of one coroutine) */
  uint32_t i = r->station < h->n ? r->station : 0; /* out of range: station 0, harmless */
  const struct ctp_station *s = ctp_station_at(h->base, i);
  /* The fields emit reads, one line (struct ct_station_state). */
  prefetch(&h->st[i]);
  if (!h->pack)
    prefetch(&s->v2_lost);
  if (r->kind == CTP_KIND_CREATE) {
    prefetch(s);
    prefetch(s->label);
  }
  if (r->kind == CTP_KIND_SWITCH) { /* and the coroutine switched to's */
    struct ctp_swrec sw;
    memcpy(&sw, r, sizeof sw);
    uint32_t t = sw.to < h->n ? sw.to : 0;
    prefetch(&h->st[t]);
    if (!h->pack)
      prefetch(&ctp_station_at(h->base, t)->v2_lost);
  }
}

/* The record stride records after r (stride: a struct ctp_rec's or a
 * struct ct_rrec's size; the record is at its start). */
static inline const struct ctp_rec *rec_at(const struct ctp_rec *r, size_t stride, size_t k) {
  return (const struct ctp_rec *)((const char *)r + k * stride);
}

/* Of the n records from r on (stride bytes apart: a run's records, or the
 * batch's), those with ts below lim that continue the record before r in
 * one stretch, written the fast way: each one emit would write as the next
 * event of the encoder's last coroutine, on its last tid, with nothing else
 * (the same station and incarnation, the encoder's state and the station's
 * as the entry before left them; a suspend, resume or wake; no drop counted
 * since). Their bytes are emit's; of the tests emit takes per record, those
 * the stretch's start decided are not taken again, and kind, wait,
 * incarnation, tid and drop count still are, per record. Binary trace only
 * (a JSONL copy takes emit). Returns the number written (0: emit takes r).
 * Inline into emit_same_run and emit_same_batch, with a constant stride. */
static inline __attribute__((always_inline)) size_t emit_same(struct ct_harvest *h,
                                                              const struct ctp_rec *r,
                                                              size_t stride, size_t n, uint64_t lim,
                                                              uint32_t tid) {
  struct ct_sink *sk = h->sink;
  struct ct_ctw *enc = sk->enc;
  uint32_t i = r->station;
  /* i below c_used is below n and allocated (check). */
  if (!enc || sk->jw.buf || i >= h->c_used)
    return 0;
  struct ct_station_state *st = &h->st[i];
  struct ct_ctw_run s;
  const uint64_t probe = st->probe_id, ev0 = st->next_ev;
  if (!st->live || st->queued || !ct_ctw_run_begin(enc, &s, probe, tid, ev0, st->last_ts))
    return 0;
  const uint16_t gen = (uint16_t)st->gen;
  const struct ct_clock ck = h->cclock; /* in registers: stores through s.p alias h */
  /* NULL under --pack: no drop count to watch (drops). */
  const _Atomic uint64_t *lost = h->pack ? NULL : &ctp_station_at(h->base, i)->v2_lost;
  const uint64_t dropped = st->dropped;
  const struct ctp_rec *const r0 = r, *const e = rec_at(r, stride, n);
  for (; r != e; r = rec_at(r, stride, 1)) {
    if (r->ts >= lim || r->station != i || r->gen != gen || s.p > s.end)
      break;
    if (stride != sizeof(*r) && ((const struct ct_rrec *)r)->tid != tid)
      break;
    uint8_t kind = r->kind, wait = r->wait;
    if ((kind != CTP_KIND_SUSPEND && kind != CTP_KIND_RESUME && kind != CTP_KIND_WAKE) ||
        wait >= CTP_WAIT_MAX_ ||
        (lost && atomic_load_explicit(lost, memory_order_relaxed) != dropped))
      break;
    if ((size_t)((const char *)e - (const char *)r) > PREFETCH_AHEAD * stride)
      prefetch_rec(h, rec_at(r, stride, PREFETCH_AHEAD), stride);
    /* Clamped as emit does: never before the coroutine's last event. */
    uint64_t ns = ct_clock_ns(&ck, r->ts);
    ct_ctw_run_v2(enc, &s, ns < s.last_ts ? s.last_ts : ns, kind, wait, r->site, r->obj);
  }
  size_t k = (size_t)((const char *)r - (const char *)r0) / stride;
  if (k) {
    CT_COVER(CT_COV_SAME);
    ct_ctw_run_end(enc, &s, probe, ev0 + k, k);
    st->last_ts = s.last_ts;
    st->next_ev = ev0 + k;
    st->harvested += k;
    h->v2_harvested += k;
  }
  return k;
}

/* Of the n records from r on (stride as emit_same's), those with ts below
 * lim that belong to r's station or to the station of the encoder's last
 * entry, in any order, written the fast way: two coroutines taking turns on
 * one thread (two fibers handing it back and forth: every record changes
 * coroutine, so emit_same never starts and emit took each). Each is the
 * entry emit would write, with the tests emit takes per record that the
 * stretch's start did not decide (station, incarnation, kind, wait, tid,
 * drop count). Returns the number written (0: emit takes r). */
static inline __attribute__((always_inline)) size_t emit_two(struct ct_harvest *h,
                                                             const struct ctp_rec *r, size_t stride,
                                                             size_t n, uint64_t lim, uint32_t tid) {
  struct ct_sink *sk = h->sink;
  struct ct_ctw *enc = sk->enc;
  if (!enc || sk->jw.buf || !enc->have_prev)
    return 0;
  /* [0]: r's station; [1]: the record's before r (the caller has one),
   * which must be the encoder's last entry (ct_ctw_pair_begin). */
  const uint32_t i[2] = {r->station, ((const struct ctp_rec *)((const char *)r - stride))->station};
  struct ct_station_state *st[2];
  uint64_t probe[2], ev[2], last[2], dropped[2];
  const _Atomic uint64_t *lost[2];
  uint16_t gen[2];
  if (i[0] >= h->c_used || i[1] >= h->c_used || i[1] == i[0])
    return 0;
  st[0] = &h->st[i[0]];
  st[1] = &h->st[i[1]];
  for (unsigned k = 0; k < 2; k++) {
    if (!st[k]->live || st[k]->queued)
      return 0;
    probe[k] = st[k]->probe_id;
    ev[k] = st[k]->next_ev;
    last[k] = st[k]->last_ts;
    dropped[k] = st[k]->dropped;
    gen[k] = (uint16_t)st[k]->gen;
    lost[k] = h->pack ? NULL : &ctp_station_at(h->base, i[k])->v2_lost; /* as emit_same's */
  }
  struct ct_ctw_pair s;
  if (!ct_ctw_pair_begin(enc, &s, probe, ev, tid))
    return 0;
  const struct ct_clock ck = h->cclock; /* in registers: stores through s.p alias h */
  const struct ctp_rec *const e = rec_at(r, stride, n);
  for (; r != e; r = rec_at(r, stride, 1)) {
    if (r->ts >= lim || s.p > s.end)
      break;
    unsigned k = r->station == i[1];
    if ((!k && r->station != i[0]) || r->gen != gen[k])
      break;
    if (stride != sizeof(*r) && ((const struct ct_rrec *)r)->tid != tid)
      break;
    uint8_t kind = r->kind, wait = r->wait;
    if ((kind != CTP_KIND_SUSPEND && kind != CTP_KIND_RESUME && kind != CTP_KIND_WAKE) ||
        wait >= CTP_WAIT_MAX_ ||
        (lost[k] && atomic_load_explicit(lost[k], memory_order_relaxed) != dropped[k]))
      break;
    if ((size_t)((const char *)e - (const char *)r) > PREFETCH_AHEAD * stride) {
      const struct ctp_rec *f = rec_at(r, stride, PREFETCH_AHEAD);
      if (f->station != i[0] && f->station != i[1])
        prefetch_rec(h, f, stride);
    }
    /* Clamped as emit does: never before the coroutine's last event. */
    uint64_t ns = ct_clock_ns(&ck, r->ts);
    if (ns < last[k])
      ns = last[k];
    last[k] = ns;
    ct_ctw_pair_v2(enc, &s, k, ns, kind, wait, r->site, r->obj);
  }
  if (s.n) {
    CT_COVER(CT_COV_TWO);
    ct_ctw_pair_end(enc, &s);
    for (unsigned k = 0; k < 2; k++) {
      st[k]->harvested += s.next_ev[k] - ev[k];
      st[k]->next_ev = s.next_ev[k];
      st[k]->last_ts = last[k];
    }
    h->v2_harvested += s.n;
  }
  return s.n;
}

/* Which stretch the n records from r on start, after the record before r
 * (emit wrote it): STRETCH_SAME, two or more of that record's station;
 * STRETCH_TWO, two stations taking turns (r's and the one before it, each
 * followed by the other's); else 0 (a stretch set up for one record, or
 * stopping at once, costs more than emit). Only records with ts below lim. */
enum { STRETCH_SAME = 1, STRETCH_TWO = 2 };
static inline int stretch_at(const struct ctp_rec *r, size_t stride, size_t n, uint64_t lim) {
  if (n < 2 || r->ts >= lim)
    return 0;
  uint32_t before = ((const struct ctp_rec *)((const char *)r - stride))->station;
  uint32_t next = rec_at(r, stride, 1)->station;
  if (r->station == before)
    return next == r->station ? STRETCH_SAME : 0;
  return n > 2 && next == before && rec_at(r, stride, 2)->station == r->station ? STRETCH_TWO : 0;
}

/* emit_same and emit_two of a run's records, and of the batch's: a constant
 * stride each. Not inlined into their callers: the loop then has the
 * registers to itself (inlined, the stretch's state went to the stack and
 * back each record). One function per stretch and layout: emit_same and
 * emit_two in one function cost the one-coroutine stretch 16 % (bench-format
 * -c 1: 5.2 -> 6.0 ns a record). */
static __attribute__((noinline)) size_t emit_same_run(struct ct_harvest *h, const struct ctp_rec *r,
                                                      size_t n, uint64_t lim, uint32_t tid) {
  return emit_same(h, r, sizeof(*r), n, lim, tid);
}
static __attribute__((noinline)) size_t emit_same_batch(struct ct_harvest *h,
                                                        const struct ct_rrec *b, size_t n) {
  return emit_same(h, &b->r, sizeof(*b), n, UINT64_MAX, b->tid);
}
static __attribute__((noinline)) size_t emit_two_run(struct ct_harvest *h, const struct ctp_rec *r,
                                                     size_t n, uint64_t lim, uint32_t tid) {
  return emit_two(h, r, sizeof(*r), n, lim, tid);
}
static __attribute__((noinline)) size_t emit_two_batch(struct ct_harvest *h,
                                                       const struct ct_rrec *b, size_t n) {
  return emit_two(h, &b->r, sizeof(*b), n, UINT64_MAX, b->tid);
}

/* The runs of the pass merged by time, ties to the earlier run (capture
 * order, as sort_pass): from the run with the oldest head, as long as its
 * records stay below every other run's head. */
static void merge_runs(struct ct_harvest *h) {
  struct ct_run *rn = h->runs;
  unsigned n = h->nruns;
  while (n) {
    unsigned m = 0, o = UINT32_MAX;
    for (unsigned i = 1; i < n; i++)
      if (rn[i].p->ts < rn[m].p->ts)
        m = i;
    uint64_t bound = UINT64_MAX;
    for (unsigned i = 0; i < n; i++)
      if (i != m && (o == UINT32_MAX || rn[i].p->ts < bound)) {
        bound = rn[i].p->ts;
        o = i;
      }
    /* A tie with run o: ours first only when ours came first. */
    uint64_t lim = o == UINT32_MAX ? UINT64_MAX : bound + (m < o);
    const struct ctp_rec *r = rn[m].p, *e = r + rn[m].n;
    do {
      if (e - r > CAPTURE_AHEAD)
        prefetch(&r[CAPTURE_AHEAD]);
      if (e - r > PREFETCH_AHEAD)
        prefetch_rec(h, &r[PREFETCH_AHEAD], sizeof(*r));
      emit(h, r, rn[m].tid);
      r++;
      int kind = stretch_at(r, sizeof(*r), (size_t)(e - r), lim);
      if (kind == STRETCH_SAME)
        r += emit_same_run(h, r, (size_t)(e - r), lim, rn[m].tid);
      else if (kind == STRETCH_TWO)
        r += emit_two_run(h, r, (size_t)(e - r), lim, rn[m].tid);
    } while (r < e && r->ts < lim);
    rn[m].n -= (uint32_t)(r - rn[m].p);
    rn[m].p = r;
    if (rn[m].n == 0) { /* drop it, keeping the others' order */
      memmove(&rn[m], &rn[m + 1], (n - m - 1) * sizeof(*rn));
      n--;
    }
  }
  h->nruns = 0;
}

/* A pass with packs: the batch's records merged by time, each pack written
 * before the first record not older than its first entry (a ring's record
 * after a pack is never older than the pack's last). In one chunk (the
 * caller holds it), as the decoder merges a pack with its own chunk's
 * entries. */
static void consume_packs(struct ct_harvest *h) {
  sort_pass(h);
  ct_rings_sort_packs(h);
  const struct ct_rrec *b = h->batch;
  size_t j = 0;
  for (size_t k = 0; k < h->nbatch; k++) {
    while (j < h->npks && h->pks[j].ts0 < b[k].r.ts)
      ct_rings_write_pack(h, &h->pks[j++]);
    emit(h, &b[k].r, b[k].tid);
  }
  while (j < h->npks)
    ct_rings_write_pack(h, &h->pks[j++]);
  h->nbatch = h->npks = h->npkb = 0;
  h->pk_held = h->pk_runs = 0;
}

/* The formatter's half: one pass's records, merged by time, attributed and
 * written; then the blocks they were in go back, and the stations destroyed
 * in the pass before are released. */
static void consume_pass(struct ct_harvest *h) {
  /* --pack, a pass with losses: gap entries for the coroutines that lost
   * events (ct_rings_gaps), where the hole is: a take-back (overwrite mode)
   * took the oldest records, before the pass's; a full ring drops the
   * newest, after them. */
  uint64_t lo = 0, hi = 0;
  int gaps = h->ngaps && h->sink->enc;
  h->ngaps = gaps ? h->ngaps : 0;
  if (gaps) {
    ct_rings_pass_span(h, &lo, &hi);
    if (lo > hi)
      lo = hi = h->cclock.ta; /* nothing in the pass: at its clock's anchor */
    if (h->overwrite)
      ct_rings_gaps(h, lo, 1);
  }
  if (h->npks || gaps)
    ct_ctw_hold(h->sink->enc, 1);
  if (h->npks) {
    consume_packs(h);
  } else if (h->nbatch) {
    sort_pass(h);
    const struct ct_rrec *b = h->batch;
    for (size_t k = 0, n = h->nbatch; k < n;) {
      if (k + CAPTURE_AHEAD < n)
        prefetch(&b[k + CAPTURE_AHEAD]);
      if (k + PREFETCH_AHEAD < n)
        prefetch_rec(h, &b[k + PREFETCH_AHEAD].r, sizeof(*b));
      emit(h, &b[k].r, b[k].tid);
      int kind = ++k < n ? stretch_at(&b[k].r, sizeof(*b), n - k, UINT64_MAX) : 0;
      if (kind == STRETCH_SAME)
        k += emit_same_batch(h, &b[k], n - k);
      else if (kind == STRETCH_TWO)
        k += emit_two_batch(h, &b[k], n - k);
    }
    h->nbatch = 0;
  } else {
    merge_runs(h);
  }
  /* Overwrite mode: what is left are the coroutines whose create is in this
   * pass (not live at its start: a gap before their create would be lost,
   * and their pack events numbered on across the hole, seen as "resumed
   * while running" in test-flight-crash); after the pass's records, early
   * rather than never (the hole is after their create). */
  if (gaps)
    ct_rings_gaps(h, hi, 0);
  if (h->sink->enc && h->pack)
    ct_ctw_hold(h->sink->enc, 0);
  ct_sink_release_held(h->sink);
  release(h);
}

/* Contract: see rings_int.h. */
void ct_rings_to_batch(struct ct_harvest *h, const struct ctp_rec *recs, size_t n, uint32_t tid) {
  if (ct_grow((void **)&h->batch, &h->capbatch, h->nbatch + n, sizeof(*h->batch), CT_GROW_FIRST)) {
    h->bad += n;
    return;
  }
  for (size_t k = 0; k < n; k++) {
    h->batch[h->nbatch].r = recs[k];
    h->batch[h->nbatch++].tid = tid;
  }
}

/* A segment as runs in place: one per stretch in time order (a ring's
 * records are, unless the target wrote over them). One pass over the
 * records' ts (a count first, then the runs, read each line twice: a tenth
 * of the formatter); none when the harvest saw them sorted (one run). -1,
 * the runs left as they were, when they would be more than CT_RUNS_MAX. */
static int add_runs(struct ct_harvest *h, const struct ctp_rec *recs, uint32_t n, uint32_t tid,
                    int sorted) {
  unsigned nr = h->nruns;
  uint32_t a = 0;
  for (uint32_t k = 1; k < (sorted ? 0 : n); k++)
    if (recs[k].ts < recs[k - 1].ts) {
      if (nr >= CT_RUNS_MAX - 1)
        return -1;
      h->runs[nr++] = (struct ct_run){.p = recs + a, .n = k - a, .tid = tid};
      a = k;
    }
  if (nr >= CT_RUNS_MAX)
    return -1;
  h->runs[nr++] = (struct ct_run){.p = recs + a, .n = n - a, .tid = tid};
  h->nruns = nr;
  return 0;
}

/* The block handler (sink.c): our own bytes, still checked against len.
 * Segments become runs in the block while the sink lets us keep it (keep)
 * and they are few; else the pass goes through the batch. Packs point
 * into it while keep (ct_rings_to_packs). Returns 1 when runs or packs
 * point into the block. */
int ct_rings_on_block(void *ctx, const char *d, size_t len, int keep) {
  struct ct_harvest *h = ctx;
  size_t off = 0;
  int kept = 0, pk_kept = 0; /* runs / packs point into this block */
  while (len - off >= sizeof(struct seg)) {
    const struct seg *sg = (const struct seg *)(d + off);
    off += sizeof(*sg);
    if (sg->kind == SEG_END) {
      if (len - off < SEG_END_BYTES - sizeof(*sg))
        break;
      memcpy(&h->cclock, d + off, sizeof(h->cclock));
      off += SEG_END_BYTES - sizeof(*sg);
      consume_pass(h);
      kept = pk_kept = 0;
      continue;
    }
    uint32_t n = sg->n;
    if (sg->kind == SEG_LOST) {
      size_t bytes = ((size_t)n * sizeof(struct ct_gap) + 31) / 32 * 32;
      if (bytes > len - off)
        break;
      if (ct_grow((void **)&h->gaps, &h->capgaps, h->ngaps + n, sizeof(*h->gaps), CT_GROW_FIRST) ==
          0) {
        memcpy(h->gaps + h->ngaps, d + off, (size_t)n * sizeof(struct ct_gap));
        h->ngaps += n;
      }
      off += bytes;
      continue;
    }
    if (sg->kind != SEG_RECS || n > (len - off) / sizeof(struct ctp_rec))
      break;
    const struct ctp_rec *recs = (const struct ctp_rec *)(d + off);
    off += n * sizeof(*recs);
    if (n == 0)
      continue;
    if (!h->nbatch && !h->npks && !sg->packs && keep &&
        add_runs(h, recs, n, sg->tid, sg->sorted == 1) == 0) {
      kept = 1;
      continue;
    }
    /* To the batch, the runs so far first (capture order). */
    for (unsigned i = 0; i < h->nruns; i++)
      ct_rings_to_batch(h, h->runs[i].p, h->runs[i].n, h->runs[i].tid);
    h->nruns = 0;
    kept = 0;
    if (!h->pk_held) /* packs may point into the held blocks */
      ct_sink_release_held(h->sink);
    if (sg->packs)
      pk_kept |= ct_rings_to_packs(h, recs, n, sg->tid, keep);
    else
      ct_rings_to_batch(h, recs, n, sg->tid);
  }
  return kept | pk_kept;
}