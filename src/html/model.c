/* model.c - the dashboard's aggregate: each coroutine's state machine turned
 * into spans (running / runnable / suspended), wake edges, counters over time
 * in adaptive buckets, and the blob the page reads (model.h). */
#include "html/model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "analysis/record.h"
#include "common/buf.h"
#include "common/grow.h"

#define NONE UINT32_MAX
#define LABEL_MAX 160
#define LABELS_MAX 65536
#define BSHIFT0 16 /* first bucket width: 65 us; doubles as the run grows */

/* Grows *p (n used, *cap slots of size sz) for one more; 0 or -ENOMEM.
 * No huge-page advice here: advice on part of a malloc'd mapping splits it,
 * and glibc's realloc then copies instead of moving it (mremap fails). */
static int grow(void **p, size_t n, size_t *cap, size_t sz) {
  if (n < *cap)
    return 0;
  return ct_grow(p, cap, n + 1, sz, 64) ? -ENOMEM : 0;
}

/* Maps a table of at most max slots of size sz at once (*p, *cap = max):
 * the spans and wake edges, bounded by the budget, tens of MB written once.
 * Pages come as they are touched, huge ones where the kernel can (a fifth of
 * the time went to 4 KiB faults, perf), and the table never moves. 0 or
 * -ENOMEM. Undone by unreserve. */
static int reserve(void **p, size_t *cap, size_t max, size_t sz) {
  if (!max || max > SIZE_MAX / sz)
    return -ENOMEM;
  void *np = mmap(NULL, max * sz, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (np == MAP_FAILED)
    return -ENOMEM;
  (void)madvise(np, max * sz, MADV_HUGEPAGE); /* advice: no harm when refused */
  *p = np;
  *cap = max;
  return 0;
}

static void unreserve(void *p, size_t cap, size_t sz) {
  if (p)
    munmap(p, cap * sz);
}

int ct_model_init(struct ct_model *m, size_t span_budget, size_t span_cap) {
  memset(m, 0, sizeof *m);
  m->span_budget = span_budget;
  m->span_cap = span_cap;
  m->blo = -1;
  m->bshift = BSHIFT0;
  m->detail_until = UINT64_MAX;
  m->tail_cap = span_budget / 2;
  m->lod_cap = CT_LOD_CAP;
  memset(m->recent, 0xff, sizeof m->recent);
  ct_map_init(&m->ids, sizeof(uint32_t));
  ct_map_init(&m->sitemap, sizeof(uint32_t));
  ct_map_init(&m->tidmap, sizeof(uint32_t));
  ct_map_init(&m->labelmap, sizeof(uint32_t));
  m->labels = calloc(16, sizeof *m->labels);
  if (!m->labels)
    return -ENOMEM;
  m->caplabels = 16;
  m->nlabels = 1;
  return 0;
}

void ct_model_free(struct ct_model *m) {
  ct_map_free(&m->ids);
  ct_map_free(&m->sitemap);
  ct_map_free(&m->tidmap);
  ct_map_free(&m->labelmap);
  for (size_t i = 1; i < m->nlabels; i++)
    free(m->labels[i]);
  free(m->labels);
  free(m->coros);
  unreserve(m->spans, m->capspans, sizeof *m->spans);
  unreserve(m->wakes, m->capwakes, sizeof *m->wakes);
  unreserve(m->tail, m->tail ? m->tail_cap : 0, sizeof *m->tail);
  ct_lod_free(&m->lod);
  free(m->th_sum);
  free(m->sites);
  free(m->tids);
  memset(m, 0, sizeof *m);
}

static int new_row(struct ct_model *m, uint64_t id, uint32_t *ix);

/* coro's work past the last coroutine: the recent ones, then the map. */
static __attribute__((noinline)) struct ct_mcoro *coro_lookup(struct ct_model *m, uint64_t id,
                                                              int create) {
  uint32_t *hit = &m->recent[(id * 0x9e3779b97f4a7c15ull) >> (64 - CT_RECENT_BITS)];
  if (*hit < m->ncoros && m->coros[*hit].id == id)
    return &m->coros[m->last_ix = *hit];
  int fresh;
  uint32_t *ix = create ? ct_map_put(&m->ids, id, 0, &fresh) : ct_map_get(&m->ids, id, 0);
  if (!ix)
    return NULL;
  if (create && fresh && new_row(m, id, ix))
    return NULL;
  if (*ix == NONE)
    return NULL;
  m->last_ix = *hit = *ix;
  return &m->coros[*ix];
}

/* A new coroutine's row for the next line of id (a reused id's too: its
 * earlier rows stay, with their spans), named by *ix, id's entry in m->ids,
 * and by the caches. 0 or -ENOMEM (*ix then NONE: the caller reports it). */
static int new_row(struct ct_model *m, uint64_t id, uint32_t *ix) {
  if (grow((void **)&m->coros, m->ncoros, &m->capcoros, sizeof *m->coros)) {
    *ix = NONE;
    return -ENOMEM;
  }
  *ix = (uint32_t)m->ncoros;
  struct ct_mcoro *c = &m->coros[m->ncoros++];
  memset(c, 0, sizeof *c);
  c->id = id;
  c->site = c->create_site = c->destroy_site = c->waker = NONE;
  c->state = 0xff; /* not seen yet */
  c->pid = (uint32_t)m->target_pid;
  m->last_ix = m->recent[(id * 0x9e3779b97f4a7c15ull) >> (64 - CT_RECENT_BITS)] = *ix;
  return 0;
}

/* The row of c's next incarnation (record.h: its id reused after its
 * destroy), kept as c was (ct_model_keep names an id); NULL on ENOMEM. */
static struct ct_mcoro *reincarnate(struct ct_model *m, const struct ct_mcoro *c) {
  uint64_t id = c->id;
  uint8_t keep = c->keep;
  uint32_t *ix = ct_map_get(&m->ids, id, 0);
  if (!ix || new_row(m, id, ix))
    return NULL;
  m->coros[*ix].keep = keep;
  return &m->coros[*ix];
}

/* The row of coroutine id, made when absent if create (NULL: absent, or no memory). */
static inline struct ct_mcoro *coro(struct ct_model *m, uint64_t id, int create) {
  /* The engine writes a coroutine's lines together: the last one is likely
   * again; else the recent ones, by a direct-mapped cache of the map. */
  if (m->ncoros && m->last_ix < m->ncoros && m->coros[m->last_ix].id == id)
    return &m->coros[m->last_ix];
  return coro_lookup(m, id, create);
}

int ct_model_keep(struct ct_model *m, uint64_t probe_id) {
  struct ct_mcoro *c = coro(m, probe_id, 1);
  if (!c)
    return -ENOMEM;
  c->keep = 1;
  return 0;
}

/* The index of key (a, b) in map, appending val (sz bytes) to *arr when new. */
static uint32_t intern(struct ct_map *map, uint64_t a, uint64_t b, void **arr, size_t *n,
                       size_t *cap, size_t sz, const void *val) {
  int fresh;
  uint32_t *ix = ct_map_put(map, a, b, &fresh);
  if (!ix)
    return NONE;
  if (!fresh)
    return *ix;
  if (grow(arr, *n, cap, sz)) {
    *ix = NONE;
    return NONE;
  }
  memcpy((char *)*arr + *n * sz, val, sz);
  *ix = (uint32_t)*n;
  return (uint32_t)(*n)++;
}

/* site_index's work for a site other than the last one. */
static __attribute__((noinline)) uint32_t site_lookup(struct ct_model *m, uint64_t site,
                                                      uint32_t pid) {
  struct ct_msite row = {site, pid, 0};
  uint32_t i = intern(&m->sitemap, site, pid, (void **)&m->sites, &m->nsites, &m->capsites,
                      sizeof *m->sites, &row);
  if (i == NONE)
    return NONE;
  m->last_site = site;
  m->last_site_pid = pid;
  m->last_site_ix1 = i + 1;
  return i;
}

/* The index of (site, pid) in the site table, added when new (NONE: no
 * memory), noting use (CT_SITE_*): the kind of event that named it. */
static inline uint32_t site_index(struct ct_model *m, uint64_t site, uint32_t pid, uint8_t use) {
  uint32_t i = m->last_site_ix1 && m->last_site == site && m->last_site_pid == pid
                   ? m->last_site_ix1 - 1
                   : site_lookup(m, site, pid);
  if (i != NONE)
    m->sites[i].uses |= use;
  return i;
}

static uint32_t tid_index(struct ct_model *m, uint64_t tid) {
  if (m->last_tid_ix1 && m->last_tid == tid)
    return m->last_tid_ix1 - 1;
  uint32_t t = (uint32_t)tid;
  uint32_t i =
      intern(&m->tidmap, tid, 0, (void **)&m->tids, &m->ntids, &m->captids, sizeof *m->tids, &t);
  if (i != NONE) {
    m->last_tid = tid;
    m->last_tid_ix1 = i + 1;
  }
  return i;
}

/* FNV-1a of a label, its key in labelmap; a collision is told apart by text. */
static uint32_t label_index(struct ct_model *m, const struct ct_str *s) {
  char buf[LABEL_MAX];
  size_t n = ct_str_copy(s, buf, sizeof buf);
  if (!n)
    return 0;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
  for (uint64_t probe = 0; probe < 8; probe++) {
    uint32_t *ix = ct_map_get(&m->labelmap, h, probe);
    if (ix && !strcmp(m->labels[*ix], buf))
      return *ix;
    if (ix)
      continue;
    if (m->nlabels >= LABELS_MAX)
      return 0; /* too many distinct labels: unlabeled */
    int fresh;
    char *dup = strdup(buf);
    if (!dup || grow((void **)&m->labels, m->nlabels, &m->caplabels, sizeof *m->labels) ||
        !(ix = ct_map_put(&m->labelmap, h, probe, &fresh))) {
      free(dup);
      return 0;
    }
    m->labels[m->nlabels] = dup;
    *ix = (uint32_t)m->nlabels;
    return (uint32_t)m->nlabels++;
  }
  return 0;
}

/* ---- counters ------------------------------------------------------------- */
static void coarsen(struct ct_model *m) {
  static const struct ct_cbucket zero;
  int64_t nlo = m->blo >> 1;
  struct ct_cbucket *bk = m->bk;
  /* Pairs merge into the lower half in place: index j goes to (blo+j)/2 - nlo <= j. */
  for (int64_t j = 0; j < CT_NBUCKETS; j++) {
    int64_t to = ((m->blo + j) >> 1) - nlo;
    if (to == j)
      continue;
    for (int k = 0; k < CT_CT_LEVELS_; k++)
      bk[to].d[k] += bk[j].d[k];
    bk[to].events += bk[j].events;
    bk[to].lost += bk[j].lost;
    bk[to].wakes += bk[j].wakes;
    bk[j] = zero;
  }
  m->blo = nlo;
  m->bshift++;
}

static int64_t bhi(const struct ct_model *m) {
  for (int64_t j = CT_NBUCKETS - 1; j > 0; j--) {
    const struct ct_cbucket *b = &m->bk[j];
    if (b->events || b->lost || b->wakes || b->d[0] || b->d[1] || b->d[2] || b->d[3])
      return m->blo + j;
  }
  return m->blo;
}

/* The bucket of ts. blo is the lowest bucket used: a ts below it moves the
 * window up when everything still fits, else (or above the window) pairs of
 * buckets merge until it fits. */
static struct ct_cbucket *bucket(struct ct_model *m, uint64_t ts) {
  int64_t i = (int64_t)(ts >> m->bshift);
  if (m->blo < 0)
    m->blo = i;
  while (i < m->blo || i >= m->blo + CT_NBUCKETS) {
    if (i < m->blo && bhi(m) - i < CT_NBUCKETS) {
      size_t d = (size_t)(m->blo - i);
      memmove(&m->bk[d], &m->bk[0], (CT_NBUCKETS - d) * sizeof m->bk[0]);
      memset(&m->bk[0], 0, d * sizeof m->bk[0]);
      m->blo = i;
      break;
    }
    coarsen(m);
    i = (int64_t)(ts >> m->bshift);
  }
  return &m->bk[i - m->blo];
}

static int level_of(int state) {
  switch (state) {
  case CT_SP_RUNNING:
    return CT_CT_RUNNING;
  case CT_SP_RUNNABLE:
  case CT_SP_CREATED:
    return CT_CT_RUNNABLE;
  case CT_SP_SUSPENDED:
    return CT_CT_SUSPENDED;
  default:
    return -1;
  }
}

/* ---- spans ---------------------------------------------------------------- */
/* The span c was in until t1 into *s. */
static void fill_span(const struct ct_model *m, struct ct_span *s, const struct ct_mcoro *c,
                      uint64_t t1) {
  *s = (struct ct_span){.t0 = c->state_ts,
                        .t1 = t1 > c->state_ts ? t1 : c->state_ts,
                        .obj = c->obj,
                        .coro = (uint32_t)(c - m->coros),
                        .state = c->state,
                        .wait = c->wait};
  s->arg = c->state == CT_SP_RUNNING     ? c->tid
           : c->state == CT_SP_SUSPENDED ? c->site
           : c->state == CT_SP_RUNNABLE  ? c->waker
                                         : NONE;
}

/* A span [t0, t1) left out for good: counted, and the stretch of the run
 * with exact spans for every lane shrinks to before t0 and after t1. */
static void drop_span(struct ct_model *m, uint64_t t0, uint64_t t1) {
  m->spans_dropped++;
  if (t0 < m->detail_until)
    m->detail_until = t0;
  if (t1 > m->detail_from)
    m->detail_from = t1;
}

/* emit's work for a span kept: stored (out of line: past the budget, most
 * spans go to the tail ring). */
static __attribute__((noinline)) int store_span(struct ct_model *m, const struct ct_mcoro *c,
                                                uint64_t t1, int other) {
  if (!m->spans && reserve((void **)&m->spans, &m->capspans, m->span_cap, sizeof *m->spans))
    return -ENOMEM;
  m->nspans_other += (size_t)other;
  m->coros[c - m->coros].nsp++;
  fill_span(m, &m->spans[m->nspans++], c, t1);
  return 0;
}

/* A span of a coroutine not kept past the budget's first half: into the
 * tail ring, over its oldest span once full (that one is dropped). */
static __attribute__((noinline)) int tail_span(struct ct_model *m, const struct ct_mcoro *c,
                                               uint64_t t1) {
  size_t cap = m->tail_cap;
  if (!m->tail && reserve((void **)&m->tail, &cap, m->tail_cap, sizeof *m->tail))
    return -ENOMEM;
  struct ct_span *s;
  if (m->tail_n < m->tail_cap) {
    s = &m->tail[m->tail_n++];
  } else {
    s = &m->tail[m->tail_at];
    m->tail_at = (m->tail_at + 1) % m->tail_cap;
    drop_span(m, s->t0, s->t1);
    m->coros[s->coro].nsp--;
  }
  m->coros[c - m->coros].nsp++;
  fill_span(m, s, c, t1);
  return 0;
}

/* The span c was in until t1: summarized (running and runnable time: the
 * suspended is the rest), then stored while the budget has room, else into
 * the tail ring, or (a kept coroutine's past the cap) counted as dropped. */
static inline __attribute__((always_inline)) int emit(struct ct_model *m, const struct ct_mcoro *c,
                                                      uint64_t t1) {
  if (c->state > CT_SP_CREATED)
    return 0;
  if (c->state != CT_SP_SUSPENDED) {
    int rc = ct_lod_model(m, (uint32_t)(c - m->coros), c->state == CT_SP_RUNNING ? c->tid : NONE,
                          c->state_ts, t1, c->state, 0);
    if (rc)
      return rc;
  }
  int other = !c->keep;
  if (m->nspans >= m->span_cap || (other && m->nspans_other >= m->span_budget - m->tail_cap)) {
    if (other && m->tail_cap)
      return tail_span(m, c, t1);
    drop_span(m, c->state_ts, t1);
    return 0;
  }
  return store_span(m, c, t1, other);
}

/* c goes to state at ts: the span it was in is emitted, the levels move
 * (inline: once per event, read speed). */
static inline __attribute__((always_inline)) int
move(struct ct_model *m, struct ct_mcoro *c, int state, uint64_t ts, struct ct_cbucket *b) {
  int rc = emit(m, c, ts);
  int from = level_of(c->state), to = level_of(state);
  if (from >= 0)
    b->d[from]--;
  if (to >= 0)
    b->d[to]++;
  c->state = (uint8_t)state;
  c->state_ts = ts;
  return rc;
}

/* The most wake edges on_event keeps: a quarter of the span budget, or of
 * the cap for coroutines kept. */
static size_t wakes_max(const struct ct_model *m) {
  return (m->span_cap > m->span_budget ? m->span_cap : m->span_budget) / 4;
}

static int on_event(struct ct_model *m, const struct ct_event *ev) {
  m->events++;
  if (!m->start_ts || ev->ts < m->start_ts)
    m->start_ts = ev->ts;
  if (ev->ts > m->last_ts)
    m->last_ts = ev->ts;
  struct ct_mcoro *c = coro(m, ev->probe_id, 1);
  if (c && ct_rec_new_incarnation_ev(c->destroyed, ev))
    c = reincarnate(m, c);
  if (!c)
    return -ENOMEM;
  if (!c->pid)
    c->pid = (uint32_t)m->target_pid;
  struct ct_cbucket *b = bucket(m, ev->ts);
  b->events++;
  if (!c->first_ts || ev->ts < c->first_ts)
    c->first_ts = ev->ts;
  if (ev->ts > c->last_ts)
    c->last_ts = ev->ts;
  if (ev->has_ev) {
    if (ev->ev > c->next_ev) {
      uint64_t gap = ev->ev - c->next_ev;
      c->lost += (uint32_t)gap;
      m->lost += gap;
      b->lost += (uint32_t)gap;
    }
    if (ev->ev >= c->next_ev)
      c->next_ev = ev->ev + 1;
  }
  if (c->destroyed)
    return 0;
  if (!c->alive) {
    c->alive = 1;
    b->d[CT_CT_LIVE]++;
  }
  enum ct_ev_kind kind = ev->kind;
  uint64_t site = ev->site;
  int rc = 0;
  switch (kind) {
  case CT_EV_CREATE:
    c->create_site = site_index(m, site, c->pid, CT_SITE_OTHER);
    c->waker = NONE;
    rc = move(m, c, CT_SP_CREATED, ev->ts, b);
    break;
  case CT_EV_SUSPEND:
    rc = move(m, c, CT_SP_SUSPENDED, ev->ts, b);
    c->suspends++;
    c->site = site_index(m, site, c->pid, CT_SITE_OTHER);
    c->wait = ev->wait;
    c->obj = ev->obj;
    break;
  case CT_EV_RESUME: {
    uint32_t tid = ev->has_tid ? tid_index(m, ev->tid) : NONE;
    if (c->state == CT_SP_RUNNING && c->tid == tid)
      break; /* v1 SDKs repeat resumes */
    rc = move(m, c, CT_SP_RUNNING, ev->ts, b);
    c->tid = tid;
    c->runs++;
    break;
  }
  case CT_EV_WAKE: {
    m->wake_count++;
    b->wakes++;
    c->wakes++;
    uint32_t from = 0;
    if (ev->from) {
      struct ct_mcoro *w = coro(m, ev->from, 1);
      if (!w)
        return -ENOMEM;
      c = coro(m, ev->probe_id, 0); /* the table may have moved */
      from = (uint32_t)(w - m->coros) + 1;
    }
    uint32_t ix = (uint32_t)(c - m->coros);
    if ((rc = ct_lod_model(m, ix, NONE, ev->ts, ev->ts, CT_SP_RUNNABLE, 1)))
      return rc;
    if (m->nwakes < m->span_budget / 4 || (c->keep && m->nwakes < m->span_cap / 4)) {
      if (!m->wakes && reserve((void **)&m->wakes, &m->capwakes, wakes_max(m), sizeof *m->wakes))
        return -ENOMEM;
      m->wakes[m->nwakes++] = (struct ct_wake){ev->ts, from, (uint32_t)(c - m->coros),
                                               ev->has_tid ? (uint32_t)ev->tid : 0};
    } else {
      m->wakes_dropped++;
    }
    if (c->state == CT_SP_SUSPENDED) {
      rc = move(m, c, CT_SP_RUNNABLE, ev->ts, b);
      c->waker = from;
    }
    break;
  }
  case CT_EV_DESTROY:
    if (site) /* the page names who destroyed it (the report's destroyer) */
      c->destroy_site = site_index(m, site, c->pid, CT_SITE_DESTROY);
    rc = move(m, c, 0xff, ev->ts, b);
    c->destroyed = 1;
    c->alive = 0;
    b->d[CT_CT_LIVE]--;
    break;
  case CT_EV_V1:
    break;
  }
  return rc;
}

/* Rows before the first pruning: a 16th of the span budget, within bounds. */
static size_t prune_min(const struct ct_model *m) {
  size_t n = m->span_budget / 16;
  return n < 64 ? 64 : n > 65536 ? 65536 : n;
}

void ct_model_prune(struct ct_model *m) {
  m->prune = 1;
  m->prune_at = m->ncoros > prune_min(m) ? 2 * m->ncoros : prune_min(m);
}

static int row_kept(void *ctx, const void *val) {
  uint32_t ix = *(const uint32_t *)val; /* NONE: an id whose row could not be made */
  return ix != NONE && ((const uint32_t *)ctx)[ix] != NONE;
}

/* A waker reference (coroutine index + 1, 0 a plain thread, NONE unknown)
 * after the rows moved; a pruned waker becomes unknown. */
static uint32_t waker_after(const uint32_t *remap, uint32_t w) {
  if (w == NONE || w == 0)
    return w;
  return remap[w - 1] == NONE ? NONE : remap[w - 1] + 1;
}

/* Drops the rows ct_model_prune allows to drop; the spans, wake edges, ids
 * and wakers follow the rows that stay. 0 or -ENOMEM (nothing changed). */
static int prune(struct ct_model *m) {
  uint32_t *remap = malloc(m->ncoros * sizeof *remap);
  if (!remap)
    return -ENOMEM;
  size_t n = 0;
  for (size_t i = 0; i < m->ncoros; i++) {
    const struct ct_mcoro *c = &m->coros[i];
    remap[i] = c->destroyed && !c->keep && !c->nsp ? NONE : (uint32_t)n++;
  }
  int rc = n < m->ncoros ? ct_map_filter(&m->ids, row_kept, remap) : 0;
  if (rc || n == m->ncoros) {
    free(remap);
    m->prune_at = 2 * m->ncoros;
    return rc;
  }
  for (size_t k = 0; k < m->ids.n; k++) {
    uint32_t *v = ct_map_at(&m->ids, k);
    *v = remap[*v];
  }
  for (size_t i = 0; i < m->ncoros; i++)
    if (remap[i] != NONE) {
      struct ct_mcoro *c = &m->coros[remap[i]];
      *c = m->coros[i];
      c->waker = waker_after(remap, c->waker);
    }
  for (size_t k = 0; k < m->nspans + m->tail_n; k++) {
    struct ct_span *s = k < m->nspans ? &m->spans[k] : &m->tail[k - m->nspans];
    s->coro = remap[s->coro]; /* a row with spans stays */
    if (s->state == CT_SP_RUNNABLE)
      s->arg = waker_after(remap, s->arg);
  }
  ct_lod_remap(m, remap);
  size_t nw = 0;
  for (size_t k = 0; k < m->nwakes; k++) {
    struct ct_wake w = m->wakes[k];
    if (remap[w.to] == NONE || (w.from && remap[w.from - 1] == NONE)) {
      m->wakes_dropped++;
      continue;
    }
    w.to = remap[w.to];
    w.from = waker_after(remap, w.from);
    m->wakes[nw++] = w;
  }
  m->nwakes = nw;
  m->coros_pruned += m->ncoros - n;
  m->ncoros = n;
  ct_lod_relink(m);
  m->last_ix = 0;
  memset(m->recent, 0xff, sizeof m->recent);
  m->prune_at = 2 * n > prune_min(m) ? 2 * n : prune_min(m);
  free(remap);
  return 0;
}

/* Before each line, a run's events included (each stands for its line):
 * counts it, and prunes when due, between lines, where no row pointer is held. */
static inline int line_start(struct ct_model *m) {
  m->lines++;
  return m->prune && m->spans_dropped && m->ncoros >= m->prune_at ? prune(m) : 0;
}

int ct_model_run(struct ct_model *m, const struct ct_event *ev, size_t n) {
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++)
    if (!(rc = line_start(m)))
      rc = on_event(m, &ev[i]);
  return rc;
}

int ct_model_line(struct ct_model *m, enum ct_line_err err, const struct ct_line *l) {
  int rc = line_start(m);
  if (rc)
    return rc;
  if (err != CT_LINE_OK) {
    m->bad++;
    return 0;
  }
  struct ct_mcoro *c;
  switch (l->type) {
  case CT_LINE_EVENT:
    return on_event(m, &l->e);
  case CT_LINE_META: {
    struct ct_rec_meta mt;
    ct_rec_meta(l, &mt);
    if (mt.has_target_pid)
      m->target_pid = mt.target_pid;
    if (mt.run_id)
      ct_str_copy(mt.run_id, m->run_id, sizeof m->run_id);
    if (mt.host)
      ct_str_copy(mt.host, m->host, sizeof m->host);
    return 0;
  }
  case CT_LINE_COROUTINE:
  case CT_LINE_SNAPSHOT: { /* a flight dump's: the coroutine's facts, alive before the window */
    struct ct_rec_coro rc;
    c = coro(m, l->probe_id, 1);
    if (c && ct_rec_new_incarnation(c->destroyed, l))
      c = reincarnate(m, c);
    if (!c)
      return -ENOMEM;
    ct_rec_coro(l, &rc);
    /* Its window's first event follows its last one before: no loss between. */
    if (l->type == CT_LINE_SNAPSHOT && CT_HAS(l, CT_K_EV) && l->ev >= c->next_ev)
      c->next_ev = l->ev + 1;
    if (rc.has_pid)
      c->pid = (uint32_t)rc.pid;
    if (rc.label)
      c->label = label_index(m, rc.label);
    if (rc.has_create_site) {
      uint32_t s = site_index(m, rc.create_site, c->pid, CT_SITE_OTHER);
      if (s == NONE)
        return -ENOMEM;
      if ((c = coro(m, l->probe_id, 0)))
        c->create_site = s;
    }
    return 0;
  }
  case CT_LINE_END: {
    struct ct_rec_end e;
    char why[160];
    if (ct_rec_end(l, m->has_end, &e, why, sizeof why)) {
      m->bad++; /* a record that cannot be true: damage, as the report takes it */
      return 0;
    }
    m->has_end = 1;
    if (e.has_ts)
      m->end_ts = e.ts;
    return 0;
  }
  default:
    return 0;
  }
}

uint64_t ct_model_end(const struct ct_model *m, uint64_t now_ts) {
  uint64_t e = m->has_end && m->end_ts ? m->end_ts : m->last_ts;
  return now_ts > e ? now_ts : e;
}

void ct_model_counts(const struct ct_model *m, uint64_t now, uint64_t stuck_ns,
                     struct ct_model_counts *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < m->ncoros; i++) {
    const struct ct_mcoro *c = &m->coros[i];
    if (!c->alive)
      continue;
    out->alive++;
    if (c->state == CT_SP_RUNNING)
      out->running++;
    else if (c->state == CT_SP_RUNNABLE || c->state == CT_SP_CREATED)
      out->runnable++;
    else if (c->state == CT_SP_SUSPENDED) {
      out->suspended++;
      if (now >= c->state_ts && now - c->state_ts >= stuck_ns)
        out->stuck++;
    }
  }
}
