/* state.c - per-line analysis: the coroutine state machine of every traced
 * coroutine, with what the findings need kept in bounded tables. */
#include "analysis/state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#define MAX_BUCKETS (1u << 20)
/* Without a module map, more distinct suspend addresses than this, and more
 * than one per two coroutines, are a reference SDK's frame addresses. */
#define NOT_CODE_SITES 1024

int ct_state_new(uint64_t blocker_ns, struct ct_state **out) {
  struct ct_state *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  int rc = ct_symbolizer_new(&s->sym);
  if (rc) {
    free(s);
    return rc;
  }
  s->blocker_ns = blocker_ns;
  s->stuck_ns = CT_STUCK_NS;
  s->runnable_ns = CT_RUNNABLE_NS;
  ct_map_init(&s->coros, sizeof(struct ct_coro));
  ct_state_keep_tombstones(s, CT_TOMBSTONES);
  ct_map_init(&s->early, sizeof(struct ct_early));
  ct_map_init(&s->sites, sizeof(struct ct_site));
  ct_map_init(&s->blocks, sizeof(struct ct_block));
  ct_map_init(&s->fds, sizeof(struct ct_fduse));
  ct_map_init(&s->objs, sizeof(struct ct_wakers));
  ct_map_init(&s->tids, 1);
  ct_map_init(&s->buckets, sizeof(struct ct_bucket));
  ct_map_init(&s->threads, sizeof(struct ct_thread));
  ct_map_init(&s->labelmap, sizeof(uint32_t));
  if (ct_grow((void **)&s->labels, &s->caplabels, 1, sizeof *s->labels, 16)) {
    ct_state_free(s);
    return -ENOMEM;
  }
  s->labels[0] = NULL;
  s->nlabels = 1; /* 0 = no label */
  *out = s;
  return 0;
}

/* Frees the histograms of the sites in m. */
static void free_site_hists(const struct ct_map *m) {
  for (size_t i = 0; i < m->n; i++) {
    struct ct_site *st = ct_map_at(m, i);
    free(st->hist);
    free(st->runnable);
  }
}

void ct_state_free(struct ct_state *s) {
  if (!s)
    return;
  free_site_hists(&s->sites);
  ct_state_blocks_free(&s->blocks);
  ct_map_free(&s->coros);
  ct_map_free(&s->early);
  ct_map_free(&s->sites);
  ct_map_free(&s->fds);
  ct_map_free(&s->objs);
  ct_map_free(&s->tids);
  ct_map_free(&s->buckets);
  ct_map_free(&s->threads);
  free(s->dwait);
  for (uint32_t i = 1; i < s->nlabels; i++)
    free(s->labels[i]);
  free(s->labels);
  ct_map_free(&s->labelmap);
  ct_symbolizer_free(s->sym);
  free(s);
}

int ct_state_new_judging(const struct ct_thresholds *t, struct ct_state **out) {
  int rc = ct_state_new(t->blocker_ns, out);
  if (!rc) {
    (*out)->runnable_ns = t->runnable_ns;
    (*out)->stuck_ns = t->stuck_ns;
  }
  return rc;
}

ct_symbolizer *ct_state_symbolizer(const struct ct_state *s) {
  return s->sym;
}

uint64_t ct_state_lines(const struct ct_state *s) {
  return s->lines;
}

const char *ct_state_record_damage(const struct ct_state *s) {
  return s->record_damage[0] ? s->record_damage : NULL;
}

uint64_t ct_state_end_ts(const struct ct_state *s) {
  if (s->has_end && s->end_ts)
    return s->end_ts;
  return s->last_ts;
}

static int not_destroyed(void *ctx, const void *v) {
  (void)ctx;
  return ((const struct ct_coro *)v)->state != CT_CS_DESTROYED;
}

static int early_alive(void *ctx, const void *v) {
  const struct ct_coro *c =
      ct_map_get(&((struct ct_state *)ctx)->coros, ((const struct ct_early *)v)->id, 0);
  return c && (c->pending_wake_ts || c->wake_before_ts || c->has_cand);
}

void ct_state_keep_tombstones(struct ct_state *s, size_t n) {
  s->tombstones = n;
  /* The size it has when tombstones are first purged: purged again and again,
   * it stays there instead of growing back through every size each time. */
  s->coros.min_cap = 2 * n;
}

/* c's early-wake details, made when absent (NULL: out of memory). */
static struct ct_early *early_of(struct ct_state *s, const struct ct_coro *c) {
  int fresh;
  struct ct_early *e = ct_map_put(&s->early, c->id, 0, &fresh);
  if (e)
    e->id = c->id;
  return e;
}

/* coro_of's slow path: the map, the cache refilled. */
static __attribute__((noinline)) struct ct_coro *coro_lookup(struct ct_state *s, uint64_t id) {
  struct ct_coro *c = ct_map_get(&s->coros, id, 0);
  if (!c) {
    s->last_coro = NULL; /* the filter and the put may move the entries */
    if (s->coros.n >= s->tombstones && s->destroyed_alive * 2 > s->coros.n &&
        ct_map_filter(&s->coros, not_destroyed, NULL) == 0) {
      s->destroyed_alive = 0;
      ct_map_filter(&s->early, early_alive, s); /* on failure, kept: only memory */
    }
    int fresh;
    c = ct_map_put(&s->coros, id, 0, &fresh);
    if (c && fresh) {
      c->id = id;
      s->coroutines++;
    }
  }
  s->last_coro = c;
  s->last_coro_id = id;
  return c;
}

/* The coroutine's entry. Destroyed ones stay as tombstones (to catch events
 * after destroy) until they outnumber the living: then they are dropped, which
 * keeps memory proportional to the coroutines alive. */
static inline struct ct_coro *coro_of(struct ct_state *s, uint64_t id) {
  if (s->last_coro && s->last_coro_id == id)
    return s->last_coro;
  return coro_lookup(s, id);
}

struct ct_coro *ct_state_coro(struct ct_state *s, uint64_t id) {
  return coro_of(s, id);
}

/* state.h: a new coroutine with the same id (its memory reused). Same
 * entry, fresh state; counted as a coroutine of its own. */
void ct_state_new_incarnation(struct ct_state *s, struct ct_coro *c) {
  uint64_t id = c->id;
  uint32_t inc = c->incarnation + 1;
  memset(c, 0, sizeof *c);
  c->id = id;
  c->incarnation = inc;
  s->destroyed_alive--;
  s->reused_ids++;
  s->coroutines++;
}

/* A violation, unless events were lost right before it (evidence_lost) or
 * anywhere since the coroutine's first gap (struct ct_coro's gapped: where a
 * gap shows is not where its events were lost): the missing wake, suspend or
 * create may be among them, so it is only counted as not judged. */
static void violation(struct ct_state *s, int which, int evidence_lost, struct ct_coro *c,
                      uint64_t lineno, const struct ct_event *ev, enum ct_ev_kind kind,
                      uint64_t other_ts, uint32_t other_tid) {
  struct ct_viol *v = &s->viol[which];
  if (evidence_lost || c->gapped) {
    v->not_judged++;
    return;
  }
  v->count++;
  if (!(c->viol_seen & (1u << which))) {
    c->viol_seen |= (uint8_t)(1u << which);
    v->coros++;
  }
  if (v->n == CT_VIOL_EXAMPLES)
    return;
  v->ex[v->n].id = c->id;
  v->ex[v->n].ts = ev->ts;
  v->ex[v->n].line = lineno;
  v->ex[v->n].tid = (uint32_t)ev->tid;
  v->ex[v->n].other_ts = other_ts;
  v->ex[v->n].other_tid = other_tid;
  v->ex[v->n].kind = (uint8_t)kind;
  v->ex[v->n].incarnation = c->incarnation;
  v->n++;
}

/* Adds a long run of c (ns from c->run_ts on c->run_tid), ended by an
 * event of kind end_kind at end_site (0, 0 at the end of the trace), to the
 * blocker table blocks. Returns 0 or -ENOMEM. */
static int add_long_run(struct ct_map *blocks, const struct ct_coro *c, uint64_t ns,
                        enum ct_ev_kind end_kind, uint64_t end_site, int end_exit) {
  int fresh;
  struct ct_block *b = ct_map_put(blocks, c->run_from_site, c->pid, &fresh);
  if (!b || (!b->hist && !(b->hist = calloc(1, sizeof *b->hist))))
    return -ENOMEM;
  b->site = c->run_from_site;
  b->pid = c->pid;
  ct_hist_add(b->hist, ns);
  /* Insert into the worst few, longest first. */
  int i = CT_BLOCK_WORST;
  while (i > 0 && (b->worst[i - 1].id == 0 || b->worst[i - 1].ns < ns))
    i--;
  if (i == CT_BLOCK_WORST)
    return 0;
  memmove(&b->worst[i + 1], &b->worst[i], (CT_BLOCK_WORST - 1 - (size_t)i) * sizeof b->worst[0]);
  b->worst[i].id = c->id;
  b->worst[i].ns = ns;
  b->worst[i].ts = c->run_ts;
  b->worst[i].tid = c->run_tid;
  b->worst[i].at_end = !end_kind;
  b->worst[i].end_kind = (uint8_t)end_kind;
  b->worst[i].end_site = end_site;
  b->worst[i].end_exit = (uint8_t)end_exit;
  b->worst[i].incarnation = c->incarnation;
  b->worst[i].label = c->label;
  return 0;
}

/* A run of c ends at ts, with an event of kind end_kind at end_site: a
 * blocker if it lasted longer than the threshold. */
static int end_run(struct ct_state *s, struct ct_coro *c, uint64_t ts, enum ct_ev_kind end_kind,
                   uint64_t end_site, int end_exit) {
  if (ts < c->run_ts || ts - c->run_ts <= s->blocker_ns)
    return 0;
  if (!c->long_run) {
    c->long_run = 1;
    s->block_coros++;
  }
  return add_long_run(&s->blocks, c, ts - c->run_ts, end_kind, end_site, end_exit);
}

void ct_state_blocks_free(struct ct_map *blocks) {
  for (size_t i = 0; i < blocks->n; i++)
    free(((struct ct_block *)ct_map_at(blocks, i))->hist);
  ct_map_free(blocks);
}

/* state.h: a copy of s->blocks (histograms too), then the runs still going
 * closed at the end into the copy, as end_run would. */
int ct_state_blocks_at_end(const struct ct_state *s, struct ct_map *blocks, uint64_t *coros) {
  ct_map_init(blocks, sizeof(struct ct_block));
  *coros = s->block_coros;
  for (size_t i = 0; i < s->blocks.n; i++) {
    const struct ct_block *from = ct_map_at(&s->blocks, i);
    int fresh;
    struct ct_block *to = ct_map_put(blocks, from->site, from->pid, &fresh);
    if (!to)
      return -ENOMEM;
    *to = *from;
    to->hist = NULL; /* an entry whose histogram could not be made has none */
    if (from->hist && !(to->hist = malloc(sizeof *to->hist)))
      return -ENOMEM;
    if (from->hist)
      memcpy(to->hist, from->hist, sizeof *to->hist);
  }
  uint64_t end = ct_state_end_ts(s);
  for (size_t i = 0; i < s->coros.n; i++) {
    const struct ct_coro *c = ct_map_at(&s->coros, i);
    if (c->state != CT_CS_RUNNING || !c->has_kind || end < c->run_ts ||
        end - c->run_ts <= s->blocker_ns)
      continue;
    *coros += !c->long_run;
    int rc = add_long_run(blocks, c, end - c->run_ts, CT_EV_V1, 0, 0);
    if (rc)
      return rc;
  }
  return 0;
}

/* Events from ts lo to hi, count of them, all of thread tid (0: none
 * named) and in one bucket (ts >> 34): the timeline's first and last, the
 * threads, the activity buckets. Inlined (read speed: a call per line saved). */
static inline __attribute__((always_inline)) int
note_activity(struct ct_state *s, uint64_t lo, uint64_t hi, uint64_t tid, uint64_t count) {
  int fresh;
  if (!s->first_ts || lo < s->first_ts)
    s->first_ts = lo;
  if (hi > s->last_ts)
    s->last_ts = hi;
  if (tid && s->recent_tids[tid % CT_RECENT_TIDS] != tid) {
    if (!ct_map_put(&s->tids, tid, 0, &fresh))
      return -ENOMEM;
    s->recent_tids[tid % CT_RECENT_TIDS] = tid;
  }
  /* Lines in a row mostly fall in one bucket: the last one's. */
  struct ct_bucket *b = s->last_bucket;
  uint64_t key = lo >> 34;
  if (!b || s->last_bucket_key != key) {
    if (!(b = ct_map_get(&s->buckets, key, 0)) && s->buckets.n < MAX_BUCKETS) {
      if (!(b = ct_map_put(&s->buckets, key, 0, &fresh)))
        return -ENOMEM;
      b->lo = b->hi = lo;
    }
    s->last_bucket = b;
    s->last_bucket_key = key;
  }
  if (b) {
    b->n += count;
    if (lo < b->lo)
      b->lo = lo;
    if (hi > b->hi)
      b->hi = hi;
  }
  return 0;
}

/* Without a module map, suspend addresses spread over about one per
 * coroutine are not code: drop the site table (and stop keeping one). */
static void drop_sites(struct ct_state *s) {
  free_site_hists(&s->sites);
  s->sites_dropped = s->sites.n;
  s->last_site = NULL;
  ct_map_free(&s->sites);
  ct_map_init(&s->sites, sizeof(struct ct_site));
  s->sites_not_code = 1;
}

/* The entry of a suspension site, NULL if none (put: made, NULL only
 * without memory; *fresh then says whether it is new). Suspends and resumes
 * mostly come back to one site: the last one is kept. */
static struct ct_site *site_of(struct ct_state *s, uint64_t site, uint32_t pid, int put,
                               int *fresh) {
  struct ct_site *st = s->last_site;
  *fresh = 0;
  if (st && st->site == site && st->pid == pid)
    return st;
  st = put ? ct_map_put(&s->sites, site, pid, fresh) : ct_map_get(&s->sites, site, pid);
  if (st) /* a put may move the entries: the cache holds only this one */
    s->last_site = st;
  return st;
}

/* (on_suspend, on_resume: inlined into on_event, read speed.) */
static inline __attribute__((always_inline)) int on_suspend(struct ct_state *s, struct ct_coro *c,
                                                            const struct ct_event *ev) {
  uint64_t site = ev->site;
  int fresh, exit = ev->wait == CTP_WAIT_EXIT;
  int same_obj = c->wait == ev->wait && c->obj == ev->obj; /* its last wait's: known already */
  if (c->state == CT_CS_RUNNING && c->has_kind && end_run(s, c, ev->ts, CT_EV_SUSPEND, site, exit))
    return -ENOMEM;
  /* An early wake (while it ran, or absorbed after its yield) now waits for
   * a resume that honours it; none after an exit, which waits for nothing. */
  c->wake_before_ts = exit ? 0 : c->pending_wake_ts;
  if (c->wake_before_ts) {
    struct ct_early *e = early_of(s, c);
    if (!e)
      return -ENOMEM;
    e->before = e->pend;
  }
  c->pending_wake_ts = 0;
  c->pend_absorbed = 0;
  c->has_cand = 0;
  c->state = CT_CS_SUSPENDED;
  c->returned = (uint8_t)exit;
  c->susp_ts = ev->ts;
  c->susp_site = site;
  c->wait = exit ? CTP_WAIT_NONE : ev->wait;
  c->obj = ev->obj;
  c->woken = 0;
  c->susp_wakes = 0;
  c->woke_ts = 0;
  if (exit) { /* not a suspension site: nothing resumes from it */
    s->returned++;
    return 0;
  }
  if (!s->sites_not_code) {
    struct ct_site *st = site_of(s, site, c->pid, 1, &fresh);
    if (!st)
      return -ENOMEM;
    st->site = site;
    st->pid = c->pid;
    st->suspensions++;
    if (fresh && !s->modules && s->sites.n > NOT_CODE_SITES && s->sites.n * 2 > s->coroutines)
      drop_sites(s);
  }
  if (ev->wait == CTP_WAIT_PTR && !same_obj) { /* names a heap object: its first wait */
    struct ct_wakers *w = ct_map_put(&s->objs, ev->obj, CTP_WAIT_PTR, &fresh);
    if (!w)
      return -ENOMEM;
    if (fresh) {
      w->first_site = site;
      w->first_pid = c->pid;
    }
  }
  if (ev->wait == CTP_WAIT_FD) {
    struct ct_fduse *f = ct_map_put(&s->fds, ev->obj, c->pid, &fresh);
    if (!f)
      return -ENOMEM;
    if (ev->ts >= f->ts) {
      f->ts = ev->ts;
      f->id = c->id;
    }
  }
  return 0;
}

static inline __attribute__((always_inline)) int
on_resume(struct ct_state *s, struct ct_coro *c, uint64_t lineno, const struct ct_event *ev) {
  s->resumes++;
  if (!ev->v1 && ct_sched_resume(s, c, ev->ts, (uint32_t)ev->tid))
    return -ENOMEM;
  /* A wake from another coroutine that came while c was already runnable
   * (after a yield that queued it again, or before its first run) is
   * absorbed by this resume: kept as an early wake of the run it starts. */
  int absorbs = c->has_cand &&
                ((c->state == CT_CS_SUSPENDED && !c->returned && !c->wait && c->susp_wakes >= 2) ||
                 (c->state == CT_CS_CREATED && c->susp_wakes >= 1));
  if (c->state == CT_CS_RUNNING) {
    /* v1 SDKs write a resume more than once per run: only ours is checked. */
    if (!ev->v1)
      violation(s, CT_V_RESUME_RUNNING, c->gap_since_resume, c, lineno, ev, CT_EV_RESUME, c->run_ts,
                c->run_tid);
  } else {
    if (c->state == CT_CS_SUSPENDED && c->returned) {
      violation(s, CT_V_AFTER_EXIT, c->gap_since_resume, c, lineno, ev, CT_EV_RESUME, c->susp_ts,
                0);
    } else if (c->state == CT_CS_SUSPENDED) {
      int fresh;
      struct ct_site *st = s->sites_not_code ? NULL : site_of(s, c->susp_site, c->pid, 0, &fresh);
      if (st && ev->ts >= c->susp_ts) {
        /* Waited until the wake, then runnable (clocks of two threads may disagree a little). */
        uint64_t woke = !c->woken                 ? ev->ts
                        : c->woke_ts < c->susp_ts ? c->susp_ts
                        : c->woke_ts > ev->ts     ? ev->ts
                                                  : c->woke_ts;
        if ((!st->hist && !(st->hist = calloc(1, sizeof *st->hist))) ||
            (c->woken && !st->runnable && !(st->runnable = calloc(1, sizeof *st->runnable))))
          return -ENOMEM;
        ct_hist_add(st->hist, woke - c->susp_ts);
        if (c->woken)
          ct_hist_add(st->runnable, ev->ts - woke);
      }
      /* Not only a gap after the suspend hides the wake: a waker that claimed
       * its event index before the suspend did, and lost it, leaves a gap
       * before the suspend. So any gap since the last resume counts. */
      if (!ev->v1 && c->saw_wake && !c->woken && !c->wake_before_ts)
        violation(s, CT_V_RESUME_NO_WAKE, c->gap_since_resume, c, lineno, ev, CT_EV_RESUME,
                  c->susp_ts, 0);
      if (c->woken || c->wake_before_ts) {
        if (c->woken_site != c->susp_site)
          c->woken_here = 0;
        c->woken_site = c->susp_site;
        c->woken_here++;
      }
    }
    c->run_from_site = c->state == CT_CS_SUSPENDED ? c->susp_site : c->create_site;
    c->run_ts = ev->ts;
    c->run_tid = (uint32_t)ev->tid;
  }
  if (c->last_resume_tid && ev->tid != c->last_resume_tid)
    s->migrations++;
  c->last_resume_tid = (uint32_t)ev->tid;
  c->pending_wake_ts = c->wake_before_ts = 0;
  c->pend_absorbed = 0;
  if (absorbs) {
    struct ct_early *e = early_of(s, c);
    if (!e)
      return -ENOMEM;
    e->pend = e->cand;
    e->pend.absorbed = 1;
    e->pend.yield_ts = c->state == CT_CS_SUSPENDED ? c->susp_ts : 0;
    e->pend.resume_ts = ev->ts;
    c->pending_wake_ts = e->cand.ts;
    c->pend_absorbed = 1;
  }
  c->state = CT_CS_RUNNING;
  c->returned = 0;
  c->gap_since_resume = 0;
  c->has_cand = 0;
  c->susp_wakes = 0;
  return 0;
}

static int on_wake(struct ct_state *s, struct ct_coro *c, const struct ct_event *ev) {
  uint64_t site = ev->site;
  s->any_wake = 1;
  c->saw_wake = 1;
  if (c->susp_wakes < UINT8_MAX)
    c->susp_wakes++;
  /* A wake of a new coroutine at the line that created it is its launch
   * (Boost.Fiber schedules a new fiber from its creator): not a candidate. */
  int launch = c->state == CT_CS_CREATED && site && site == c->create_site;
  if ((c->state == CT_CS_SUSPENDED || c->state == CT_CS_CREATED) && !launch && ev->from &&
      ev->from != c->id) {
    struct ct_early *e = early_of(s, c);
    if (!e)
      return -ENOMEM;
    e->cand = (struct ct_wake_info){.ts = ev->ts, .from = ev->from, .site = site};
    c->has_cand = 1;
  }
  if (c->state == CT_CS_SUSPENDED && !c->woken) {
    c->woken = 1;
    c->woke_ts = ev->ts;
    c->woke_from = ev->from;
    c->woke_site = site;
    c->woke_tid = (uint32_t)ev->tid;
    ct_sched_wake(s, c);
    if (c->wait) { /* remember who serves this wait object's waiters */
      int fresh;
      struct ct_wakers *w = ct_map_put(&s->objs, c->obj, c->wait, &fresh);
      if (!w)
        return -ENOMEM;
      w->last_ts = ev->ts;
      w->last_from = ev->from;
      w->last_site = site;
      w->last_tid = (uint32_t)ev->tid;
      const struct ct_coro *wc = ev->from ? ct_map_get(&s->coros, ev->from, 0) : NULL;
      if (wc && wc->create_site && !w->waker_site)
        w->waker_site = wc->create_site;
      else if (ev->from && (!wc || wc->create_site != w->waker_site))
        w->waker_mixed = 1;
      if (!ev->from) {
        w->by_thread = 1;
        return 0;
      }
      for (unsigned i = 0; i < w->n; i++)
        if (w->id[i] == ev->from) {
          w->times[i]++;
          return 0;
        }
      if (w->n < CT_WAKERS) {
        w->id[w->n] = ev->from;
        w->times[w->n++] = 1;
      } else {
        w->overflow = 1;
      }
    }
  } else if (c->state == CT_CS_RUNNING && (!c->pending_wake_ts || c->pend_absorbed)) {
    struct ct_early *e = early_of(s, c); /* a wake while it runs beats an absorbed one */
    if (!e)
      return -ENOMEM;
    e->pend = (struct ct_wake_info){.ts = ev->ts, .from = ev->from, .site = site};
    c->pending_wake_ts = ev->ts;
    c->pend_absorbed = 0;
  }
  /* A wake of a coroutine already runnable (created, or woken) coalesces. */
  return 0;
}

/* An event whose activity the caller noted (note_activity). Inlined into
 * both callers (read speed: ct_state_run's loop saves a call per event). */
static inline __attribute__((always_inline)) int on_event(struct ct_state *s, uint64_t lineno,
                                                          const struct ct_event *ev) {
  int rc = 0;
  s->events++;
  struct ct_coro *c = coro_of(s, ev->probe_id);
  if (!c)
    return -ENOMEM;
  enum ct_ev_kind kind = ev->kind;
  if (c->state == CT_CS_DESTROYED && kind == CT_EV_CREATE)
    ct_state_new_incarnation(s, c);
  if (!c->pid)
    c->pid = (uint32_t)s->target_pid;
  if (!ev->v1)
    s->any_kind = c->has_kind = 1;
  uint64_t site = ev->site;
  if (ev->has_ev) {
    s->any_ev = 1;
    /* Lines of a coroutine come in ev order: a jump is events lost. */
    if (ev->ev >= c->next_ev) {
      uint64_t missing = ev->ev - c->next_ev;
      if (missing) {
        c->lost += missing;
        s->gap_lost += missing;
        c->gap_since_resume = c->gap_since_destroy = 1;
        s->gap_coros += !c->gapped;
        c->gapped = 1;
      }
      c->next_ev = ev->ev + 1;
    }
  }
  if (c->state == CT_CS_DESTROYED) {
    violation(s, CT_V_AFTER_DESTROY, c->gap_since_destroy, c, lineno, ev, kind, c->destroy_ts, 0);
    c->last_ts = ev->ts;
    return 0;
  }
  switch (kind) {
  case CT_EV_CREATE:
    c->state = CT_CS_CREATED;
    c->created = 1;
    c->create_site = site;
    c->susp_wakes = 0;
    c->has_cand = 0;
    if (!c->birth_ts)
      c->birth_ts = ev->ts;
    break;
  case CT_EV_SUSPEND:
    rc = on_suspend(s, c, ev);
    break;
  case CT_EV_RESUME:
    rc = on_resume(s, c, lineno, ev);
    break;
  case CT_EV_WAKE:
    rc = on_wake(s, c, ev);
    break;
  case CT_EV_DESTROY:
    if ((c->state == CT_CS_RUNNING && end_run(s, c, ev->ts, CT_EV_DESTROY, site, 0)) ||
        (c->state == CT_CS_SUSPENDED && c->has_kind &&
         ct_sched_destroy(s, c, ev->ts, (uint32_t)ev->tid, site)))
      return -ENOMEM;
    c->state = CT_CS_DESTROYED;
    c->gap_since_destroy = 0;
    c->destroy_ts = ev->ts;
    s->destroyed_alive++;
    break;
  case CT_EV_V1:
    break;
  }
  c->last_ts = ev->ts;
  return rc;
}

/* ct_state_prefetch's work for a coroutine other than the last line's (out
 * of line: the common case, the same coroutine, saves no registers). */
static __attribute__((noinline)) void prefetch_coro(struct ct_state *s, uint64_t id) {
  unsigned i = s->npeeked++ % CT_PREFETCH_LAG;
  if (s->peeked[i])
    ct_map_prefetch_entry(&s->coros, s->peeked[i], 0);
  s->peeked[i] = id;
  ct_map_prefetch(&s->coros, id, 0);
}

void ct_state_prefetch(struct ct_state *s, const struct ct_line *l) {
  /* The coroutine of the line before: in the cache already (coro_of's). */
  if (l->type == CT_LINE_EVENT && l->probe_id != s->peeked[(s->npeeked - 1) % CT_PREFETCH_LAG])
    prefetch_coro(s, l->probe_id);
}

/* state.h: a line that is not judged, counted and its number kept. */
void ct_state_bad_line(struct ct_state *s, uint64_t lineno, enum ct_line_err err) {
  s->bad[err]++;
  if (s->nbad_kept < CT_BAD_LINES_KEPT)
    s->bad_lines[s->nbad_kept++] = lineno;
}

/* Our engine writes meta before the target starts: an event with an
 * earlier ts is torn (a line not judged); without a meta line (mono_ns 0),
 * none is. */
static inline int before_meta(const struct ct_state *s, const struct ct_event *ev) {
  return ev->ts + 1000000000ull < s->meta_mono_ns;
}

/* The thread note_activity takes for ev: 0 when it names none (an event
 * line that names one names one above 0: ct_parse_line's torn rule). */
static inline uint64_t tid_of(const struct ct_event *ev) {
  return ev->has_tid ? ev->tid : 0;
}

/* The activity of a run (n >= 1 events), before its events are taken
 * (nothing else reads it while lines come): at once when the run is one
 * stretch (one thread, one bucket, nothing before meta: the usual), else
 * stretch by stretch. */
static int note_run(struct ct_state *s, const struct ct_event *ev, size_t n) {
  uint64_t lo = ev[0].ts, hi = lo, tid = tid_of(&ev[0]), key = lo >> 34, apart = 0;
  for (size_t j = 1; j < n; j++) { /* (no branch: a run is mostly one stretch) */
    lo = ev[j].ts < lo ? ev[j].ts : lo;
    hi = ev[j].ts > hi ? ev[j].ts : hi;
    apart |= (tid_of(&ev[j]) ^ tid) | ((ev[j].ts >> 34) ^ key);
  }
  if (!apart && lo + 1000000000ull >= s->meta_mono_ns) /* before_meta for none */
    return note_activity(s, lo, hi, tid, n);
  for (size_t i = 0, j; i < n; i = j) {
    lo = hi = ev[i].ts;
    tid = tid_of(&ev[i]);
    key = lo >> 34;
    if (before_meta(s, &ev[i])) {
      j = i + 1;
      continue;
    }
    for (j = i + 1;
         j < n && tid_of(&ev[j]) == tid && ev[j].ts >> 34 == key && !before_meta(s, &ev[j]); j++) {
      lo = ev[j].ts < lo ? ev[j].ts : lo;
      hi = ev[j].ts > hi ? ev[j].ts : hi;
    }
    if (note_activity(s, lo, hi, tid, j - i))
      return -ENOMEM;
  }
  return 0;
}

int ct_state_run(struct ct_state *s, const struct ct_event *ev, size_t n) {
  if (!n)
    return 0;
  if (note_run(s, ev, n))
    return -ENOMEM;
  s->lines += n;
  for (size_t i = 0; i < n; i++) {
    int rc = 0;
    if (before_meta(s, &ev[i]))
      ct_state_bad_line(s, ev[i].line, CT_LINE_TORN);
    else if ((rc = on_event(s, ev[i].line, &ev[i])))
      return rc;
  }
  return 0;
}

int ct_state_line(struct ct_state *s, uint64_t lineno, enum ct_line_err err,
                  const struct ct_line *l) {
  if (err == CT_LINE_OK && l->type == CT_LINE_EVENT) {
    const struct ct_event *ev = &l->e;
    s->lines++;
    if (before_meta(s, ev)) {
      ct_state_bad_line(s, lineno, CT_LINE_TORN);
      return 0;
    }
    if (note_activity(s, ev->ts, ev->ts, tid_of(ev), 1))
      return -ENOMEM;
    return on_event(s, lineno, ev);
  }
  s->lines++;
  if (err != CT_LINE_OK) {
    ct_state_bad_line(s, lineno, err);
    return 0;
  }
  return ct_state_record(s, lineno, l);
}
