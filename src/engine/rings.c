/* rings.c - the engine's side of v2 (docs/PROTOCOL.md "v2"), the harvest
 * thread's half: it lays out and maps the rings, copies records out of the
 * per-thread rings into capture blocks (the sink's binary capture), ends each
 * pass, and recycles closed rings. The formatter's half, which merges a
 * pass's blocks by time and writes them, is rings_format.c. Every index the
 * target wrote is checked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/opts.h"
#include "engine/rings_int.h"
#include "engine/rundir.h"
#include "engine/sink.h"
#include "format/records.h"

static void ring_corrupt(struct ct_harvest *h, struct ct_ring_state *rs);

uint64_t ct_layout(const struct ct_opts *o, struct ctp_header *h) {
  uint64_t end = CTP_FILE_SIZE(o->stations);
  if (!o->rings)
    return end;
  /* v2: stations, free-station queue, free-ring queue, then the rings, each
   * ring on its own pages (docs/PROTOCOL.md "v2"). */
  uint64_t sq = end, rq = sq + CTP_QUEUE_SIZE(o->stations);
  uint64_t rings = (rq + CTP_QUEUE_SIZE(o->rings) + 4095) & ~(uint64_t)4095;
  uint64_t bytes = (uint64_t)o->ring_kib * 1024u;
  end = rings + (uint64_t)o->rings * CTP_RING_SIZE(bytes);
  if (h) {
    h->clock = o->clock;
    h->ring_count = o->rings;
    h->ring_bytes = (uint32_t)bytes;
    h->rings_off = rings;
    h->station_q_off = sq;
    h->ring_q_off = rq;
    h->v2_size = end;
    h->mode |= CTP_MODE_RINGS;
  }
  return end;
}

int ct_rings_init(struct ct_harvest *h, size_t map_len) {
  /* The engine wrote these before the target started; copy them now and
   * never read them from the file again (a target may scribble there). */
  const struct ctp_header *hd = h->hdr;
  uint64_t rsize = CTP_RING_SIZE(hd->ring_bytes);
  if (hd->ring_count == 0 || hd->ring_count > CTP_RINGS_MAX ||
      hd->ring_bytes < CTP_RING_BYTES_MIN || hd->ring_bytes > CTP_RING_BYTES_MAX ||
      (hd->ring_bytes & (hd->ring_bytes - 1)) || hd->v2_size > map_len ||
      hd->station_q_off + CTP_QUEUE_SIZE(h->n) > hd->v2_size ||
      hd->ring_q_off + CTP_QUEUE_SIZE(hd->ring_count) > hd->v2_size ||
      hd->rings_off + (uint64_t)hd->ring_count * rsize > hd->v2_size)
    return -EINVAL;
  h->rings = 1;
  h->overwrite = (hd->mode & (CTP_MODE_OVERWRITE | CTP_MODE_LOSSLESS)) == CTP_MODE_OVERWRITE;
  h->pack = (hd->mode & CTP_MODE_PACK) != 0;
  if (h->pack && h->sink->enc)
    ct_ctw_packs(h->sink->enc); /* before the run's first chunk */
  h->nrings = hd->ring_count;
  h->cap = hd->ring_bytes / (uint32_t)sizeof(struct ctp_rec);
  h->ring_size = rsize;
  h->ring_base = (char *)h->base + hd->rings_off;
  h->sq = ctp_queue_at(h->base, hd->station_q_off);
  h->rq = ctp_queue_at(h->base, hd->ring_q_off);
  h->rs = calloc(h->nrings, sizeof(*h->rs));
  if (!h->rs)
    return -ENOMEM;
  /* Page faults are slow (in a VM, ~10 us each): a first pass that touched
   * a ring's 64 pages once let that ring overflow. Map the free-ring queue
   * and the first rings now, before the target starts; the other rings as
   * the target claims them (ct_rings_populate). The free-station queue is
   * left to fault in as stations are released (a page per 1024 of them, on
   * the formatter), and the batch grows on the formatter's first fallback
   * pass: mapping both here cost every run ~2 ms of its setup. */
  uint64_t rq_off = hd->ring_q_off & ~(uint64_t)4095;
  (void)madvise((char *)h->base + rq_off, (size_t)(hd->rings_off - rq_off), MADV_POPULATE_WRITE);
  ct_rings_populate(h, 0);
  ct_sink_on_block(h->sink, ct_rings_on_block, h);
  return 0;
}

void ct_rings_free(struct ct_harvest *h) {
  free(h->rs);
  free(h->batch);
  free(h->merge);
  free(h->rel_now);
  free(h->rel_prev);
  free(h->rel_tmp);
  free(h->pks);
  free(h->pks_tmp);
  free(h->pkb);
  free(h->lost_seen);
  free(h->gaps);
  h->lost_seen = NULL;
  h->gaps = NULL;
  h->pks = h->pks_tmp = NULL;
  h->pkb = NULL;
  h->rs = NULL;
  h->batch = h->merge = NULL;
  h->rel_now = h->rel_prev = h->rel_tmp = NULL;
}

/* Rings mapped in ahead of the target's claims. Mapping all 64 MiB of the
 * default rings at start cost ~35 ms, and their teardown as much again, in
 * every run, most of which use a ring or two. */
#define POPULATE_AHEAD 2u

void ct_rings_populate(struct ct_harvest *h, uint32_t fresh) {
  uint32_t want = fresh + POPULATE_AHEAD < h->nrings ? fresh + POPULATE_AHEAD : h->nrings;
  if (want <= h->populated)
    return;
  /* Rings are not page-aligned (a header and a power of two each): from the
   * page the first one starts in. Best effort: an older kernel (no
   * MADV_POPULATE_WRITE) just faults later. */
  uintptr_t a = (uintptr_t)ring(h, h->populated) & ~(uintptr_t)4095;
  uintptr_t e = (uintptr_t)ring(h, want);
  (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
  h->populated = want;
}

/* Push index i on a free queue of cap entries (we are its one producer, *tail
 * our own count). The consumers' head is the target's to write: a value that
 * would let us overwrite an entry not yet taken is refused, and cannot be
 * true (head beyond our tail; or cap entries still queued, while we push one
 * that is not). 0 or -EBADMSG. */
int ct_rings_push(struct ct_harvest *h, struct ctp_queue *q, uint64_t *tail, uint32_t cap,
                  uint32_t i) {
  uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);
  if (head > *tail || *tail - head >= cap) {
    ct_harvest_corrupt(h);
    return -EBADMSG;
  }
  atomic_store_explicit(&q->ent[*tail % cap], i, memory_order_relaxed);
  ++*tail;
  atomic_store_explicit(&q->tail, *tail, memory_order_release);
  return 0;
}
/* The first time in a while that ring rs names site for pid: the ring's few
 * last sites are its loop's (a yield loop alternates its suspend and wake
 * sites; one remembered site looked one up at every record). */
static int new_site(struct ct_ring_state *rs, uint32_t pid, uint64_t site) {
  if (pid != rs->sites_pid) { /* a new owner: nothing of it is covered yet */
    memset(rs->sites, 0, sizeof rs->sites);
    rs->last_site = 0;
    rs->sites_pid = pid;
  }
  for (unsigned i = 0; i < CT_RING_SITES; i++)
    if (rs->sites[i] == site)
      return 0;
  rs->sites[rs->next_site++ % CT_RING_SITES] = site;
  return 1;
}

/* What must happen while the record is copied, before its process may exit:
 * the module lines of its sites (read from /proc/PID/maps). A ring's records
 * mostly repeat a few sites; a new one is looked up. A create's site is its
 * coroutine's creation site, the station's create_site (docs/PROTOCOL.md,
 * `addr` of a create), so its station is not read here: that was a cold
 * line from the creator's CPU at every create, a server's every ten records
 * (a writer that breaks the rule only leaves its coroutine line's site
 * without a module). */
static inline void watch(struct ct_harvest *h, struct ct_ring_state *rs, uint32_t pid,
                         const struct ctp_rec *r) {
  /* The site just covered (a loop's records mostly repeat it): no look-up. */
  if ((r->site != rs->last_site || pid != rs->sites_pid) && r->kind != CTP_KIND_RESUME && r->site &&
      (rs->last_site = r->site, new_site(rs, pid, r->site)))
    ct_harvest_cover_site(h, pid, r->site, ct_clock_ns(h->clock, r->ts));
  h->destroys += r->kind == CTP_KIND_DESTROY;
  h->creates += r->kind == CTP_KIND_CREATE;
}

/* A pack's header at out[m] of the want records copied, all of them up
 * to the ring's head when `all` (docs/ROUTE1.md): the continuation records
 * to skip (only the header is looked at: the formatter checks the rest); -1
 * when it waits for the next pass (its last entry not below limit); -2 when
 * its records go on past this copy (the segment ends before it, the next
 * one takes it: a segment has room for a whole pack). Its site is watched
 * as a record's. A header whose records cannot be there (nrec out of range,
 * or past the head) is skipped as one record (the formatter counts it bad). */
static int pack_at(struct ct_harvest *h, struct ct_ring_state *rs, uint32_t pid,
                   const struct ctp_rec *out, uint64_t m, uint64_t want, int all, uint64_t limit) {
  const struct ctp_pack *pk = (const struct ctp_pack *)&out[m];
  if (pk->nrec >= CTP_PACK_RECS)
    return 0;
  if (m + pk->nrec >= want)
    return all ? 0 : -2;
  if (pk->ts0 + pk->span >= limit)
    return -1;
  watch(h, rs, pid, &out[m]);
  return pk->nrec;
}

/* Overwrite mode: of the want records copied at out (all of them up to the
 * ring's head when `all`), how many this pass keeps: those before the first
 * newer than limit (*held then set), whole packs only (a pack's last entry
 * below limit, its records all copied: one whose records go on past this
 * copy waits for the next segment), so the tail we claim is a record or a
 * pack boundary, as the writer's take-back is (probe ring.c
 * ct_ring_overwrite). A header whose records cannot be there is one record,
 * as pack_at reads it. */
static uint64_t keep_below(const struct ct_harvest *h, const struct ctp_rec *out, uint64_t want,
                           int all, uint64_t limit, int *held) {
  uint64_t keep = 0;
  while (keep < want) {
    const struct ctp_pack *pk = (const struct ctp_pack *)&out[keep];
    uint64_t n = 1, ts = out[keep].ts;
    if (h->pack && pk->kind == CTP_KIND_PACK && pk->nrec < CTP_PACK_RECS) {
      if (keep + pk->nrec >= want && !all)
        break;
      if (keep + pk->nrec < want) {
        n += pk->nrec;
        ts = pk->ts0 + pk->span;
      }
    }
    if (ts >= limit) {
      *held = 1;
      break;
    }
    keep += n;
  }
  return keep;
}

/* CAS attempts on a ring's tail before it is called corrupt: the writer
 * moves it once an eighth of a ring, so a real ring needs one or two. */
#define TAIL_TRIES 64u

/* Overwrite mode: claim ring rg's records below to (0: none) by moving its
 * tail there with a CAS, or leave a tail the writer moved beyond; rs->tail
 * is set to the result. Returns the tail the CAS replaced, or at when that
 * is more: the records below it the writer took back (written over, maybe,
 * while we copied them), those from it up to to are ours, and the writer
 * takes back nothing below to from then on (an RMW reads the newest value;
 * a writer's CAS after ours reads our release, which orders our copy before
 * its overwrite). Claiming later than the copy's check would let the writer
 * take back, and count lost, records we keep (docs/PROTOCOL.md "Overwrite
 * mode", tests/model/overwrite.pml). A tail below our own or beyond head
 * (loaded after it, acquire) is no writer's: flagged, and at is kept. */
static uint64_t ring_claim(struct ct_harvest *h, struct ctp_ring *rg, struct ct_ring_state *rs,
                           uint64_t at, uint64_t to) {
  uint64_t e = rs->tail;
  for (unsigned tries = 0; tries < TAIL_TRIES; tries++) {
    uint64_t want = e > to ? e : to;
    if (atomic_compare_exchange_strong_explicit(&rg->tail, &e, want, memory_order_acq_rel,
                                                memory_order_acquire)) {
      rs->tail = want;
      return e > at ? e : at;
    }
    if (e < rs->tail || e > atomic_load_explicit(&rg->head, memory_order_acquire))
      break;
  }
  ring_corrupt(h, rs);
  return at;
}

/* Overwrite mode: claim the records of our copy out (want records from c,
 * head the ring's) that this pass keeps (keep_below), as ring_claim does,
 * counting from the tail the writer moved to when it took some back: the
 * records below it may be written over in our copy (a header there could
 * step past the writer's boundary), those from it on are as published.
 * *keep is set to the records kept, from c; returns where ours start (c,
 * or the writer's tail). */
static uint64_t claim_kept(struct ct_harvest *h, struct ctp_ring *rg, struct ct_ring_state *rs,
                           uint64_t c, const struct ctp_rec *out, uint64_t want, uint64_t head,
                           uint64_t limit, uint64_t *keep, int *held) {
  uint64_t e = rs->tail;
  for (unsigned tries = 0; tries < TAIL_TRIES; tries++) {
    uint64_t off = e > c ? e - c : 0;
    *held = 0;
    *keep = off >= want ? off
                        : off + keep_below(h, out + off, want - off, c + want == head, limit, held);
    if (atomic_compare_exchange_strong_explicit(&rg->tail, &e, c + *keep > e ? c + *keep : e,
                                                memory_order_acq_rel, memory_order_acquire)) {
      rs->tail = c + *keep > e ? c + *keep : e;
      return e > c ? e : c;
    }
    if (e < rs->tail || e > atomic_load_explicit(&rg->head, memory_order_acquire))
      break;
  }
  ring_corrupt(h, rs);
  *keep = 0;
  return c;
}

/* Give the room below to back to the writer: tail set to to, or left
 * where the writer moved it beyond (overwrite mode: a CAS, not a store that
 * would undo the writer's move). */
static void ring_tail_set(struct ct_harvest *h, struct ctp_ring *rg, struct ct_ring_state *rs,
                          uint64_t to) {
  if (!h->overwrite) {
    atomic_store_explicit(&rg->tail, to, memory_order_release);
    rs->tail = to;
    return;
  }
  uint64_t e = rs->tail;
  for (unsigned tries = 0; tries < TAIL_TRIES; tries++) {
    if (atomic_compare_exchange_strong_explicit(&rg->tail, &e, e > to ? e : to,
                                                memory_order_acq_rel, memory_order_acquire)) {
      rs->tail = e > to ? e : to;
      return;
    }
    if (e < rs->tail)
      break;
  }
  ring_corrupt(h, rs);
  atomic_store_explicit(&rg->tail, to, memory_order_release);
  rs->tail = to;
}

/* The segment at sg, its n records copied behind it, filled in and handed
 * to the formatter. */
static void seg_fill(struct ct_harvest *h, struct seg *sg, uint32_t r, uint32_t tid, uint32_t pid,
                     uint32_t n, int sorted, int packs) {
  *sg = (struct seg){.kind = SEG_RECS,
                     .n = n,
                     .ring = r,
                     .tid = tid,
                     .pid = pid,
                     .sorted = (uint32_t)sorted,
                     .packs = (uint32_t)packs};
  ct_sink_fill(h->sink, sizeof(*sg) + n * sizeof(struct ctp_rec));
}

/* --pack: each ring's open pack (rings_open.c), before the pass: taken
 * when its writer stopped or is gone, else the pass's limit lowered to its
 * untaken entries' time. Returns the limit; *got grows by the records
 * taken (the pass then ends in the capture, as one with records does:
 * else an idle engine never handed them to the formatter). */
static uint64_t open_packs(struct ct_harvest *h, uint32_t nr, uint64_t limit, uint64_t *got) {
  uint64_t bound = limit;
  for (uint32_t r = 0; r < nr; r++) {
    struct ctp_ring *rg = ring(h, r);
    struct ct_ring_state *rs = &h->rs[r];
    uint32_t state = atomic_load_explicit(&rg->state, memory_order_acquire);
    uint64_t head = atomic_load_explicit(&rg->head, memory_order_acquire);
    if (state == CTP_RING_FREE)
      continue;
    size_t avail;
    char *room =
        ct_sink_room(h->sink, sizeof(struct seg) + CTP_PACK_RECS * sizeof(struct ctp_rec), &avail);
    struct seg *sg = (struct seg *)room; /* no memory: the pack waits, as records do */
    struct ctp_rec *out = room ? (struct ctp_rec *)(sg + 1) : NULL;
    int gone = h->final || state == CTP_RING_CLOSED || rs->orphan;
    uint32_t n = ct_rings_open_take(h, rg, rs, head, limit, gone, out, &bound);
    if (n) {
      uint32_t pid = LOAD(&rg->pid);
      watch(h, rs, pid, out);
      seg_fill(h, sg, r, LOAD(&rg->tid), pid, n, 0, 1);
      h->captured += n;
      *got += n;
      h->progress = 1;
    }
  }
  return bound;
}

/* Copy ring r's new records with ts below limit (a ring's records are in time
 * order: its one writer reads the clock then publishes) into capture blocks,
 * and give the room back to the writer. Returns the count. */
static uint64_t drain_ring(struct ct_harvest *h, uint32_t r, uint64_t limit) {
  struct ctp_ring *rg = ring(h, r);
  struct ct_ring_state *rs = &h->rs[r];
  /* state before head: the writer's CLOSED store follows its last head store. */
  uint32_t state = atomic_load_explicit(&rg->state, memory_order_acquire);
  uint64_t head = atomic_load_explicit(&rg->head, memory_order_acquire);
  /* Overwrite mode: records the writer took back since our last pass are
   * gone (it counted them lost, ring and stations). Head first: the writer
   * moves tail before it publishes a head beyond tail + cap, so the tail
   * read after is at least head - cap (read the other way round, a writer
   * that lapped the ring between the two reads looked corrupt); a tail
   * beyond this head means the writer took back all we saw: nothing to
   * copy this pass. */
  if (h->overwrite && ring_claim(h, rg, rs, 0, 0) > head)
    head = rs->tail;
  uint64_t lost = atomic_load_explicit(&rg->lost, memory_order_relaxed);
  /* The writer only adds to it, one per record dropped: a count that went
   * down or jumped beyond any program's rate was written over. Such a ring's
   * count is left out of ring_lost from then on (resynchronised, not summed). */
  if (lost < rs->lost || !ct_count_sane(h, lost - rs->lost))
    ring_corrupt(h, rs);
  else if (!rs->corrupt) {
    h->ring_lost = ct_sat_add(h->ring_lost, lost - rs->lost);
    rs->lost_sum = ct_sat_add(rs->lost_sum, lost - rs->lost);
  }
  rs->lost = lost;
  /* We stored FREE before we queued it: any other state is a claim since,
   * OWNED or already CLOSED again (a writer at full speed takes, fills and
   * retires a ring between two of our passes). With OWNED alone as the
   * sign, such a ring stayed "queued" for us and was never recycled again:
   * a 10^7-event burst leaked the rings one by one until its writer found
   * no spare and dropped millions of events. */
  if (state != CTP_RING_FREE)
    rs->queued = 0;
  if (state == CTP_RING_OWNED && rs->orphan)
    state = CTP_RING_CLOSED; /* its process is gone: nobody writes it any more */
  if (state == CTP_RING_OWNED)
    h->rings_owned++;
  uint64_t t = rs->tail;
  if (head < t || head - t > h->cap) {
    /* A head behind what we consumed, or claims beyond the ring's capacity:
     * no writer that follows the protocol publishes either. Flagged; the
     * skipped records count only when the number can be true. */
    ring_corrupt(h, rs);
    if (head > t && ct_count_sane(h, head - t))
      h->gap += head - t;
    ring_tail_set(h, rg, rs, head);
    t = rs->tail;
    h->progress = 1;
  }
  uint32_t tid = LOAD(&rg->tid), pid = LOAD(&rg->pid);
  const struct ctp_rec *recs = ctp_ring_recs(rg);
  uint64_t c = t, k = 0, skip = 0; /* the next record to copy; records copied; to skip */
  int held = 0; /* a record newer than this pass: the next one takes it, in order */
  while (c < head && !held) {
    size_t avail;
    /* Under --pack, room for a whole pack: a segment with less would end
     * before the pack at its start, and every pass again (its records were
     * never copied, and nothing counted them). */
    char *room = ct_sink_room(
        h->sink, sizeof(struct seg) + (h->pack ? CTP_PACK_RECS : 1u) * sizeof(struct ctp_rec),
        &avail);
    if (!room)
      break; /* no memory: the records wait in the ring */
    struct seg *sg = (struct seg *)room;
    struct ctp_rec *out = (struct ctp_rec *)(sg + 1);
    uint64_t fit = (avail - sizeof(*sg)) / sizeof(*out), m = 0, prev = 0;
    int down = 0;  /* a ts below the one before it in this segment */
    int packs = 0; /* the segment holds packs */
    /* One memcpy per stretch up to the ring's wrap: the ring's lines come
     * from the writer's cache, and a bulk copy keeps more of them in
     * flight than a record at a time. Then each record, in our copy. */
    uint64_t want = fit < head - c ? fit : head - c, at = c & (h->cap - 1);
    uint64_t first = want < h->cap - at ? want : h->cap - at;
    ct_sink_populate(h->sink, sizeof(*sg) + want * sizeof(*out));
    memcpy(out, &recs[at], first * sizeof(*out));
    memcpy(out + first, recs, (want - first) * sizeof(*out));
    if (h->overwrite) {
      /* Claim what this pass keeps (the records before the first one held
       * back) as soon as it is copied: our copy holds only what the writer
       * had not taken back by the claim. */
      uint64_t keep;
      uint64_t e = claim_kept(h, rg, rs, c, out, want, head, limit, &keep, &held);
      held |= keep == 0; /* nothing kept: on at the next pass, never a loop here */
      if (e - c >= keep) {
        c = e; /* all of it taken back: on from the writer's tail */
        continue;
      }
      memmove(out, out + (e - c), (keep - (e - c)) * sizeof(*out));
      want = keep - (e - c);
      c = e;
    }
    while (m < want) {
      if (h->pack && out[m].kind == CTP_KIND_PACK) {
        int p = pack_at(h, rs, pid, out, m, want, want + skip == head - c, limit);
        if (p < 0) {
          held = p == -1;
          break;
        }
        if (!ct_rings_open_rest(rs, c + m + skip, &out[m])) {
          /* All of it taken while it was open: out of the segment, the
           * records after it go on (in overwrite mode they are claimed
           * already: a later segment would take them for the writer's). */
          uint64_t n = 1u + (uint64_t)p;
          memmove(&out[m], &out[m + n], (want - m - n) * sizeof *out);
          want -= n;
          skip += n;
          continue;
        }
        packs = 1;
        m += 1u + (uint64_t)p;
        continue;
      }
      if (out[m].ts >= limit) {
        held = 1;
        break;
      }
      down |= out[m].ts < prev;
      prev = out[m].ts;
      watch(h, rs, pid, &out[m]);
      m++;
    }
    k += m;
    c += m + skip;
    if (m) {
      seg_fill(h, sg, r, tid, pid, (uint32_t)m, !down && !packs, packs);
      /* The pass's first new event, for the engine's wake-up lateness
       * (run_main.c late_max): published records only, not an open pack
       * taken because it stayed unpublished. */
      uint64_t ns = ct_clock_ns(h->clock, out[0].ts);
      if (ns < h->first_ts)
        h->first_ts = ns;
    } else if (!skip)
      break;
    skip = 0;
  }
  if (c != t) {
    ring_tail_set(h, rg, rs, c);
    h->progress = 1;
    h->captured += k;
  }
  if (k > h->peak)
    h->peak = k;
  /* Closed and empty: nobody writes it any more; it goes back to the pool. */
  if (state == CTP_RING_CLOSED && rs->tail == head && !rs->queued) {
    atomic_store_explicit(&rg->state, CTP_RING_FREE, memory_order_release);
    if (ct_rings_push(h, h->rq, &h->rq_tail, h->nrings, r) == 0) {
      rs->queued = 1;
      rs->orphan = 0;
      h->recycled++;
    }
  }
  return k;
}

void ct_rings_owner_gone(struct ct_harvest *h, uint32_t pid) {
  if (!h->rings || !pid)
    return;
  uint32_t fresh = atomic_load_explicit(&h->hdr->rings_fresh, memory_order_acquire);
  uint32_t nr = fresh < h->nrings ? fresh : h->nrings;
  for (uint32_t r = 0; r < nr; r++) {
    struct ctp_ring *rg = ring(h, r);
    if (atomic_load_explicit(&rg->state, memory_order_acquire) == CTP_RING_OWNED &&
        LOAD(&rg->pid) == pid)
      h->rs[r].orphan = 1;
  }
}

/* Ring rs held what cannot be true: its lost count is taken back out of
 * ring_lost and no longer added (harvest thread). */
static void ring_corrupt(struct ct_harvest *h, struct ct_ring_state *rs) {
  if (rs->corrupt)
    return;
  rs->corrupt = 1;
  h->ring_lost -= rs->lost_sum < h->ring_lost ? rs->lost_sum : h->ring_lost;
  ct_harvest_corrupt(h);
}

int ct_rings_clean(struct ct_harvest *h) {
  int ok = 1;
  static const uint8_t zero[64];
  const struct ctp_queue *qs[2] = {h->sq, h->rq};
  for (int k = 0; k < 2; k++)
    if (memcmp(qs[k]->pad_h, zero, sizeof qs[k]->pad_h) ||
        memcmp(qs[k]->pad_t, zero, sizeof qs[k]->pad_t)) {
      ct_harvest_corrupt(h);
      ok = 0;
    }
  for (uint32_t r = 0; r < h->nrings; r++) {
    const struct ctp_ring *rg = ring(h, r);
    if (memcmp(rg->pad_w, zero, sizeof rg->pad_w) || memcmp(rg->pad_e, zero, sizeof rg->pad_e)) {
      ring_corrupt(h, &h->rs[r]);
      ok = 0;
    }
  }
  return ok;
}

/* The end of a pass in the capture: the formatter merges and writes what
 * came before it, converting with this pass's clock. */
static void pass_end(struct ct_harvest *h) {
  size_t avail;
  char *room = ct_sink_room(h->sink, SEG_END_BYTES, &avail);
  if (!room)
    return; /* no memory: the next pass's end closes this one too */
  memset(room, 0, SEG_END_BYTES);
  ((struct seg *)room)->kind = SEG_END;
  memcpy(room + sizeof(struct seg), h->clock, sizeof(*h->clock));
  ct_sink_fill(h->sink, SEG_END_BYTES);
  ct_sink_push_block(h->sink);
}

/* Stations a create can have now: never allocated (*fresh), plus queued
 * free. The target writes these words: a value that cannot be true reads
 * as none queued (it only sizes a nap or a wake-up). */
static uint64_t stations_free(struct ct_harvest *h, uint32_t *fresh) {
  uint32_t a = atomic_load_explicit(&h->hdr->allocated_count, memory_order_relaxed);
  *fresh = a < h->n ? h->n - a : 0;
  uint64_t head = atomic_load_explicit(&h->sq->head, memory_order_relaxed);
  uint64_t tail = atomic_load_explicit(&h->sq->tail, memory_order_relaxed);
  return *fresh + (tail < head || tail - head > h->n ? 0 : tail - head);
}

/* 1 when released stations are wanted soon: always in lossless mode (its
 * writers wait for one), else when both the never-allocated stations and
 * the free queue run low (CTP_STATIONS_LOW: the mark past which a create
 * nudges us). A wrong value in the target's words only costs a wake-up, or
 * a release at the formatter's next batch (a writer without a station goes
 * untraced, counted). */
static int stations_short(struct ct_harvest *h) {
  if (h->lossless)
    return 1;
  uint32_t low = CTP_STATIONS_LOW(h->n), fresh;
  uint64_t queued = stations_free(h, &fresh) - fresh;
  return fresh <= low && queued < low;
}

/* Records a scan with destroys takes at least to wake the formatter at its
 * end (ct_rings_scan). */
#define RELEASE_WAKE_RECS 1024u

/* Bounded passes one scan takes at most (ct_rings_scan). */
#define PASSES_PER_SCAN 8u

/* Contract: see rings_int.h. */
uint64_t ct_rings_cut(const struct ct_harvest *h, const struct ctp_rec *recs, uint64_t t,
                      uint64_t at, uint64_t *first) {
  uint64_t m = h->cap - 1, i = t;
  *first = recs[t & m].ts;
  if (!h->pack)
    return recs[at & m].ts;
  for (;;) {
    const struct ctp_pack *pk = (const struct ctp_pack *)&recs[i & m];
    uint64_t n = pk->kind == CTP_KIND_PACK && pk->nrec < CTP_PACK_RECS ? 1u + pk->nrec : 1u;
    if (i == t && n > 1)
      *first = pk->ts0 + pk->span;
    if (i + n > at)
      return recs[i & m].ts;
    i += n;
  }
}

/* The pass's time limit: limit, or lower when a ring is full (a backlog:
 * its writer went on in a spare or waits): then its last record's ts (but
 * above the end of its first record or pack: a pass always takes
 * something). Records stamped at or after it wait for the next pass, in
 * every ring: time order holds, and the spares filled after this ring
 * wait. A pass then holds about a ring of records (the formatter's sort
 * arrays are sized for two). */
static uint64_t pass_limit(struct ct_harvest *h, uint32_t nr, uint64_t limit) {
  uint64_t q = h->cap - 1;
  for (uint32_t r = 0; r < nr; r++) {
    struct ctp_ring *rg = ring(h, r);
    uint64_t t = h->rs[r].tail, head = atomic_load_explicit(&rg->head, memory_order_acquire);
    if (head <= t + q || head - t > h->cap) /* few, or not true (drain_ring says) */
      continue;
    uint64_t first, cut = ct_rings_cut(h, ctp_ring_recs(rg), t, t + q, &first);
    if (cut <= first)
      cut = first + 1;
    if (cut < limit)
      limit = cut;
  }
  return limit;
}

uint64_t ct_rings_scan(struct ct_harvest *h) {
  /* Records stamped after this moment wait for the next pass: a record
   * stamped earlier is published by now (unless its writer was preempted
   * between the clock read and the head store), so a coroutine's records
   * from different rings come out in time order. */
  uint64_t limit = h->final ? UINT64_MAX : ct_clock_now(h->clock);
  ct_clock_update(h->clock);
  /* After the limit: a ring claimed before a record stamped below it is in
   * nr (taken after it, the newest ring's records below the limit waited a
   * pass while the others' went out: a coroutine that moved threads had its
   * records out of order, its destroy before a wake, 1 run in ~50 of
   * test-asio-threads). */
  uint32_t fresh = atomic_load_explicit(&h->hdr->rings_fresh, memory_order_acquire);
  uint32_t nr = fresh < h->nrings ? fresh : h->nrings;
  ct_rings_populate(h, nr);
  /* A loss counted here may be of a record past the limit: its gap then
   * comes a pass early, before that coroutine's later records all the same. */
  ct_rings_lost(h, nr, 0);
  uint64_t got = 0;
  if (h->pack)
    limit = open_packs(h, nr, limit, &got);
  uint64_t peak = h->peak, creates = h->creates;
  h->peak = 0;
  h->rings_owned = 0;
  /* --flight: a backlog (full rings a burst left, spares a lossless writer
   * went on in) goes in bounded passes, as the formatter's sort arrays hold
   * a pass (the engine's memory is bounded: docs/FLIGHT.md "Memory"); a few
   * per scan, so that the loop still serves signals and connections while a
   * writer refills the rings as fast as they drain. The final scan goes on
   * until the rings are empty: what it left there would be counted neither
   * harvested nor lost (the end's events fell short of what was written). */
  int again = 0; /* the one pass after one that copied destroys: taken */
  for (unsigned k = 0; h->final || k < PASSES_PER_SCAN; k++) {
    uint64_t lim = h->sink->flight ? pass_limit(h, nr, limit) : limit, pass = 0;
    uint64_t destroys = h->destroys;
    if (k)
      ct_rings_lost(h, nr, 0);
    for (uint32_t r = 0; r < nr; r++)
      pass += drain_ring(h, r, lim);
    ct_rings_lost(h, nr, 1);
    got += pass;
    /* A pass that copied destroys is followed by another at once, with
     * the same limit: its heads are loaded after the destroys were taken,
     * which is what releases their stations (docs/PROTOCOL.md "Station
     * reuse"), so the formatter pushes them at this scan's end instead of
     * the next one's, a nap later. A server's stations then come back
     * after half a nap on average instead of one and a half, and fewer of
     * them cycle through the free queue (each a cold line for the probe's
     * create and the formatter; bench-server 2 64: ~16,000 -> ~11,000). Its
     * records are those published since, stamped below the limit: a few. */
    int more = !again && !h->final && h->destroys != destroys && lim == limit;
    if ((lim == limit && !more) || !pass)
      break;
    again |= more;
    pass_end(h);
  }
  /* The nap is sized for 8-slot stations: a ring's fill in those units. */
  uint64_t scaled = ct_ring_fill8(h->peak, h->cap);
  h->peak = scaled > peak ? scaled : peak;
  /* Stations are a budget too: a server's request is a few records, far
   * from filling a ring, and a nap sized by the rings alone let its creates
   * spend every free station before the pass that releases them (stations
   * used grew with the requests, then creates went untraced). In the same
   * units, the creates traced and those that found no station (they want one
   * as much): a nap's creates take at most an eighth of the stations free now
   * (a destroy's station is released at the end of the scan that took it, or
   * of the next one, and a loaded machine may run the loop late). */
  uint32_t over = atomic_load_explicit(&h->hdr->overflow, memory_order_relaxed);
  uint64_t demand = h->creates - creates + (uint32_t)(over - h->overflow_seen);
  h->overflow_seen = over; /* the target's word: a wrong value only shortens a nap */
  if (demand) {
    uint32_t fresh;
    uint64_t free = stations_free(h, &fresh);
    scaled = (4 * demand * CTP_SLOTS + free) / (free + 1);
    if (scaled > h->peak)
      h->peak = scaled;
  }
  /* A pass after one with records ends in the capture even when empty: the
   * formatter releases the stations destroyed in the one before. */
  if (got || h->pass_open)
    pass_end(h);
  h->pass_open = got != 0;
  /* Destroys in this pass or the one before: the formatter releases their
   * stations at this pass's end, and a writer may be waiting for one (a
   * program that churns through few stations): wake it now, not at its next
   * batch or the end of the loop's nap ladder (up to 100 ms). Only then: a
   * server whose connections come and go destroys in nearly every pass, and
   * a wake-up per pass cost it more than its lines; but a scan that took
   * destroys and many records (RELEASE_WAKE_RECS: its formatting costs more
   * than the wake-up) wakes it too, so that those stations come back now, a
   * nap before the next scan would have them: the fewer stations cycle, the
   * fewer cold lines and TLB misses every create and record costs. */
  if (h->destroys != h->destroys_seen || h->release_due) {
    h->release_due = h->destroys != h->destroys_seen;
    h->destroys_seen = h->destroys;
    if (stations_short(h) || (again && got >= RELEASE_WAKE_RECS))
      ct_sink_wake(h->sink);
  }
  return got;
}

void ct_rings_station_end(struct ct_harvest *h, uint32_t i, uint64_t *events, uint64_t *lost) {
  struct ct_station_state *st = &h->st[i];
  struct ctp_station *s = ctp_station_at(h->base, i);
  uint64_t dropped = atomic_load_explicit(&s->v2_lost, memory_order_relaxed);
  if (!st->live)
    st->probe_id = LOAD(&s->probe_id); /* every record of it was lost */
  /* A drop count beyond any program's rate, or bytes no writer touches not
   * zero: the station was written over, and its drops are not known. The
   * stale records are ours to count (copied from the rings). */
  if (!st->corrupt && (!ct_count_sane(h, dropped) || !ct_station_clean(h, i))) {
    st->corrupt = 1;
    ct_harvest_corrupt(h);
  }
  int corrupt = st->corrupt || st->c_corrupt;
  if (corrupt)
    dropped = 0;
  struct ct_station_end se = {.probe_id = st->probe_id,
                              .events = ct_sat_add(st->harvested, ct_sat_add(dropped, st->stale)),
                              .harvested = st->harvested,
                              .lost = ct_sat_add(dropped, st->stale),
                              .station = i,
                              .gen = st->gen ? st->gen : LOAD(&s->gen),
                              .dead = st->destroyed,
                              .corrupt = corrupt};
  h->v2_stations++;
  st->events = se.events; /* for the summary's "most lost" */
  st->harvested = se.harvested;
  st->dead = (uint8_t)se.dead;
  ct_rec_station_end(h->w, &se);
  *events = ct_sat_add(*events, se.events);
  *lost = ct_sat_add(*lost, se.lost);
}
