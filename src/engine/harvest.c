/* harvest.c - the engine's side of the seqlock: read stable slots, sort each
 * station's batch by event index, write event, coroutine and station_end
 * lines, and count every lost event. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/engine.h"

/* One harvested slot. */
struct ev {
  uint64_t ts, tid, addr, seq, obj, idx;
  uint8_t kind, wait, active;
};

/* Plain fields of the shared file that another process changes while we read
 * them: relaxed atomic loads (no tearing, no compiler caching). */
#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

int ct_harvest_init(struct ct_harvest *h, void *base, uint32_t n, struct ct_procs *procs,
                    struct ct_writer *w) {
  memset(h, 0, sizeof(*h));
  h->base = base;
  h->hdr = base;
  h->n = n;
  h->procs = procs;
  h->w = w;
  h->st = calloc(n, sizeof(*h->st));
  /* Our own choice, written before the target started: read once. */
  h->lossless = (h->hdr->mode & CTP_MODE_LOSSLESS) != 0;
  return h->st ? 0 : -ENOMEM;
}

void ct_harvest_free(struct ct_harvest *h) {
  free(h->st);
  h->st = NULL;
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
static void cover_site(struct ct_harvest *h, uint32_t pid, uint64_t site, uint64_t ts) {
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
  struct ct_writer *w = h->w;
  /* Every read of the file before the first write: a SIGBUS (truncated
   * file) must not leave half a line behind. */
  uint32_t flags = atomic_load_explicit(&s->ext_flags, memory_order_acquire);
  uint64_t probe_id = s->probe_id, birth = s->birth_ts, site = s->create_site;
  uint64_t parent = s->parent_id;
  char label[CTP_LABEL_MAX];
  memcpy(label, s->label, sizeof(label));
  cover_site(h, st->pid, site, birth);
  ct_w_str(w, "{\"type\":\"coroutine\",\"probe_id\":");
  ct_w_u64(w, probe_id);
  ct_w_str(w, ",\"station\":");
  ct_w_u64(w, i);
  ct_w_str(w, ",\"pid\":");
  ct_w_u64(w, st->pid);
  ct_w_str(w, ",\"birth_ts\":");
  ct_w_u64(w, birth);
  if (flags & CTP_STF_LABEL) {
    ct_w_str(w, ",\"label\":");
    ct_w_json(w, label, strnlen(label, sizeof(label) - 1));
  }
  ct_w_str(w, ",\"create_site\":");
  ct_w_hex(w, site);
  ct_w_str(w, ",\"parent\":");
  ct_w_u64(w, parent);
  ct_w_str(w, "}\n");
  st->coro_done = 1;
}

/* `,"kind":"NAME"` per kind, with its length; none for a v1 event. */
#define KIND(name)                                                                                 \
  { ",\"kind\":\"" name "\"", sizeof(",\"kind\":\"" name "\"") - 1 }
static const struct {
  const char *s;
  size_t n;
} kind_json[CTP_KIND_MAX_] = {{NULL, 0},      KIND("create"), KIND("suspend"),
                              KIND("resume"), KIND("wake"),   KIND("destroy")};

/* Longest event line: the keys below plus 8 numbers of at most 20 bytes. */
#define EVENT_LINE_MAX 512u

/* Formatted in place (one bounds check per line, literal keys copied with
 * constant sizes): under load, event lines are most of the engine's work. */
static void write_event(struct ct_writer *w, uint64_t probe_id, const struct ev *e) {
  char *p = ct_w_reserve(w, EVENT_LINE_MAX);
  if (!p)
    return;
  p = CT_PUT_LIT(p, "{\"probe_id\":");
  p = ct_put_u64(p, probe_id);
  p = CT_PUT_LIT(p, ",\"tid\":");
  p = ct_put_u64(p, e->tid);
  p = CT_PUT_LIT(p, ",\"addr\":");
  p = ct_put_hex(p, e->addr);
  p = CT_PUT_LIT(p, ",\"seq\":");
  p = ct_put_u64(p, e->seq);
  p = e->active ? CT_PUT_LIT(p, ",\"is_active\":true,\"ts\":")
                : CT_PUT_LIT(p, ",\"is_active\":false,\"ts\":");
  p = ct_put_u64(p, e->ts);
  int known = e->kind < CTP_KIND_MAX_ && kind_json[e->kind].s;
  if (known) {
    memcpy(p, kind_json[e->kind].s, kind_json[e->kind].n);
    p += kind_json[e->kind].n;
  }
  p = CT_PUT_LIT(p, ",\"ev\":");
  p = ct_put_u64(p, e->idx);
  if (known && e->kind != CTP_KIND_RESUME) {
    p = CT_PUT_LIT(p, ",\"site\":");
    p = ct_put_hex(p, e->addr);
  }
  if (e->kind == CTP_KIND_SUSPEND && e->wait == CTP_WAIT_FD) {
    p = CT_PUT_LIT(p, ",\"wait\":\"fd\",\"obj\":");
    int64_t fd = (int64_t)e->obj;
    if (fd < 0)
      *p++ = '-';
    p = ct_put_u64(p, fd < 0 ? (uint64_t)0 - e->obj : e->obj);
  } else if (e->kind == CTP_KIND_SUSPEND && e->wait == CTP_WAIT_PTR) {
    p = CT_PUT_LIT(p, ",\"wait\":\"ptr\",\"obj\":");
    p = ct_put_hex(p, e->obj);
  } else if (e->kind == CTP_KIND_SUSPEND && e->wait == CTP_WAIT_EXIT) {
    p = CT_PUT_LIT(p, ",\"wait\":\"exit\"");
  } else if (e->kind == CTP_KIND_WAKE) {
    p = CT_PUT_LIT(p, ",\"from\":");
    p = ct_put_u64(p, e->obj);
  } else if (e->kind == CTP_KIND_CREATE) {
    p = CT_PUT_LIT(p, ",\"parent\":");
    p = ct_put_u64(p, e->obj);
  }
  p = CT_PUT_LIT(p, "}\n");
  ct_w_commit(w, p);
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
    atomic_thread_fence(memory_order_acquire);
    uint64_t v2 = atomic_load_explicit(&sl->seq, memory_order_relaxed);
    if (v1 != v2) {
      h->torn++; /* rewritten while we copied: the next pass gets the new one */
      continue;
    }
    /* Each write adds 2: a larger step means events overwritten unseen. */
    uint64_t gap = (v1 - st->last_seq[k]) / 2 - 1;
    h->live_lost += gap;
    st->last_seq[k] = v1;
    e->seq = v1;
    e->idx = ctp_event_index(v1, k);
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
      cover_site(h, st->pid, batch[a].addr, batch[a].ts);
    write_event(h->w, st->probe_id, &batch[a]);
    if (batch[a].ts < h->first_ts)
      h->first_ts = batch[a].ts;
    st->next_ev = batch[a].idx + 1;
    written++;
  }
  st->harvested += written;
  h->harvested += written;
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

static uint32_t used_now(struct ct_harvest *h) {
  uint32_t a = atomic_load_explicit(&h->hdr->allocated_count, memory_order_acquire);
  uint32_t u = a < h->n ? a : h->n;
  if (u > h->used)
    h->used = u;
  return h->used;
}

uint64_t ct_harvest_scan(struct ct_harvest *h, enum ct_scan mode) {
  uint64_t got = 0;
  uint32_t used = used_now(h);
  h->peak = 0;
  h->progress = 0;
  h->first_ts = UINT64_MAX;
  for (uint32_t i = 0; i < used; i++)
    if (mode == CT_SCAN_FULL || !h->st[i].retired)
      got += scan_station(h, i, mode);
  if (h->progress) {
    /* Lossless writers skip their waits while this word stands still after a
     * timeout (a stopped engine); it moves with every scan that made room. */
    atomic_fetch_add_explicit(&h->hdr->harvest_epoch, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&h->hdr->waiters, memory_order_seq_cst) > 0)
      syscall(SYS_futex, &h->hdr->harvest_epoch, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  }
  return got;
}

uint32_t ct_harvest_live(const struct ct_harvest *h) {
  uint32_t live = 0;
  for (uint32_t i = 0; i < h->used; i++)
    live += !__atomic_load_n(&ctp_station_at(h->base, i)->is_dead, __ATOMIC_RELAXED);
  return live;
}

void ct_harvest_finish(struct ct_harvest *h, uint64_t *events, uint64_t *lost) {
  struct ct_writer *w = h->w;
  uint32_t used = used_now(h);
  *events = *lost = 0;
  for (uint32_t i = 0; i < used; i++) {
    struct ct_station_state *st = &h->st[i];
    struct ctp_station *s = ctp_station_at(h->base, i);
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
      for (unsigned k = 0; k < CTP_SLOTS; k++)
        n += (atomic_load_explicit(&s->slots[k].seq, memory_order_acquire) + 1) / 2;
    }
    if (n < st->harvested)
      n = st->harvested; /* a writer that broke the protocol */
    st->events = n;
    st->dead = __atomic_load_n(&s->is_dead, __ATOMIC_ACQUIRE) != 0;
    *events += n;
    *lost += n - st->harvested;
    ct_w_str(w, "{\"type\":\"station_end\",\"probe_id\":");
    ct_w_u64(w, st->probe_id);
    ct_w_str(w, ",\"station\":");
    ct_w_u64(w, i);
    ct_w_str(w, ",\"events\":");
    ct_w_u64(w, n);
    ct_w_str(w, ",\"harvested\":");
    ct_w_u64(w, st->harvested);
    ct_w_str(w, ",\"lost\":");
    ct_w_u64(w, n - st->harvested);
    ct_w_str(w, st->dead ? ",\"dead\":true}\n" : ",\"dead\":false}\n");
  }
}
