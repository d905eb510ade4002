/* ring.c - the v2 writer's slow paths (docs/PROTOCOL.md "v2"): a thread's
 * ring claimed on its first event and closed at its exit, a full ring
 * (reload tail, nudge the engine, a spare ring, lossless wait, overwrite the
 * oldest in flight mode, drop), the free-index queues, and
 * station claims for corotracer_create. The per-event path is ring.h. */
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe/ring.h"

/* head of each ring when one of our threads took it, for corotracer_stats:
 * the ring's head counts from the file's creation, across owners. */
static _Atomic uint64_t ct_ring_start[CTP_RINGS_MAX];
/* Its lost counter then, likewise (records dropped, ring full). */
static _Atomic uint64_t ct_ring_lost0[CTP_RINGS_MAX];

/* CAS attempts on a queue's head before a pop gives up (as if empty): each
 * failure is another consumer's success, so a real queue never needs many;
 * only a head that keeps changing under us (a scribbler) would. */
#define CT_POP_TRIES 1024
/* ct_queue_pop's "no next entry". */
#define CT_QUEUE_NONE UINT32_MAX

/* Take one index from a free-index queue whose entries must be < limit
 * (docs/PROTOCOL.md "Queues"): the engine is the one producer, probes race on
 * head with a CAS. Returns 1 with *out set, 0 when the queue is empty, -1
 * when it holds what no engine writes (a tail behind head or more than cap
 * ahead, an entry out of range): the caller stops tracing. With next, also
 * the two entries after ours, as hints (CT_QUEUE_NONE past the tail seen;
 * unchecked: another consumer may take them, a scribble may be anything). */
static int ct_queue_pop(struct ctp_queue *q, uint32_t cap, uint32_t limit, uint32_t *out,
                        uint32_t next[2]) {
  /* head read with an RMW that changes nothing: the line, last CASed by
   * another thread's pop (a server creating on every core), comes for
   * writing in one transfer, and the CAS below then finds it here instead
   * of paying a second transfer to upgrade a shared copy. Acquire, as a
   * load would be. */
  uint64_t h = atomic_fetch_add_explicit(&q->head, 0, memory_order_acquire);
  for (int tries = 0; tries < CT_POP_TRIES; tries++) {
    uint64_t t = atomic_load_explicit(&q->tail, memory_order_acquire);
    if (t == h)
      return 0;
    if (t < h || t - h > cap) {
      /* Our h may be stale: others took entries and the engine pushed more
       * since we loaded it (a small queue, a thread preempted here). Only a
       * head that did not move while tail was read convicts the queue. */
      uint64_t h2 = atomic_load_explicit(&q->head, memory_order_acquire);
      if (h2 == h)
        return -1;
      h = h2;
      continue;
    }
    uint64_t e = h % cap;
    uint32_t i = atomic_load_explicit(&q->ent[e], memory_order_relaxed);
    if (atomic_compare_exchange_weak_explicit(&q->head, &h, h + 1, memory_order_acq_rel,
                                              memory_order_acquire)) {
      if (i >= limit)
        return -1;
      *out = i;
      for (unsigned k = 0; next && k < 2; k++) {
        e = e + 1 == cap ? 0 : e + 1; /* no second division on the create path */
        next[k] =
            h + 1 + k < t ? atomic_load_explicit(&q->ent[e], memory_order_relaxed) : CT_QUEUE_NONE;
      }
      return 1;
    }
  }
  return 0;
}

/* Take a fresh index from a cursor that counts up to n, the load first so the
 * cursor stays near n when everyone keeps trying after it ran out. seq_cst:
 * for stations the engine's sleep re-scan reads allocated_count after its
 * seq_cst store of tracer_sleeping (docs/PROTOCOL.md "Sleep / wake"). */
static int ct_cursor_take(_Atomic uint32_t *cursor, uint32_t n, uint32_t *out) {
  if (atomic_load_explicit(cursor, memory_order_relaxed) >= n)
    return 0;
  uint32_t i = atomic_fetch_add_explicit(cursor, 1, memory_order_seq_cst);
  if (i >= n)
    return 0;
  *out = i;
  return 1;
}

/* Claim a ring for the calling thread: the free-ring queue first (rings whose
 * owner exited and which the engine drained), then a never-owned one. The new
 * owner stamps pid, tid and owner_gen, then release-stores OWNED; head and
 * tail go on counting from where the last owner left them. */
static int ct_ring_claim(struct ct_thread *t) {
  struct ct_probe *p = &corotracer__probe;
  struct ctp_header *h = p->hdr;
  uint32_t r;
  int q = ct_queue_pop(p->ring_q, p->ring_count, p->ring_count, &r, NULL);
  if (q < 0) {
    corotracer__corrupt("a broken free-ring queue");
    return 0;
  }
  if (q == 0 && !ct_cursor_take(&h->rings_fresh, p->ring_count, &r)) {
    if (t->ring_state == CT_RING_NONE) {
      atomic_fetch_add_explicit(&h->no_ring, 1, memory_order_relaxed);
      t->ring_state = CT_RING_NOTFREE;
    }
    return 0;
  }
  if (t->tid == 0)
    t->tid = (uint64_t)syscall(SYS_gettid);
  /* Pairs with ct_ring_retire's release: a ring our own thread retired
   * reaches us through the engine (another process: CLOSED, drained, pushed
   * to the queue), an order no in-process checker sees. ThreadSanitizer
   * would call the new owner's first records a race with the old owner's
   * last ones; this makes the hand-over visible inside the process too. */
  (void)atomic_load_explicit(&ct_ring_start[r], memory_order_acquire);
  struct ctp_ring *ring = (struct ctp_ring *)(p->ring_base + r * p->ring_stride);
  /* Map the ring in now, one system call per claim, instead of a page fault
   * per 4 KiB on its first lap (256 for 1 MiB, several us each in a VM,
   * taken by the program while it writes). Best effort: an older kernel
   * faults as before. Rings are not page-aligned: from the page it starts in. */
  uintptr_t from = (uintptr_t)ring & ~(uintptr_t)4095;
  (void)madvise((void *)from, (uintptr_t)ring + p->ring_stride - from, MADV_POPULATE_WRITE);
  __atomic_store_n(&ring->pid, p->pid, __ATOMIC_RELAXED);
  __atomic_store_n(&ring->tid, (uint32_t)t->tid, __ATOMIC_RELAXED);
  __atomic_store_n(&ring->owner_gen, __atomic_load_n(&ring->owner_gen, __ATOMIC_RELAXED) + 1,
                   __ATOMIC_RELAXED);
  /* The previous owner's last head store reached us through the engine's
   * acquire of it and the queue's release/acquire. */
  uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
  uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
  if (tail > head || head - tail > p->ring_cap) {
    corotracer__corrupt("a free ring whose tail is not within a ring of its head");
    return 0;
  }
  /* No open pack of ours yet: the last owner's, at this head, was taken or
   * published (before OWNED: the engine reads open only after state). */
  atomic_store_explicit(&ring->open, 0, memory_order_relaxed);
  atomic_store_explicit(&ring->state, CTP_RING_OWNED, memory_order_release);
  atomic_store_explicit(&ct_ring_start[r], ct_ring_events(ring, head), memory_order_relaxed);
  atomic_store_explicit(&ct_ring_lost0[r], atomic_load_explicit(&ring->lost, memory_order_relaxed),
                        memory_order_relaxed);
  t->ring = ring;
  t->ring_idx = r;
  t->recs = ctp_ring_recs(ring);
  t->mask = p->ring_cap - 1;
  t->head = head;
  t->tail_room = tail + p->ring_cap / 4;
  t->claim_tail = tail;
  t->ring_state = CT_RING_MINE;
  /* The destructor closes the ring when the thread exits. Without it (ENOMEM)
   * the ring stays OWNED: a leak of one ring, events still traced. */
  (void)pthread_setspecific(p->ring_key, ring);
  return 1;
}

/* Our thread stops writing ring r, whose head it left at head: the events
 * go to the written count of corotracer_stats, and CLOSED (release, after
 * the last head store) tells the engine to drain and recycle it. */
static void ct_ring_retire(struct ctp_ring *ring, uint32_t r, uint64_t head) {
  atomic_fetch_add_explicit(&corotracer__probe.ring_retired,
                            ct_ring_events(ring, head) -
                                atomic_load_explicit(&ct_ring_start[r], memory_order_relaxed),
                            memory_order_relaxed);
  uint64_t lost = atomic_load_explicit(&ring->lost, memory_order_relaxed);
  atomic_fetch_add_explicit(&corotracer__probe.ring_retired_lost,
                            lost - atomic_load_explicit(&ct_ring_lost0[r], memory_order_relaxed),
                            memory_order_relaxed);
  atomic_store_explicit(&ct_ring_lost0[r], lost, memory_order_relaxed);
  /* Release for ct_ring_claim's acquire (a later owner in this process). */
  atomic_store_explicit(&ct_ring_start[r], ct_ring_events(ring, head), memory_order_release);
  atomic_store_explicit(&ring->state, CTP_RING_CLOSED, memory_order_release);
}

/* The thread exits (pthread key destructor): publish CLOSED so the engine
 * drains the ring and returns it to the free-ring queue; the thread writes no
 * more (a later event, from another destructor, is counted lost). Nothing
 * after fork(): the child's rings are its parent's. */
static void ct_ring_close(void *arg) {
  struct ct_thread *t = &corotracer__tls;
  struct ctp_ring *ring = arg;
  if (atomic_load_explicit(&corotracer__probe.state, memory_order_relaxed) != CT_TRACED ||
      t->ring != ring)
    return;
  if (t->pk.nent)
    corotracer__pack_close(t); /* its last switches, before the ring closes */
  ct_ring_retire(ring, t->ring_idx, t->head);
  t->ring = NULL;
  t->recs = NULL;
  t->head = 0;
  t->tail_room = 0;
  t->ring_state = CT_RING_EXITED;
}

/* Spare rings a thread takes in a row, in default mode, while the engine
 * shows no progress (it neither moved the tail of the thread's ring nor
 * recycled any ring): 16 MiB of records at the default ring size, half a
 * million events, ~5 ms back to back at the probe's speed, time for an
 * engine descheduled on a busy machine to run again. (The tail of the ring
 * in use alone is no sign: an engine that lags a burst drains the retired
 * rings first, and the bound then cost a 10^7-event burst millions of
 * events.) A stopped engine does nothing: without the bound each writer
 * filled spares until only a quarter of the rings were free, each one
 * populated and written (48 MiB with the defaults), a quarter of the
 * probe-only yield rate of bench/bench-demo.sh (with --rings 4, two spares at
 * most: 15.6 -> 20.5 M switches per CPU second). Past the bound the events
 * are dropped at once, as they would be some rings later. */
#define CT_SPARE_BLIND 16

/* A full ring: go on in a free one rather than lose the event, while more
 * than a quarter of the rings are free (threads still to come must find
 * one) and, in default mode, while the engine shows it drains our rings
 * (CT_SPARE_BLIND). The full one is retired: the engine drains it, then
 * recycles it. A ring holds one thread's records in time order, and the
 * engine merges rings by time, so the thread's order holds across the two.
 * 1 when the thread now writes a ring with room. */
static __attribute__((noinline, cold)) int ct_ring_spare(struct ct_thread *t) {
  struct ct_probe *p = &corotracer__probe;
  uint64_t qh = atomic_load_explicit(&p->ring_q->head, memory_order_relaxed);
  uint64_t qt = atomic_load_explicit(&p->ring_q->tail, memory_order_relaxed);
  /* Progress: the engine moved this ring's tail since we claimed it, or
   * pushed a drained ring to the free queue since we last looked. */
  if (atomic_load_explicit(&t->ring->tail, memory_order_relaxed) != t->claim_tail ||
      qt != t->spare_qtail) {
    t->spare_blind = 0;
    t->spare_qtail = qt;
  } else if (!p->lossless && t->spare_blind >= CT_SPARE_BLIND) {
    return 0;
  }
  uint32_t fresh = atomic_load_explicit(&p->hdr->rings_fresh, memory_order_relaxed);
  uint64_t nfree = (qt >= qh && qt - qh <= p->ring_count ? qt - qh : 0) +
                   (fresh < p->ring_count ? p->ring_count - fresh : 0);
  if (nfree <= p->ring_count / 4)
    return 0;
  struct ctp_ring *old = t->ring;
  uint32_t old_idx = t->ring_idx;
  uint64_t old_head = t->head;
  if (!ct_ring_claim(t))
    return 0;
  t->spare_blind++;
  ct_ring_retire(old, old_idx, old_head);
  return t->head < t->tail_room;
}

/* Drops between two looks at the free rings while a ring stays full in
 * default mode. A stopped engine frees no ring, and a slow one frees them a
 * pass at a time: looking at every drop (three loads of shared lines and the
 * arithmetic) was a tenth of the probe-only drop path (bench/bench-demo.sh),
 * and looking every 64th delays the move to a freed ring by at most 63
 * drops. */
#define CT_SPARE_EVERY 64

/* ct_ring_spare on the first drop of a full ring, then every CT_SPARE_EVERY
 * drops (default mode; a lossless writer looks each time, as a spare ring
 * spares it a wait). */
static inline __attribute__((always_inline)) int ct_ring_spare_due(struct ct_thread *t) {
  if (t->spare_skip && !corotracer__probe.lossless) {
    t->spare_skip--;
    return 0;
  }
  if (ct_ring_spare(t)) {
    t->spare_skip = 0;
    return 1;
  }
  t->spare_skip = CT_SPARE_EVERY - 1;
  return 0;
}

/* Called once at attach, when v2 was negotiated. */
int corotracer__ring_init(void) {
  return -pthread_key_create(&corotracer__probe.ring_key, ct_ring_close);
}

/* tail, as just loaded from our ring, is one no engine stores: beyond the
 * head we published, or more than a ring behind it. The engine only ever
 * moves tail up to a head it read. */
static int ct_tail_broken(const struct ct_thread *t, uint64_t tail) {
  return tail > t->head || t->head - tail > corotracer__probe.ring_cap;
}

/* Lossless wait predicate: the engine moved tail past the record we need. A
 * tail that cannot be true ends the wait: tracing stops (the caller's record
 * is the last one written). */
static int ct_ring_has_room(const void *arg) {
  struct ct_thread *t = (struct ct_thread *)(uintptr_t)arg;
  uint64_t tail = atomic_load_explicit(&t->ring->tail, memory_order_seq_cst);
  if (ct_tail_broken(t, tail)) {
    corotracer__corrupt("a ring tail beyond its head");
    return 1;
  }
  t->tail_room = tail + corotracer__probe.ring_cap;
  return t->head < t->tail_room;
}

/* The thread has a ring: its own already, or one claimed now (its first
 * event). */
static int ct_ring_mine(struct ct_thread *t) {
  return t->ring_state == CT_RING_MINE || (t->ring_state != CT_RING_EXITED && ct_ring_claim(t));
}

/* Room for n records from t->head in the thread's ring, reloading tail when
 * tail_room is reached; neither waits nor drops. 1: room, 0: full, -1: the
 * tail cannot be true (tracing stopped). tail_room is first the
 * quarter mark: a ring found more than a quarter full nudges a napping engine
 * (at full speed the rest of the ring is a few hundred microseconds, about
 * one wake-up on a busy VM), then lets the writer go on to the end. */
static inline __attribute__((always_inline)) int ct_ring_fits(struct ct_thread *t, uint64_t n) {
  if (t->head + n <= t->tail_room)
    return 1; /* a ring just claimed, or room the inline path did not count on */
  uint64_t tail = atomic_load_explicit(&t->ring->tail, memory_order_acquire);
  if (ct_tail_broken(t, tail)) {
    corotracer__corrupt("a ring tail beyond its head");
    return -1;
  }
  uint64_t cap = corotracer__probe.ring_cap;
  if (t->head + n <= tail + cap / 4) {
    t->tail_room = tail + cap / 4;
    t->spare_skip = 0; /* room again: the next full ring's first drop looks for a spare */
    return 1;
  }
  t->tail_room = tail + cap;
  if (t->head + n > t->tail_room)
    return 0;
  t->spare_skip = 0;
  corotracer__nudge_engine(corotracer__probe.hdr);
  return 1;
}

/* Add n to station i's v2_lost (the index read back from our ring: checked,
 * as all shared memory is). */
static void ct_station_lost(uint32_t i, uint64_t n) {
  struct ct_probe *p = &corotracer__probe;
  if (i < p->nstations && n)
    atomic_fetch_add_explicit(&ctp_station_at(p->hdr, i)->v2_lost, n, memory_order_relaxed);
}

/* Records the record at i of our ring spans: 1 + nrec for a pack header
 * whose continuation records can be there (nrec in range, contiguous up to
 * the ring's end, as corotracer__pack_slow writes them, and below end), else
 * 1 (a scribbled header is one record, as the engine reads it). */
static uint64_t ct_rec_span(const struct ct_thread *t, uint64_t i, uint64_t end) {
  const struct ctp_pack *pk = (const struct ctp_pack *)&t->recs[i & t->mask];
  if (pk->kind != CTP_KIND_PACK || pk->nrec >= CTP_PACK_RECS ||
      ((i + 1u) & t->mask) + pk->nrec > t->mask + 1u || i + 1u + pk->nrec > end)
    return 1;
  return 1u + pk->nrec;
}

/* The pack whose header is record i of our ring (below to), taken back:
 * its entries, read with ctp_pk_get (the bytes may be anything: a target
 * that scribbles its own ring), charge their stations in v2_lost, its
 * events (ctp_pack_events, as its publish counted them in ev_extra) are
 * added to *events. Returns its continuation records, or UINT64_MAX when
 * its header is not one a pack has (then read as a record). */
static uint64_t ct_pack_forget(struct ct_thread *t, uint64_t i, uint64_t to, uint64_t *events) {
  uint64_t span = ct_rec_span(t, i, to);
  if (span == 1)
    return UINT64_MAX;
  struct ctp_pack pk;
  memcpy(&pk, &t->recs[i & t->mask], sizeof pk);
  const uint8_t *p = (const uint8_t *)&t->recs[(i + 1u) & t->mask];
  const uint8_t *e = p + (pk.nbytes < (span - 1u) * 32u ? pk.nbytes : (span - 1u) * 32u);
  uint32_t cur = pk.from;
  uint64_t pobj = 0;
  for (unsigned k = 0; k < pk.nent; k++) {
    struct ctp_pk_entry en;
    if (!(p = ctp_pk_get(p, e, cur, pobj, &en)))
      break;
    ct_station_lost(en.from, ctp_pk_from_events(&en));
    ct_station_lost(en.to, 1);
    cur = ctp_pk_cur(&en);
    pobj = ctp_pk_pobj(pobj, &en);
  }
  *events += ctp_pack_events(&pk);
  return span - 1u;
}

/* Records [from, to) of our ring, which the engine will never read now:
 * each event they hold counted lost for its station (a gap before the
 * station's next record, as a drop leaves: docs/PROTOCOL.md "Overwrite
 * mode") and in the ring's lost. Runs of one station cost one add. from
 * and to are record or pack boundaries (ct_ring_overwrite): a pack is
 * charged from its entries and its continuation records stepped over. */
static void ct_ring_forget(struct ct_thread *t, uint64_t from, uint64_t to) {
  uint32_t run = UINT32_MAX;
  uint64_t run_n = 0, events = 0;
  for (uint64_t i = from; i < to; i++) {
    const struct ctp_rec *r = &t->recs[i & t->mask];
    uint64_t k = 1;
    if (r->kind == CTP_KIND_PACK) {
      uint64_t nrec = ct_pack_forget(t, i, to, &events);
      if (nrec != UINT64_MAX) {
        i += nrec;
        continue;
      }
    }
    if (r->kind == CTP_KIND_SWITCH) {
      const struct ctp_swrec *sw = (const struct ctp_swrec *)r;
      k += (sw->wait & CTP_SW_WAKE) != 0;
      ct_station_lost(sw->to, 1);
      events++;
    }
    if (r->station != run) {
      ct_station_lost(run, run_n);
      run = r->station;
      run_n = 0;
    }
    run_n += k;
    events += k;
  }
  ct_station_lost(run, run_n);
  /* Written, then lost: recorded once and dropped once (corotracer_stats). */
  atomic_fetch_add_explicit(&corotracer__probe.overwritten, events, memory_order_relaxed);
  atomic_store_explicit(&t->ring->lost,
                        atomic_load_explicit(&t->ring->lost, memory_order_relaxed) + events,
                        memory_order_relaxed);
}

/* Overwrite mode (the flight recorder: the newest events matter), a full
 * ring: room for n records at t->head by taking an eighth of the ring from
 * the oldest records the engine has not read. tail moves with a CAS, as the
 * engine's does in this mode: whoever moves it first owns the records
 * below. acq_rel: the acquire orders the engine's copies of records below
 * the tail we read before our overwrites of them; the engine's CAS reads our
 * value (or a later one) and so skips what we take. 1 when the record fits,
 * 0 when the tail cannot be true (tracing stopped). */
static __attribute__((noinline, cold)) int ct_ring_overwrite(struct ct_thread *t, uint64_t n) {
  struct ctp_ring *ring = t->ring;
  uint64_t cap = corotracer__probe.ring_cap;
  uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
  for (int tries = 0;; tries++) {
    /* The engine moves tail once a pass: only a scribbler keeps our CAS
     * failing (CT_POP_TRIES, as for the queues). */
    if (ct_tail_broken(t, tail) || tries == CT_POP_TRIES) {
      corotracer__corrupt("a ring tail beyond its head");
      return 0;
    }
    if (t->head + n <= tail + cap)
      break; /* the engine made room meanwhile */
    /* head + n > tail + cap and n < cap / 8: want is above tail, below head;
     * moved on to the next record or pack boundary (a tail inside a pack
     * would have the engine read entry bytes as records). */
    uint64_t want = t->head + n - cap + cap / 8, at = tail;
    while (at < want)
      at += ct_rec_span(t, at, t->head);
    want = at;
    if (atomic_compare_exchange_weak_explicit(&ring->tail, &tail, want, memory_order_acq_rel,
                                              memory_order_acquire)) {
      ct_ring_forget(t, tail, want);
      tail = want;
      t->claim_tail = want; /* our own move is no sign of the engine's progress (ct_ring_spare) */
      /* The next full ring looks for a spare again: a take-back is an
       * eighth of a ring lost, not one event (CT_SPARE_EVERY's unit), and a
       * lagging engine that recycles the spares it drains (oldest first:
       * this ring last) gives one back well within 64 eighths. */
      t->spare_skip = 0;
      /* As a ring past its quarter does (ct_ring_fits): a napping engine
       * loses more of ours the longer it naps. */
      corotracer__nudge_engine(corotracer__probe.hdr);
      break;
    }
  }
  t->tail_room = tail + cap;
  return 1;
}

/* Records the ring has no room for: n of station st (none when st is NULL)
 * and one of station st2 (when not NULL), counted in the ring's lost (we are
 * its only writer; the next head store publishes it; corotracer_stats reads
 * it back for dropped) and the stations' v2_lost: one locked instruction per
 * station, the least the per-station accounting needs, as a stopped engine
 * puts every event here. An engine asleep on a full ring is woken so the next
 * events find room. */
static inline __attribute__((always_inline)) void
ct_ring_drop(struct ct_thread *t, struct ctp_station *st, uint64_t n, struct ctp_station *st2) {
  atomic_store_explicit(&t->ring->lost,
                        atomic_load_explicit(&t->ring->lost, memory_order_relaxed) + n +
                            (st2 != NULL),
                        memory_order_relaxed);
  if (__builtin_expect(
          atomic_load_explicit(&corotracer__probe.hdr->tracer_sleeping, memory_order_relaxed) != 0,
          0))
    corotracer__kick_engine(corotracer__probe.hdr);
  if (st2 == st && st) {
    n++;
    st2 = NULL;
  }
  if (st && n)
    atomic_fetch_add_explicit(&st->v2_lost, n, memory_order_relaxed);
  if (st2)
    atomic_fetch_add_explicit(&st2->v2_lost, 1, memory_order_relaxed);
}

/* Make room for the record at t->head: claim a ring on a thread's first
 * event, reload tail when the ring looked full, wait in lossless mode.
 * Returns 1 when the record may be written, 0 when the event is dropped (the
 * loss counted in the ring's lost, st's v2_lost and the process's dropped). */
static int ct_ring_room(struct ct_thread *t, struct ctp_station *st) {
  if (!ct_ring_mine(t))
    goto drop;
  int fits = ct_ring_fits(t, 1);
  if (fits < 0)
    return 0; /* counted by corotracer__corrupt */
  if (fits || ct_ring_spare_due(t))
    return 1;
  if (corotracer__probe.overwrite)
    return ct_ring_overwrite(t, 1);
  if (corotracer__probe.lossless && corotracer__wait_room(ct_ring_has_room, t))
    return 1;
  ct_ring_drop(t, st, 1, NULL);
  return 0;
drop:
  atomic_fetch_add_explicit(&st->v2_lost, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&corotracer__probe.dropped, 1, memory_order_relaxed);
  return 0;
}

/* Contract: see ring.h. The stamp is taken after any wait: the time the
 * event is in the ring, as the program is held until then. */
void corotracer__ring_emit_slow(struct ctp_station *st, uint8_t kind, uint64_t site, uint8_t wait,
                                uint64_t obj) {
  struct ct_thread *t = &corotracer__tls;
  if (t->head >= t->tail_room && !ct_ring_room(t, st))
    return;
  ct_ring_put(t, st, ct_rec_clock(), kind, site, wait, obj);
}

/* Contract: see ring.h. With room for the whole switch, one stamp (taken
 * now, as in corotracer__ring_emit_slow) and one publish; else each record
 * on its own (its own stamp, room check, lossless wait or drop), in the same
 * order, so a full ring loses the latest records first. */
void corotracer__ring_switch_slow(struct ctp_station *from, uint64_t site, uint8_t wait,
                                  uint64_t obj, int wake, uint64_t waker, struct ctp_station *to) {
  struct ct_thread *t = &corotracer__tls;
  uint64_t n = ct_switch_recs(from, obj, wake, waker, to);
  if (ct_ring_mine(t)) {
    int fits = ct_ring_fits(t, n);
    if (fits > 0) {
      ct_ring_switch_put(t, ct_rec_clock(), from, site, wait, obj, wake, waker, to);
      return;
    }
    if (fits < 0)
      return; /* tracing stopped, the switch counted dropped */
    /* Default mode, no room for even one record and no spare ring (a stopped
     * or slow engine): all of them dropped at once, one count per station,
     * rather than each through the single-event path (the probe-only rate of
     * bench/bench-demo.sh). */
    if (!corotracer__probe.lossless && t->head >= t->tail_room && !ct_ring_spare_due(t)) {
      if (!corotracer__probe.overwrite)
        ct_ring_drop(t, from, from ? 1u + (wake != 0) : 0u, to);
      else if (ct_ring_overwrite(t, n))
        ct_ring_switch_put(t, ct_rec_clock(), from, site, wait, obj, wake, waker, to);
      return;
    }
  }
  if (from) {
    corotracer__ring_emit_slow(from, CTP_KIND_SUSPEND, site, wait, obj);
    if (wake)
      corotracer__ring_emit_slow(from, CTP_KIND_WAKE, site, CTP_WAIT_NONE, waker);
  }
  if (to)
    corotracer__ring_emit_slow(to, CTP_KIND_RESUME, 0, CTP_WAIT_NONE, 0);
}

/* Room for a pack at t->head: two records at least (its header and one of
 * entries), as many as a pack takes when the ring has them without a wait
 * (a tail reloaded), as ct_ring_room for one record (a ring claimed, a
 * spare ring, the lossless wait, looped while the engine frees less than
 * two; in overwrite mode the oldest records taken back, a whole pack's
 * room). 1: room; 0: none, the switch is dropped; -1: tracing stopped
 * (counted by corotracer__corrupt). */
static int ct_pack_room(struct ct_thread *t) {
  if (!ct_ring_mine(t))
    return 0;
  if (t->head + CTP_PACK_RECS > t->tail_room && ct_ring_fits(t, CTP_PACK_RECS) < 0)
    return -1;
  for (;;) {
    int fits = ct_ring_fits(t, 2);
    if (fits)
      return fits;
    if (ct_ring_spare_due(t))
      return t->head + 2 <= t->tail_room;
    if (corotracer__probe.overwrite)
      return ct_ring_overwrite(t, CTP_PACK_RECS) ? 1 : -1; /* the oldest taken back */
    if (!corotracer__probe.lossless || !corotracer__wait_room(ct_ring_has_room, t))
      return 0;
  }
}

/* An entry for which no pack could open (no room): from charged its suspend
 * (and wake), to its resume (or, en a standalone wake, to its wake alone),
 * in v2_lost (a gap before each station's next record, as any drop leaves),
 * the events in the ring's lost, or the process's dropped when the thread
 * has no ring. */
static __attribute__((noinline, cold)) void ct_pack_drop(struct ct_thread *t,
                                                         const struct ctp_pk_entry *en) {
  uint64_t events = ctp_pk_from_events(en) + 1u;
  ct_station_lost(en->from, ctp_pk_from_events(en));
  ct_station_lost(en->to, 1);
  if (t->ring_state == CT_RING_MINE)
    atomic_store_explicit(&t->ring->lost,
                          atomic_load_explicit(&t->ring->lost, memory_order_relaxed) + events,
                          memory_order_relaxed);
  else
    atomic_fetch_add_explicit(&corotracer__probe.dropped, events, memory_order_relaxed);
}

/* Contract: see ring.h. The entries are in the ring already: the header's
 * record count, zeros after the last entry, then one head store. A pack with
 * an ODELTA obj takes CTP_PK_RESPELL bytes more when it has them (its
 * pk_room kept them): the engine's split may write its rest that much
 * longer in the records it took. */
void corotracer__pack_close(struct ct_thread *t) {
  struct ctp_pack *pk = &t->pk;
  uint32_t nrec = (pk->nbytes + (t->pk_wide ? CTP_PK_RESPELL : 0u) + 31u) / 32u;
  if (nrec * 32u > t->pk_room)
    nrec = t->pk_room / 32u;
  t->pk_ring->nrec = (uint8_t)nrec;
  memset(t->pk_out + pk->nbytes, 0, nrec * 32u - pk->nbytes);
  struct ctp_ring *ring = t->ring;
  atomic_store_explicit(&ring->ev_extra,
                        atomic_load_explicit(&ring->ev_extra, memory_order_relaxed) +
                            ((uint64_t)ctp_pack_events(pk) - 1u - nrec),
                        memory_order_relaxed);
  pk->nent = 0;   /* closed */
  t->pk_room = 0; /* ct_pack_put's test of an open pack */
  ct_ring_publish(t, ring, corotracer__probe.hdr, t->head + 1u + nrec);
}

/* Contract: see ring.h. */
void corotracer__pack_any(uint64_t ts, const struct ctp_station *fst, const struct ctp_station *tst,
                          uint64_t site, uint64_t obj, unsigned ww) {
  ct_pack_any(ts, fst, tst, site, obj, ww);
}

/* Contract: see ring.h. The pack's header and entries go where the ring
 * has room, beyond head: entries contiguous (up to the ring's end, or from
 * its start when the header is its last record), as many records as a pack
 * takes when free. The engine learns of it from ring->open. */
void corotracer__pack_slow(uint64_t ts, const struct ctp_station *fst,
                           const struct ctp_station *tst, uint64_t site, uint64_t obj,
                           unsigned ww) {
  struct ct_thread *t = &corotracer__tls;
  if (t->pk.nent)
    corotracer__pack_close(t);
  /* Never before the last entry: a delta is never negative, nor is a pack
   * older than the one before it (another CPU's clock may be a few ticks
   * behind). */
  ts = ts < t->pk_last ? t->pk_last : ts;
  struct ctp_pk_entry en = ct_pack_entry(0, fst, tst, 0, obj, ww);
  int room = ct_pack_room(t);
  if (room <= 0) {
    if (room == 0)
      ct_pack_drop(t, &en);
    return;
  }
  uint64_t h = t->head, first = (h + 1) & t->mask;
  /* The lines of a later pack, owned before its entries come (ring.h
   * CT_PREFETCH_AHEAD: the engine read them a lap ago). */
  for (uint64_t k = 0; k < CTP_PACK_RECS; k += 2)
    ct_prefetch_w(&t->recs[(h + CT_PREFETCH_AHEAD + k) & t->mask]);
  uint64_t n = t->tail_room - h - 1; /* entry records free beyond the header */
  if (n > CTP_PACK_RECS - 1)
    n = CTP_PACK_RECS - 1;
  if (n > t->mask + 1u - first)
    n = t->mask + 1u - first;
  t->pk = (struct ctp_pack){.ts0 = ts,
                            .from = en.from,
                            .from_gen = (uint16_t)__atomic_load_n(&fst->gen, __ATOMIC_RELAXED),
                            .kind = CTP_KIND_PACK,
                            .site = site,
                            .nent = 1,
                            .nwake = en.wake,
                            .nsolo = en.solo};
  t->pk_ring = (struct ctp_pack *)&t->recs[h & t->mask];
  t->pk_out = (uint8_t *)&t->recs[first];
  t->pk_room = (uint32_t)n * 32u;
  t->pk_cur = ctp_pk_cur(&en);
  t->pk_obj = ctp_pk_pobj(0, &en);
  t->pk_wide = obj > CTP_SW_OBJ_MAX;
  t->pk_last = ts;
  /* The header's first 24 bytes, its first entry (a delta of 0), then its
   * counts; the engine reads them once it sees the open word. */
  memcpy(t->pk_ring, &t->pk, offsetof(struct ctp_pack, counts));
  t->pk.nbytes = (uint8_t)(ctp_pk_put(t->pk_out, &en, en.from, 0) - t->pk_out);
  __atomic_store_n(&t->pk_ring->counts, t->pk.counts, __ATOMIC_RELEASE);
  atomic_store_explicit(&t->ring->open, h + 1u, memory_order_release);
}

/* Lossless wait predicate: the engine pushed a station, or the queue holds
 * what cannot be true (the wait ends, and the pop that follows says so). The
 * same test as ct_queue_pop's: a broken queue read as "not empty" while the
 * pop read it as "nothing to take" once made a lossless create spin forever. */
static int ct_station_free(const void *arg) {
  (void)arg;
  struct ctp_queue *q = corotracer__probe.station_q;
  return atomic_load_explicit(&q->tail, memory_order_seq_cst) !=
         atomic_load_explicit(&q->head, memory_order_seq_cst);
}

/* Contract: see ring.h. Bounded whatever the shared memory holds: a broken
 * queue stops tracing, and the waits (each bounded by lossless_ms) end at
 * lossless_ms after the first one began, however often another thread takes
 * the station we waited for. */
uint32_t corotracer__station_claim(void) {
  struct ct_probe *p = &corotracer__probe;
  uint32_t n = p->nstations;
  uint32_t i;
  uint64_t deadline = 0;
  for (;;) {
    uint32_t next[2];
    int q = ct_queue_pop(p->station_q, n, n, &i, next);
    if (q > 0) {
      /* Start loading the stations the next two creates will pop (this
       * thread's or another's: with creates on every core the next is often
       * another's). The queue is FIFO, so a station comes back only after
       * every other freed one did: on a server cycling thousands its line is
       * in no cache by then, and create stalled on its first load; a
       * request's work now hides it. An index out of range is not followed. */
      for (unsigned k = 0; k < 2; k++)
        if (next[k] < n)
          __builtin_prefetch(ctp_station_at(p->hdr, next[k]), 1, 3);
      return i;
    }
    if (q < 0) {
      corotracer__corrupt("a broken free-station queue");
      return n;
    }
    /* The queue is empty: fresh stations are spent until the engine
     * releases destroyed ones, which it does at its next passes; a server
     * creating between two naps could spend them all (a request is a few
     * records, far from filling a ring, which is what nudges it otherwise). */
    int fresh = ct_cursor_take(&p->hdr->allocated_count, n, &i);
    if (!fresh || n - i <= CTP_STATIONS_LOW(n))
      corotracer__nudge_engine(p->hdr);
    if (fresh)
      return i;
    if (!p->lossless)
      return n;
    uint64_t now = ct_mono_ns();
    if (!deadline)
      deadline = now + (uint64_t)p->lossless_ms * 1000000u;
    else if (now >= deadline)
      return n;
    if (!corotracer__wait_room(ct_station_free, NULL))
      return n;
  }
}

/* Contract: see ring.h. Exact when our threads are quiet; while they write,
 * a snapshot. */
void corotracer__ring_counts(uint64_t *written, uint64_t *full_drops) {
  struct ct_probe *p = &corotracer__probe;
  struct ctp_header *h = p->hdr;
  uint64_t w = atomic_load_explicit(&p->ring_retired, memory_order_relaxed);
  uint64_t d = atomic_load_explicit(&p->ring_retired_lost, memory_order_relaxed);
  uint32_t n = atomic_load_explicit(&h->rings_fresh, memory_order_relaxed);
  if (n > p->ring_count)
    n = p->ring_count;
  for (uint32_t r = 0; r < n; r++) {
    struct ctp_ring *ring = (struct ctp_ring *)(p->ring_base + r * p->ring_stride);
    if (__atomic_load_n(&ring->pid, __ATOMIC_RELAXED) == p->pid &&
        atomic_load_explicit(&ring->state, memory_order_relaxed) == CTP_RING_OWNED) {
      w += ct_ring_events(ring, atomic_load_explicit(&ring->head, memory_order_relaxed)) -
           atomic_load_explicit(&ct_ring_start[r], memory_order_relaxed);
      d += atomic_load_explicit(&ring->lost, memory_order_relaxed) -
           atomic_load_explicit(&ct_ring_lost0[r], memory_order_relaxed);
    }
  }
  *written = w;
  *full_drops = d;
}
