/* report.c - assembles the report model (model.h) from a finished state:
 * the overview (timeline, idle gaps, every suspension site), then the
 * findings from each builder in turn (findings_stuck.c, findings_sched.c,
 * findings_tables.c), most severe first. Depends on the builders; nothing depends on it but the
 * callers of model.h (report, export, html). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/findings.h"
#include "analysis/state.h"

#define IDLE_GAP_NS (60ull * 1000000000ull)
#define ABSURD_GAP_NS (86400ull * 1000000000ull)

/* Buckets in time order. */
static int cmp_bucket(const void *a, const void *b) {
  const struct ct_bucket *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Start, end, idle gaps. Events in a stretch more than a day away from all
 * others, holding under 0.1% of the events, are torn clocks (a valid-looking
 * record with a garbage ts): counted, left out of the duration. */
static int timeline(struct ct_report *r, const struct ct_state *st) {
  const struct ct_map *b = &st->buckets;
  struct ct_bucket *bs = malloc((b->n ? b->n : 1) * sizeof *bs);
  if (!bs)
    return -ENOMEM;
  size_t n = 0;
  for (size_t i = 0; i < b->n; i++)
    bs[n++] = *(struct ct_bucket *)ct_map_at(b, i);
  qsort(bs, n, sizeof *bs, cmp_bucket);
  for (size_t i = 0, j; i < n; i = j) {
    uint64_t cnt = bs[i].n;
    for (j = i + 1; j < n && bs[j].lo - bs[j - 1].hi <= ABSURD_GAP_NS; j++)
      cnt += bs[j].n;
    if (cnt * 1000 >= st->events)
      continue;
    r->absurd_ts += cnt;
    for (size_t k = i; k < j; k++)
      bs[k].n = 0; /* n == 0: left out */
  }
  uint64_t first = 0, last = 0, prev_hi = 0, idle = 0;
  for (size_t i = 0; i < n; i++) {
    if (!bs[i].n)
      continue;
    if (!first)
      first = bs[i].lo;
    last = bs[i].hi;
    uint64_t g = prev_hi ? bs[i].lo - prev_hi : 0;
    prev_hi = bs[i].hi;
    if (g <= IDLE_GAP_NS)
      continue;
    idle += g;
    r->gaps_total++;
    /* Keep the longest CT_GAPS_MAX, longest first. */
    size_t k = r->ngaps < CT_GAPS_MAX ? r->ngaps++ : CT_GAPS_MAX;
    for (; k > 0 && r->gaps[k - 1].to - r->gaps[k - 1].from < g; k--)
      if (k < CT_GAPS_MAX)
        r->gaps[k] = r->gaps[k - 1];
    if (k < CT_GAPS_MAX) {
      r->gaps[k].from = bs[i].lo - g;
      r->gaps[k].to = bs[i].lo;
    }
  }
  free(bs);
  if (!first) { /* no buckets (no events), or the bucket table overflowed */
    first = st->first_ts;
    last = st->last_ts;
  }
  r->start_ts = st->meta_mono_ns && st->meta_mono_ns < first ? st->meta_mono_ns : first;
  if (st->has_window && st->window_start_ts > r->start_ts)
    r->start_ts = st->window_start_ts; /* a flight dump: its window is the timeline */
  r->end_ts = st->has_end && st->end_ts ? st->end_ts : r->live_ts > last ? r->live_ts : last;
  r->duration_ns = r->end_ts > r->start_ts ? r->end_ts - r->start_ts : 0;
  r->active_ns = r->duration_ns > idle ? r->duration_ns - idle : 0;
  return 0;
}

/* Most used first, then by address (a stable order for equal counts). */
static int cmp_site_count(const void *a, const void *b) {
  const struct ct_rsite *x = a, *y = b;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return x->site < y->site ? -1 : x->site > y->site;
}

/* Overview: timeline, counts, every suspension site. */
/* What the trace said about itself, copied into the report (its writers
 * read nothing else of the state). */
static void trace_facts(struct ct_rtrace *t, const struct ct_state *st) {
  t->lines = st->lines;
  t->events = st->events;
  memcpy(t->bad, st->bad, sizeof t->bad);
  memcpy(t->bad_lines, st->bad_lines, sizeof t->bad_lines);
  t->nbad_kept = st->nbad_kept;
  t->other_records = st->other_records;
  t->resumes = st->resumes;
  t->migrations = st->migrations;
  t->modules = st->modules;
  t->reused_ids = st->reused_ids;
  t->returned = st->returned;
  t->sites_dropped = st->sites_dropped;
  t->stations = st->stations;
  t->target_pid = st->target_pid;
  t->end_ts = st->end_ts;
  t->any_ev = st->any_ev;
  t->sites_not_code = st->sites_not_code;
  t->sym_err = st->sym_err;
  t->has_meta = st->has_meta;
  t->has_end = st->has_end;
  t->has_end_counts = st->has_end_counts;
  t->exit_has_code = st->exit_has_code;
  t->exit_has_signal = st->exit_has_signal;
  t->exit_code = st->exit_code;
  t->exit_signal = st->exit_signal;
  memcpy(t->exit_name, st->exit_name, sizeof t->exit_name);
  memcpy(t->run_id, st->run_id, sizeof t->run_id);
  memcpy(t->host, st->host, sizeof t->host);
  memcpy(t->cut_reason, st->cut_reason, sizeof t->cut_reason);
  memcpy(t->viol, st->viol, sizeof t->viol);
  t->has_window = st->has_window;
  t->snapshot_coros = st->snapshot_coros;
  memcpy(t->window_trigger, st->window_trigger, sizeof t->window_trigger);
  t->dwait_short = st->dwait_short;
  t->dwait_short_min = st->dwait_short_min;
  t->dwait_short_max = st->dwait_short_max;
  t->stuck_ns = st->stuck_ns;
  t->window_has_lost = st->window_has_lost;
  t->window_lost = st->window_lost;
  t->window_dropped_lost = st->window_dropped_lost;
}

static int overview(struct ct_report *r, const struct ct_state *st) {
  r->threads = st->tids.n;
  r->killed = !st->has_end || st->exit_has_signal;
  r->coroutines = st->coroutines;
  int rc = timeline(r, st);
  if (rc)
    return rc;
  const struct ct_map *sm = &st->sites;
  if (!(r->sites = calloc(sm->n ? sm->n : 1, sizeof *r->sites)))
    return -ENOMEM;
  for (size_t i = 0; i < sm->n; i++) {
    const struct ct_site *s = ct_map_at(sm, i);
    struct ct_rsite *rs = &r->sites[r->nsites++];
    rs->site = s->site;
    rs->pid = s->pid;
    rs->count = s->suspensions;
    ct_symbolize_site(st, rs);
    if (s->hist)
      ct_site_durations(rs, s->hist);
    if (s->runnable)
      ct_site_runnable(rs, s->runnable);
  }
  qsort(r->sites, r->nsites, sizeof *r->sites, cmp_site_count);
  return 0;
}

/* model.h: r is zeroed first; on failure, partly built (free it all the same). */
int ct_report_build(const struct ct_state *st, const char *path, uint64_t bytes, uint64_t stuck_ns,
                    uint64_t live_ts, struct ct_report *r) {
  memset(r, 0, sizeof *r);
  ct_map_init(&r->marks, sizeof(uint8_t));
  trace_facts(&r->t, st);
  r->sym = st->sym;
  r->path = path;
  r->bytes = bytes;
  /* A flight dump written while the program ran is judged at the moment it
   * was written, as the live view judges a trace being written. */
  r->live_ts = live_ts ? live_ts : !st->has_end && st->has_window ? st->window_ts : 0;
  /* The runs still going, closed at the end in a copy of the blocker table:
   * st stays as it is (the live view goes on feeding it). */
  struct ct_map blocks;
  uint64_t block_coros;
  int rc = ct_state_blocks_at_end(st, &blocks, &block_coros);
  if (rc || (rc = overview(r, st)) || (rc = ct_stuck_findings(r, st, stuck_ns)) ||
      (rc = ct_dwait_finding(r, st, stuck_ns)) || (rc = ct_violation_findings(r, st)) ||
      (rc = ct_leak_finding(r, st)) || (rc = ct_blocker_finding(r, st, &blocks, block_coros)) ||
      (rc = ct_starve_finding(r, st)) || (rc = ct_lost_finding(r, st)) ||
      (rc = ct_corrupt_finding(r, st)))
    goto out;
  /* Most severe first; stable within a severity. */
  for (size_t i = 1; i < r->nf; i++)
    for (size_t j = i; j > 0 && r->f[j].sev > r->f[j - 1].sev; j--) {
      struct ct_finding t = r->f[j];
      r->f[j] = r->f[j - 1];
      r->f[j - 1] = t;
    }
out:
  ct_state_blocks_free(&blocks);
  return rc;
}

/* model.h: frees what r owns and zeroes it (a zeroed r is a no-op). */
void ct_report_free(struct ct_report *r) {
  for (size_t i = 0; i < r->nf; i++) {
    for (size_t k = 0; k < r->f[i].ncoros; k++) {
      free(r->f[i].coros[k].wake);
      free(r->f[i].coros[k].destroyed);
      free(r->f[i].coros[k].held_by);
      free(r->f[i].coros[k].end_site);
      free(r->f[i].coros[k].evidence);
      free(r->f[i].coros[k].obj_name);
      free(r->f[i].coros[k].obj_wake);
    }
    free(r->f[i].sites);
    free(r->f[i].coros);
  }
  free(r->f);
  free(r->sites);
  ct_map_free(&r->marks);
  memset(r, 0, sizeof *r);
}

/* model.h: -1 for no findings, else the highest enum ct_sev. */
int ct_report_max_severity(const struct ct_report *r) {
  int m = -1;
  for (size_t i = 0; i < r->nf; i++)
    if ((int)r->f[i].sev > m)
      m = (int)r->f[i].sev;
  return m;
}
