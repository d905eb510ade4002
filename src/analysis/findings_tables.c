/* findings_tables.c - the findings read off the state's tables as they are:
 * state-machine violations, leaks, blockers (with run-time percentiles), lost
 * events. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/findings.h"

/* Appends coroutine id to f (room for it allocated); its label if the state
 * still holds it (a destroyed one may have been purged). */
static struct ct_rcoro *add_coro(struct ct_finding *f, const struct ct_state *st, uint64_t id,
                                 int site_index) {
  struct ct_rcoro *rc_ = &f->coros[f->ncoros++];
  const struct ct_coro *c = ct_map_get(&st->coros, id, 0);
  rc_->probe_id = id;
  rc_->label = c ? ct_label_of(st, c) : NULL;
  rc_->site_index = site_index;
  return rc_;
}

const char *const ct_viol_kinds[CT_V_KINDS_] = {"resume_running", "resume_without_wake",
                                                "after_destroy"};

int ct_violation_findings(struct ct_report *r, const struct ct_state *st) {
  static const char *const evk[] = {"v1", "create", "suspend", "resume", "wake", "destroy"};
  for (int k = 0; k < CT_V_KINDS_; k++) {
    const struct ct_viol *v = &st->viol[k];
    if (!v->count) continue;
    struct ct_finding *f = ct_new_finding(r, ct_viol_kinds[k], CT_SEV_ERROR);
    if (!f || !(f->coros = calloc(v->n, sizeof *f->coros))) return -ENOMEM;
    f->count = v->count;
    const char *s = v->count == 1 ? "" : "s";
    if (k == CT_V_RESUME_RUNNING)
      snprintf(f->title, sizeof f->title,
               "%" PRIu64 " resume%s of a running coroutine: two threads in one coroutine", v->count, s);
    else if (k == CT_V_RESUME_NO_WAKE)
      snprintf(f->title, sizeof f->title,
               "%" PRIu64 " resume%s of a suspended coroutine nobody woke", v->count, s);
    else
      snprintf(f->title, sizeof f->title, "%" PRIu64 " event%s after destroy", v->count, s);
    if (v->count > v->n) ct_add_evidence(f, "the first %zu are listed", v->n);
    if (v->not_judged)
      ct_add_evidence(f, "%" PRIu64 " more not judged: evidence lost (they came right after lost "
                         "events, which may hold what they lack)", v->not_judged);
    for (size_t i = 0; i < v->n; i++) {
      struct ct_rcoro *rc_ = add_coro(f, st, v->ex[i].id, -1);
      char t1[32], t2[32];
      ct_at(r, v->ex[i].ts, t1, sizeof t1);
      ct_at(r, v->ex[i].other_ts, t2, sizeof t2);
      if (k == CT_V_RESUME_RUNNING)
        snprintf(rc_->evidence, sizeof rc_->evidence,
                 "line %" PRIu64 ": resumed on tid %u at %s while running on tid %u since %s",
                 v->ex[i].line, v->ex[i].tid, t1, v->ex[i].other_tid, t2);
      else if (k == CT_V_RESUME_NO_WAKE)
        snprintf(rc_->evidence, sizeof rc_->evidence,
                 "line %" PRIu64 ": resumed on tid %u at %s; suspended since %s with no wake "
                 "(its trace shows wakes elsewhere)", v->ex[i].line, v->ex[i].tid, t1, t2);
      else
        snprintf(rc_->evidence, sizeof rc_->evidence,
                 "line %" PRIu64 ": %s on tid %u at %s after its destroy at %s", v->ex[i].line,
                 evk[v->ex[i].kind], v->ex[i].tid, t1, t2);
    }
  }
  return 0;
}

int ct_leak_finding(struct ct_report *r, struct ct_state *st) {
  const struct ct_map *m = &st->coros;
  size_t n = 0;
  struct ct_coro **cs = malloc((m->n ? m->n : 1) * sizeof *cs);
  if (!cs) return -ENOMEM;
  for (size_t i = 0; i < m->cap; i++) {
    struct ct_coro *c = ct_map_at(m, i);
    if (m->used[i] && c->has_kind && c->created && c->state != CT_CS_DESTROYED) cs[n++] = c;
  }
  r->alive_at_end = n;
  int rc = 0;
  /* Killed or cut short: a live server's connections are not leaks. */
  if (n && !r->killed) {
    struct ct_finding *f = ct_new_finding(r, "leak", CT_SEV_WARNING);
    rc = f ? ct_group_coros(r, st, f, cs, n, 1) : -ENOMEM;
    if (!rc) {
      char ex[80];
      ct_describe_exit(st, ex, sizeof ex);
      f->count = n;
      snprintf(f->title, sizeof f->title, "%zu coroutine%s created and never destroyed", n,
               n == 1 ? "" : "s");
      ct_add_evidence(f, "%s with them alive; sites are where they were created", ex);
      for (size_t i = 0; i < f->ncoros; i++) {
        const struct ct_coro *c = ct_map_get(&st->coros, f->coros[i].probe_id, 0);
        char t1[32], t2[32];
        snprintf(f->coros[i].evidence, sizeof f->coros[i].evidence, "created at %s, last event at %s",
                 ct_at(r, c->birth_ts ? c->birth_ts : r->start_ts, t1, sizeof t1),
                 ct_at(r, c->last_ts, t2, sizeof t2));
      }
    }
  }
  free(cs);
  return rc;
}

int ct_blocker_finding(struct ct_report *r, struct ct_state *st) {
  const struct ct_map *m = &st->blocks;
  if (!m->n) return 0;
  struct ct_finding *f = ct_new_finding(r, "blocker", CT_SEV_WARNING);
  if (!f || !(f->sites = calloc(m->n, sizeof *f->sites)) ||
      !(f->coros = calloc(m->n * CT_BLOCK_WORST, sizeof *f->coros)))
    return -ENOMEM;
  char thr[32];
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->used[i]) continue;
    const struct ct_block *b = ct_map_at(m, i);
    struct ct_rsite *rs = &f->sites[f->nsites];
    rs->site = b->site;
    rs->pid = b->pid;
    rs->count = b->hist->n;
    ct_site_durations(rs, b->hist);
    ct_symbolize_site(st, rs);
    f->count += rs->count;
    for (int w = 0; w < CT_BLOCK_WORST && b->worst[w].id; w++) {
      struct ct_rcoro *rc_ = add_coro(f, st, b->worst[w].id, (int)f->nsites);
      char d[32], t[32];
      snprintf(rc_->evidence, sizeof rc_->evidence, "%s %s without suspending on tid %u from %s",
               b->worst[w].at_end ? "still running at the end after" : "ran",
               ct_fmt_ns(b->worst[w].ns, d, sizeof d), b->worst[w].tid,
               ct_at(r, b->worst[w].ts, t, sizeof t));
    }
    f->nsites++;
  }
  snprintf(f->title, sizeof f->title, "%" PRIu64 " run%s longer than %s without suspending",
           f->count, f->count == 1 ? "" : "s", ct_fmt_ns(st->blocker_ns, thr, sizeof thr));
  ct_add_evidence(f, "sites are where the long runs resumed from (the previous suspend, or the "
                     "creation), with the p50/p99/max of their run times");
  return 0;
}

int ct_lost_finding(struct ct_report *r, const struct ct_state *st) {
  uint64_t lost = st->end_lost;
  if (st->station_lost > lost) lost = st->station_lost;
  if (st->gap_lost > lost) lost = st->gap_lost;
  r->lost_events = lost;
  if (!lost && !st->untraced) return 0;
  struct ct_finding *f = ct_new_finding(r, "lost_events", CT_SEV_WARNING);
  if (!f) return -ENOMEM;
  f->count = lost;
  snprintf(f->title, sizeof f->title, "the trace is incomplete: %" PRIu64 " events lost", lost);
  if (st->has_end_counts)
    ct_add_evidence(f, "the engine counted %" PRIu64 " events written, %" PRIu64 " harvested, %" PRIu64
                       " lost", st->end_events, st->end_harvested, st->end_lost);
  if (st->stations)
    ct_add_evidence(f, "%" PRIu64 " stations reported %" PRIu64 " lost", st->stations, st->station_lost);
  if (st->any_ev)
    ct_add_evidence(f, "gaps in the coroutines' ev sequences: %" PRIu64 " events", st->gap_lost);
  if (st->untraced)
    ct_add_evidence(f, "%" PRIu64 " coroutines were not traced at all (no station free)", st->untraced);
  ct_add_evidence(f, "findings about a coroutine that lost events say so: they are less certain; "
                     "where the events lost come right before what decides them, they are warnings "
                     "or not judged at all");
  return 0;
}
