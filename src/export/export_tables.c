/* export_tables.c - the schema every target shares (docs/EXPORT.md) and the
 * rows of each table, produced from the export model (the events streamed from
 * the trace again); the driver that feeds them to a sink. */
#include "export/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define I(n)                                                                                       \
  { n, CX_INT, 0 }
#define T(n)                                                                                       \
  { n, CX_TEXT, 0 }
#define K(n)                                                                                       \
  { n, CX_KEY, 0 }
#define RUNKEY K("run_id"), K("host")
/* A text column added after its table's first release (cx_col.added). */
#define T_ADDED(n)                                                                                 \
  { n, CX_TEXT, 1 }

static const struct cx_col runs_cols[] = {RUNKEY,
                                          T("trace"),
                                          T("source"),
                                          I("target_pid"),
                                          I("start_ts"),
                                          I("end_ts"),
                                          I("start_wall_ns"),
                                          I("duration_ns"),
                                          I("events"),
                                          I("lost_events"),
                                          I("skipped_lines"),
                                          I("coroutines"),
                                          I("threads"),
                                          I("exit_code"),
                                          I("exit_signal"),
                                          I("findings"),
                                          T_ADDED("damaged")};
static const struct cx_col coro_cols[] = {
    RUNKEY,           I("probe_id"),     T("label"),        I("pid"),      I("parent"),
    T("create_site"), I("incarnations"), T("final_state"),  I("birth_ts"), I("first_ts"),
    I("last_ts"),     I("events"),       I("suspends"),     I("resumes"),  I("wakes"),
    I("lost_events"), I("run_ns"),       I("suspended_ns"), T("last_site")};
static const struct cx_col event_cols[] = {
    RUNKEY,       I("line"), I("probe_id"), I("tid"),       I("ts"),    I("rel_ns"),
    I("wall_ns"), T("kind"), I("ev"),       I("is_active"), T("addr"),  I("seq"),
    T("site"),    T("wait"), T("obj"),      I("from_id"),   I("parent")};
static const struct cx_col site_cols[] = {RUNKEY,
                                          I("pid"),
                                          K("site"),
                                          T("function"),
                                          T("file"),
                                          I("line"),
                                          T("module"),
                                          T("module_offset"),
                                          I("events"),
                                          I("suspensions"),
                                          I("suspended_p50_ns"),
                                          I("suspended_p99_ns"),
                                          I("suspended_max_ns")};
static const struct cx_col finding_cols[] = {RUNKEY,     I("finding"), K("kind"),    T("severity"),
                                             I("count"), T("title"),   T("evidence")};
static const struct cx_col fcoro_cols[] = {
    RUNKEY,   I("finding"), I("probe_id"),     T("label"),     T("wait"),
    T("obj"), T("site"),    I("suspended_ns"), I("waits_for"), T("evidence")};

#define TAB(n, c, i0, i1)                                                                          \
  {                                                                                                \
    n, c, (int)(sizeof c / sizeof c[0]), {                                                         \
      i0, i1                                                                                       \
    }                                                                                              \
  }
const struct cx_table cx_tables[CX_NTABLES] = {
    TAB("runs", runs_cols, NULL, NULL),
    TAB("coroutines", coro_cols, "run_id, host, probe_id", NULL),
    TAB("events", event_cols, "run_id, host, probe_id, ts", "run_id, host, ts"),
    TAB("sites", site_cols, "run_id, host, site", NULL),
    TAB("findings", finding_cols, "run_id, host, kind", NULL),
    TAB("finding_coroutines", fcoro_cols, "run_id, host, probe_id", NULL),
};

/* Value builders over a row under construction. */
struct rowb {
  struct cx_val v[CX_MAX_COLS];
  int n;
  char buf[CX_MAX_COLS][24]; /* hex and decimal texts */
  char text[16384];          /* texts made valid UTF-8 */
  size_t ntext;
};
static void vnull(struct rowb *r) {
  r->v[r->n++] = (struct cx_val){.null = 1};
}
static void vint(struct rowb *r, uint64_t i) {
  r->v[r->n++] = (struct cx_val){.i = (int64_t)i};
}
/* A text, as valid UTF-8 (ct_utf8_clean's rule): every target stores the same. */
static void vtext(struct rowb *r, const char *s) {
  if (!s) {
    vnull(r);
    return;
  }
  size_t n = strlen(s), i = 0, k;
  while (i < n && (k = ct_utf8_len(s + i, n - i)))
    i += k;
  if (i < n) { /* debug-info names are bytes, not always UTF-8 */
    char *o = r->text + r->ntext;
    k = ct_utf8_clean(s, n, o, sizeof r->text - r->ntext);
    r->ntext += k + 1;
    s = o, n = k;
  }
  r->v[r->n++] = (struct cx_val){.s = s, .n = n};
}
static void vhex(struct rowb *r, uint64_t a) {
  size_t n = cx_hex(a, r->buf[r->n]);
  r->v[r->n] = (struct cx_val){.s = r->buf[r->n], .n = n};
  r->n++;
}
/* The value when has, else NULL (the value is read either way: no lookups). */
static void vint_if(struct rowb *r, bool has, uint64_t i) {
  if (has)
    vint(r, i);
  else
    vnull(r);
}
static void vhex_if(struct rowb *r, bool has, uint64_t a) {
  if (has)
    vhex(r, a);
  else
    vnull(r);
}
static void vobj(struct rowb *r, int is_str, uint64_t o) {
  if (is_str)
    vhex(r, o);
  else {
    int n = snprintf(r->buf[r->n], sizeof r->buf[0], "%" PRIu64, o);
    r->v[r->n] = (struct cx_val){.s = r->buf[r->n], .n = (size_t)n};
    r->n++;
  }
}
static void vkey(struct rowb *r, const struct cx_run *run) {
  r->n = 0;
  r->ntext = 0;
  vtext(r, run->run_id);
  vtext(r, run->host);
}

static const char *state_name(int s) {
  static const char *const n[] = {"unknown", "created", "running", "suspended", "destroyed"};
  return n[s <= CT_CS_DESTROYED ? s : 0];
}

static int rows_runs(const struct cx_model *m, const struct cx_run *run, cx_row_fn fn, void *ctx) {
  struct rowb r;
  char damage[512];
  const struct ct_rtrace *st = &run->rep.t;
  const struct ct_report *rep = &run->rep;
  vkey(&r, run);
  vtext(&r, m->path);
  vtext(&r, st->has_meta ? "corotracer" : "reference");
  vint_if(&r, st->target_pid, st->target_pid);
  vint(&r, rep->start_ts);
  vint(&r, rep->end_ts);
  vint_if(&r, run->has_clock, cx_wall_ns(run, rep->start_ts));
  vint(&r, rep->duration_ns);
  vint(&r, run->nev);
  vint(&r, rep->lost_events);
  vint(&r, run->skipped);
  vint(&r, run->co.n);
  vint(&r, run->tids.n);
  vint_if(&r, st->exit_has_code, (uint64_t)st->exit_code);
  vint_if(&r, st->exit_has_signal, (uint64_t)st->exit_signal);
  vint(&r, rep->nf);
  vtext(&r, cx_damage(run, damage, sizeof damage));
  return fn(ctx, CX_T_RUNS, r.v);
}

static int rows_coros(const struct cx_run *run, cx_row_fn fn, void *ctx) {
  struct rowb r;
  for (size_t i = 0; i < run->co.n; i++) {
    const struct cx_coro *c = ct_map_at(&run->co, i);
    vkey(&r, run);
    vint(&r, cx_map_key(&run->co, i)); /* probe_id */
    vtext(&r, cx_label(run, c));
    vint_if(&r, c->pid, c->pid);
    vint_if(&r, c->has_parent, c->parent);
    vhex_if(&r, c->has_create_site, c->create_site);
    vint(&r, c->incarnations);
    vtext(&r, state_name(c->state));
    vint_if(&r, c->has_birth, c->birth_ts);
    if (c->events)
      vint(&r, c->first_ts), vint(&r, c->last_ts);
    else
      vnull(&r), vnull(&r);
    vint(&r, c->events);
    vint(&r, c->suspends);
    vint(&r, c->resumes);
    vint(&r, c->wakes);
    vint(&r, c->lost);
    vint(&r, c->run_ns);
    vint(&r, c->suspended_ns);
    vhex_if(&r, c->last_site, c->last_site);
    int rc = fn(ctx, CX_T_COROUTINES, r.v);
    if (rc)
      return rc;
  }
  return 0;
}

struct ev_rows {
  const struct cx_model *m;
  cx_row_fn fn;
  void *ctx;
};

/* cx_model_events callback: one events-table row. */
static int event_row(void *ctx, size_t run_ix, const struct ct_event *e) {
  const struct ev_rows *er = ctx;
  const struct cx_run *run = &er->m->runs[run_ix];
  struct rowb r;
  vkey(&r, run);
  vint(&r, e->line);
  vint(&r, e->probe_id);
  vint(&r, e->tid);
  vint(&r, e->ts);
  vint(&r, e->ts - run->rep.start_ts);
  vint_if(&r, run->has_clock, cx_wall_ns(run, e->ts));
  vtext(&r, cx_kind_name(e->kind));
  vint_if(&r, e->has_ev, e->ev);
  vint(&r, e->is_active);
  vhex(&r, e->addr);
  vint(&r, e->seq);
  vhex_if(&r, e->has_site, e->site);
  vtext(&r, ct_wait_obj_name(e->wait));
  if (e->wait)
    vobj(&r, e->obj_is_str, e->obj);
  else
    vnull(&r);
  vint_if(&r, e->has_from, e->from);
  vint_if(&r, e->has_parent, e->parent);
  return er->fn(er->ctx, CX_T_EVENTS, r.v);
}

/* The report's duration percentiles of a suspension site, if it has them. */
static const struct ct_rsite *report_site(const struct cx_run *run, const struct ct_rsite *s) {
  for (size_t i = 0; i < run->rep.nsites; i++)
    if (run->rep.sites[i].site == s->site && run->rep.sites[i].pid == s->pid)
      return &run->rep.sites[i];
  return NULL;
}

static int rows_sites(const struct cx_run *run, cx_row_fn fn, void *ctx) {
  struct rowb r;
  for (size_t i = 0; i < run->sites.n; i++) {
    const struct cx_site *s = ct_map_at(&run->sites, i);
    const struct ct_sym *y = &s->rs.sym;
    vkey(&r, run);
    vint_if(&r, s->rs.pid, s->rs.pid);
    vhex(&r, s->rs.site);
    vtext(&r, y->function);
    vtext(&r, y->file);
    vint_if(&r, y->line, (uint64_t)y->line);
    vtext(&r, y->module);
    vhex_if(&r, y->module, y->offset);
    vint(&r, s->rs.count);
    vint(&r, s->suspensions);
    const struct ct_rsite *rs = report_site(run, &s->rs);
    if (rs && rs->has_dur)
      vint(&r, rs->p50), vint(&r, rs->p99), vint(&r, rs->max);
    else
      vnull(&r), vnull(&r), vnull(&r);
    int rc = fn(ctx, CX_T_SITES, r.v);
    if (rc)
      return rc;
  }
  return 0;
}

static int rows_findings(const struct cx_run *run, int t, cx_row_fn fn, void *ctx) {
  struct rowb r;
  char ev[CT_EVIDENCE_MAX * 322];
  for (size_t i = 0; i < run->rep.nf; i++) {
    const struct ct_finding *f = &run->rep.f[i];
    if (t == CX_T_FINDINGS) {
      size_t n = 0;
      ev[0] = 0;
      for (size_t k = 0; k < f->nevidence; k++)
        n += (size_t)snprintf(ev + n, sizeof ev - n, "%s%s", k ? "\n" : "", f->evidence[k]);
      vkey(&r, run);
      vint(&r, i);
      vtext(&r, f->kind);
      vtext(&r, ct_sev_name(f->sev));
      vint(&r, f->count);
      vtext(&r, f->title);
      vtext(&r, ev);
      int rc = fn(ctx, t, r.v);
      if (rc)
        return rc;
      continue;
    }
    for (size_t k = 0; k < f->ncoros; k++) {
      const struct ct_rcoro *c = &f->coros[k];
      vkey(&r, run);
      vint(&r, i);
      vint(&r, c->probe_id);
      vtext(&r, c->label);
      vtext(&r, ct_wait_obj_name(c->wait));
      if (c->wait)
        vobj(&r, c->wait == CTP_WAIT_PTR, c->obj);
      else
        vnull(&r);
      if (c->site_index >= 0 && (size_t)c->site_index < f->nsites)
        vhex(&r, f->sites[c->site_index].site);
      else
        vnull(&r);
      vint_if(&r, c->has_susp, c->suspended_ns);
      vint_if(&r, c->waits_for, c->waits_for);
      vtext(&r, c->evidence[0] ? c->evidence : NULL);
      int rc = fn(ctx, t, r.v);
      if (rc)
        return rc;
    }
  }
  return 0;
}

/* Rows of table t of one run (not the events: they stream from the file). */
static int rows_run(const struct cx_model *m, const struct cx_run *run, int t, cx_row_fn fn,
                    void *ctx) {
  switch (t) {
  case CX_T_RUNS:
    return rows_runs(m, run, fn, ctx);
  case CX_T_COROUTINES:
    return rows_coros(run, fn, ctx);
  case CX_T_SITES:
    return rows_sites(run, fn, ctx);
  default:
    return rows_findings(run, t, fn, ctx);
  }
}

int cx_rows(const struct cx_model *m, int t, cx_row_fn fn, void *ctx) {
  if (t == CX_T_EVENTS) {
    struct ev_rows er = {m, fn, ctx};
    return cx_model_events(m, event_row, &er);
  }
  for (size_t i = 0; i < m->nruns; i++) {
    int rc = rows_run(m, &m->runs[i], t, fn, ctx);
    if (rc)
      return rc;
  }
  return 0;
}

uint64_t cx_row_count(const struct cx_model *m, int t) {
  uint64_t n = 0;
  for (size_t i = 0; i < m->nruns; i++) {
    const struct cx_run *r = &m->runs[i];
    switch (t) {
    case CX_T_RUNS:
      n++;
      break;
    case CX_T_COROUTINES:
      n += r->co.n;
      break;
    case CX_T_EVENTS:
      n += r->nev;
      break;
    case CX_T_SITES:
      n += r->sites.n;
      break;
    case CX_T_FINDINGS:
      n += r->rep.nf;
      break;
    default:
      for (size_t k = 0; k < r->rep.nf; k++)
        n += r->rep.f[k].ncoros;
    }
  }
  return n;
}

struct emit {
  struct cx_sink *s;
  uint64_t done, total, *counts;
  cx_progress_fn prog;
  void *pctx;
};

static int emit_row(void *ctx, int t, const struct cx_val *v) {
  struct emit *e = ctx;
  int rc = e->s->row(e->s, t, v);
  if (rc)
    return rc;
  e->counts[t]++;
  if ((++e->done & 4095) == 0 && e->prog)
    e->prog(e->pctx, e->done, e->total);
  return 0;
}

int cx_emit(struct cx_sink *s, const struct cx_model *m, const struct cx_names *n,
            uint64_t counts[CX_NTABLES], cx_progress_fn prog, void *pctx) {
  struct emit e = {.s = s, .counts = counts, .prog = prog, .pctx = pctx};
  for (int t = 0; t < CX_NTABLES; t++)
    e.total += cx_row_count(m, t), counts[t] = 0;
  int rc = s->begin(s, m, n);
  for (int t = 0; !rc && t < CX_NTABLES; t++) {
    if (!(rc = s->table_begin(s, t)))
      rc = cx_rows(m, t, emit_row, &e);
    if (!rc)
      rc = s->table_end(s, t);
  }
  if (!rc)
    rc = s->commit(s);
  if (rc)
    s->abort(s);
  if (prog)
    prog(pctx, e.done, e.total);
  return rc;
}
