/* harvest.c - the engine's side of the v1 seqlock: read stable slots, sort
 * each station's batch by event index, queue event and coroutine lines, write
 * station_end lines, and count every lost event. The v2 rings are rings.c. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/clock.h"
#include "engine/harvest.h"
#include "engine/procs.h"
#include "engine/sink.h"
#include "format/ctrace.h"
#include "format/records.h"

/* One harvested slot. */
struct ev {
  uint64_t ts, tid, addr, seq, obj, idx;
  uint8_t kind, wait, active;
};

/* Stations whose pages the engine may have touched (new ones classified,
 * create records copied) before it drops its mappings of the station
 * table: about 4 MiB of shared pages. */
#define CT_TRIM_STATIONS 4096u
/* At most one trim per this long: a program that keeps recycling many
 * stations has its working set faulted back in at most once a second. */
#define CT_TRIM_NS 1000000000u

/* Plain fields of the shared file that another process changes while we read
 * them: relaxed atomic loads (no tearing, no compiler caching). */
#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

/* Huge pages for the 2 MiB-aligned part of [p, p + len), where the kernel
 * offers them (best effort; THP "madvise" mode). At 10^6 stations the
 * per-station state is ~190 MB that a pass may touch anywhere, and a
 * process's wake-up cost grows with the 4 KiB pages it has mapped (see
 * trim_stations). A block this big is fresh from mmap, not yet touched. */
static void want_huge_pages(void *p, size_t len) {
  uintptr_t huge = (uintptr_t)2 << 20;
  uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + len) & ~(huge - 1);
  if (e > a)
    (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
}

/* The largest true count by now: CT_EVENTS_PER_NS for every ns since init,
 * plus a margin for the first passes. */
static void update_sane(struct ct_harvest *h) {
  uint64_t ns = ct_now_ns(CLOCK_MONOTONIC) - h->t0;
  __atomic_store_n(&h->sane, ns * CT_EVENTS_PER_NS + (UINT64_C(1) << 20), __ATOMIC_RELAXED);
}

/* Station i's memory held what cannot be true (harvest thread). */
static void station_corrupt(struct ct_harvest *h, uint32_t i) {
  if (!h->st[i].corrupt) {
    h->st[i].corrupt = 1;
    ct_harvest_corrupt(h);
  }
}

/* 1 when the bytes of station i that no writer ever touches are still zero:
 * pad0, and the 56 bytes after v2_lost (a scribble over the station hits
 * them; a v1 SDK leaves all of 0x240.. zero, our probe all but label and
 * v2_lost). One cache line besides the ones the finish reads anyway. */
int ct_station_clean(const struct ct_harvest *h, uint32_t i) {
  const struct ctp_station *s = ctp_station_at(h->base, i);
  unsigned any = (unsigned)LOAD(&s->pad0[0]) | LOAD(&s->pad0[1]) | LOAD(&s->pad0[2]);
  for (unsigned k = 0; k < 56; k++)
    any |= LOAD(&s->flexible[k]);
  return any == 0;
}

int ct_harvest_init(struct ct_harvest *h, void *base, size_t map_len, uint32_t n,
                    struct ct_procs *procs, struct ct_sink *sink, struct ct_clock *clock) {
  memset(h, 0, sizeof(*h));
  h->base = base;
  h->hdr = base;
  h->n = n;
  h->procs = procs;
  h->sink = sink;
  h->w = &sink->tw;
  h->clock = clock;
  /* calloc, not aligned_alloc and a memset: a big block comes fresh from
   * mmap, zero and untouched (want_huge_pages); aligned here by hand. */
  h->st_mem = calloc(1, (size_t)n * sizeof(*h->st) + 63);
  if (!h->st_mem)
    return -ENOMEM;
  h->st = (struct ct_station_state *)(((uintptr_t)h->st_mem + 63) & ~(uintptr_t)63);
  want_huge_pages(h->st, (size_t)n * sizeof(*h->st));
  h->t0 = ct_now_ns(CLOCK_MONOTONIC);
  update_sane(h);
  memcpy(&h->hdr0, base, sizeof h->hdr0); /* as we wrote it, before the target starts */
  /* Our own choice, written before the target started: read once. */
  h->lossless = (h->hdr->mode & CTP_MODE_LOSSLESS) != 0;
  return (h->hdr->mode & CTP_MODE_RINGS) ? ct_rings_init(h, map_len) : 0;
}

void ct_harvest_free(struct ct_harvest *h) {
  ct_rings_free(h);
  free(h->st_mem);
  free(h->v1list);
  h->st = NULL;
  h->st_mem = NULL;
  h->v1list = NULL;
}

/* Static facts of an extension station, once its creator has published them
 * (release store of ext_flags, paired with this acquire load). */
static void read_ext(struct ct_harvest *h, uint32_t i) {
  struct ct_station_state *st = &h->st[i];
  struct ctp_station *s = ctp_station_at(h->base, i);
  if (st->ext || !(atomic_load_explicit(&s->ext_flags, memory_order_acquire) & CTP_STF_EXT))
    return;
  st->ext = 1;
  st->pid = s->pid;
}

/* Make sure the module holding `site` of pid has been written, re-reading
 * the maps when they were read before the event happened (dlopen). An older
 * event whose site is still unknown is not worth a re-read: rate limit for
 * free. */
void ct_harvest_cover_site(struct ct_harvest *h, uint32_t pid, uint64_t site, uint64_t ts) {
  if (!pid || !site)
    return;
  struct ct_proc *p = ct_procs_get(h->procs, (pid_t)pid);
  if (!p || ct_proc_covers(p, site))
    return;
  if (p->maps_ts == 0 || p->maps_ts < ts)
    ct_proc_read_maps(p, h->w);
}

static void write_coroutine(struct ct_harvest *h, uint32_t i) {
  struct ct_station_state *st = &h->st[i];
  struct ctp_station *s = ctp_station_at(h->base, i);
  /* Every read of the file before the item is queued: a SIGBUS (truncated
   * file) must not leave half a line behind. */
  uint32_t flags = atomic_load_explicit(&s->ext_flags, memory_order_acquire);
  struct ct_coro_item c = {.probe_id = s->probe_id,
                           .birth_ts = s->birth_ts,
                           .create_site = s->create_site,
                           .parent = s->parent_id,
                           .station = i,
                           .pid = st->pid,
                           .has_label = (flags & CTP_STF_LABEL) != 0};
  memcpy(c.label, s->label, sizeof(c.label));
  ct_harvest_cover_site(h, st->pid, c.create_site, c.birth_ts);
  ct_sink_coro(h->sink, &c);
  st->coro_done = 1;
}

/* Read protocol of docs/PROTOCOL.md for the 8 slots of station i. */
static unsigned read_slots(struct ct_harvest *h, uint32_t i, struct ev *batch, uint64_t *max_idx) {
  struct ct_station_state *st = &h->st[i];
  struct ctp_station *s = ctp_station_at(h->base, i);
  unsigned nb = 0;
  for (unsigned k = 0; k < CTP_SLOTS; k++) {
    struct ctp_slot *sl = &s->slots[k];
    uint64_t v1 = atomic_load_explicit(&sl->seq, memory_order_acquire);
    if ((v1 & 1) || v1 <= st->last_seq[k])
      continue;
    struct ev *e = &batch[nb];
    e->ts = LOAD(&sl->timestamp);
    e->tid = LOAD(&sl->tid);
    e->addr = LOAD(&sl->addr);
    e->kind = LOAD(&sl->kind);
    e->wait = LOAD(&sl->wait_kind);
    e->obj = LOAD(&sl->obj);
    e->active = LOAD(&sl->is_active);
    /* flags, aux and reserved: never written by any writer (zero in v1). */
    uint64_t zero = (uint64_t)LOAD(&sl->aux) | LOAD(&sl->flags);
    for (unsigned b = 0; b < sizeof sl->reserved; b++)
      zero |= LOAD(&sl->reserved[b]);
    atomic_thread_fence(memory_order_acquire);
    uint64_t v2 = atomic_load_explicit(&sl->seq, memory_order_relaxed);
    if (v1 != v2) {
      h->torn++; /* rewritten while we copied: the next pass gets the new one */
      continue;
    }
    /* Each write adds 2: a larger step means events overwritten unseen. */
    uint64_t gap = (v1 - st->last_seq[k]) / 2 - 1;
    st->last_seq[k] = v1;
    e->seq = v1;
    e->idx = ctp_event_index(v1, k);
    /* A slot the target wrote over: no event of it, no count from it. */
    if (zero || !ct_count_sane(h, e->idx)) {
      station_corrupt(h, i);
      continue;
    }
    h->live_lost += gap;
    if (e->idx + 1 > *max_idx)
      *max_idx = e->idx + 1;
    nb++;
  }
  return nb;
}

/* Lines of one coroutine go out in event order (slots are a ring). */
static void sort_batch(struct ev *batch, unsigned nb) {
  for (unsigned a = 1; a < nb; a++) {
    struct ev tmp = batch[a];
    unsigned b = a;
    for (; b > 0 && batch[b - 1].idx > tmp.idx; b--)
      batch[b] = batch[b - 1];
    batch[b] = tmp;
  }
}

/* 1 when the sorted batch skips an index after next (the next one due). */
static int has_gap(const struct ev *batch, unsigned nb, uint64_t next) {
  for (unsigned a = 0; a < nb; a++) {
    if (batch[a].idx > next)
      return 1;
    if (batch[a].idx == next)
      next++;
  }
  return 0;
}

/* 1 when an extension station has nothing new: no event was claimed beyond
 * the highest index seen (st->events). An unseen event below it would be
 * older than one already written, i.e. late and not written anyway (see
 * scan_station). One cache line instead of eight: most stations of a big
 * program are idle. A dead station in that state gets no more events: it is
 * retired, skipped by live scans and by the sleep re-scan.
 * is_dead is read first: the probe release-stores it after claiming the
 * destroy event, so once we have seen it, the ev_claimed read below covers
 * that claim. Read the other way round, the destroy could be claimed between
 * the two reads and the station retired with its last event unharvested. */
static int quiet(struct ct_harvest *h, uint32_t i) {
  struct ct_station_state *st = &h->st[i];
  struct ctp_station *s = ctp_station_at(h->base, i);
  if (!st->ext)
    return 0;
  int dead = __atomic_load_n(&s->is_dead, __ATOMIC_ACQUIRE) != 0;
  if (atomic_load_explicit(&s->ev_claimed, memory_order_acquire) > st->events)
    return 0;
  if (dead)
    st->retired = 1;
  return 1;
}

static uint64_t scan_station(struct ct_harvest *h, uint32_t i, enum ct_scan mode) {
  struct ct_station_state *st = &h->st[i];
  if (mode == CT_SCAN_QUICK && quiet(h, i))
    return 0;
  struct ev batch[2 * CTP_SLOTS];
  uint64_t max_idx = st->events;
  unsigned nb = read_slots(h, i, batch, &max_idx);
  if (nb == 0)
    return 0;
  sort_batch(batch, nb);
  /* A gap may be an event completed while we read the other slots: slot k
   * looked old, then k+1 was done when we reached its slot. A second look
   * finds it (a single writer finishes k before it starts k+1); without it,
   * k would come next pass, behind k+1, and count as lost. */
  if (has_gap(batch, nb, st->next_ev)) {
    nb += read_slots(h, i, batch + nb, &max_idx);
    sort_batch(batch, nb);
  }
  /* New indexes, lost ones included: how fast this ring fills (the nap). */
  if (max_idx - st->events > h->peak)
    h->peak = max_idx - st->events;
  st->events = max_idx; /* while running: highest event index seen + 1 */
  struct ctp_station *s = ctp_station_at(h->base, i);
  read_ext(h, i);
  if (!st->probe_id)
    st->probe_id = LOAD(&s->probe_id);
  if (st->ext && !st->coro_done)
    write_coroutine(h, i);
  unsigned written = 0;
  for (unsigned a = 0; a < nb; a++) {
    /* Several writers share a station: one that claimed index k and was
     * preempted can publish k after we wrote k+1 from another slot. Lines of
     * a coroutine must stay in ev order, so such a late event counts as lost
     * (ev_claimed - harvested) instead of being written out of order. */
    if (batch[a].idx < st->next_ev) {
      h->late++;
      continue;
    }
    if (st->ext && batch[a].kind != CTP_KIND_V1 && batch[a].kind != CTP_KIND_RESUME)
      ct_harvest_cover_site(h, st->pid, batch[a].addr, batch[a].ts);
    const struct ev *e = &batch[a];
    struct ct_ev_item it = {.ts = e->ts,
                            .probe_id = st->probe_id,
                            .tid = e->tid,
                            .addr = e->addr,
                            .seq = e->seq,
                            .obj = e->obj,
                            .ev = e->idx,
                            .kind = e->kind,
                            .wait = e->wait,
                            .active = e->active};
    ct_sink_event(h->sink, &it);
    if (batch[a].ts < h->first_ts)
      h->first_ts = batch[a].ts;
    st->next_ev = batch[a].idx + 1;
    written++;
  }
  st->harvested += written;
  h->harvested += written;
  h->v1_seen |= written > 0;
  /* Room for the writers of a lossless run: every index below next_ev is
   * written or counted lost, its slot may be reused. seq_cst: the Dekker pair
   * with a waiting writer's waiters increment (ct_harvest_scan's load).
   * Only in lossless mode: the store shares a cache line with ev_claimed, the
   * epoch one with tracer_sleeping, both read or written on every event. */
  if (h->lossless && st->ext && st->next_ev != st->room) {
    st->room = st->next_ev;
    atomic_store_explicit(&s->harvested_ev, st->next_ev, memory_order_seq_cst);
    h->progress = 1;
  }
  return nb;
}

/* Stations past the last one seen initialized that the scan list takes
 * anyway (creators preempted between their fetch_add and their stores). */
#define CT_USED_SLACK 64u

/* 1 when station i was written by its creator (PROTOCOL.md "Station
 * allocation": probe_id, ext_flags, or event 0 in slot 0). */
static int initialized(struct ct_harvest *h, uint32_t i) {
  struct ctp_station *s = ctp_station_at(h->base, i);
  return LOAD(&s->probe_id) || atomic_load_explicit(&s->ext_flags, memory_order_relaxed) ||
         atomic_load_explicit(&s->slots[0].seq, memory_order_relaxed);
}

/* min(allocated_count, n), never going down; new station indexes join the v1
 * scan list (a v2 station leaves it once its CTP_STF_RINGS is seen). The
 * target can write any allocated_count: the list goes at most
 * CT_USED_SLACK past the stations seen initialized, so a word written over
 * costs a pass a few stations, not all n (issue #34 N1: with -n 1048576 a
 * scribbled count made every pass walk 10^6 stations). */
static uint32_t used_now(struct ct_harvest *h) {
  uint32_t a = atomic_load_explicit(&h->hdr->allocated_count, memory_order_acquire);
  uint32_t u = a < h->n ? a : h->n;
  while (h->init_hi < u && initialized(h, h->init_hi))
    h->init_hi++;
  if (u > h->init_hi + CT_USED_SLACK)
    u = h->init_hi + CT_USED_SLACK;
  if (u <= h->used)
    return h->used;
  if (u - h->used > h->capv1 - h->nv1) {
    uint32_t cap = h->capv1 ? h->capv1 : 64;
    while (cap - h->nv1 < u - h->used)
      cap = cap > h->n / 2 ? h->n : cap * 2;
    uint32_t *v = realloc(h->v1list, (size_t)cap * sizeof(*v));
    if (!v)
      return h->used; /* ENOMEM: the new stations wait for the next pass */
    h->v1list = v;
    h->capv1 = cap;
  }
  for (uint32_t i = h->used; i < u; i++) {
    h->v1list[h->nv1++] = i;
    h->st[i].listed = 1;
  }
  h->used = u;
  return u;
}

/* 1 when station i is a v2 station (its events are in rings): seen once by
 * the ring reader, or now in its ext_flags (acquire: the creator's release). */
static int is_v2(struct ct_harvest *h, uint32_t i) {
  if (h->st[i].v2)
    return 1;
  if (!h->rings)
    return 0;
  struct ctp_station *s = ctp_station_at(h->base, i);
  if (atomic_load_explicit(&s->ext_flags, memory_order_acquire) & CTP_STF_RINGS)
    h->st[i].v2 = 1;
  return h->st[i].v2;
}

/* Drop the engine's mappings of the station table once CT_TRIM_STATIONS
 * stations may have been touched since the last time: new ones plus
 * incarnations, but never more than the stations handed out (a server that
 * recycles a few thousand stations, as the demo under redis-benchmark does
 * with ~3,800, maps a few MiB at most: trimming that every second cost an
 * madvise, then the refaults of the whole working set in both engine threads
 * and their prefetches of unmapped lines). Checked every pass, so the pages
 * of a burst go at most CT_TRIM_NS after it. Every 4 KiB page a
 * process has mapped adds to the cost of each of its wake-ups (measured on
 * the 2-core PVM guest: ~50 us per wake-up with nothing mapped, ~770 us with
 * 1 GB of a memfd mapped; docs/BENCHMARKS.md "Engine CPU, 10 coroutines
 * active"), and a first pass over 10^6 new stations maps all of their 1 GB.
 * The pages stay the file's (MAP_SHARED: MADV_DONTNEED only unmaps them here);
 * the few stations still in use fault back in once. The header page stays. */
static void trim_stations(struct ct_harvest *h) {
  uint64_t mark = (uint64_t)h->used + h->creates;
  uint64_t touched = mark - h->trim_mark;
  if (touched > h->used)
    touched = h->used;
  if (touched < CT_TRIM_STATIONS)
    return;
  uint64_t now = ct_now_ns(CLOCK_MONOTONIC);
  if (now - h->trim_ns < CT_TRIM_NS)
    return;
  h->trim_mark = mark;
  h->trim_ns = now;
  uint64_t end = CTP_FILE_SIZE(h->used) & ~(uint64_t)4095;
  if (end > 4096)
    (void)madvise((char *)h->base + 4096, (size_t)(end - 4096), MADV_DONTNEED);
}

uint64_t ct_harvest_scan(struct ct_harvest *h, enum ct_scan mode) {
  uint64_t got = 0;
  update_sane(h);
  used_now(h);
  h->peak = 0;
  h->progress = 0;
  h->first_ts = UINT64_MAX;
  /* The v1 stations: the scan list, compacted as stations turn out to be
   * v2 (classified once) or retire; the final pass takes retired ones too. */
  if (mode == CT_SCAN_FULL) {
    for (uint32_t i = 0; i < h->used; i++)
      if (!is_v2(h, i))
        got += scan_station(h, i, mode);
  } else {
    uint32_t keep = 0;
    for (uint32_t k = 0; k < h->nv1; k++) {
      uint32_t i = h->v1list[k];
      if (is_v2(h, i) || h->st[i].retired) {
        h->st[i].listed = 0;
        continue;
      }
      got += scan_station(h, i, mode);
      h->v1list[keep++] = i;
    }
    h->nv1 = keep;
  }
  if (h->rings)
    got += ct_rings_scan(h);
  trim_stations(h);
  ct_sink_kick(h->sink);
  if (h->progress && h->lossless)
    ct_harvest_wake_waiters(h);
  return got;
}

void ct_harvest_wake_waiters(struct ct_harvest *h) {
  /* Lossless writers skip their waits while this word stands still after a
   * timeout (a stopped engine); it moves with every scan that made room. */
  atomic_fetch_add_explicit(&h->hdr->harvest_epoch, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&h->hdr->waiters, memory_order_seq_cst) > 0)
    syscall(SYS_futex, &h->hdr->harvest_epoch, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* n bytes at p all zero. */
static int all_zero(const uint8_t *p, size_t n) {
  unsigned any = 0;
  for (size_t k = 0; k < n; k++)
    any |= LOAD(&p[k]);
  return any == 0;
}

int ct_harvest_header_ok(struct ct_harvest *h) {
  const struct ctp_header *a = h->hdr, *b = &h->hdr0;
  int ok = LOAD(&a->magic) == b->magic && LOAD(&a->version) == b->version &&
           LOAD(&a->max_stations) == b->max_stations && LOAD(&a->ext_magic) == b->ext_magic &&
           LOAD(&a->ext_version) == b->ext_version && LOAD(&a->engine_pid) == b->engine_pid &&
           LOAD(&a->mode) == b->mode && LOAD(&a->lossless_ms) == b->lossless_ms &&
           LOAD(&a->clock) == b->clock && LOAD(&a->ring_count) == b->ring_count &&
           LOAD(&a->ring_bytes) == b->ring_bytes && LOAD(&a->rings_off) == b->rings_off &&
           LOAD(&a->station_q_off) == b->station_q_off && LOAD(&a->ring_q_off) == b->ring_q_off &&
           LOAD(&a->v2_size) == b->v2_size && all_zero(a->reserved, sizeof a->reserved);
  if (!ok)
    ct_harvest_corrupt(h);
  if (h->rings && !ct_rings_clean(h))
    ok = 0;
  return ok;
}

uint32_t ct_harvest_live(const struct ct_harvest *h) {
  uint32_t live = atomic_load_explicit(&((struct ct_harvest *)h)->v2_alive, memory_order_relaxed);
  /* Retired stations left the list (dead); a v2 one not yet classified is
   * counted by its records. */
  for (uint32_t k = 0; k < h->nv1; k++) {
    struct ctp_station *s = ctp_station_at(h->base, h->v1list[k]);
    if (!h->st[h->v1list[k]].v2 &&
        !(atomic_load_explicit(&s->ext_flags, memory_order_relaxed) & CTP_STF_RINGS))
      live += !__atomic_load_n(&s->is_dead, __ATOMIC_RELAXED);
  }
  return live;
}

void ct_harvest_finish(struct ct_harvest *h, uint64_t *events, uint64_t *lost) {
  update_sane(h);
  uint32_t used = used_now(h);
  if (h->rings) {
    /* The formatter's counts of the rings' records are final once it has
     * written everything captured. */
    ct_sink_sync(h->sink);
    h->harvested += h->v2_harvested;
    h->v2_harvested = 0;
  }
  *events = *lost = 0;
  for (uint32_t i = 0; i < used; i++) {
    struct ct_station_state *st = &h->st[i];
    struct ctp_station *s = ctp_station_at(h->base, i);
    if (is_v2(h, i)) {
      ct_rings_station_end(h, i, events, lost);
      continue;
    }
    read_ext(h, i);
    if (!st->probe_id)
      st->probe_id = LOAD(&s->probe_id);
    uint64_t n = 0;
    if (st->ext) {
      if (!st->coro_done)
        write_coroutine(h, i); /* all its events were lost */
      n = atomic_load_explicit(&s->ev_claimed, memory_order_acquire);
    } else {
      /* v1: seq / 2 writes per slot, an odd seq is a write that never ended. */
      for (unsigned k = 0; k < CTP_SLOTS; k++) {
        uint64_t seq = atomic_load_explicit(&s->slots[k].seq, memory_order_acquire);
        n = ct_sat_add(n, seq / 2 + (seq & 1));
      }
    }
    /* Fewer events than we copied, more than any program could write by
     * now, or bytes no writer touches not zero: the target wrote over the
     * station, and its count is not known (what we copied still is). */
    if (n < st->harvested || !ct_count_sane(h, n) || !ct_station_clean(h, i))
      station_corrupt(h, i);
    if (st->corrupt)
      n = st->harvested;
    st->events = n;
    st->dead = __atomic_load_n(&s->is_dead, __ATOMIC_ACQUIRE) != 0;
    *events = ct_sat_add(*events, n);
    *lost = ct_sat_add(*lost, n - st->harvested);
    struct ct_station_end se = {.probe_id = st->probe_id,
                                .events = n,
                                .harvested = st->harvested,
                                .lost = n - st->harvested,
                                .station = i,
                                .dead = st->dead,
                                .corrupt = st->corrupt};
    ct_rec_station_end(h->w, &se);
  }
}
