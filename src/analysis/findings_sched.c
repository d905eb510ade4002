/* findings_sched.c - what the scheduler did to waiting coroutines: destroyed while still waiting,
 * never woken (a lost wakeup cancelled at teardown); runnable too long while others held the
 * thread (starvation). */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/findings.h"

/* "coroutine 7 (label)", or "a plain thread (tid 101)" for id 0, into buf;
 * the label only while the state still holds that incarnation. */
static const char *fmt_coro(const struct ct_state *st, uint64_t id, uint32_t incarnation,
                            uint32_t tid, char *buf, size_t n) {
  const struct ct_coro *c = id ? ct_map_get(&st->coros, id, 0) : NULL;
  const char *label = c && c->incarnation == incarnation ? ct_label_of(st, c) : NULL;
  if (!id)
    snprintf(buf, n, "a plain thread (tid %" PRIu32 ")", tid);
  else
    snprintf(buf, n, "coroutine %" PRIu64 "%s%s%s", id, label ? " (" : "", label ? label : "",
             label ? ")" : "");
  return buf;
}

/* The record (state.h's struct ct_dwait) of a destroyed one's copy. */
static const struct ct_dwait *dwait_of(const struct ct_coro *c) {
  return (const struct ct_dwait *)((const char *)c - offsetof(struct ct_dwait, c));
}

/* The finding of the coroutines cs[0..n) destroyed while waiting, error,
 * or warning when uncertain (events lost since their last resume). */
static int dwait_one(struct ct_report *r, const struct ct_state *st, const struct ct_coro **cs,
                     size_t n, int uncertain, uint64_t stuck_ns) {
  struct ct_finding *f;
  int rc = -ENOMEM;
  if (!(f = ct_new_finding(r, "lost_wakeup", uncertain ? CT_SEV_WARNING : CT_SEV_ERROR)) ||
      (rc = ct_group_coros(r, st, f, cs, n, 0)))
    return rc;
  char d[32];
  const char *s = n == 1 ? "" : "s";
  f->count = n;
  snprintf(f->title, sizeof f->title, "%zu coroutine%s destroyed while still waiting%s", n, s,
           uncertain ? ", apparently never woken, but events were lost"
                     : ": never woken (cancelled at teardown)");
  ct_add_evidence(f,
                  "each was suspended on a wait object for longer than %s with no wake since, "
                  "then destroyed by its owner: nobody woke it, and the destroy hid that",
                  ct_fmt_ns(stuck_ns, d, sizeof d));
  if (uncertain)
    ct_add_evidence(f, "uncertain, so not an error: events were lost since their last resume, "
                       "and the missing wake may be one of them");
  if (st->dwait_over)
    ct_add_evidence(f,
                    "%" PRIu64 " more coroutines destroyed while waiting long were not kept (past "
                    "the first %d): not judged",
                    st->dwait_over, CT_DWAIT_MAX);
  for (size_t i = 0; i < f->ncoros; i++) {
    const struct ct_dwait *dw = dwait_of(cs[i]);
    const struct ct_coro *c = &dw->c;
    struct ct_rcoro *rc_ = &f->coros[i];
    char t1[32], t2[32], site[400], ev[CT_COROEV_MAX];
    if (!(rc_->destroyed = calloc(1, sizeof *rc_->destroyed)))
      return -ENOMEM;
    *rc_->destroyed = (struct ct_rwake){
        .ts = c->destroy_ts, .tid = dw->tid, .site = {.site = dw->site, .pid = c->pid}};
    ct_symbolize_destroy_site(st, &rc_->destroyed->site);
    size_t o = (size_t)snprintf(
        ev, sizeof ev,
        "parked at %s; destroyed at %s while still waiting, never woken (cancelled at "
        "teardown), after %s; destroyed at %s",
        ct_at(r, c->susp_ts, t1, sizeof t1), ct_at(r, c->destroy_ts, t2, sizeof t2),
        ct_fmt_ns(rc_->suspended_ns, d, sizeof d),
        ct_fmt_site(&rc_->destroyed->site, site, sizeof site));
    if (o < sizeof ev && uncertain)
      o += (size_t)snprintf(ev + o, sizeof ev - o,
                            "; uncertain: events were lost since its last resume (a gap in ev)");
    else if (o < sizeof ev && c->lost)
      o += (size_t)snprintf(ev + o, sizeof ev - o,
                            " (less certain: %" PRIu64 " of its events were lost)", c->lost);
    if (ct_obj_last_wake(r, st, c, rc_, ev, sizeof ev, o) < 0) /* the wake it lacked: whose? */
      return -ENOMEM;
    if ((rc = ct_keep_evidence(rc_, ev)))
      return rc;
  }
  return 0;
}

/* findings.h: not for traces that record no wakes, nor for the likely idle. */
int ct_dwait_finding(struct ct_report *r, const struct ct_state *st, uint64_t stuck_ns) {
  if (!st->any_wake || !st->ndwait)
    return 0;
  int rc = -ENOMEM;
  const struct ct_coro **cs = malloc(st->ndwait * sizeof *cs);
  if (!cs)
    return rc;
  for (int uncertain = 0; uncertain < 2; uncertain++) {
    size_t n = 0;
    for (size_t i = 0; i < st->ndwait; i++) {
      struct ct_coro *c = &st->dwait[i].c;
      if (c->destroy_ts - c->susp_ts > stuck_ns && !ct_likely_idle(st, c) &&
          !!c->gap_since_resume == uncertain)
        cs[n++] = c;
    }
    if (n && (rc = dwait_one(r, st, cs, n, uncertain, stuck_ns)))
      goto out;
  }
  rc = 0;
out:
  free(cs);
  return rc;
}

static uint64_t span_of(const struct ct_starved *e) {
  return e->resume_ts - e->woke_ts;
}

/* Site, then longest span first. */
static int cmp_starved(const void *a, const void *b) {
  const struct ct_starved *x = a, *y = b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  if (x->susp_site != y->susp_site)
    return x->susp_site < y->susp_site ? -1 : 1;
  return span_of(x) != span_of(y) ? (span_of(x) > span_of(y) ? -1 : 1) : (x->id > y->id);
}

/* Evidence and details of victim e into rc_. */
static int starved_coro(const struct ct_report *r, const struct ct_state *st,
                        const struct ct_starved *e, struct ct_rcoro *rc_) {
  char t1[32], t2[32], d[32], who[160], site[400], ev[CT_COROEV_MAX];
  rc_->probe_id = e->id;
  rc_->incarnation = e->incarnation;
  rc_->label = e->label ? st->labels[e->label] : NULL;
  rc_->wait = e->wait;
  rc_->obj = e->obj;
  rc_->runnable_ns = span_of(e);
  rc_->tid = e->tid;
  rc_->others = e->others;
  if (!(rc_->wake = calloc(1, sizeof *rc_->wake)) ||
      !(rc_->held_by = calloc(e->nheld, sizeof *rc_->held_by)))
    return -ENOMEM;
  *rc_->wake = (struct ct_rwake){.from = e->woke_from,
                                 .ts = e->woke_ts,
                                 .tid = e->woke_tid,
                                 .site = {.site = e->woke_site, .pid = e->pid}};
  ct_symbolize_site(st, &rc_->wake->site);
  size_t o = (size_t)snprintf(
      ev, sizeof ev,
      "woken at %s by %s at %s, then runnable for %s until its resume at %s; meanwhile on tid "
      "%" PRIu32 ", the thread it last ran on,",
      ct_at(r, e->woke_ts, t1, sizeof t1),
      fmt_coro(st, e->woke_from, 0, e->woke_tid, who, sizeof who),
      ct_fmt_site(&rc_->wake->site, site, sizeof site), ct_fmt_ns(span_of(e), d, sizeof d),
      ct_at(r, e->resume_ts, t2, sizeof t2), e->tid);
  for (size_t i = 0; i < e->nheld; i++) {
    const struct ct_hold *h = &e->held[i];
    const struct ct_coro *hc = ct_map_get(&st->coros, h->id, 0);
    rc_->held_by[rc_->nheld++] = (struct ct_rholder){
        .probe_id = h->id,
        .resumes = h->n,
        .incarnation = h->incarnation,
        .label = hc && hc->incarnation == h->incarnation ? ct_label_of(st, hc) : NULL};
    if (o < sizeof ev)
      o += (size_t)snprintf(ev + o, sizeof ev - o, "%s %s was resumed %" PRIu32 " time%s",
                            i ? (i + 1 == e->nheld && !e->others ? " and" : ",") : "",
                            fmt_coro(st, h->id, h->incarnation, 0, who, sizeof who), h->n,
                            h->n == 1 ? "" : "s");
  }
  if (o < sizeof ev && e->others)
    o += (size_t)snprintf(ev + o, sizeof ev - o, ", and others %" PRIu64 " time%s", e->others,
                          e->others == 1 ? "" : "s");
  if (o < sizeof ev && e->resume_tid != e->tid)
    snprintf(ev + o, sizeof ev - o, "; it was resumed on tid %" PRIu32 " at last", e->resume_tid);
  return ct_keep_evidence(rc_, ev);
}

/* findings.h: one warning, its victims grouped by the site they waited at. */
int ct_starve_finding(struct ct_report *r, const struct ct_state *st) {
  const struct ct_starve *sv = &st->starve;
  if (!sv->n)
    return 0;
  struct ct_starved *ex = malloc(sv->n * sizeof *ex);
  struct ct_hist *h = calloc(1, sizeof *h);
  struct ct_finding *f = NULL;
  int rc = -ENOMEM;
  if (!ex || !h || !(f = ct_new_finding(r, "starvation", CT_SEV_WARNING)) ||
      !(f->sites = calloc(sv->n, sizeof *f->sites)) ||
      !(f->coros = calloc(sv->n, sizeof *f->coros)))
    goto out;
  memcpy(ex, sv->ex, sv->n * sizeof *ex);
  qsort(ex, sv->n, sizeof *ex, cmp_starved);
  for (size_t i = 0, j; i < sv->n; i = j) {
    struct ct_rsite *rs = &f->sites[f->nsites];
    uint64_t site = st->sites_not_code ? 0 : ex[i].susp_site;
    memset(h, 0, sizeof *h);
    for (j = i; j < sv->n && ex[j].pid == ex[i].pid && ex[j].susp_site == ex[i].susp_site; j++) {
      struct ct_rcoro *rc_ = &f->coros[f->ncoros++];
      rc_->site_index = site ? (int)f->nsites : -1;
      ct_hist_add(h, span_of(&ex[j]));
      if ((rc = starved_coro(r, st, &ex[j], rc_)))
        goto out;
    }
    if (!site)
      continue;
    *rs = (struct ct_rsite){.site = site, .pid = ex[i].pid, .count = j - i};
    ct_site_runnable(rs, h);
    ct_symbolize_site(st, rs);
    f->nsites++;
  }
  char thr[32];
  f->count = sv->coros;
  snprintf(f->title, sizeof f->title,
           "%" PRIu64 " coroutine%s starved: runnable longer than %s while others ran on their "
           "thread (%" PRIu64 " runnable span%s)",
           sv->coros, sv->coros == 1 ? "" : "s", ct_fmt_ns(st->runnable_ns, thr, sizeof thr),
           sv->spans, sv->spans == 1 ? "" : "s");
  ct_add_evidence(f,
                  "each was woken, then waited to run while another coroutine was resumed at "
                  "least %d times on the thread it last ran on: that one became runnable after "
                  "it and still ran first, again and again (an unfair run queue: a fair one "
                  "runs each queued coroutine once before it)",
                  CT_PASSED_OVER);
  if (sv->coros > sv->n)
    ct_add_evidence(f, "the %zu with the longest waits are listed", sv->n);
  ct_add_evidence(f, "sites are where they waited before the wake, with the p50/p99/max of the "
                     "listed runnable spans");
  rc = 0;
out:
  free(h);
  free(ex);
  return rc;
}
