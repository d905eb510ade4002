/* state_sched.c - what the state keeps about scheduling: who held each thread, runnable spans
 * over the threshold while others held it (starvation), coroutines destroyed while waiting. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/state.h"

/* state.h: ct_sched_thread's slow path. */
struct ct_thread *ct_sched_thread_lookup(struct ct_state *s, uint32_t tid, int make) {
  int fresh = 0;
  struct ct_thread *t =
      make ? ct_map_put(&s->threads, tid, 0, &fresh) : ct_map_get(&s->threads, tid, 0);
  if (fresh) /* the map may have moved: every cached pointer is stale */
    memset(s->thread_at, 0, sizeof s->thread_at);
  s->thread_tids[tid % CT_RECENT_TIDS] = tid;
  s->thread_at[tid % CT_RECENT_TIDS] = t;
  return t;
}

/* state.h: the resumes its last thread had when it was woken. */
void ct_sched_wake(struct ct_state *s, struct ct_coro *c) {
  const struct ct_thread *t = c->last_resume_tid ? ct_sched_thread(s, c->last_resume_tid, 0) : NULL;
  c->woke_runs = t ? t->resumes : 0;
}

/* Most resumes first. */
static int cmp_hold(const void *a, const void *b) {
  const struct ct_hold *x = a, *y = b;
  return x->n != y->n ? (x->n > y->n ? -1 : 1) : (x->id > y->id) - (x->id < y->id);
}

/* The coroutines resumed on t since it had `since` resumes, merged, most
 * resumed first, into held[0..CT_HOLD_RING); returns how many; *rest: resumes
 * older than the ring reaches. */
static size_t holders(const struct ct_thread *t, uint32_t since, struct ct_hold *held,
                      uint64_t *rest) {
  uint32_t left = t->resumes - since;
  size_t n = 0;
  for (uint32_t i = 0; i < CT_HOLD_RING && left; i++) {
    const struct ct_hold *h = &t->ring[(t->head - i) % CT_HOLD_RING];
    if (!h->n)
      break;
    uint32_t k = h->n < left ? h->n : left;
    left -= k;
    size_t j = 0;
    while (j < n && (held[j].id != h->id || held[j].incarnation != h->incarnation))
      j++;
    if (j == n)
      held[n++] = (struct ct_hold){h->id, h->incarnation, 0};
    held[j].n += k;
  }
  *rest = left;
  qsort(held, n, sizeof *held, cmp_hold);
  return n;
}

/* The span kept for c: its own, else a free one, else the shortest kept
 * if shorter than span; NULL when span is not worth keeping. */
static struct ct_starved *slot_for(struct ct_starve *sv, const struct ct_coro *c, uint64_t span) {
  size_t k = 0;
  while (k < sv->n && (sv->ex[k].id != c->id || sv->ex[k].incarnation != c->incarnation))
    k++;
  if (k == sv->n && sv->n < CT_STARVE_KEPT)
    return &sv->ex[sv->n++];
  if (k == sv->n)
    for (size_t i = k = 0; i < sv->n; i++)
      if (sv->ex[i].resume_ts - sv->ex[i].woke_ts < sv->ex[k].resume_ts - sv->ex[k].woke_ts)
        k = i;
  return span > sv->ex[k].resume_ts - sv->ex[k].woke_ts ? &sv->ex[k] : NULL;
}

/* state.h: starved if another coroutine was resumed CT_PASSED_OVER times on
 * the thread c last ran on meanwhile. Keeps c's longest span. */
void ct_sched_starved(struct ct_state *s, struct ct_coro *c, uint64_t ts, uint32_t tid) {
  const struct ct_thread *t = ct_sched_thread(s, c->last_resume_tid, 0);
  struct ct_hold held[CT_HOLD_RING];
  uint64_t rest;
  size_t n = t ? holders(t, c->woke_runs, held, &rest) : 0;
  if (!n || held[0].n < CT_PASSED_OVER)
    return;
  s->starve.spans++;
  if (!c->starved) {
    c->starved = 1;
    s->starve.coros++;
  }
  struct ct_starved *e = slot_for(&s->starve, c, ts - c->woke_ts);
  if (!e)
    return;
  *e = (struct ct_starved){.id = c->id,
                           .obj = c->obj,
                           .susp_site = c->susp_site,
                           .woke_ts = c->woke_ts,
                           .woke_from = c->woke_from,
                           .woke_site = c->woke_site,
                           .resume_ts = ts,
                           .others = rest,
                           .incarnation = c->incarnation,
                           .label = c->label,
                           .pid = c->pid,
                           .tid = c->last_resume_tid,
                           .woke_tid = c->woke_tid,
                           .resume_tid = tid,
                           .wait = c->wait};
  for (size_t i = 0; i < n; i++)
    if (i < CT_STARVE_HOLDERS)
      e->held[e->nheld++] = held[i];
    else
      e->others += held[i].n;
}

/* state.h: before the destroy changes c; a copy of c is kept. */
int ct_sched_destroy(struct ct_state *s, const struct ct_coro *c, uint64_t ts, uint32_t tid,
                     uint64_t site) {
  if (c->state != CT_CS_SUSPENDED || c->woken || c->returned || !c->wait || ts < c->susp_ts)
    return 0;
  uint64_t waited = ts - c->susp_ts;
  if (waited <= s->stuck_ns) { /* too short to judge: only counted */
    if (!s->dwait_short++ || waited < s->dwait_short_min)
      s->dwait_short_min = waited;
    if (waited > s->dwait_short_max)
      s->dwait_short_max = waited;
    return 0;
  }
  if (s->ndwait == CT_DWAIT_MAX) {
    s->dwait_over++;
    return 0;
  }
  if (s->ndwait == s->capdwait) {
    size_t cap = s->capdwait ? 2 * s->capdwait : 16;
    struct ct_dwait *d = realloc(s->dwait, cap * sizeof *d);
    if (!d)
      return -ENOMEM;
    s->dwait = d;
    s->capdwait = cap;
  }
  struct ct_dwait *d = &s->dwait[s->ndwait++];
  d->c = *c;
  d->c.state = CT_CS_DESTROYED;
  d->c.destroy_ts = ts;
  d->site = site;
  d->tid = tid;
  return 0;
}
