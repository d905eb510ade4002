/* findings_stuck.c - coroutines suspended at the end: with no wake since
 * (lost wakeups, the wake-before-suspend race, wait-for cycles: deadlocks), or
 * woken and never resumed (lost schedules), each judged by how the program ran
 * on and what events were lost. Each coroutine is in one finding, its most
 * specific; one also never destroyed says so instead of being a leak too. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/findings.h"
#include "analysis/findings_stuck.h"

#define MAX_CYCLES 16

static const char *const cat_kinds[CAT_N] = {
    "lost_wakeup",     "wake_before_suspend", "lost_wakeup",   "wake_before_suspend",
    "lost_wakeup",     "lost_wakeup",         "lost_wakeup",   "deadlock",
    "lost_completion", "lost_schedule",       "lost_schedule", "lost_schedule"};

/* findings.h: reported is a cat + 1 (mark_primary), 0 for none. */
const char *ct_primary_kind(unsigned reported) {
  return reported > 0 && reported <= CAT_N ? cat_kinds[reported - 1] : NULL;
}

/* findings.h: the report's mark of c's incarnation. */
unsigned ct_mark_of(const struct ct_report *r, const struct ct_coro *c) {
  const uint8_t *m = ct_map_get(&r->marks, c->id, c->incarnation);
  return m ? *m : 0;
}

/* Marks cycles in the stuck coroutines' waits_for graph (out-degree <= 1). */
static void find_cycles(struct stuck *sk, size_t n, struct ct_map *idx) {
  for (size_t i = 0; i < n; i++) {
    size_t k = i;
    /* Walk until a node seen before; if it was seen on this walk, a cycle. */
    while (sk[k].color == 0) {
      sk[k].color = 1;
      uint64_t *next = sk[k].waits_for ? ct_map_get(idx, sk[k].waits_for, 0) : NULL;
      if (!next)
        break;
      k = (size_t)*next;
    }
    if (sk[k].color == 1 && sk[k].waits_for) {
      size_t m = k;
      do {
        sk[m].cat = CAT_DEADLOCK;
        m = (size_t) * (uint64_t *)ct_map_get(idx, sk[m].waits_for, 0);
      } while (m != k);
    }
    for (k = i; sk[k].color == 1;) { /* close this walk */
      sk[k].color = 2;
      uint64_t *next = sk[k].waits_for ? ct_map_get(idx, sk[k].waits_for, 0) : NULL;
      if (!next)
        break;
      k = (size_t)*next;
    }
  }
}

/* Suspended at the end with no wake since (c may be NULL: an id not in the state). */
static int is_stuck(const struct ct_coro *c) {
  return c && c->state == CT_CS_SUSPENDED && !c->woken && !c->returned;
}

/* Woken since its last suspend, never resumed: the scheduler lost it. */
static int is_unscheduled(const struct ct_state *st, const struct ct_coro *c) {
  return c->state == CT_CS_SUSPENDED && c->woken && !c->returned && c->has_kind && st->any_wake;
}

/* Who a waits on: the coroutine that has woken the waiters of a's wait
 * object most often, provided every past waker of that object is a coroutine
 * that is stuck itself; else 0 (a plain thread among the wakers, or more than
 * CT_WAKERS of them: someone else may still wake it). Not a coroutine blocked
 * in a join (wait 4), though: it waits for a to finish, and that cycle is a
 * lost wake with the joiner behind it (a worker that missed its notify, main
 * joining it), not a deadlock. With a join (a waits for a coroutine to
 * finish): that coroutine. *times: how often. */
static uint64_t waits_for(const struct ct_state *st, const struct ct_coro *a, uint64_t *times) {
  if (a->wait == CTP_WAIT_COROUTINE) { /* a join: the coroutine it waits for, by name */
    *times = 0;
    return a->obj != a->id ? a->obj : 0;
  }
  const struct ct_wakers *w = a->wait ? ct_map_get(&st->objs, a->obj, a->wait) : NULL;
  if (!w || !w->n || w->by_thread || w->overflow)
    return 0;
  uint64_t best = 0;
  *times = 0;
  for (unsigned i = 0; i < w->n; i++) {
    const struct ct_coro *k = ct_map_get(&st->coros, w->id[i], 0);
    if (w->id[i] == a->id || !is_stuck(k) || k->wait == CTP_WAIT_COROUTINE)
      return 0;
    if (w->times[i] > *times) {
      *times = w->times[i];
      best = w->id[i];
    }
  }
  return best;
}

/* Events of c lost after its last harvested one: the station's loss count
 * beyond the gaps seen in its ev sequence. */
static uint64_t tail_lost(const struct ct_coro *c) {
  return c->station_lost > c->lost ? c->station_lost - c->lost : 0;
}

/* Events were lost where the wake c lacks would be: since its last resume
 * (before or after its last suspend), or after its last event. */
static int wake_may_be_lost(const struct ct_coro *c) {
  return c->gap_since_resume || tail_lost(c);
}

/* A _LOST category: the events lost may hold what clears the coroutine. */
static int uncertain(enum cat cat) {
  return cat == CAT_RAN_ON_LOST || cat == CAT_WAKE_BEFORE_LOST || cat == CAT_SCHED_LOST;
}

/* What an uncertain finding may have lost. */
static const char *lost_what(enum cat cat) {
  return cat == CAT_RAN_ON_LOST  ? "the missing wake"
         : cat == CAT_SCHED_LOST ? "its resume"
                                 : "a resume that took the early wake, or a later wake,";
}

/* Time from c's first wake since its suspend to the end. */
static uint64_t woke_left(const struct ct_report *r, const struct ct_coro *c) {
  return r->end_ts > c->woke_ts ? r->end_ts - c->woke_ts : 0;
}

/* Per-coroutine evidence of a stuck coroutine; fills rc_->wake where a wake
 * is the evidence. */
static int stuck_evidence(const struct ct_report *r, const struct ct_state *st,
                          const struct ct_coro *c, enum cat cat, struct ct_rcoro *rc_) {
  char obj[336], t1[32], t2[32], t3[32], t4[32], d[32], ex[80], who[512];
  char ev[CT_COROEV_MAX], *buf = ev;
  size_t n = sizeof ev;
  uint64_t left = r->end_ts > c->susp_ts ? r->end_ts - c->susp_ts : 0;
  ct_fmt_obj(st, c, obj, sizeof obj);
  ct_describe_exit(r, ex, sizeof ex);
  size_t o = 0;
  struct ct_rwake tmp = {0}, *w = &tmp;
  if (cat == CAT_WAKE_BEFORE || cat == CAT_WAKE_BEFORE_LOST || cat >= CAT_SCHED) {
    if (!(rc_->wake = malloc(sizeof *rc_->wake)))
      return -ENOMEM;
    w = rc_->wake;
  }
  if (cat == CAT_WAKE_BEFORE || cat == CAT_WAKE_BEFORE_LOST) {
    const struct ct_early *e = ct_map_get(&st->early, c->id, 0);
    const struct ct_wake_info b = e ? e->before : (struct ct_wake_info){0};
    *w = (struct ct_rwake){.from = b.from,
                           .ts = c->wake_before_ts,
                           .absorbed = b.absorbed,
                           .yield_ts = b.yield_ts,
                           .resume_ts = b.resume_ts,
                           .site = {.site = b.site}};
  } else if (cat >= CAT_SCHED) {
    *w = (struct ct_rwake){
        .from = c->woke_from, .ts = c->woke_ts, .tid = c->woke_tid, .site = {.site = c->woke_site}};
  }
  if (rc_->wake)
    ct_fmt_waker(st, c, w, who, sizeof who);
  uint64_t since_wake = r->end_ts > w->ts ? r->end_ts - w->ts : 0;
  switch (cat == CAT_RAN_ON_LOST        ? CAT_RAN_ON
          : cat == CAT_WAKE_BEFORE_LOST ? CAT_WAKE_BEFORE
          : cat == CAT_SCHED_LOST       ? CAT_SCHED
                                        : cat) {
  case CAT_SCHED:
  case CAT_SCHED_END:
    o = (size_t)snprintf(buf, n, "parked on %s at %s, woken at %s by %s, never resumed: ", obj,
                         ct_at(r, c->susp_ts, t1, sizeof t1), ct_at(r, w->ts, t2, sizeof t2), who);
    if (o < n && cat == CAT_SCHED_END)
      o += (size_t)snprintf(buf + o, n - o, "%s %s later, while it waited to run", ex,
                            ct_fmt_ns(since_wake, d, sizeof d));
    else if (o < n)
      o += (size_t)snprintf(buf + o, n - o,
                            "the program ran on for %s and never ran it (a lost "
                            "schedule: dropped from the run queue?)",
                            ct_fmt_ns(since_wake, d, sizeof d));
    break;
  case CAT_RAN_ON:
    o = (size_t)snprintf(buf, n, "parked on %s at %s; the program ran on for %s and never woke it",
                         obj, ct_at(r, c->susp_ts, t1, sizeof t1), ct_fmt_ns(left, d, sizeof d));
    break;
  case CAT_WAKE_BEFORE:
    if (w->absorbed) {
      char since[48] = "before its first run"; /* no yield before the wake: not run yet */
      if (w->yield_ts)
        snprintf(since, sizeof since, "after its yield at %s",
                 ct_at(r, w->yield_ts, t2, sizeof t2));
      o = (size_t)snprintf(
          buf, n,
          "woken at %s by %s while already runnable %s; "
          "its resume at %s absorbed that wake; it parked on %s at %s, %s after "
          "the wake; no wake since",
          ct_at(r, w->ts, t1, sizeof t1), who, since, ct_at(r, w->resume_ts, t3, sizeof t3), obj,
          ct_at(r, c->susp_ts, t4, sizeof t4), ct_fmt_ns(c->susp_ts - w->ts, d, sizeof d));
    } else
      o = (size_t)snprintf(buf, n,
                           "woken at %s, %s before it parked on %s at %s, by %s while it "
                           "still ran; no wake since",
                           ct_at(r, w->ts, t1, sizeof t1),
                           ct_fmt_ns(c->susp_ts - w->ts, d, sizeof d), obj,
                           ct_at(r, c->susp_ts, t2, sizeof t2), who);
    break;
  case CAT_KILLED:
    o = (size_t)snprintf(buf, n, "parked on %s %s before the end: %s while it waited", obj,
                         ct_fmt_ns(left, d, sizeof d), ex);
    break;
  case CAT_EXIT:
    o = (size_t)snprintf(buf, n, "parked on %s %s before the end; %s without waking it", obj,
                         ct_fmt_ns(left, d, sizeof d), ex);
    break;
  case CAT_DROPPED:
    o = (size_t)snprintf(buf, n,
                         "started on %s at %s; destroyed without running at %s, never "
                         "completed; %s %s later",
                         obj, ct_at(r, c->susp_ts, t1, sizeof t1),
                         ct_at(r, c->woke_ts, t2, sizeof t2), ex,
                         ct_fmt_ns(woke_left(r, c), d, sizeof d));
    break;
  case CAT_WEAK:
    o = (size_t)snprintf(buf, n, "last event a suspend at %s; the trace went on for %s",
                         ct_at(r, c->susp_ts, t1, sizeof t1), ct_fmt_ns(left, d, sizeof d));
    break;
  default:
    break;
  }
  const struct ct_coro *joined =
      c->wait == CTP_WAIT_COROUTINE ? ct_map_get(&st->coros, c->obj, 0) : NULL;
  if (o < n && joined && (joined->returned || joined->state == CT_CS_DESTROYED))
    o += (size_t)snprintf(buf + o, n - o,
                          "; coroutine %" PRIu64 " finished (%s) without anyone waking it: the "
                          "join's wake was lost",
                          c->obj, joined->returned ? "returned" : "destroyed");
  uint64_t reuser = ct_fd_reused_by(st, c);
  if (o < n && reuser)
    o += (size_t)snprintf(buf + o, n - o,
                          "; fd %" PRId64 " was reused by coroutine %" PRIu64
                          " after it parked: closed under it",
                          (int64_t)c->obj, reuser);
  if (o < n && cat == CAT_RAN_ON && ct_likely_idle(st, c))
    o += (size_t)snprintf(buf + o, n - o,
                          "; parked at a site where it was woken %" PRIu64
                          " times in a row before: may simply be idle, e.g. an accept loop",
                          c->woken_here);
  if (o < n && uncertain(cat))
    o += (size_t)snprintf(buf + o, n - o, "; uncertain: %s; %s may be one of them",
                          c->gap_since_resume
                              ? "events were lost since its last resume (a gap in ev)"
                              : "events written after its last one were lost",
                          lost_what(cat));
  else if (o < n && (c->lost || c->station_lost))
    o += (size_t)snprintf(buf + o, n - o, " (less certain: %" PRIu64 " of its events were lost)",
                          c->lost > c->station_lost ? c->lost : c->station_lost);
  if (cat <= CAT_EXIT && (c->wait == CTP_WAIT_FD || c->wait == CTP_WAIT_PTR)) {
    long no = ct_obj_last_wake(r, st, c, rc_, buf, n, o); /* the root cause's last trace */
    if (no < 0)
      return -ENOMEM;
    o = (size_t)no;
  }
  if (o < n && ct_stuck_leak_worthy(r, c)) {
    rc_->never_destroyed = 1;
    snprintf(buf + o, n - o, "; also never destroyed (not repeated as a leak)");
  }
  return ct_keep_evidence(rc_, ev);
}

/* The never-destroyed among f's coroutines, cross-referenced; marks cs as
 * reported under cat in r->marks so the leak finding leaves them out (the
 * state is not written: the report is built from a const one). Returns 0 or
 * -ENOMEM. */
static int mark_primary(struct ct_report *r, struct ct_finding *f, const struct ct_coro **cs,
                        size_t m, enum cat cat) {
  uint64_t nd = 0;
  for (size_t i = 0; i < m; i++) {
    int fresh;
    uint8_t *mark = ct_map_put(&r->marks, cs[i]->id, cs[i]->incarnation, &fresh);
    if (!mark)
      return -ENOMEM;
    *mark = (uint8_t)(cat + 1);
    nd += (uint64_t)ct_stuck_leak_worthy(r, cs[i]);
  }
  if (!nd)
    return 0;
  ct_add_related(f, "leak", "also never destroyed", nd);
  ct_add_evidence(f, "%" PRIu64 " of them %s also never destroyed: %s, not repeated as a leak", nd,
                  nd == 1 ? "was" : "were",
                  nd == 1 ? "this is its root cause" : "this is their root cause");
  return 0;
}

/* The title and first evidence of stuck finding f of category cat: m
 * coroutines (not counting those behind them), the last of them min_left ns
 * before the end. */
static void stuck_title(const struct ct_report *r, const struct ct_state *st, struct ct_finding *f,
                        enum cat cat, size_t m, uint64_t min_left) {
  const char *s = m == 1 ? "" : "s";
  char d[32], ex[80];
  ct_describe_exit(r, ex, sizeof ex);
  ct_fmt_ns(min_left, d, sizeof d);
  switch (cat) {
  case CAT_RAN_ON:
    snprintf(f->title, sizeof f->title, "%zu coroutine%s suspended forever: nobody woke them", m,
             s);
    ct_add_evidence(f, "the program ran on for %s after the last of them parked; then %s", d, ex);
    break;
  case CAT_WAKE_BEFORE:
    snprintf(f->title, sizeof f->title,
             "%zu coroutine%s woken before they parked, never after: the lost-wakeup race", m, s);
    ct_add_evidence(f, "each was woken while still running (or while already runnable, after a "
                       "yield or before its first run, the wake absorbed by the resume that "
                       "followed), then "
                       "suspended and was never woken again: the wake it waits for came too early");
    break;
  case CAT_SCHED:
    snprintf(f->title, sizeof f->title,
             "%zu coroutine%s woken and never resumed: lost from the run queue", m, s);
    ct_add_evidence(f, "the program ran on for %s after the last of them was woken; then %s", d,
                    ex);
    break;
  case CAT_SCHED_LOST:
    snprintf(f->title, sizeof f->title,
             "%zu coroutine%s woken and apparently never resumed, but events were lost", m, s);
    break;
  case CAT_SCHED_END:
    snprintf(f->title, sizeof f->title,
             "%zu coroutine%s woken, waiting to run when the program ended", m, s);
    ct_add_evidence(f, "%s %s after the last of them was woken: %s", ex, d,
                    r->killed ? "caught by the exit, probably not a bug"
                              : "never run before the exit");
    break;
  case CAT_RAN_ON_LOST:
    snprintf(
        f->title, sizeof f->title,
        "%zu coroutine%s apparently never woken, but events were lost around their last suspend", m,
        s);
    break;
  case CAT_WAKE_BEFORE_LOST:
    snprintf(
        f->title, sizeof f->title,
        "%zu coroutine%s woken before they parked, apparently never after, but events were lost", m,
        s);
    break;
  case CAT_KILLED:
    snprintf(f->title, sizeof f->title, "%zu coroutine%s waiting when the program stopped", m, s);
    ct_add_evidence(f,
                    "%s; they parked shortly before (the last %s before the end): caught by the "
                    "exit, probably not a bug",
                    ex, d);
    break;
  case CAT_EXIT:
    snprintf(f->title, sizeof f->title, "%zu coroutine%s abandoned while suspended at exit", m, s);
    ct_add_evidence(f, "%s %s after the last of them parked, without waking them", ex, d);
    break;
  case CAT_DROPPED:
    snprintf(f->title, sizeof f->title,
             "%zu operation%s never completed: destroyed without running, %s awaiting %s never "
             "resumed",
             m, s, m == 1 ? "the coroutine" : "the coroutines", m == 1 ? "it" : "them");
    ct_add_evidence(f, "each was started at its site (for a co_await with the plain "
                       "use_awaitable: the awaiting coroutine), never completed, and was "
                       "destroyed without its handler running: its io_context stopped and "
                       "destroyed while it was pending, or its handler dropped; not cancelled, "
                       "and not parked like an idle loop");
    break;
  case CAT_WEAK:
    snprintf(f->title, sizeof f->title, "%zu coroutine%s apparently never resumed", m, s);
    ct_add_evidence(f,
                    "%s: only is_active is known, so a missing resume is all the evidence "
                    "(weaker than with wakes)",
                    st->any_kind ? "the trace records no wakes" : "a v1 trace (no kind, no wakes)");
    break;
  default:
    break;
  }
}

/* Each coroutine's evidence in stuck finding f (cs: its coroutines, those
 * behind others among them), then what several of them share: an fd reused
 * under them, wakes that went past them, likely idle (all of them: a
 * warning). 0 or -ENOMEM. */
static int stuck_coros_evidence(const struct ct_report *r, const struct ct_state *st,
                                const struct stuck *sk, struct ct_map *idx, struct ct_finding *f,
                                const struct ct_coro **cs, enum cat cat, size_t m) {
  const char *s = m == 1 ? "" : "s";
  size_t reused = 0, passed = 0, idle = 0;
  int rc;
  for (size_t i = 0; i < f->ncoros; i++) {
    const struct stuck *b = ct_stuck_of(sk, idx, cs[i]);
    if (b && b->behind) {
      if ((rc = ct_stuck_behind_evidence(r, st, sk, idx, b, &f->coros[i])))
        return rc;
      continue;
    }
    if ((rc = stuck_evidence(r, st, cs[i], cat, &f->coros[i])))
      return rc;
    reused += ct_fd_reused_by(st, cs[i]) != 0;
    passed += cat != CAT_DROPPED && ct_waiter_woken_since(st, cs[i]); /* a drop wakes them all */
    f->coros[i].likely_idle = cat == CAT_RAN_ON && ct_likely_idle(st, cs[i]);
    idle += (size_t)f->coros[i].likely_idle;
  }
  if (reused)
    ct_add_evidence(f,
                    "%zu of them wait on an fd number that another coroutine parked on later: "
                    "the fd was closed (and reused) under them",
                    reused);
  if (passed)
    ct_add_evidence(f,
                    "%zu of them wait on an object another of its waiters was woken on after they "
                    "parked: the wakes went past them (one waiter woken where all needed to be?)",
                    passed);
  /* Still unwoken, so still counted; but with nothing else in the finding it
   * is no error: a server waiting for clients looks just like this. */
  if (idle)
    ct_add_evidence(f,
                    "%zu of them (likely_idle) parked at a site where each was woken at least %d "
                    "times in a row before: may simply be idle, e.g. an accept loop",
                    idle, CT_IDLE_WAKES);
  if (idle && idle == f->ncoros) {
    f->sev = CT_SEV_WARNING;
    snprintf(f->title, sizeof f->title,
             "%zu coroutine%s never woken again where they were woken before: likely idle", m, s);
  }
  return 0;
}

/* The one finding of category cat over sk[0..n) (none if no coroutine is in
 * it): title, sites, per-coroutine evidence. 0 or -ENOMEM. */
static int stuck_finding(struct ct_report *r, const struct ct_state *st, struct stuck *sk, size_t n,
                         struct ct_map *idx, enum cat cat) {
  static const enum ct_sev sevs[CAT_N] = {
      CT_SEV_ERROR,   CT_SEV_ERROR, CT_SEV_WARNING, CT_SEV_WARNING, CT_SEV_INFO,    CT_SEV_WARNING,
      CT_SEV_WARNING, CT_SEV_ERROR, CT_SEV_ERROR,   CT_SEV_ERROR,   CT_SEV_WARNING, CT_SEV_WARNING};
  size_t m = 0;
  uint64_t min_left = UINT64_MAX;
  const struct ct_coro **cs = malloc((n ? n : 1) * sizeof *cs);
  if (!cs)
    return -ENOMEM;
  for (size_t i = 0; i < n; i++)
    if (sk[i].cat == cat && !sk[i].behind) {
      cs[m++] = sk[i].c;
      uint64_t from = cat >= CAT_SCHED ? sk[i].c->woke_ts : sk[i].c->susp_ts;
      uint64_t left = r->end_ts > from ? r->end_ts - from : 0;
      if (left < min_left)
        min_left = left;
    }
  int rc = 0;
  struct ct_finding *f;
  if (!m)
    goto out;
  size_t nheld, nb = ct_stuck_add_behind(sk, n, cs, m, cat, &nheld);
  rc = -ENOMEM;
  enum ct_sev sev = cat == CAT_SCHED_END && r->killed ? CT_SEV_INFO : sevs[cat];
  if (!(f = ct_new_finding(r, cat_kinds[cat], sev)) ||
      (rc = ct_group_coros(r, st, f, cs, m + nb, 0)))
    goto out;
  f->count = m + nb;
  stuck_title(r, st, f, cat, m, min_left);
  ct_stuck_title_behind(f, nb, nheld);
  if (uncertain(cat))
    ct_add_evidence(f,
                    "uncertain, so not an error: events were lost since their last resume, or "
                    "after their last event, and %s may be one of them",
                    lost_what(cat));
  if ((rc = mark_primary(r, f, cs, m + nb, cat)))
    goto out;
  if (nb && (rc = ct_stuck_behind_summary(r, st, sk, idx, f, nb)))
    goto out;
  if ((rc = stuck_coros_evidence(r, st, sk, idx, f, cs, cat, m)))
    goto out;
  rc = 0;
out:
  free(cs);
  return rc;
}

/* One finding per wait-for cycle, each edge with its evidence. */
static int deadlock_findings(struct ct_report *r, const struct ct_state *st, struct stuck *sk,
                             size_t n, struct ct_map *idx) {
  size_t cycles = 0;
  for (size_t i = 0; i < n && cycles < MAX_CYCLES; i++) {
    if (sk[i].cat != CAT_DEADLOCK || sk[i].color == 3)
      continue;
    size_t len = 0, k = i;
    do {
      sk[k].color = 3;
      sk[k].cycle = cycles + 1;
      len++;
      k = (size_t) * (uint64_t *)ct_map_get(idx, sk[k].waits_for, 0);
    } while (k != i);
    const struct ct_coro **cs = malloc(n * sizeof *cs);
    if (!cs)
      return -ENOMEM;
    k = i;
    for (size_t j = 0; j < len; j++, k = (size_t) * (uint64_t *)ct_map_get(idx, sk[k].waits_for, 0))
      cs[j] = sk[k].c;
    size_t nb = 0; /* and those that wait for one of them to finish */
    for (size_t j = 0; j < n; j++)
      if (sk[j].behind && sk[sk[j].root].cycle == cycles + 1)
        cs[len + nb++] = sk[j].c;
    struct ct_finding *f = ct_new_finding(r, "deadlock", CT_SEV_ERROR);
    int rc = f ? ct_group_coros(r, st, f, cs, len + nb, 0) : -ENOMEM;
    free(cs);
    if (rc)
      return rc;
    f->count = len + nb;
    snprintf(f->title, sizeof f->title, "deadlock: %zu coroutines wait on each other in a cycle",
             len);
    ct_stuck_title_behind(f, nb, 0); /* held ones have no deadlock root (mark_held) */
    if (nb && (rc = ct_stuck_behind_summary(r, st, sk, idx, f, nb)))
      return rc;
    const struct ct_coro **ms = malloc(f->ncoros * sizeof *ms);
    if (!ms)
      return -ENOMEM;
    for (size_t j = 0; j < f->ncoros; j++)
      ms[j] = ct_map_get(&st->coros, f->coros[j].probe_id, 0);
    rc = mark_primary(r, f, ms, f->ncoros, CAT_DEADLOCK);
    free(ms);
    if (rc)
      return rc;
    ct_add_evidence(f, "each waits on an object whose waiters were only ever woken by the next "
                       "one, or for the next one to finish (a join), which is stuck too");
    for (size_t j = 0; j < f->ncoros; j++) {
      struct ct_rcoro *rc_ = &f->coros[j];
      const struct ct_coro *c = ct_map_get(&st->coros, rc_->probe_id, 0);
      const struct stuck *b = ct_stuck_of(sk, idx, c);
      if (b && b->behind) {
        if ((rc = ct_stuck_behind_evidence(r, st, sk, idx, b, rc_)))
          return rc;
        continue;
      }
      uint64_t times = 0;
      char obj[336], t[32];
      rc_->waits_for = waits_for(st, c, &times);
      ct_fmt_obj(st, c, obj, sizeof obj);
      rc_->never_destroyed = ct_stuck_leak_worthy(r, c);
      char ev[CT_COROEV_MAX];
      if (c->wait == CTP_WAIT_COROUTINE)
        snprintf(ev, sizeof ev,
                 "waits since %s for coroutine %" PRIu64 " to finish, which is stuck too%s",
                 ct_at(r, c->susp_ts, t, sizeof t), rc_->waits_for,
                 rc_->never_destroyed ? "; also never destroyed (not repeated as a leak)" : "");
      else
        snprintf(ev, sizeof ev,
                 "waits on %s since %s; its waiters were woken only by coroutine %" PRIu64
                 " (%" PRIu64 " time%s), which is stuck too%s",
                 obj, ct_at(r, c->susp_ts, t, sizeof t), rc_->waits_for, times,
                 times == 1 ? "" : "s",
                 rc_->never_destroyed ? "; also never destroyed (not repeated as a leak)" : "");
      if (ct_keep_evidence(rc_, ev))
        return -ENOMEM;
    }
    cycles++;
  }
  return 0;
}

/* Marks c as accounted for without a finding (CT_MARK_QUIET). 0 or -ENOMEM. */
static int quiet(struct ct_report *r, const struct ct_coro *c) {
  int fresh;
  uint8_t *mark = ct_map_put(&r->marks, c->id, c->incarnation, &fresh);
  if (!mark)
    return -ENOMEM;
  *mark = CT_MARK_QUIET;
  return 0;
}

/* findings.h: judges every suspended coroutine once, cycles first, lost
 * completions first among the rest. */
int ct_stuck_findings(struct ct_report *r, const struct ct_state *st, uint64_t stuck_ns) {
  const struct ct_map *m = &st->coros;
  struct ct_map idx;
  ct_map_init(&idx, sizeof(uint64_t));
  size_t n = 0;
  int rc = -ENOMEM;
  struct stuck *sk = calloc(m->n ? m->n : 1, sizeof *sk);
  if (!sk)
    goto out;
  for (size_t i = 0; i < m->n; i++) {
    struct ct_coro *c = ct_map_at(m, i);
    int unscheduled = is_unscheduled(st, c);
    if (!unscheduled && !is_stuck(c))
      continue;
    uint64_t left = r->end_ts > c->susp_ts ? r->end_ts - c->susp_ts : 0;
    struct stuck *s = &sk[n];
    s->c = c;
    if (unscheduled && ct_dropped(st, c)) {
      if (ct_parked_idle(st, c)) { /* an idle loop's operation at a stop: accounted for */
        if (quiet(r, c))           /* rc: -ENOMEM */
          goto out;
        continue;
      }
      s->cat = CAT_DROPPED;
    } else if (unscheduled) {
      uint64_t since = woke_left(r, c);
      s->cat = since <= stuck_ns ? CAT_SCHED_END : wake_may_be_lost(c) ? CAT_SCHED_LOST : CAT_SCHED;
    } else if (!c->has_kind || !st->any_wake) {
      if (left <= stuck_ns) { /* a v1 suspend: only long ones say anything; counted */
        if (!r->t.left_short++ || left < r->t.left_short_min)
          r->t.left_short_min = left;
        r->t.left_short_max = left > r->t.left_short_max ? left : r->t.left_short_max;
        continue;
      }
      s->cat = CAT_WEAK;
    } else if (c->wake_before_ts) {
      s->cat = wake_may_be_lost(c) ? CAT_WAKE_BEFORE_LOST : CAT_WAKE_BEFORE;
    } else if (left > stuck_ns) {
      s->cat = wake_may_be_lost(c) ? CAT_RAN_ON_LOST : CAT_RAN_ON;
    } else {
      s->cat = r->killed ? CAT_KILLED : CAT_EXIT;
    }
    int fresh;
    uint64_t *ix = ct_map_put(&idx, c->id, 0, &fresh);
    if (!ix)
      goto out;
    *ix = n++;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t times;
    if (sk[i].cat != CAT_WEAK && sk[i].cat != CAT_DROPPED && sk[i].cat < CAT_SCHED)
      sk[i].waits_for = waits_for(st, sk[i].c, &times);
    if (sk[i].waits_for && !ct_map_get(&idx, sk[i].waits_for, 0))
      sk[i].waits_for = 0;
  }
  find_cycles(sk, n, &idx);
  ct_stuck_mark_behind(sk, n, &idx);
  if ((rc = ct_stuck_mark_held(st, sk, n)))
    goto out;
  if ((rc = deadlock_findings(r, st, sk, n, &idx)))
    goto out;
  if ((rc = stuck_finding(r, st, sk, n, &idx, CAT_DROPPED))) /* the root cause first */
    goto out;
  for (int cat = 0; cat < CAT_N; cat++)
    if (cat != CAT_DEADLOCK && cat != CAT_DROPPED &&
        (rc = stuck_finding(r, st, sk, n, &idx, (enum cat)cat)))
      goto out;
  rc = 0;
out:
  ct_map_free(&idx);
  free(sk);
  return rc;
}
