/* ring.h - the v2 hot path: one event into the calling thread's ring
 * (docs/PROTOCOL.md "Write protocol (probe), one event, v2"), inline so an
 * API call costs no call beyond its own; the slow paths are in ring.c. */
#ifndef CT_RING_H
#define CT_RING_H

#include <string.h>

#include "common/ticks.h"
#include "format/pack_entry.h"
#include "probe/probe.h"

/* ring.c: once at attach when v2 was negotiated: the thread-exit hook that
 * closes rings. 0 or -errno. */
int corotracer__ring_init(void);

/* v2 create (ring.c): a station for a new coroutine, popped from the
 * free-station queue or fresh from allocated_count; in lossless mode waits
 * (bounded) for one when neither has any. Returns its index, or nstations
 * when none is free. */
uint32_t corotracer__station_claim(void);

/* v2 stats (ring.c): records published by this process's threads, and
 * records they dropped because their ring was full (counted in the rings'
 * lost, not in corotracer__probe.dropped: the drop path of a stopped engine
 * must stay cheap). */
void corotracer__ring_counts(uint64_t *written, uint64_t *full_drops);

/* The stamp of a record: the counter the engine named in ctp_header.clock
 * (checked at attach: only this CPU's, or CLOCK_MONOTONIC). */
static inline uint64_t ct_rec_clock(void) {
  if (CT_TICKS_CLOCK != CTP_CLOCK_MONO && corotracer__probe.use_ticks)
    return ct_ticks();
  return ct_mono_ns();
}

/* ring.c: publish thread t's open pack (t->pk.nent > 0), already in its
 * ring beyond head (docs/ROUTE1.md): its record count, one head store. */
void corotracer__pack_close(struct ct_thread *t);

/* ring.c: a hot switch at ts (ticks) that does not fit the open pack (none
 * open, another site, full, too long a span): the open pack closed, a new
 * one opened with this switch in records reserved beyond head (room as for
 * any record: a spare ring, the lossless wait; else the switch is dropped,
 * its stations charged). ts is raised to the last entry's here; ww is
 * wait | wake << 8, or CT_PK_WW_SOLO for a standalone wake of tst by fst
 * (corotracer_wake); the others as ct_pack_put's (six arguments: a tail
 * call from corotracer__switch). */
void corotracer__pack_slow(uint64_t ts, const struct ctp_station *fst,
                           const struct ctp_station *tst, uint64_t site, uint64_t obj, unsigned ww);

/* ring.c: ct_ring_emit's out-of-line half: a thread without a ring, a ring
 * that looked full, or a clock that is not a tick counter. */
void corotracer__ring_emit_slow(struct ctp_station *st, uint8_t kind, uint64_t site, uint8_t wait,
                                uint64_t obj);

/* Store record `at` of a ring whose records are recs (mask: capacity - 1):
 * ts and the event of station st, in a file whose header is at hdr. Plain
 * stores, four of 8 bytes: station, gen, kind and wait go in as one word
 * (little-endian, as the record's layout). ct_ring_publish makes it visible.
 * The caller passes t's fields as values: the stores may alias anything, so
 * the compiler would otherwise reload them for each record. */
/* Station index of st in the mapping at hdr. */
static inline uint32_t ct_station_idx(const struct ctp_header *hdr, const struct ctp_station *st) {
  return (uint32_t)((uint64_t)((const char *)st - (const char *)hdr - CTP_HEADER_SIZE) /
                    CTP_STATION_SIZE);
}

static inline void ct_ring_store(struct ctp_rec *recs, uint64_t mask, struct ctp_header *hdr,
                                 uint64_t at, struct ctp_station *st, uint64_t ts, uint8_t kind,
                                 uint64_t site, uint8_t wait, uint64_t obj) {
  struct ctp_rec *r = &recs[at & mask];
  uint64_t idx = ct_station_idx(hdr, st);
  uint64_t gen = (uint16_t)__atomic_load_n(&st->gen, __ATOMIC_RELAXED);
  uint64_t word = (uint32_t)idx | gen << 32 | (uint64_t)kind << 48 | (uint64_t)wait << 56;
  r->ts = ts;
  memcpy(&r->station, &word, sizeof word);
  r->site = site;
  r->obj = obj;
}

/* Records ahead of head whose lines a writer prefetches for writing: ~10
 * switches ahead, so the line is owned when its stores come. The engine (on
 * another core) read the line a lap ago; without the prefetch each new line
 * is a miss, and the scheduler's next locked instruction waits for the store
 * buffer to drain behind it (bench-demo-switch: 0.1 of its traced / untraced
 * ratio). */
#define CT_PREFETCH_AHEAD 32

/* Publish the records stored below head: one release store of head (the
 * engine acquires head before it reads records below it), then a relaxed
 * look at tracer_sleeping: a writer that misses a flag just set delays its
 * events to the engine's next timed wake-up, never loses them (its next
 * publish sees the flag). */
static inline void ct_ring_publish(struct ct_thread *t, struct ctp_ring *ring,
                                   struct ctp_header *hdr, uint64_t head) {
  t->head = head;
  atomic_store_explicit(&ring->head, head, memory_order_release);
  if (__builtin_expect(atomic_load_explicit(&hdr->tracer_sleeping, memory_order_relaxed) != 0, 0))
    corotracer__kick_engine(hdr);
}

/* Store record t->head and publish it. The caller made sure it has room. */
static inline void ct_ring_put(struct ct_thread *t, struct ctp_station *st, uint64_t ts,
                               uint8_t kind, uint64_t site, uint8_t wait, uint64_t obj) {
  struct ctp_header *hdr = corotracer__probe.hdr;
  struct ctp_ring *ring = t->ring;
  uint64_t h = t->head;
  ct_prefetch_w(&t->recs[(h + CT_PREFETCH_AHEAD) & t->mask]);
  ct_ring_store(t->recs, t->mask, hdr, h, st, ts, kind, site, wait, obj);
  ct_ring_publish(t, ring, hdr, h + 1);
}

/* Write one event of station st into this thread's ring (docs/PROTOCOL.md
 * "Write protocol (probe), one event, v2"). The common case (a ring with
 * room, a tick counter) calls nothing, so the API entry stays a leaf. */
static inline void ct_ring_emit(struct ctp_station *st, uint8_t kind, uint64_t site, uint8_t wait,
                                uint64_t obj) {
  struct ct_thread *t = &corotracer__tls;
  if (__builtin_expect(t->pk.nent != 0, 0))
    corotracer__pack_close(t); /* the ring stays in time order */
  /* tail_room is 0 until a ring is claimed, so the first event goes slow. */
  if (__builtin_expect(CT_TICKS_CLOCK == CTP_CLOCK_MONO || !corotracer__probe.use_ticks ||
                           t->head >= t->tail_room,
                       0)) {
    corotracer__ring_emit_slow(st, kind, site, wait, obj);
    return;
  }
  ct_ring_put(t, st, ct_ticks(), kind, site, wait, obj);
}

/* 1 when a switch is one record (struct ctp_swrec's conditions), else 0. */
static inline int ct_switch_one(const struct ctp_station *from, uint64_t obj, int wake,
                                uint64_t waker, const struct ctp_station *to) {
  return from && to && obj <= CTP_SW_OBJ_MAX && !(wake && waker);
}

/* Records a switch takes in the ring. */
static inline uint64_t ct_switch_recs(const struct ctp_station *from, uint64_t obj, int wake,
                                      uint64_t waker, const struct ctp_station *to) {
  if (ct_switch_one(from, obj, wake, waker, to))
    return 1;
  return (from ? 1u + (wake != 0) : 0u) + (to != NULL);
}

/* Events of a ring whose head is head: its records, plus what its switch
 * records stand for beyond one each (corotracer_stats counts events). */
static inline uint64_t ct_ring_events(struct ctp_ring *ring, uint64_t head) {
  return head + atomic_load_explicit(&ring->ev_extra, memory_order_relaxed);
}

/* Store a switch's records from t->head on, all stamped ts, and publish them
 * with one head store: one switch record when ct_switch_one, else the
 * suspend, wake and resume on their own. The caller made sure they have
 * room. */
static inline void ct_ring_switch_put(struct ct_thread *t, uint64_t ts, struct ctp_station *from,
                                      uint64_t site, uint8_t wait, uint64_t obj, int wake,
                                      uint64_t waker, struct ctp_station *to) {
  struct ctp_header *hdr = corotracer__probe.hdr;
  struct ctp_ring *ring = t->ring;
  struct ctp_rec *recs = t->recs;
  uint64_t mask = t->mask;
  uint64_t h = t->head;
  if (__builtin_expect(ct_switch_one(from, obj, wake, waker, to), 1)) {
    ct_prefetch_w(&recs[(h + CT_PREFETCH_AHEAD) & mask]);
    /* The to half, packed as struct ctp_swrec's last 8 bytes. */
    uint64_t tidx = ct_station_idx(hdr, to);
    uint64_t tgen = (uint16_t)__atomic_load_n(&to->gen, __ATOMIC_RELAXED);
    ct_ring_store(recs, mask, hdr, h, from, ts, CTP_KIND_SWITCH, site,
                  (uint8_t)(wait | (wake ? CTP_SW_WAKE : 0)),
                  (uint32_t)tidx | tgen << 32 | obj << 48);
    atomic_store_explicit(&ring->ev_extra,
                          atomic_load_explicit(&ring->ev_extra, memory_order_relaxed) + 1u +
                              (wake != 0),
                          memory_order_relaxed);
    ct_ring_publish(t, ring, hdr, h + 1);
    return;
  }
  /* Up to 3 records (1.5 lines) a switch: two lines prefetched. */
  ct_prefetch_w(&recs[(h + CT_PREFETCH_AHEAD) & mask]);
  ct_prefetch_w(&recs[(h + CT_PREFETCH_AHEAD + 2) & mask]);
  if (from) {
    ct_ring_store(recs, mask, hdr, h++, from, ts, CTP_KIND_SUSPEND, site, wait, obj);
    if (wake)
      ct_ring_store(recs, mask, hdr, h++, from, ts, CTP_KIND_WAKE, site, CTP_WAIT_NONE, waker);
  }
  if (to)
    ct_ring_store(recs, mask, hdr, h++, to, ts, CTP_KIND_RESUME, 0, CTP_WAIT_NONE, 0);
  ct_ring_publish(t, ring, hdr, h);
}

/* Ticks a pack spans at most: ~1 ms at 2 GHz. A busy thread's switches stay
 * unpublished at most this long (docs/ROUTE1.md "Latency"). */
#define CT_PACK_SPAN (1u << 21)

/* corotracer__pack_any's ww for a standalone wake (CTP_PK_SOLO). */
#define CT_PK_WW_SOLO (1u << 9)

/* ring.c: ct_pack_put's out-of-line half: any other entry than a yield's
 * (ct_pack_put), or no open pack to take it; stamped at ts, or at a clock
 * read there when ts is 0. Arguments as corotracer__pack_slow's. */
void corotracer__pack_any(uint64_t ts, const struct ctp_station *fst, const struct ctp_station *tst,
                          uint64_t site, uint64_t obj, unsigned ww);

/* The entry of a switch from fst to tst (or, ww & CT_PK_WW_SOLO, of the
 * wake of tst by fst), dts ticks after the pack's last entry, dsite from
 * the pack's site (unsigned: the caller tests it against CTP_PK_SITE_NEAR). */
static inline struct ctp_pk_entry ct_pack_entry(uint64_t dts, const struct ctp_station *fst,
                                                const struct ctp_station *tst, uint64_t dsite,
                                                uint64_t obj, unsigned ww) {
  struct ctp_header *hdr = corotracer__probe.hdr;
  return (struct ctp_pk_entry){.dts = dts,
                               .obj = obj,
                               .dsite = (int64_t)dsite,
                               .from = ct_station_idx(hdr, fst),
                               .to = ct_station_idx(hdr, tst),
                               .wait = (uint8_t)ww,
                               .wake = (uint8_t)(ww >> 8 & 1u),
                               .solo = (uint8_t)(ww >> 9 & 1u)};
}

/* corotracer__pack_any's body, inline where the probe writes a standalone
 * wake or a switch ct_pack_put does not take (a ptr wait: a channel's
 * handoff), so that neither pays a call and its register saves on top of
 * its own. An entry with its own site (CTP_PK_SITE) when the pack's is near
 * enough; CTP_PK_RESPELL bytes kept free past the longest entry
 * (corotracer__pack_close). */
static inline __attribute__((always_inline)) void
ct_pack_any(uint64_t ts, const struct ctp_station *fst, const struct ctp_station *tst,
            uint64_t site, uint64_t obj, unsigned ww) {
  struct ct_thread *t = &corotracer__tls;
  struct ctp_pack *pk = &t->pk;
  uint64_t last = t->pk_last;
  if (!ts)
    ts = ct_rec_clock();
  ts = ts < last ? last : ts; /* another CPU's clock may be a few ticks behind */
  uint64_t dsite = site - pk->site;
  uint32_t need =
      pk->nbytes + (obj > CTP_SW_OBJ_MAX ? CTP_PK_ENTRY_WIDE : CTP_PK_ENTRY_MAX) + CTP_PK_RESPELL;
  if (pk->nent == 0 || pk->nent == 255 || dsite + CTP_PK_SITE_NEAR > 2u * CTP_PK_SITE_NEAR ||
      need > t->pk_room || ts - pk->ts0 >= CT_PACK_SPAN) {
    corotracer__pack_slow(ts, fst, tst, site, obj, ww);
    return;
  }
  struct ctp_pk_entry en = ct_pack_entry(ts - last, fst, tst, dsite, obj, ww);
  uint8_t *e = ctp_pk_put(t->pk_out + pk->nbytes, &en, t->pk_cur, t->pk_obj);
  /* The counts as one word (span, nbytes, nent, nwake, nsolo: no carry,
   * nent < 255): stored field by field, the word read back for the ring's
   * store could not be forwarded from them (a stall each entry). */
  uint64_t c = pk->counts & ~(uint64_t)0xffffffffffu;
  c |= (uint32_t)(ts - pk->ts0) | (uint64_t)(uint8_t)(e - t->pk_out) << 32;
  c += (uint64_t)1 << 40 | (uint64_t)en.wake << 48 | (uint64_t)en.solo << 56;
  pk->counts = c;
  __atomic_store_n(&t->pk_ring->counts, c, __ATOMIC_RELEASE);
  t->pk_cur = ctp_pk_cur(&en);
  t->pk_obj = ctp_pk_pobj(t->pk_obj, &en);
  t->pk_wide |= obj > CTP_SW_OBJ_MAX;
  t->pk_last = ts;
}

/* The bytes of a plain entry (wait none, no obj, `from` the last entry's
 * `to`: docs/ROUTE1.md "Entries") whose delta d is 32 to 4,095 ticks and
 * whose `to` distance zz is below 0x80, as ctp_pk_put writes them, in a
 * little-endian word: the 2-byte varint of 4d | wake << 1 | 1, that is
 * (4d & 0x7c) | wake << 1 | 0x81 and d >> 5, then zz. */
static inline uint32_t ct_pack_plain2(uint64_t d, int wake, uint64_t zz) {
  return ((uint32_t)d << 2 & 0x7cu) | ((uint32_t)d << 3 & 0x7f00u) | 0x81u | (wake ? 2u : 0u) |
         (uint32_t)zz << 16;
}

/* A switch into the calling thread's open pack (docs/ROUTE1.md "Entries"):
 * from and to stations, wait and obj of from's suspend (wait none or ptr,
 * any obj), wake its wake, site its site; stamped here. No head
 * store: the pack is published when it closes; the entry is counted in the
 * header's counts in the ring, release-stored: the engine may take an open
 * pack's entries up to them (a thread that blocks after a switch would
 * otherwise hold its last switches back).
 * A scheduler's yield (ct_pack_plain2's entry) is written here; any other
 * entry goes to ct_pack_any, inline too (a channel's ptr-wait handoff pays
 * no call), and a yield whose delta does not fit after the clock read to
 * corotracer__pack_any, out of line, in a tail call. The yield's clock read comes after the rest of
 * the entry's work and is followed by as little as can be (the delta, one store of the entry's
 * bytes, the counts, the stamp): on bench-demo-switch's yield the same work with the read first
 * cost ~3 ns a switch more, and each step that depends on the read adds to the switch
 * (docs/BENCHMARKS.md). The entry's bytes go in one 4-byte store (the room has CTP_PK_ENTRY_MAX):
 * the byte past them is never read (the counts cover the entry only), the next entry or the close
 * (zeros) writes over it. A closed pack has no room (pk_room 0), and no pack holds 255 entries (an
 * entry takes 2 bytes at least): the room check covers both. */
static inline void ct_pack_put(const struct ctp_station *fst, const struct ctp_station *tst,
                               uint64_t site, uint8_t wait, uint64_t obj, int wake) {
  struct ct_thread *t = &corotracer__tls;
  struct ctp_pack *pk = &t->pk;
  struct ctp_header *hdr = corotracer__probe.hdr;
  uint64_t c = pk->counts;
  uint32_t nbytes = (uint8_t)(c >> 32);
  uint32_t from = ct_station_idx(hdr, fst), to = ct_station_idx(hdr, tst);
  uint64_t zz = ctr_zigzag((int64_t)to - (int64_t)from);
  unsigned ww = wait | (wake ? 1u << 8 : 0u);
  if (__builtin_expect(site != pk->site || nbytes + CTP_PK_ENTRY_MAX > t->pk_room ||
                           (wait | obj) != 0 || from != t->pk_cur || zz > 0x7f ||
                           CT_TICKS_CLOCK == CTP_CLOCK_MONO || !corotracer__probe.use_ticks,
                       0)) {
    ct_pack_any(0, fst, tst, site, obj, ww);
    return;
  }
  uint8_t *p = t->pk_out + nbytes;
  /* The counts with this entry but its delta and bytes: nent + 1, nwake +
   * wake (no carry: nent < 255, nwake <= nent). The span grows by the
   * delta (no carry: below CT_PACK_SPAN). */
  c += (uint64_t)1 << 40 | (uint64_t)(wake != 0) << 48;
  uint64_t last = t->pk_last, ts = ct_ticks(), d = ts - last;
  if (__builtin_expect(d - 32u >= 4096u - 32u || (uint32_t)c + d >= CT_PACK_SPAN, 0)) {
    corotracer__pack_any(ts, fst, tst, site, obj, ww);
    return;
  }
  uint32_t w = ct_pack_plain2(d, wake, zz);
  memcpy(p, &w, sizeof w);
  c += (uint64_t)3 << 32 | d;
  pk->counts = c;
  __atomic_store_n(&t->pk_ring->counts, c, __ATOMIC_RELEASE);
  t->pk_cur = to;
  t->pk_last = ts;
}

/* 1 when a switch goes to a pack: both coroutines given, wait none or ptr
 * (any obj: past 0xffff CTP_PK_ODELTA), no waker (the hot case of
 * docs/ROUTE1.md). */
static inline int ct_pack_hot(const struct ctp_station *from, uint8_t wait, int wake,
                              uint64_t waker, const struct ctp_station *to) {
  return from && to && (wait == CTP_WAIT_NONE || wait == CTP_WAIT_PTR) && !(wake && waker);
}

/* ring.c: ct_ring_switch's out-of-line half (same arguments). */
void corotracer__ring_switch_slow(struct ctp_station *from, uint64_t site, uint8_t wait,
                                  uint64_t obj, int wake, uint64_t waker, struct ctp_station *to);

/* Records of one switch (corotracer_switch): the suspend of from (site, wait,
 * obj), when wake its wake (same site, obj waker), the resume of to, each
 * skipped for a NULL station, or all three as one switch record
 * (ct_switch_one); one stamp, in that order, one publish
 * (docs/PROTOCOL.md "Write protocol (probe), one switch, v2"). Like
 * ct_ring_emit, the common case (room for them all, a tick counter) calls
 * nothing. */
static inline void ct_ring_switch(struct ctp_station *from, uint64_t site, uint8_t wait,
                                  uint64_t obj, int wake, uint64_t waker, struct ctp_station *to) {
  struct ct_thread *t = &corotracer__tls;
  if (corotracer__probe.pack) {
    if (__builtin_expect(ct_pack_hot(from, wait, wake, waker, to), 1)) {
      ct_pack_put(from, to, site, wait, obj, wake);
      return;
    }
    if (t->pk.nent)
      corotracer__pack_close(t); /* the ring stays in time order */
  }
  uint64_t h = t->head;
  uint64_t n = ct_switch_recs(from, obj, wake, waker, to);
  if (__builtin_expect(CT_TICKS_CLOCK == CTP_CLOCK_MONO || !corotracer__probe.use_ticks ||
                           h + n > t->tail_room,
                       0)) {
    corotracer__ring_switch_slow(from, site, wait, obj, wake, waker, to);
    return;
  }
  ct_ring_switch_put(t, ct_ticks(), from, site, wait, obj, wake, waker, to);
}

#endif
