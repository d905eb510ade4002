/* rings_int.h - what the two halves of the engine's v2 side share (rings.c,
 * the harvest thread's; rings_format.c, the formatter's): the capture
 * block's segments and a few helpers. Not for other files. */
#ifndef CT_ENGINE_RINGS_INT_H
#define CT_ENGINE_RINGS_INT_H

#include "common/grow.h"
#include "engine/clock.h"
#include "engine/harvest.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

/* In a capture block: a run of records of one ring, the end of a pass
 * (followed by the clock the pass converts with), or n stations whose
 * v2_lost changed (SEG_LOST: n struct ct_gap, the bytes rounded up to 32). */
enum { SEG_RECS = 1, SEG_END = 2, SEG_LOST = 3 };
struct seg {
  uint32_t kind, n; /* n records follow (SEG_RECS) */
  uint32_t ring, tid, pid;
  /* 1: the harvest saw the n records' ts never go down (in its copy, the
   * bytes here): the formatter takes them as one run without a pass over
   * them first (that pass took the cold block's misses, a lagging
   * formatter's 1.5 ns per record). 0: the formatter looks. */
  uint32_t sorted;
  /* 1: the n records hold packs (CTP_KIND_PACK, whole: a header and its
   * continuation records), which the formatter moves as they are. */
  uint32_t packs;
  uint32_t pad;
};
_Static_assert(sizeof(struct seg) == sizeof(struct ctp_rec), "records stay 32-byte aligned");
#define SEG_END_BYTES (sizeof(struct seg) + ((sizeof(struct ct_clock) + 31) & ~(size_t)31))

/* Ring r of the shared memory. */
static inline struct ctp_ring *ring(const struct ct_harvest *h, uint32_t r) {
  return (struct ctp_ring *)(h->ring_base + (uint64_t)r * h->ring_size);
}

/* Records ahead of the one being written whose station lines are fetched. */
#define PREFETCH_AHEAD 4
/* Records ahead whose capture line itself is fetched: the block was written
 * by the harvest thread on another core, and prefetch_rec's read of a record
 * PREFETCH_AHEAD on was the formatter's costliest miss (perf, round robin on
 * 2 threads: a quarter of ct_rings_on_block). */
#define CAPTURE_AHEAD 16

/* The formatter's arrays (batch, merge, released stations) start at this
 * many elements (common/grow.h). */
#define CT_GROW_FIRST 1024

/* A hint: the line at p will be read soon (no fault). On x86-64 in asm:
 * GCC 12 at -O2 dropped __builtin_prefetch calls here altogether (two in a
 * row, or one under a condition, left no instruction). */
static inline void prefetch(const void *p) {
#if defined(__x86_64__)
  __asm__ volatile("prefetcht0 %0" ::"m"(*(const char *)p));
#else
  __builtin_prefetch(p);
#endif
}

/* Push index i on a free queue of cap entries (we are its one producer, *tail
 * our own count). The consumers' head is the target's to write: a value that
 * would let us overwrite an entry not yet taken is refused, and cannot be
 * true (head beyond our tail; or cap entries still queued, while we push one
 * that is not). 0 or -EBADMSG. */
int ct_rings_push(struct ct_harvest *h, struct ctp_queue *q, uint64_t *tail, uint32_t cap,
                  uint32_t i);

/* n records of a ring's segment onto the pass's batch (rings_format.c;
 * ENOMEM: counted bad, never silent). */
void ct_rings_to_batch(struct ct_harvest *h, const struct ctp_rec *recs, size_t n, uint32_t tid);

/* rings_open.c (--pack, docs/ROUTE1.md "Latency"). Ring rg's open pack,
 * at its head (rs its state, limit the pass's, gone when its writer writes
 * no more: the final pass, a closed ring, a dead process). When it stayed
 * the same since the last pass, or gone, and nothing published waits before
 * it, the entries not taken before are written at out (room for
 * CTP_PACK_RECS records; NULL: no room, take nothing) as a pack of their
 * own; else, when it has entries
 * not taken, *bound is lowered to the ticks they are no older than: this
 * pass takes no record from that moment on (docs/ROUTE1.md "Latency": a
 * coroutine that moved to another thread must not be seen there before its
 * switches in this pack). Returns the records written, 0 when nothing is
 * taken (none open, still growing, nothing new, or what cannot be an open
 * pack: then *bound stays). */
uint32_t ct_rings_open_take(struct ct_harvest *h, struct ctp_ring *rg, struct ct_ring_state *rs,
                            uint64_t head, uint64_t limit, int gone, struct ctp_rec *out,
                            uint64_t *bound);
/* rings_open.c. The published pack at ring index at, copied to recs (its
 * 1 + nrec records): when entries of it were taken while it was open, it
 * becomes the pack of the rest, in place. 0 when nothing is left of it
 * (skip its records), else 1. */
int ct_rings_open_rest(struct ct_ring_state *rs, uint64_t at, struct ctp_rec *recs);

/* rings.c. Ring recs's time at record at (the pass's limit when the ring
 * is full, --flight: about a ring a pass), t its first unread record: the
 * ts of the last record or pack header at or before at, walked header to
 * header from t under --pack (a pack's continuation records hold entry
 * bytes, not a time: read as one, a small value put the limit below the
 * ring's first record, no pass took anything, and the final scan left
 * whole rings neither harvested nor lost). *first is set to when the
 * record or pack at t ends (a pack's last entry). The bytes are the
 * writer's, maybe being written over: at most at - t steps whatever they
 * hold; a wrong time only sizes a pass. */
uint64_t ct_rings_cut(const struct ct_harvest *h, const struct ctp_rec *recs, uint64_t t,
                      uint64_t at, uint64_t *first);

/* rings_pack.c (--pack, docs/ROUTE1.md). The n records of a segment with
 * packs (rings.c pack_at): each pack, after the checks its framing needs
 * (its entries are the decoder's to check), to the pass's packs: pointed to
 * in place when keep (the block is then the handler's to keep until the
 * pass is written: returns 1), else its header and entry bytes copied
 * (returns 0); every other record to the batch. A pack that cannot be true,
 * or no memory: counted bad. */
int ct_rings_to_packs(struct ct_harvest *h, const struct ctp_rec *recs, uint32_t n, uint32_t tid,
                      int keep);
/* The pass's packs in time order (ts0), ties in capture order. */
void ct_rings_sort_packs(struct ct_harvest *h);
/* Pack pk as one trace entry (ct_ctw_pack), its ts0 converted with the
 * pass's clock; its events counted harvested. */
void ct_rings_write_pack(struct ct_harvest *h, const struct ct_pk *pk);
/* Harvest thread, --pack: the stations whose v2_lost changed, to the
 * pass's capture (SEG_LOST) for ct_rings_gaps: called with after 0 before
 * the pass's limit and copies, with 1 after its claims. */
void ct_rings_lost(struct ct_harvest *h, uint32_t nr, int after);
/* The pass's first and last ts (its records', runs' and packs' entries'):
 * *lo and *hi, lo > hi when it has none. */
void ct_rings_pass_span(struct ct_harvest *h, uint64_t *lo, uint64_t *hi);
/* --pack: a gap entry at ts (ticks) for each live coroutine of the pass's
 * h->gaps whose v2_lost there is beyond the one its numbering took in
 * (docs/ROUTE1.md item 4): its next ev goes past the lost events, as an
 * ordinary record of it would (emit_all), for a coroutine that only
 * switches in packs. With defer, the entries of stations not live yet stay
 * in h->gaps (their create is in the pass: a call after its records gives
 * them their gap), else every entry is used up. */
void ct_rings_gaps(struct ct_harvest *h, uint64_t ts, int defer);

/* The block handler (sink.c): our own bytes, still checked against len.
 * Segments become runs in the block while the sink lets us keep it (keep)
 * and they are few; else the pass goes through the batch. Packs point
 * into it while keep (ct_rings_to_packs). Returns 1 when runs or packs
 * point into the block. */
int ct_rings_on_block(void *ctx, const char *d, size_t len, int keep);

#endif
