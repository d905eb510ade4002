/* model_lod.c - the model's level of detail: the whole run of every lane
 * (coroutine row, OS thread) as time buckets of 2^shift ns holding the ns
 * running and runnable and the wakes in them (model.h, struct ct_lod), so
 * that the page draws every moment of the run even where the span budget
 * kept no exact span. Suspended time is what is left of a coroutine's life.
 * The buckets start fine and double in width whenever the table is full:
 * the finest resolution the budget allows for this run, whatever its length
 * (docs/DASHBOARD.md "Level of detail"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "html/model.h"

#define LOD_SHIFT0 10    /* 1 us buckets to start with */
#define LOD_SHIFT_MAX 46 /* 19.5 h: past it, entries are counted as dropped */

int ct_lod_init(struct ct_lod *l, size_t cap) {
  memset(l, 0, sizeof *l);
  l->shift = LOD_SHIFT0;
  if (!cap || cap > SIZE_MAX / sizeof *l->s)
    return -ENOMEM;
  void *p = mmap(NULL, cap * sizeof *l->s, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return -ENOMEM;
  l->s = p;
  l->cap = cap;
  return 0;
}

void ct_lod_free(struct ct_lod *l) {
  if (l->s)
    munmap(l->s, l->cap * sizeof *l->s);
  memset(l, 0, sizeof *l);
}

static int cmp_sum(const void *a, const void *b) {
  const struct ct_sum *x = a, *y = b;
  if (x->lane != y->lane)
    return x->lane < y->lane ? -1 : 1;
  return (x->bucket > y->bucket) - (x->bucket < y->bucket);
}

/* The entries by lane (stable, counting: O(n)) into t, then back into s;
 * each lane's stretch sorted by bucket only when it is out of order (a
 * lane's entries come in time order, but for a few). 0 or -ENOMEM. */
static int by_lane(struct ct_sum *s, size_t n) {
  uint32_t maxc = 0, maxt = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t ln = s[i].lane;
    if (ln & CT_LOD_THREAD)
      maxt = (ln & ~CT_LOD_THREAD) > maxt ? ln & ~CT_LOD_THREAD : maxt;
    else
      maxc = ln > maxc ? ln : maxc;
  }
  size_t nl = (size_t)maxc + 1 + maxt + 1, *at = calloc(nl + 1, sizeof *at);
  struct ct_sum *t = malloc(n * sizeof *t);
  if (!at || !t) {
    free(at);
    free(t);
    return -ENOMEM;
  }
#define LANE(ln) ((ln)&CT_LOD_THREAD ? (size_t)maxc + 1 + ((ln) & ~CT_LOD_THREAD) : (size_t)(ln))
  for (size_t i = 0; i < n; i++)
    at[LANE(s[i].lane) + 1]++;
  for (size_t k = 0; k < nl; k++)
    at[k + 1] += at[k];
  for (size_t i = 0; i < n; i++)
    t[at[LANE(s[i].lane)]++] = s[i];
#undef LANE
  memcpy(s, t, n * sizeof *t);
  for (size_t a = 0, b; a < n; a = b) {
    int sorted = 1;
    for (b = a + 1; b < n && s[b].lane == s[a].lane; b++)
      sorted &= s[b - 1].bucket <= s[b].bucket;
    if (!sorted)
      qsort(s + a, b - a, sizeof *s, cmp_sum);
  }
  free(at);
  free(t);
  return 0;
}

void ct_lod_compact(struct ct_sum *s, size_t *n) {
  if (!*n)
    return;
  if (by_lane(s, *n)) /* no memory for the fast way */
    qsort(s, *n, sizeof *s, cmp_sum);
  size_t k = 0;
  for (size_t i = 1; i < *n; i++) {
    if (s[i].lane == s[k].lane && s[i].bucket == s[k].bucket) {
      s[k].run += s[i].run;
      s[k].rdy += s[i].rdy;
      s[k].wakes += s[i].wakes;
    } else {
      s[++k] = s[i];
    }
  }
  *n = k + 1;
}

void ct_lod_relink(struct ct_model *m) {
  for (size_t i = 0; i < m->ncoros; i++)
    m->coros[i].sum_last = 0;
  if (m->th_sum)
    memset(m->th_sum, 0, m->capth_sum * sizeof *m->th_sum);
  for (size_t k = 0; k < m->lod.n; k++) {
    uint32_t lane = m->lod.s[k].lane;
    if (lane & CT_LOD_THREAD)
      m->th_sum[lane & ~CT_LOD_THREAD] = (uint32_t)k + 1;
    else
      m->coros[lane].sum_last = (uint32_t)k + 1;
  }
}

/* The entries a span [t0, t1) takes at the current width (lanes: 1 or 2). */
static size_t need(const struct ct_lod *l, uint64_t t0, uint64_t t1, int lanes) {
  uint64_t last = t1 > t0 ? (t1 - 1) >> l->shift : t0 >> l->shift;
  uint64_t nb = last - (t0 >> l->shift) + 1;
  return nb > l->cap ? l->cap : (size_t)nb * (size_t)lanes;
}

/* 1 when buckets of the current width cut the run so far (to t1) into more
 * than CT_LOD_RUN_BUCKETS: finer than the page can use. */
static int too_fine(const struct ct_model *m, uint64_t t1) {
  return t1 > m->start_ts && (t1 - m->start_ts) >> m->lod.shift >= CT_LOD_RUN_BUCKETS;
}

/* The lane's newest-entry slot (coroutine row, or thread); NULL for a
 * thread index past th_sum, which has no entries then. */
static uint32_t *slot_of(struct ct_model *m, uint32_t lane) {
  if (!(lane & CT_LOD_THREAD))
    return &m->coros[lane].sum_last;
  lane &= ~CT_LOD_THREAD;
  return lane < m->capth_sum ? &m->th_sum[lane] : NULL;
}

/* Doubles the buckets' width: the pairs of a lane's buckets merge, in one
 * pass in place (a lane's entries come in time order: each merges into the
 * lane's newest, found through its slot), the order kept, the slots left
 * naming each lane's newest entry. An entry out of time order (a trace not
 * in ts order) may stay beside its twin: ct_lod_compact merges them. */
static void halve(struct ct_model *m) {
  struct ct_lod *l = &m->lod;
  for (size_t i = 0; i < m->ncoros; i++)
    m->coros[i].sum_last = 0;
  if (m->th_sum)
    memset(m->th_sum, 0, m->capth_sum * sizeof *m->th_sum);
  size_t k = 0;
  for (size_t i = 0; i < l->n; i++) {
    struct ct_sum e = l->s[i];
    e.bucket >>= 1;
    uint32_t *last = slot_of(m, e.lane);
    if (last && *last && l->s[*last - 1].bucket == e.bucket) {
      struct ct_sum *t = &l->s[*last - 1];
      t->run += e.run;
      t->rdy += e.rdy;
      t->wakes += e.wakes;
      continue;
    }
    l->s[k++] = e;
    if (last)
      *last = (uint32_t)k;
  }
  l->n = k;
  l->shift++;
}

/* Doubles the buckets' width until a span [t0, t1) in `lanes` lanes fits in
 * a table then at most three quarters full, and the run so far in
 * CT_LOD_RUN_BUCKETS. Returns 0, or -ENOSPC when even the widest buckets leave
 * no room. */
static int coarsen(struct ct_model *m, uint64_t t0, uint64_t t1, int lanes) {
  struct ct_lod *l = &m->lod;
  while (too_fine(m, t1) || l->n + need(l, t0, t1, lanes) > l->cap - l->cap / 4) {
    if (l->shift >= LOD_SHIFT_MAX)
      return -ENOSPC;
    halve(m);
  }
  return 0;
}

/* *last's entry when it is lane's bucket b, else a new one (NULL: full). */
static struct ct_sum *entry(struct ct_lod *l, uint32_t lane, uint32_t *last, uint64_t b) {
  if (last && *last && l->s[*last - 1].bucket == b)
    return &l->s[*last - 1];
  if (l->n >= l->cap)
    return NULL;
  struct ct_sum *e = &l->s[l->n++];
  *e = (struct ct_sum){.lane = lane, .bucket = b};
  if (last)
    *last = (uint32_t)l->n;
  return e;
}

int ct_lod_add(struct ct_lod *l, uint32_t lane, uint32_t *last, uint64_t t0, uint64_t t1, int rdy,
               uint32_t wakes) {
  if (t1 < t0)
    t1 = t0;
  for (uint64_t b = t0 >> l->shift;; b++) {
    uint64_t bs = b << l->shift, be = bs + ((uint64_t)1 << l->shift);
    struct ct_sum *e = entry(l, lane, last, b);
    if (!e) {
      l->dropped++;
      return -ENOSPC;
    }
    float ns = (float)((t1 < be ? t1 : be) - (t0 > bs ? t0 : bs));
    if (rdy)
      e->rdy += ns;
    else
      e->run += ns;
    e->wakes += wakes;
    wakes = 0;
    if (t1 <= be)
      return 0;
  }
}

/* The thread lane's last-entry slot for thread index t (NULL: no memory). */
static uint32_t *th_slot(struct ct_model *m, uint32_t t) {
  if (t >= m->capth_sum) {
    size_t cap = m->capth_sum ? m->capth_sum : 16;
    while (cap <= t)
      cap *= 2;
    uint32_t *np = realloc(m->th_sum, cap * sizeof *np);
    if (!np)
      return NULL;
    memset(np + m->capth_sum, 0, (cap - m->capth_sum) * sizeof *np);
    m->th_sum = np;
    m->capth_sum = cap;
  }
  return &m->th_sum[t];
}

int ct_lod_model(struct ct_model *m, uint32_t coro, uint32_t tid, uint64_t t0, uint64_t t1,
                 int state, uint32_t wakes) {
  struct ct_lod *l = &m->lod;
  if (!m->lod_cap)
    return 0; /* a model with no summary (the live view's detail answers) */
  if (!l->s && ct_lod_init(l, m->lod_cap))
    return -ENOMEM;
  int lanes = tid != CT_LOD_NONE && state == CT_SP_RUNNING ? 2 : 1;
  if ((too_fine(m, t1) || l->n + need(l, t0, t1, lanes) > l->cap - l->cap / 8) &&
      coarsen(m, t0, t1, lanes)) {
    l->dropped++;
    return 0; /* the summary is full even at its widest: counted, the run goes on */
  }
  int rdy = state != CT_SP_RUNNING;
  (void)ct_lod_add(l, coro, &m->coros[coro].sum_last, t0, t1, rdy, wakes);
  if (tid != CT_LOD_NONE && !rdy) {
    uint32_t *slot = th_slot(m, tid);
    if (!slot)
      return -ENOMEM;
    (void)ct_lod_add(l, CT_LOD_THREAD | tid, slot, t0, t1, 0, 0);
  }
  return 0;
}

void ct_lod_remap(struct ct_model *m, const uint32_t *remap) {
  struct ct_lod *l = &m->lod;
  size_t k = 0;
  for (size_t i = 0; i < l->n; i++) {
    struct ct_sum e = l->s[i];
    if (!(e.lane & CT_LOD_THREAD)) {
      if (remap[e.lane] == CT_LOD_NONE)
        continue; /* a pruned row's lane goes with it */
      e.lane = remap[e.lane];
    }
    l->s[k++] = e;
  }
  l->n = k;
}
