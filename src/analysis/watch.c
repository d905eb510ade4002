/* watch.c - incremental findings (watch.h): the report's state and finding
 * builders, fed chunk by chunk and asked again and again. */
#include "analysis/watch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model.h"
#include "analysis/state.h"
#include "analysis/trace.h"

struct ct_watch {
  struct ct_state *st;
  uint64_t stuck_ns, runnable_ns, blocker_ns, lineno;
  struct ct_ctr_iter it;
  char label[CT_CTR_LABEL_MAX];
};

/* Destroyed coroutines the watch keeps before purging them (ct_state). */
#define WATCH_TOMBSTONES 1024

static const char *const kinds[CT_WATCH_KINDS] = {"lost_wakeup", "deadlock", "blocker",
                                                  "starvation"};

/* The level a finding of each kind must reach: the report's lost wakeups
 * and deadlocks are errors; its warnings of that kind are the likely idle
 * (an accept loop between clients) and the unsure (events lost nearby).
 * Blockers and starvation are warnings. */
static const enum ct_sev min_sev[CT_WATCH_KINDS] = {CT_SEV_ERROR, CT_SEV_ERROR, CT_SEV_WARNING,
                                                    CT_SEV_WARNING};

const char *ct_watch_kind(unsigned i) {
  return i < CT_WATCH_KINDS ? kinds[i] : NULL;
}

/* A state with w's thresholds, or NULL (out of memory). */
static struct ct_state *fresh_state(const struct ct_watch *w) {
  struct ct_state *st;
  if (ct_state_new(w->blocker_ns, &st))
    return NULL;
  st->stuck_ns = w->stuck_ns;
  st->runnable_ns = w->runnable_ns;
  /* Its findings judge coroutines alive; the report's CT_TOMBSTONES (3.3 MB
   * of entries) grew over a server's first 16384 connections. */
  ct_state_keep_tombstones(st, WATCH_TOMBSTONES);
  return st;
}

int ct_watch_new(uint64_t stuck_ns, uint64_t runnable_ns, uint64_t blocker_ns,
                 struct ct_watch **out) {
  struct ct_watch *w = calloc(1, sizeof *w);
  if (!w)
    return -ENOMEM;
  w->stuck_ns = stuck_ns;
  w->runnable_ns = runnable_ns;
  w->blocker_ns = blocker_ns;
  if (!(w->st = fresh_state(w))) {
    free(w);
    return -ENOMEM;
  }
  *out = w;
  return 0;
}

/* watch.h. A new state rather than a mark in the old one: what the gap held
 * (a wake, a resume, a destroy) could change any coroutine's story, so no
 * coroutine seen before it can be judged after it. */
int ct_watch_gap(struct ct_watch *w) {
  struct ct_state *st = fresh_state(w);
  if (!st)
    return -ENOMEM;
  ct_state_free(w->st);
  w->st = st;
  return 0;
}

void ct_watch_free(struct ct_watch *w) {
  if (!w)
    return;
  ct_state_free(w->st);
  ct_ctr_fini(&w->it);
  free(w);
}

int ct_watch_chunk(struct ct_watch *w, const void *chunk, size_t n) {
  size_t len;
  char why[160];
  if (ct_ctr_chunk(chunk, n, 0, &len, why, sizeof why) != 1 || len != n)
    return 0;
  ct_ctr_begin(&w->it, chunk);
  struct ct_line l;
  enum ct_line_err err;
  for (int k; (k = ct_ctr_next(&w->it, &l, &err, w->label)) > 0;) {
    int rc = ct_state_line(w->st, ++w->lineno, err, &l);
    if (rc)
      return rc;
  }
  return 0;
}

/* watch.h. ct_report_build closes the runs still going at now_ts (as the
 * live view's snapshots do): a long run still going is found at each ask
 * (and counted again: the counts only ever grow). */
unsigned ct_watch_kinds(struct ct_watch *w, uint64_t now_ts, uint64_t count[CT_WATCH_KINDS]) {
  struct ct_state *st = w->st;
  struct ct_report r;
  unsigned found = 0;
  memset(count, 0, CT_WATCH_KINDS * sizeof count[0]);
  if (!st->events)
    return 0;
  if (ct_report_build(st, "flight", 0, w->stuck_ns, now_ts, &r) == 0) {
    for (size_t i = 0; i < r.nf; i++)
      for (unsigned k = 0; k < CT_WATCH_KINDS; k++)
        if (r.f[i].sev >= min_sev[k] && r.f[i].kind && !strcmp(r.f[i].kind, kinds[k])) {
          found |= 1u << k;
          count[k] += r.f[i].count;
        }
  }
  ct_report_free(&r);
  return found;
}
