/* rings.c - the engine's side of v2 (docs/PROTOCOL.md "v2"). Two halves:
 * the harvest thread copies records out of the per-thread rings into capture
 * blocks (the sink's binary capture) and recycles closed rings; the formatter
 * thread, when it gets to a pass's blocks, merges them by time, attributes
 * them to station incarnations, writes their lines, and releases destroyed
 * stations one full pass later. Every index the target wrote is checked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/ctrace_enc.h"
#include "engine/engine.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

/* In a capture block: a run of records of one ring, or the end of a pass
 * (followed by the clock the pass converts with). */
enum { SEG_RECS = 1, SEG_END = 2 };
struct seg {
  uint32_t kind, n; /* n records follow (SEG_RECS) */
  uint32_t ring, tid, pid, pad[3];
};
_Static_assert(sizeof(struct seg) == sizeof(struct ctp_rec), "records stay 32-byte aligned");
#define SEG_END_BYTES (sizeof(struct seg) + ((sizeof(struct ct_clock) + 31) & ~(size_t)31))

static int on_block(void *ctx, const char *d, size_t len, int keep);
static void ring_corrupt(struct ct_harvest *h, struct ct_ring_state *rs);

static int grow(void **v, size_t *cap, size_t need, size_t size) {
  if (need <= *cap)
    return 0;
  size_t nc = *cap ? *cap : 1024;
  while (nc < need)
    nc *= 2;
  void *p = realloc(*v, nc * size);
  if (!p)
    return -ENOMEM;
  *v = p;
  *cap = nc;
  return 0;
}

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
  ct_sink_on_block(h->sink, on_block, h);
  return 0;
}

void ct_rings_free(struct ct_harvest *h) {
  free(h->rs);
  free(h->batch);
  free(h->merge);
  free(h->rel_now);
  free(h->rel_prev);
  h->rs = NULL;
  h->batch = h->merge = NULL;
  h->rel_now = h->rel_prev = NULL;
}

static struct ctp_ring *ring(const struct ct_harvest *h, uint32_t r) {
  return (struct ctp_ring *)(h->ring_base + (uint64_t)r * h->ring_size);
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
static int push(struct ct_harvest *h, struct ctp_queue *q, uint64_t *tail, uint32_t cap,
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
 * mostly repeat a few sites; a new one is looked up. */
static inline void watch(struct ct_harvest *h, struct ct_ring_state *rs, uint32_t pid,
                         const struct ctp_rec *r) {
  /* The site just covered (a loop's records mostly repeat it): no look-up. */
  if ((r->site != rs->last_site || pid != rs->sites_pid) && r->kind != CTP_KIND_RESUME && r->site &&
      (rs->last_site = r->site, new_site(rs, pid, r->site)))
    ct_harvest_cover_site(h, pid, r->site, ct_clock_ns(h->clock, r->ts));
  h->destroys += r->kind == CTP_KIND_DESTROY;
  if (r->kind == CTP_KIND_CREATE && r->station < h->n) {
    h->creates++;
    /* Its station is not reused before the formatter has seen this record. */
    const struct ctp_station *s = ctp_station_at(h->base, r->station);
    ct_harvest_cover_site(h, LOAD(&s->pid), LOAD(&s->create_site), ct_clock_ns(h->clock, r->ts));
  }
}

/* Records ahead of the one being copied or written whose station lines are
 * fetched. */
#define PREFETCH_AHEAD 4
#define WATCH_AHEAD 16

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

/* Copy ring r's new records with ts below limit (a ring's records are in time
 * order: its one writer reads the clock then publishes) into capture blocks,
 * and give the room back to the writer. Returns the count. */
static uint64_t drain_ring(struct ct_harvest *h, uint32_t r, uint64_t limit) {
  struct ctp_ring *rg = ring(h, r);
  struct ct_ring_state *rs = &h->rs[r];
  /* state before head: the writer's CLOSED store follows its last head store. */
  uint32_t state = atomic_load_explicit(&rg->state, memory_order_acquire);
  uint64_t head = atomic_load_explicit(&rg->head, memory_order_acquire);
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
  if (state == CTP_RING_OWNED && rs->orphan)
    state = CTP_RING_CLOSED; /* its process is gone: nobody writes it any more */
  if (state == CTP_RING_OWNED) {
    rs->queued = 0;
    h->rings_owned++;
  }
  uint64_t t = rs->tail;
  if (head < t || head - t > h->cap) {
    /* A head behind what we consumed, or claims beyond the ring's capacity:
     * no writer that follows the protocol publishes either. Flagged; the
     * skipped records count only when the number can be true. */
    ring_corrupt(h, rs);
    if (head > t && ct_count_sane(h, head - t))
      h->gap += head - t;
    rs->tail = t = head;
    atomic_store_explicit(&rg->tail, t, memory_order_release);
    h->progress = 1;
  }
  uint64_t n = head - t;
  uint32_t tid = LOAD(&rg->tid), pid = LOAD(&rg->pid);
  const struct ctp_rec *recs = ctp_ring_recs(rg);
  uint64_t k = 0;
  int held = 0; /* a record newer than this pass: the next one takes it, in order */
  while (k < n && !held) {
    size_t avail;
    char *room = ct_sink_room(h->sink, sizeof(struct seg) + sizeof(struct ctp_rec), &avail);
    if (!room)
      break; /* no memory: the records wait in the ring */
    struct seg *sg = (struct seg *)room;
    struct ctp_rec *out = (struct ctp_rec *)(sg + 1);
    uint64_t fit = (avail - sizeof(*sg)) / sizeof(*out), m = 0;
    /* One memcpy per stretch up to the ring's wrap: the ring's lines come
     * from the writer's cache, and a bulk copy keeps more of them in
     * flight than a record at a time. Then each record, in our copy. */
    uint64_t want = fit < n - k ? fit : n - k, at = (t + k) & (h->cap - 1);
    uint64_t first = want < h->cap - at ? want : h->cap - at;
    memcpy(out, &recs[at], first * sizeof(*out));
    memcpy(out + first, recs, (want - first) * sizeof(*out));
    for (; m < want; m++) {
      /* A create ahead: watch reads its station's first line. Further ahead
       * than the formatter's: a record here costs a few ns, a miss ~100. */
      if (m + WATCH_AHEAD < want && out[m + WATCH_AHEAD].kind == CTP_KIND_CREATE &&
          out[m + WATCH_AHEAD].station < h->n)
        prefetch(ctp_station_at(h->base, out[m + WATCH_AHEAD].station));
      if (out[m].ts >= limit) {
        held = 1;
        break;
      }
      watch(h, rs, pid, &out[m]);
    }
    k += m;
    if (m == 0)
      break;
    *sg = (struct seg){.kind = SEG_RECS, .n = (uint32_t)m, .ring = r, .tid = tid, .pid = pid};
    ct_sink_fill(h->sink, sizeof(*sg) + m * sizeof(*out));
    uint64_t ns = ct_clock_ns(h->clock, out[0].ts);
    if (ns < h->first_ts)
      h->first_ts = ns;
  }
  if (k) {
    rs->tail = t + k;
    atomic_store_explicit(&rg->tail, rs->tail, memory_order_release);
    h->progress = 1;
    h->captured += k;
    if (k > h->peak)
      h->peak = k;
  }
  /* Closed and empty: nobody writes it any more; it goes back to the pool. */
  if (state == CTP_RING_CLOSED && rs->tail == head && !rs->queued) {
    atomic_store_explicit(&rg->state, CTP_RING_FREE, memory_order_release);
    if (push(h, h->rq, &h->rq_tail, h->nrings, r) == 0) {
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

/* The pass's records in time order, ties in capture order. Each ring's
 * records are already in time order, so the batch is a few sorted runs (one
 * per ring and block): merged pairwise, a pass over the batch per doubling,
 * not a comparison sort (qsort was a quarter of the formatter's time). The
 * left run wins ties, which keeps capture order. ENOMEM: left unmerged, its
 * records then come out of time order, counted nowhere but harmless to the
 * trace's framing. */
static void sort_pass(struct ct_harvest *h) {
  size_t n = h->nbatch, nruns = 0;
  for (size_t k = 1; k < n; k++)
    nruns += h->batch[k].r.ts < h->batch[k - 1].r.ts;
  if (nruns == 0 || grow((void **)&h->merge, &h->capmerge, n, sizeof(*h->merge)))
    return;
  struct ct_rrec *src = h->batch, *dst = h->merge;
  while (nruns) {
    /* Run boundaries are found afresh each round: adjacent runs merge. */
    size_t out = 0, a = 0;
    nruns = 0;
    while (a < n) {
      size_t b = a + 1;
      while (b < n && src[b].r.ts >= src[b - 1].r.ts)
        b++;
      size_t c = b;
      if (c < n) {
        c++;
        while (c < n && src[c].r.ts >= src[c - 1].r.ts)
          c++;
        nruns++;
      }
      size_t i = a, j = b;
      while (i < b && j < c)
        dst[out++] = src[j].r.ts < src[i].r.ts ? src[j++] : src[i++];
      while (i < b)
        dst[out++] = src[i++];
      while (j < c)
        dst[out++] = src[j++];
      a = c;
    }
    struct ct_rrec *t = src;
    src = dst;
    dst = t;
  }
  if (src != h->batch) { /* the merged records are in h->merge: swap the arrays */
    struct ct_rrec *t = h->batch;
    size_t tc = h->capbatch;
    h->batch = h->merge;
    h->capbatch = h->capmerge;
    h->merge = t;
    h->capmerge = tc;
  }
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
  for (unsigned k = 0; k < CTP_LABEL_MAX; k++)
    c.label[k] = LOAD(&s->label[k]);
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
  st->dropped = atomic_load_explicit(&s->v2_lost, memory_order_relaxed);
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

/* Attribute one record and write its line (formatter thread). */
static void emit(struct ct_harvest *h, const struct ctp_rec *rp, uint32_t tid) {
  /* A copy: our stores below (uint64_t fields) could alias the record's, and
   * each would make the compiler read it again. */
  const struct ctp_rec rc = *rp, *r = &rc;
  int64_t idx = check(h, r);
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
   * one by another thread may show a record later. A create just took the
   * count as its incarnation's baseline (incarnate): a drop counted since came
   * after it, and its gap goes before the next record, not before ev 0. */
  struct ctp_station *s = ctp_station_at(h->base, i);
  uint64_t dropped = atomic_load_explicit(&s->v2_lost, memory_order_relaxed);
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
    if (grow((void **)&h->rel_now, &h->caprel_now, h->nrel_now + 1, sizeof(uint32_t)) == 0)
      h->rel_now[h->nrel_now++] = i;
  }
}

/* Stations destroyed in the previous pass: this pass drained every ring to a
 * head loaded after that pass ended, so nothing of their incarnation is still
 * coming (docs/PROTOCOL.md "Station reuse"). Back to the free-station queue. */
static void release(struct ct_harvest *h) {
  uint64_t before = h->released;
  for (size_t k = 0; k < h->nrel_prev; k++) {
    uint32_t i = h->rel_prev[k];
    struct ct_station_state *st = &h->st[i];
    if (!st->destroyed || st->queued)
      continue;
    if (push(h, h->sq, &h->sq_tail, h->n, i) == 0) {
      st->queued = 1;
      h->released++;
    }
  }
  if (h->released != before && h->lossless)
    ct_harvest_wake_waiters(h); /* a writer may wait for a station */
  uint32_t *t = h->rel_prev;
  size_t tc = h->caprel_prev;
  h->rel_prev = h->rel_now;
  h->caprel_prev = h->caprel_now;
  h->nrel_prev = h->nrel_now;
  h->rel_now = t;
  h->caprel_now = tc;
  h->nrel_now = 0;
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

/* 1 when released stations are wanted soon: always in lossless mode (its
 * writers wait for one), else when both the never-allocated stations and
 * the free queue run low (an eighth of the table, at least 64). The target
 * writes these words: a wrong value only costs a wake-up, or a release at
 * the formatter's next batch (a writer without a station goes untraced,
 * counted). */
static int stations_short(struct ct_harvest *h) {
  if (h->lossless)
    return 1;
  uint32_t low = h->n / 8 > 64 ? h->n / 8 : 64;
  uint32_t a = atomic_load_explicit(&h->hdr->allocated_count, memory_order_relaxed);
  if (a < h->n && h->n - a > low)
    return 0;
  uint64_t head = atomic_load_explicit(&h->sq->head, memory_order_relaxed);
  uint64_t tail = atomic_load_explicit(&h->sq->tail, memory_order_relaxed);
  return tail < head || tail - head < low;
}

/* Bounded passes one scan takes at most (ct_rings_scan). */
#define PASSES_PER_SCAN 8u

/* The pass's time limit: limit, or lower when a ring is full (a backlog:
 * its writer went on in a spare or waits): then its last record's ts (but
 * above its first one: a pass always takes something). Records stamped at
 * or after it wait for the next pass, in every ring: time order holds, and
 * the spares filled after this ring wait. A pass then holds about a ring of
 * records (the formatter's sort arrays are sized for two). */
static uint64_t pass_limit(struct ct_harvest *h, uint32_t nr, uint64_t limit) {
  uint64_t q = h->cap - 1;
  for (uint32_t r = 0; r < nr; r++) {
    struct ctp_ring *rg = ring(h, r);
    uint64_t t = h->rs[r].tail, head = atomic_load_explicit(&rg->head, memory_order_acquire);
    if (head <= t + q || head - t > h->cap) /* few, or not true (drain_ring says) */
      continue;
    const struct ctp_rec *recs = ctp_ring_recs(rg);
    uint64_t cut = recs[(t + q) & (h->cap - 1)].ts, first = recs[t & (h->cap - 1)].ts;
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
  uint32_t fresh = atomic_load_explicit(&h->hdr->rings_fresh, memory_order_acquire);
  uint32_t nr = fresh < h->nrings ? fresh : h->nrings;
  ct_rings_populate(h, nr);
  uint64_t peak = h->peak;
  h->peak = 0;
  h->rings_owned = 0;
  uint64_t got = 0;
  /* --flight: a backlog (full rings a burst left, spares a lossless writer
   * went on in) goes in bounded passes, as the formatter's sort arrays hold
   * a pass (the engine's memory is bounded: docs/FLIGHT.md "Memory"); a few
   * per scan, so that the loop still serves signals and connections while a
   * writer refills the rings as fast as they drain. */
  for (unsigned k = 0; k < PASSES_PER_SCAN; k++) {
    uint64_t lim = h->sink->flight ? pass_limit(h, nr, limit) : limit, pass = 0;
    for (uint32_t r = 0; r < nr; r++)
      pass += drain_ring(h, r, lim);
    got += pass;
    if (lim == limit || !pass)
      break;
    pass_end(h);
  }
  /* The nap is sized for 8-slot stations: a ring's fill in those units. */
  uint64_t scaled = (h->peak * CTP_SLOTS + h->cap - 1) / h->cap;
  h->peak = scaled > peak ? scaled : peak;
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
   * a wake-up per pass cost it more than its lines. */
  if (h->destroys != h->destroys_seen || h->release_due) {
    h->release_due = h->destroys != h->destroys_seen;
    h->destroys_seen = h->destroys;
    if (stations_short(h))
      ct_sink_wake(h->sink);
  }
  return got;
}

/* Start the cache misses emit will take on record r: the engine's state of
 * its station, the station's drop count, and for a create the station's
 * first line and label (incarnate). A server's coroutines are many, each
 * with a few events: these lines are cold (the demo under redis-benchmark:
 * a new station every ten records). Any index below n is in the mapping. */
static inline void prefetch_rec(const struct ct_harvest *h, const struct ctp_rec *r) {
  if (r->station == r[-1].station)
    return; /* the record before it fetches the same lines (a burst of one coroutine) */
  uint32_t i = r->station < h->n ? r->station : 0; /* out of range: station 0, harmless */
  const struct ctp_station *s = ctp_station_at(h->base, i);
  prefetch(&h->st[i].live);
  prefetch(&s->v2_lost);
  if (r->kind == CTP_KIND_CREATE) {
    prefetch(s);
    prefetch(s->label);
  }
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
      if (e - r > PREFETCH_AHEAD)
        prefetch_rec(h, &r[PREFETCH_AHEAD]);
      emit(h, r, rn[m].tid);
    } while (++r < e && r->ts < lim);
    rn[m].n -= (uint32_t)(r - rn[m].p);
    rn[m].p = r;
    if (rn[m].n == 0) { /* drop it, keeping the others' order */
      memmove(&rn[m], &rn[m + 1], (n - m - 1) * sizeof(*rn));
      n--;
    }
  }
  h->nruns = 0;
}

/* The formatter's half: one pass's records, merged by time, attributed and
 * written; then the blocks they were in go back, and the stations destroyed
 * in the pass before are released. */
static void consume_pass(struct ct_harvest *h) {
  if (h->nbatch) {
    sort_pass(h);
    for (size_t k = 0; k < h->nbatch; k++) {
      if (k + PREFETCH_AHEAD < h->nbatch)
        prefetch_rec(h, &h->batch[k + PREFETCH_AHEAD].r);
      emit(h, &h->batch[k].r, h->batch[k].tid);
    }
    h->nbatch = 0;
  } else {
    merge_runs(h);
  }
  ct_sink_release_held(h->sink);
  release(h);
}

/* n records of a ring's segment onto the batch (ENOMEM: counted, never
 * silent). */
static void to_batch(struct ct_harvest *h, const struct ctp_rec *recs, size_t n, uint32_t tid) {
  if (grow((void **)&h->batch, &h->capbatch, h->nbatch + n, sizeof(*h->batch))) {
    h->bad += n;
    return;
  }
  for (size_t k = 0; k < n; k++) {
    h->batch[h->nbatch].r = recs[k];
    h->batch[h->nbatch++].tid = tid;
  }
}

/* A segment as runs in place: one per stretch in time order (a ring's
 * records are, unless the target wrote over them). -1 when they would be
 * more than CT_RUNS_MAX. */
static int add_runs(struct ct_harvest *h, const struct ctp_rec *recs, uint32_t n, uint32_t tid) {
  unsigned need = 1;
  for (uint32_t k = 1; k < n; k++)
    need += recs[k].ts < recs[k - 1].ts;
  if (need > CT_RUNS_MAX - h->nruns)
    return -1;
  uint32_t a = 0;
  for (uint32_t k = 1; k <= n; k++)
    if (k == n || recs[k].ts < recs[k - 1].ts) {
      h->runs[h->nruns++] = (struct ct_run){.p = recs + a, .n = k - a, .tid = tid};
      a = k;
    }
  return 0;
}

/* The block handler (sink.c): our own bytes, still checked against len.
 * Segments become runs in the block while the sink lets us keep it (keep)
 * and they are few; else the pass goes through the batch. Returns 1 when
 * runs point into the block. */
static int on_block(void *ctx, const char *d, size_t len, int keep) {
  struct ct_harvest *h = ctx;
  size_t off = 0;
  int kept = 0;
  while (len - off >= sizeof(struct seg)) {
    const struct seg *sg = (const struct seg *)(d + off);
    off += sizeof(*sg);
    if (sg->kind == SEG_END) {
      if (len - off < SEG_END_BYTES - sizeof(*sg))
        break;
      memcpy(&h->cclock, d + off, sizeof(h->cclock));
      off += SEG_END_BYTES - sizeof(*sg);
      consume_pass(h);
      kept = 0;
      continue;
    }
    uint32_t n = sg->n;
    if (sg->kind != SEG_RECS || n > (len - off) / sizeof(struct ctp_rec))
      break;
    const struct ctp_rec *recs = (const struct ctp_rec *)(d + off);
    off += n * sizeof(*recs);
    if (n == 0)
      continue;
    if (!h->nbatch && keep && add_runs(h, recs, n, sg->tid) == 0) {
      kept = 1;
      continue;
    }
    /* To the batch, the runs so far first (capture order). */
    for (unsigned i = 0; i < h->nruns; i++)
      to_batch(h, h->runs[i].p, h->runs[i].n, h->runs[i].tid);
    h->nruns = 0;
    kept = 0;
    ct_sink_release_held(h->sink);
    to_batch(h, recs, n, sg->tid);
  }
  return kept;
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
