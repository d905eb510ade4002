/* ring.h - the v2 hot path: one event into the calling thread's ring
 * (docs/PROTOCOL.md "Write protocol (probe), one event, v2"), inline so an
 * API call costs no call beyond its own; the slow paths are in ring.c. */
#ifndef CT_RING_H
#define CT_RING_H

#include "common/ticks.h"
#include "probe/probe.h"

/* ring.c: once at attach when v2 was negotiated: the thread-exit hook that
 * closes rings. 0 or -errno. */
int corotracer__ring_init(void);

/* v2 create (ring.c): a station for a new coroutine, popped from the
 * free-station queue or fresh from allocated_count; in lossless mode waits
 * (bounded) for one when neither has any. Returns its index, or nstations
 * when none is free. */
uint32_t corotracer__station_claim(void);

/* v2 stats (ring.c): records published by this process's threads. */
uint64_t corotracer__ring_written(void);

/* The stamp of a record: the counter the engine named in ctp_header.clock
 * (checked at attach: only this CPU's, or CLOCK_MONOTONIC). */
static inline uint64_t ct_rec_clock(void) {
  if (CT_TICKS_CLOCK != CTP_CLOCK_MONO && corotracer__probe.use_ticks)
    return ct_ticks();
  return ct_mono_ns();
}

/* ring.c: ct_ring_emit's out-of-line half: a thread without a ring, a ring
 * that looked full, or a clock that is not a tick counter. */
void corotracer__ring_emit_slow(struct ctp_station *st, uint8_t kind, uint64_t site, uint8_t wait,
                                uint64_t obj);

/* Store record t->head (ts and the event of station st) and publish it: plain
 * stores of the record, one release store of head (the engine acquires head
 * before it reads records below it), then a relaxed look at tracer_sleeping:
 * a writer that misses a flag just set delays its event to the engine's next
 * timed wake-up, never loses it (its next event sees the flag). The caller
 * made sure the record has room. */
static inline void ct_ring_put(struct ct_thread *t, struct ctp_station *st, uint64_t ts,
                               uint8_t kind, uint64_t site, uint8_t wait, uint64_t obj) {
  struct ctp_header *h = corotracer__probe.hdr;
  uint64_t head = t->head;
  struct ctp_rec *r = &t->recs[head & t->mask];
  r->ts = ts;
  r->station = (uint32_t)((uint64_t)((char *)st - (char *)h - CTP_HEADER_SIZE) / CTP_STATION_SIZE);
  r->gen = (uint16_t)__atomic_load_n(&st->gen, __ATOMIC_RELAXED);
  r->kind = kind;
  r->wait = wait;
  r->site = site;
  r->obj = obj;
  t->head = head + 1;
  atomic_store_explicit(&t->ring->head, head + 1, memory_order_release);
  if (__builtin_expect(atomic_load_explicit(&h->tracer_sleeping, memory_order_relaxed) != 0, 0))
    corotracer__kick_engine(h);
}

/* Write one event of station st into this thread's ring (docs/PROTOCOL.md
 * "Write protocol (probe), one event, v2"). The common case (a ring with
 * room, a tick counter) calls nothing, so the API entry stays a leaf. */
static inline void ct_ring_emit(struct ctp_station *st, uint8_t kind, uint64_t site, uint8_t wait,
                                uint64_t obj) {
  struct ct_thread *t = &corotracer__tls;
  /* tail_room is 0 until a ring is claimed, so the first event goes slow. */
  if (__builtin_expect(CT_TICKS_CLOCK == CTP_CLOCK_MONO || !corotracer__probe.use_ticks ||
                           t->head >= t->tail_room,
                       0)) {
    corotracer__ring_emit_slow(st, kind, site, wait, obj);
    return;
  }
  ct_ring_put(t, st, ct_ticks(), kind, site, wait, obj);
}

#endif
