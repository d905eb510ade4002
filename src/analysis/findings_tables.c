/* findings_tables.c - the findings read off the state's tables as they are:
 * state-machine violations, leaks, blockers (with run-time percentiles), lost
 * events. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/findings.h"

/* Appends coroutine id to f (room for it allocated); its label if the state
 * still holds it (a destroyed one may have been purged). */
static struct ct_rcoro *add_coro(struct ct_finding *f, const struct ct_state *st, uint64_t id,
                                 uint32_t incarnation, int site_index) {
  struct ct_rcoro *rc_ = &f->coros[f->ncoros++];
  const struct ct_coro *c = ct_map_get(&st->coros, id, 0);
  rc_->probe_id = id;
  rc_->incarnation = incarnation;
  rc_->label = c && c->incarnation == incarnation ? ct_label_of(st, c) : NULL;
  rc_->site_index = site_index;
  return rc_;
}

const char *const ct_viol_kinds[CT_V_KINDS_] = {"resume_running", "resume_without_wake",
                                                "after_destroy", "resume_after_return"};

/* findings.h: one error finding per violation kind seen, its first examples listed. */
int ct_violation_findings(struct ct_report *r, const struct ct_state *st) {
  static const char *const evk[] = {"v1", "create", "suspend", "resume", "wake", "destroy"};
  for (int k = 0; k < CT_V_KINDS_; k++) {
    const struct ct_viol *v = &st->viol[k];
    if (!v->count)
      continue;
    struct ct_finding *f = ct_new_finding(r, ct_viol_kinds[k], CT_SEV_ERROR);
    if (!f || !(f->coros = calloc(v->n, sizeof *f->coros)))
      return -ENOMEM;
    f->count = v->coros; /* distinct coroutines; the events are in the title */
    const char *s = v->coros == 1 ? "" : "s", *es = v->count == 1 ? "" : "s";
    if (k == CT_V_RESUME_RUNNING)
      snprintf(f->title, sizeof f->title,
               "%" PRIu64 " coroutine%s resumed while running (%" PRIu64
               " resume%s): two threads in "
               "one coroutine",
               v->coros, s, v->count, es);
    else if (k == CT_V_RESUME_NO_WAKE)
      snprintf(f->title, sizeof f->title,
               "%" PRIu64 " coroutine%s resumed while suspended with nobody waking them (%" PRIu64
               " resume%s)",
               v->coros, s, v->count, es);
    else if (k == CT_V_AFTER_DESTROY)
      snprintf(f->title, sizeof f->title,
               "%" PRIu64 " coroutine%s with events after destroy (%" PRIu64 " event%s)", v->coros,
               s, v->count, es);
    else
      snprintf(f->title, sizeof f->title,
               "%" PRIu64 " coroutine%s resumed after returning (%" PRIu64 " resume%s)", v->coros,
               s, v->count, es);
    if (v->count > v->n)
      ct_add_evidence(f, "the first %zu are listed", v->n);
    if (v->not_judged)
      ct_add_evidence(f,
                      "%" PRIu64 " more not judged: evidence lost (they came right after lost "
                      "events, which may hold what they lack)",
                      v->not_judged);
    for (size_t i = 0; i < v->n; i++) {
      struct ct_rcoro *rc_ = add_coro(f, st, v->ex[i].id, v->ex[i].incarnation, -1);
      char t1[32], t2[32], ev[CT_COROEV_MAX];
      ct_at(r, v->ex[i].ts, t1, sizeof t1);
      ct_at(r, v->ex[i].other_ts, t2, sizeof t2);
      if (k == CT_V_RESUME_RUNNING)
        snprintf(ev, sizeof ev,
                 "line %" PRIu64 ": resumed on tid %u at %s while running on tid %u since %s",
                 v->ex[i].line, v->ex[i].tid, t1, v->ex[i].other_tid, t2);
      else if (k == CT_V_RESUME_NO_WAKE)
        snprintf(ev, sizeof ev,
                 "line %" PRIu64 ": resumed on tid %u at %s; suspended since %s with no wake "
                 "(its trace shows wakes elsewhere)",
                 v->ex[i].line, v->ex[i].tid, t1, t2);
      else if (k == CT_V_AFTER_DESTROY)
        snprintf(ev, sizeof ev, "line %" PRIu64 ": %s on tid %u at %s after its destroy at %s",
                 v->ex[i].line, evk[v->ex[i].kind], v->ex[i].tid, t1, t2);
      else
        snprintf(ev, sizeof ev,
                 "line %" PRIu64
                 ": resumed on tid %u at %s after it returned (final suspend) at %s",
                 v->ex[i].line, v->ex[i].tid, t1, t2);
      if (ct_keep_evidence(rc_, ev))
        return -ENOMEM;
    }
  }
  return 0;
}

/* findings.h: none when the program was killed or cut short (r->killed). */
int ct_leak_finding(struct ct_report *r, const struct ct_state *st) {
  const struct ct_map *m = &st->coros;
  size_t n = 0;
  const struct ct_coro **cs = malloc((m->n ? m->n : 1) * sizeof *cs);
  if (!cs)
    return -ENOMEM;
  /* Never destroyed but reported under their root cause (a lost wakeup,
   * ...), by finding kind: cross-referenced, not repeated. */
  struct {
    const char *kind;
    uint64_t n;
  } elsewhere[8] = {{0}};
  size_t nelse = 0, alive = 0, returned = 0;
  for (size_t i = 0; i < m->n; i++) {
    struct ct_coro *c = ct_map_at(m, i);
    if (!c->has_kind || !c->created || c->state == CT_CS_DESTROYED)
      continue;
    alive++;
    unsigned mark = ct_mark_of(r, c);
    if (mark == CT_MARK_QUIET)
      continue;
    const char *kind = ct_primary_kind(mark);
    if (!kind) {
      cs[n++] = c;
      returned += c->returned;
      continue;
    }
    size_t k = 0;
    while (k < nelse && strcmp(elsewhere[k].kind, kind))
      k++;
    if (k == nelse && nelse < 8)
      elsewhere[nelse++].kind = kind;
    if (k < nelse)
      elsewhere[k].n++;
  }
  r->alive_at_end = alive;
  int rc = 0;
  /* Killed or cut short: a live server's connections are not leaks. */
  if (n && !r->killed) {
    struct ct_finding *f = ct_new_finding(r, "leak", CT_SEV_WARNING);
    rc = f ? ct_group_coros(r, st, f, cs, n, 1) : -ENOMEM;
    if (!rc) {
      char ex[80];
      ct_describe_exit(r, ex, sizeof ex);
      f->count = n;
      snprintf(f->title, sizeof f->title, "%zu coroutine%s created and never destroyed", n,
               n == 1 ? "" : "s");
      ct_add_evidence(f, "%s with them alive; sites are where they were created", ex);
      if (returned)
        ct_add_evidence(f,
                        "%zu of them returned (their final suspend is on record) and were never "
                        "freed: finished, not waiting",
                        returned);
      for (size_t k = 0; k < nelse; k++) {
        ct_add_related(f, elsewhere[k].kind, "also never destroyed", elsewhere[k].n);
        ct_add_evidence(f,
                        "%" PRIu64 " more never destroyed are reported as %s, their root cause; "
                        "not repeated here",
                        elsewhere[k].n, elsewhere[k].kind);
      }
      for (size_t i = 0; i < f->ncoros; i++) {
        const struct ct_coro *c = ct_map_get(&st->coros, f->coros[i].probe_id, 0);
        char t1[32], t2[32], ev[CT_COROEV_MAX];
        f->coros[i].returned = c->returned;
        if (c->returned)
          snprintf(ev, sizeof ev, "created at %s, returned at %s (final suspend), never destroyed",
                   ct_at(r, c->birth_ts ? c->birth_ts : r->start_ts, t1, sizeof t1),
                   ct_at(r, c->susp_ts, t2, sizeof t2));
        else
          snprintf(ev, sizeof ev, "created at %s, last event at %s",
                   ct_at(r, c->birth_ts ? c->birth_ts : r->start_ts, t1, sizeof t1),
                   ct_at(r, c->last_ts, t2, sizeof t2));
        if ((rc = ct_keep_evidence(&f->coros[i], ev)))
          break;
      }
    }
  }
  free(cs);
  return rc;
}

/* findings.h: one finding, a site per resume site with long runs and their worst runs. */
int ct_blocker_finding(struct ct_report *r, const struct ct_state *st, const struct ct_map *blocks,
                       uint64_t coros) {
  const struct ct_map *m = blocks;
  if (!m->n)
    return 0;
  struct ct_finding *f = ct_new_finding(r, "blocker", CT_SEV_WARNING);
  if (!f || !(f->sites = calloc(m->n, sizeof *f->sites)) ||
      !(f->coros = calloc(m->n * CT_BLOCK_WORST, sizeof *f->coros)))
    return -ENOMEM;
  char thr[32];
  uint64_t runs = 0;
  for (size_t i = 0; i < m->n; i++) {
    const struct ct_block *b = ct_map_at(m, i);
    struct ct_rsite *rs = &f->sites[f->nsites];
    rs->site = b->site;
    rs->pid = b->pid;
    rs->count = b->hist->n;
    ct_site_durations(rs, b->hist);
    ct_symbolize_site(st, rs);
    runs += rs->count;
    for (int w = 0; w < CT_BLOCK_WORST && b->worst[w].id; w++) {
      struct ct_rcoro *rc_ =
          add_coro(f, st, b->worst[w].id, b->worst[w].incarnation, (int)f->nsites);
      char d[32], t[32], from[200], to[200] = "", ev[CT_COROEV_MAX];
      rc_->label = b->worst[w].label ? st->labels[b->worst[w].label] : NULL;
      rc_->run_end = b->worst[w].at_end                      ? "end"
                     : b->worst[w].end_kind == CT_EV_DESTROY ? "destroy"
                     : b->worst[w].end_exit                  ? "exit"
                                                             : "suspend";
      ct_fmt_site(rs, from, sizeof from);
      if (!b->worst[w].at_end) {
        if (!(rc_->end_site = calloc(1, sizeof *rc_->end_site)))
          return -ENOMEM;
        *rc_->end_site = (struct ct_rsite){.site = b->worst[w].end_site, .pid = b->pid};
        ct_symbolize_site(st, rc_->end_site);
        ct_fmt_site(rc_->end_site, to, sizeof to);
      }
      /* Long symbols are cut at the evidence's size: the sites are whole in the JSON. */
      if (snprintf(ev, sizeof ev, "%s %s without suspending on tid %u from %s: from %s to %s%s%s",
                   b->worst[w].at_end ? "still running at the end after" : "ran",
                   ct_fmt_ns(b->worst[w].ns, d, sizeof d), b->worst[w].tid,
                   ct_at(r, b->worst[w].ts, t, sizeof t), from,
                   rc_->end_site ? "its " : "the end of the trace",
                   rc_->end_site ? rc_->run_end : "",
                   rc_->end_site ? " at " : "") < (int)sizeof ev &&
          rc_->end_site) {
        size_t o = strlen(ev);
        if (snprintf(ev + o, sizeof ev - o, "%s", to) < 0)
          ev[o] = 0;
      }
      if (ct_keep_evidence(rc_, ev))
        return -ENOMEM;
    }
    f->nsites++;
  }
  f->count = coros;
  snprintf(f->title, sizeof f->title,
           "%" PRIu64 " coroutine%s ran longer than %s without suspending "
           "(%" PRIu64 " run%s)",
           f->count, f->count == 1 ? "" : "s", ct_fmt_ns(st->blocker_ns, thr, sizeof thr), runs,
           runs == 1 ? "" : "s");
  ct_add_evidence(f, "sites are where the long runs resumed from (the previous suspend, or the "
                     "creation), with the p50/p99/max of their run times; each coroutine listed "
                     "names where its run ended too (run_end), bracketing the code that ran");
  return 0;
}

/* findings.h: the largest of the engine's, the stations' and the ev gaps' counts. */
int ct_lost_finding(struct ct_report *r, const struct ct_state *st) {
  uint64_t lost = st->end_lost;
  if (st->station_lost > lost)
    lost = st->station_lost;
  if (st->gap_lost > lost)
    lost = st->gap_lost;
  r->lost_events = lost;
  if (!lost && !st->untraced)
    return 0;
  struct ct_finding *f = ct_new_finding(r, "lost_events", CT_SEV_WARNING);
  if (!f)
    return -ENOMEM;
  f->count = lost;
  if (st->untraced)
    snprintf(f->title, sizeof f->title,
             "the trace is incomplete: %" PRIu64 " coroutines untraced (no station free), %" PRIu64
             " events lost",
             st->untraced, lost);
  else
    snprintf(f->title, sizeof f->title, "the trace is incomplete: %" PRIu64 " events lost", lost);
  if (st->has_end_counts)
    ct_add_evidence(
        f, "the engine counted %" PRIu64 " events written, %" PRIu64 " harvested, %" PRIu64 " lost",
        st->end_events, st->end_harvested, st->end_lost);
  if (st->stations)
    ct_add_evidence(f, "%" PRIu64 " stations reported %" PRIu64 " lost", st->stations,
                    st->station_lost);
  if (st->any_ev)
    ct_add_evidence(f,
                    "gaps in the coroutines' ev sequences: %" PRIu64 " events in %" PRIu64
                    " coroutines, whose transitions from their first gap on are not judged",
                    st->gap_lost, st->gap_coros);
  if (st->untraced)
    ct_add_evidence(f,
                    "%" PRIu64 " coroutines were not traced at all (no station free): more were "
                    "alive at once than the run's stations; run again with `corotracer run -n N`, "
                    "N above the most coroutines alive at once",
                    st->untraced);
  ct_add_evidence(f, "findings about a coroutine that lost events say so: they are less certain; "
                     "where the events lost come right before what decides them, they are warnings "
                     "or not judged at all");
  return 0;
}

/* findings.h: the program wrote over the tracer's shared memory. The engine
 * left the counts it could not believe out; the events it copied may still
 * include some the scribble made up, and miss others. */
int ct_corrupt_finding(struct ct_report *r, const struct ct_state *st) {
  if (!st->corrupt_stations && !strstr(st->end_error, "corrupted"))
    return 0;
  struct ct_finding *f = ct_new_finding(r, "memory_corrupted", CT_SEV_ERROR);
  if (!f)
    return -ENOMEM;
  f->count = st->corrupt_stations;
  snprintf(f->title, sizeof f->title,
           "the program wrote over the tracer's shared memory: the trace cannot be trusted");
  if (st->end_error[0])
    ct_add_evidence(f, "the engine said: %s", st->end_error);
  if (st->corrupt_stations)
    ct_add_evidence(f,
                    "%" PRIu64 " stations held counters that cannot be true; their lost events "
                    "are not counted",
                    st->corrupt_stations);
  ct_add_evidence(f, "a stray write of the program (a buffer overrun, a use after free) hit the "
                     "tracer's mapping; events may be missing or made up, and the other "
                     "findings rest on them");
  return 0;
}
