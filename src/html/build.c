/* build.c - the page's data from a trace: one pass feeds each parsed line (a
 * binary trace's runs of events at once) to the report's analysis (the
 * findings, same JSON model as `report --json`) and to the dashboard's model;
 * when the spans overflow the budget and a finding names coroutines, a
 * second pass rebuilds the model keeping those in full. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/model.h"
#include "html/model.h"
#include "html/page.h"

#define READ_BUF (4u << 20)

struct feed {
  struct ct_state *st; /* NULL in the second pass */
  struct ct_model *m;  /* NULL for the findings alone */
  /* Runs (a trace of `corotracer run --append` holds several): the one to
   * show, 1-based, 0 = the last (each new run then starts the state and the
   * model afresh); the run being read and its lines so far. */
  unsigned want, run;
  uint64_t run_lines;
  size_t budget, cap; /* the model's, to start it afresh */
  int prune;
  const struct ct_thresholds *th; /* the state's, to start it afresh */
};

/* A new run while the last one is wanted: the state and the model start afresh. */
static int restart(struct feed *f) {
  int rc = 0;
  if (f->st) {
    ct_state_free(f->st);
    f->st = NULL;
    rc = ct_state_new_judging(f->th, &f->st);
  }
  if (!rc && f->m) {
    ct_model_free(f->m);
    rc = ct_model_init(f->m, f->budget, f->cap);
    if (!rc && f->prune)
      ct_model_prune(f->m);
  }
  return rc;
}

static int on_line(void *ctx, uint64_t lineno, enum ct_line_err err, const struct ct_line *l) {
  struct feed *f = ctx;
  int rc;
  if (ct_line_new_run(f->run_lines, err, l)) {
    f->run++;
    f->run_lines = 0;
    if (!f->want && (rc = restart(f)))
      return rc;
  }
  f->run_lines++;
  if (f->want && f->run != f->want)
    return 0;
  rc = f->st ? ct_state_line(f->st, lineno, err, l) : 0;
  return rc || !f->m ? rc : ct_model_line(f->m, err, l);
}

/* A binary trace's run of events (ct_trace_read_runs): what on_line does
 * with each of their lines. */
static int on_run(void *ctx, const struct ct_event *ev, size_t n) {
  struct feed *f = ctx;
  f->run_lines += n; /* events: none starts a run */
  if (f->want && f->run != f->want)
    return 0;
  int rc = f->st ? ct_state_run(f->st, ev, n) : 0;
  return rc || !f->m ? rc : ct_model_run(f->m, ev, n);
}

int ct_dash_findings_json(const struct ct_report *r, char **json, size_t *len) {
  FILE *f = open_memstream(json, len);
  if (!f)
    return -ENOMEM;
  int rc = ct_write_json(f, r);
  if (fclose(f) && !rc)
    rc = -ENOMEM;
  return rc;
}

int ct_dash_keep_findings(struct ct_model *m, const struct ct_report *r) {
  int rc = 0;
  for (size_t i = 0; i < r->nf && !rc; i++)
    for (size_t k = 0; k < r->f[i].ncoros && !rc; k++) {
      const struct ct_rcoro *c = &r->f[i].coros[k];
      rc = ct_model_keep(m, c->probe_id);
      for (size_t h = 0; h < c->nheld && !rc; h++) /* starvation: who held its thread */
        rc = ct_model_keep(m, c->held_by[h].probe_id);
    }
  return rc;
}

/* 1 when a finding of r names a coroutine: only then can a second pass
 * (ct_dash_keep_findings) make a model other than the first pass's. */
static int names_coros(const struct ct_report *r) {
  for (size_t i = 0; i < r->nf; i++)
    if (r->f[i].ncoros)
      return 1;
  return 0;
}

int ct_dash_build(int fd, const char *name, int seekable, uint64_t now_ts, int live,
                  size_t span_budget, unsigned run, const struct ct_thresholds *th,
                  struct ct_buf *z, const struct ct_zdrain *drain, struct ct_dash_stats *stats) {
  size_t budget = span_budget ? span_budget : CT_DASH_SPAN_BUDGET;
  size_t cap = budget / 5 * 7; /* room for the coroutines findings name */
  struct ct_state *st = NULL;
  struct ct_model m;
  struct ct_report r = {0};
  char *json = NULL;
  size_t jlen = 0;
  uint64_t bytes = 0;
  memset(stats, 0, sizeof *stats);
  int rc = ct_model_init(&m, budget, cap);
  if (!rc)
    rc = ct_state_new_judging(th, &st);
  struct feed feed = {st, &m, run, 1, 0, budget, cap, seekable, th};
  /* A file can be read again: rows may go now, the second pass brings back
   * those the findings name. */
  if (seekable)
    ct_model_prune(&m);
  struct ct_read_diag diag;
  if (!rc)
    rc = ct_trace_read_runs(fd, READ_BUF, on_line, on_run, NULL, &feed, &bytes, &diag);
  st = feed.st; /* a new one for each run when the last is shown */
  if (rc)
    goto out;
  memcpy(stats->why, diag.why, sizeof stats->why);
  stats->runs = feed.run;
  stats->run = run ? run : feed.run;
  if (run > feed.run) {
    rc = -ENOENT;
    goto out;
  }
  stats->passes = 1;
  stats->bytes = bytes;
  if ((rc = ct_report_build(st, name, bytes, th->stuck_ns, live ? now_ts : 0, &r)))
    goto out;
  const struct ct_rtrace *t = &r.t;
  stats->lines = t->lines;
  stats->events = t->events;
  if (!t->lines || (!t->events && !t->has_meta && !t->has_end && !t->modules && !t->stations)) {
    stats->not_a_trace = 1;
    stats->bad_line = t->nbad_kept ? (int)t->bad_lines[0] : 1;
    rc = -EINVAL;
    goto out;
  }
  r.run = stats->run;
  r.runs = stats->runs;
  r.binary = diag.binary;
  r.damage = diag.why[0] && stats->run == stats->runs ? diag.why : NULL; /* at the last run's end */
  if ((rc = ct_dash_findings_json(&r, &json, &jlen)))
    goto out;
  if (m.spans_dropped && seekable && names_coros(&r) && lseek(fd, 0, SEEK_SET) == 0) {
    /* Over the budget: again, with every coroutine of a finding kept (none
     * kept: the same lines into the same fresh model, the same model). */
    ct_model_free(&m);
    if ((rc = ct_model_init(&m, budget, cap)))
      goto out;
    ct_model_prune(&m);
    rc = ct_dash_keep_findings(&m, &r);
    feed = (struct feed){NULL, &m, stats->run, 1, 0, budget, cap, 1, th};
    uint64_t again = 0;
    if (!rc)
      rc = ct_trace_read_runs(fd, READ_BUF, on_line, on_run, NULL, &feed, &again, &diag);
    if (rc)
      goto out;
    stats->passes = 2;
  }
  stats->spans = m.nspans;
  stats->spans_dropped = m.spans_dropped;
  struct ct_model_page pg = {json, jlen, r.sym, name, now_ts, live};
  rc = ct_model_serialize(&m, &pg, z, drain, &stats->blob_bytes);
out:
  free(json);
  ct_report_free(&r);
  ct_state_free(st);
  ct_model_free(&m);
  return rc;
}
