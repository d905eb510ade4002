/* rings_pack.c - the formatter's packs (docs/ROUTE1.md): a pass's pack records, pointed
 * to in the capture blocks the sink lets it keep (else copied out as they are), put in
 * time order, and each written as one trace entry. No entry of a pack is read here: its
 * expansion, numbering and place among the other threads' events are the decoder's
 * (src/format/ctrace_pack.c). And the losses of a pass (docs/ROUTE1.md item 4): the
 * harvest's look at the stations' counts (ct_rings_lost), the formatter's gap entries,
 * which put the hole in the numbering of coroutines that only switch in packs. */
#include <stdlib.h>
#include <string.h>

#include "common/runsort.h"
#include "engine/rings_int.h"
#include "engine/sink.h"
#include "format/ctw.h"

/* Records asked for ahead of the one read: the segment's lines come from
 * the harvest thread's copy, likely in another core's cache; each pack's
 * header read waited on its line (perf: nine tenths of this loop), and the
 * whole pack is read again when it is written (ct_ctw_pack). Two records a
 * line. */
#define PACK_AHEAD 32u

/* Contract: see rings_int.h. The framing a pack needs is checked here (the
 * harvest looked at its header only). */
int ct_rings_to_packs(struct ct_harvest *h, const struct ctp_rec *recs, uint32_t n, uint32_t tid,
                      int keep) {
  int kept = 0;
  uint32_t pf = 0; /* records below pf asked for (PACK_AHEAD) */
  for (uint32_t k = 0; k < n;) {
    const struct ctp_pack *pk = (const struct ctp_pack *)&recs[k];
    for (; pf < n && pf < k + PACK_AHEAD; pf += 2)
      prefetch(&recs[pf]);
    if (recs[k].kind != CTP_KIND_PACK) {
      ct_rings_to_batch(h, &recs[k++], 1, tid);
      continue;
    }
    uint32_t nrec = pk->nrec, len = (uint32_t)sizeof *pk + pk->nbytes;
    if (nrec >= CTP_PACK_RECS || nrec >= n - k || pk->nbytes > nrec * sizeof *recs ||
        pk->nent == 0 ||
        ct_grow((void **)&h->pks, &h->cappks, h->npks + 1, sizeof(*h->pks), CT_GROW_FIRST) ||
        (!keep && ct_grow((void **)&h->pkb, &h->cappkb, h->npkb + len, 1, CT_GROW_FIRST * 32))) {
      h->bad++;
      k++;
      continue;
    }
    struct ct_pk *e = &h->pks[h->npks];
    *e = (struct ct_pk){.ts0 = pk->ts0, .len = len, .tid = tid, .events = ctp_pack_events(pk)};
    if (keep) { /* the block stays ours until the pass is written */
      e->p = (const uint8_t *)pk;
      kept = 1;
    } else { /* the entries follow the header in the block */
      memcpy(h->pkb + h->npkb, pk, len);
      e->off = (uint32_t)h->npkb;
      h->npkb += len;
    }
    if (h->npks && e->ts0 < e[-1].ts0)
      h->pk_runs = 1;
    h->npks++;
    k += 1 + nrec;
  }
  h->pk_held |= kept;
  return kept;
}

CT_RUNSORT_DEFINE(sort_packs, struct ct_pk, ts0)

/* Contract: see rings_int.h. A pass's packs are a few runs (one a ring's
 * segment), each in time order (runsort.h). ENOMEM: left as they are, as
 * the batch's records (rings_format.c sort_pass): the decoder merges a
 * chunk's entries by time. */
void ct_rings_sort_packs(struct ct_harvest *h) {
  size_t n = h->npks;
  if (!h->pk_runs ||
      ct_grow((void **)&h->pks_tmp, &h->cappks_tmp, n, sizeof(*h->pks), CT_GROW_FIRST))
    return;
  h->pk_runs = 0;
  sort_packs(&h->pks, &h->cappks, &h->pks_tmp, &h->cappks_tmp, n);
}

/* The stations below a whose v2_lost (v0's, else read now) differs from
 * what was sent, with the count, as a SEG_LOST segment of the pass (the
 * formatter's gap entries: ct_rings_gaps). The counts are the target's:
 * only compared, sent as read. */
static void lost_send(struct ct_harvest *h, uint32_t a, const uint64_t *v0) {
  struct seg *sg = NULL;
  struct ct_gap *g = NULL;
  size_t avail = 0, n = 0, max = 0;
  for (uint32_t i = 0; i < a; i++) {
    uint64_t v =
        v0 ? v0[i]
           : atomic_load_explicit(&ctp_station_at(h->base, i)->v2_lost, memory_order_relaxed);
    if (v == h->lost_seen[i])
      continue;
    if (n == max) { /* the segment so far to the capture, room for more */
      if (sg)
        ct_sink_fill(h->sink, sizeof *sg + (n * sizeof *g + 31) / 32 * 32);
      if (!(sg = (struct seg *)ct_sink_room(h->sink, sizeof *sg + 32, &avail)))
        return; /* no memory: the rest at a later look */
      memset(sg, 0, sizeof *sg);
      sg->kind = SEG_LOST;
      g = (struct ct_gap *)(sg + 1);
      max = (avail - sizeof *sg) / 32 * (32 / sizeof *g);
      n = 0;
    }
    g[n++] = (struct ct_gap){.station = i, .lost = v};
    sg->n = (uint32_t)n;
    h->lost_seen[i] = v;
  }
  if (sg)
    ct_sink_fill(h->sink, sizeof *sg + (n * sizeof *g + 31) / 32 * 32);
}

/* Contract: see rings_int.h. The losses of a pass, where they lie.
 * Before the pass's limit and copies (after 0), when the rings' lost counts
 * changed since the last look: every loss counted by then is of records
 * all unclaimed then, so below the limit. Overwrite mode: before them (a
 * take-back takes the oldest), sent now. Default mode: after them (a full
 * ring drops the newest); the stations' counts are kept and sent after the
 * claims (after 1), read again then when no ring is full again with losses
 * since (a loss until a ring's claim follows the pass's records of it; one
 * after it, in a ring refilled, would follow the next pass's). */
void ct_rings_lost(struct ct_harvest *h, uint32_t nr, int after) {
  uint64_t sum = 0;
  int full = 0;
  for (uint32_t r = 0; h->pack && r < nr; r++) {
    sum += atomic_load_explicit(&ring(h, r)->lost, memory_order_relaxed);
    if (after)
      full |=
          atomic_load_explicit(&ring(h, r)->head, memory_order_acquire) - h->rs[r].tail >= h->cap;
  }
  if (after) {
    uint32_t a = h->lost_a;
    h->lost_a = 0;
    h->lost_again |= sum != h->lost_sum;
    if (a)
      lost_send(h, a, full && sum != h->lost_sum ? h->lost_s0 : NULL);
    return;
  }
  if (!h->pack || (sum == h->lost_sum && !h->lost_again) ||
      (!h->lost_seen && !(h->lost_seen = calloc(2 * (size_t)h->n, sizeof *h->lost_seen))))
    return;
  h->lost_s0 = h->lost_seen + h->n;
  h->lost_again = sum != h->lost_sum;
  h->lost_sum = sum;
  uint32_t a = atomic_load_explicit(&h->hdr->allocated_count, memory_order_acquire);
  a = a < h->n ? a : h->n;
  if (h->overwrite) {
    lost_send(h, a, NULL);
    return;
  }
  for (uint32_t i = 0; i < a; i++)
    h->lost_s0[i] =
        atomic_load_explicit(&ctp_station_at(h->base, i)->v2_lost, memory_order_relaxed);
  h->lost_a = a;
}

/* Contract: see rings_int.h. Only in a pass with losses: a look at each
 * record and pack header. */
void ct_rings_pass_span(struct ct_harvest *h, uint64_t *lo, uint64_t *hi) {
  uint64_t a = UINT64_MAX, b = 0;
  for (size_t k = 0; k < h->nbatch; k++) {
    a = h->batch[k].r.ts < a ? h->batch[k].r.ts : a;
    b = h->batch[k].r.ts > b ? h->batch[k].r.ts : b;
  }
  for (unsigned k = 0; k < h->nruns; k++) { /* each in time order */
    a = h->runs[k].p[0].ts < a ? h->runs[k].p[0].ts : a;
    b = h->runs[k].p[h->runs[k].n - 1].ts > b ? h->runs[k].p[h->runs[k].n - 1].ts : b;
  }
  for (size_t k = 0; k < h->npks; k++) {
    const struct ctp_pack *pk =
        (const struct ctp_pack *)(h->pks[k].p ? h->pks[k].p : h->pkb + h->pks[k].off);
    a = pk->ts0 < a ? pk->ts0 : a;
    b = pk->ts0 + pk->span > b ? pk->ts0 + pk->span : b;
  }
  *lo = a;
  *hi = b;
}

/* Contract: see rings_int.h. */
void ct_rings_gaps(struct ct_harvest *h, uint64_t ts, int defer) {
  uint64_t ns = ct_clock_ns(&h->cclock, ts);
  size_t kept = 0;
  for (size_t k = 0; k < h->ngaps; k++) {
    uint32_t i = h->gaps[k].station;
    if (i >= h->n)
      continue;
    struct ct_station_state *st = &h->st[i];
    if (!st->live && defer)
      h->gaps[kept++] = h->gaps[k];
    if (!st->live || st->destroyed || st->queued)
      continue;
    uint64_t d = h->gaps[k].lost;
    /* Only ever added to: a count gone down or beyond any rate was written
     * over; no gap from it (as emit_all). */
    if (d == st->dropped)
      continue;
    if (d < st->dropped || !ct_count_sane(h, d - st->dropped)) {
      if (!st->c_corrupt) {
        st->c_corrupt = 1;
        ct_harvest_corrupt(h);
      }
      st->dropped = d;
      continue;
    }
    st->next_ev += d - st->dropped;
    st->dropped = d;
    ct_ctw_gap(h->sink->enc, st->probe_id, st->next_ev, ns);
  }
  h->ngaps = kept;
}

/* Contract: see rings_int.h. */
void ct_rings_write_pack(struct ct_harvest *h, const struct ct_pk *pk) {
  const struct ct_clock *ck = &h->cclock;
  ct_ctw_pack(h->sink->enc, pk->tid, ct_clock_ns(ck, pk->ts0),
              ck->kind == CTP_CLOCK_MONO ? UINT64_C(1) << 32 : ck->mult,
              pk->p ? pk->p : h->pkb + pk->off, pk->len);
  h->v2_harvested += pk->events;
  h->pk_events += pk->events;
}
