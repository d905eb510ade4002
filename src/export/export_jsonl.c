/* export_jsonl.c - two JSONL outputs: `jsonl`, the event lines with the
 * derived columns of the events table (run, kind, wall time...), one flat
 * object per event; and `jsonl-v1`, the event lines only, in the reference
 * engine's keys, so the reference's own readers read our traces. */
#include "export/export.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "common/jsonesc.h"

struct jctx {
  FILE *f;
  uint64_t n, total;
  cx_progress_fn prog;
  void *pctx;
};

/* One events-table row as a flat JSON object; NULL columns left out. */
static int jsonl_row(void *ctx, int t, const struct cx_val *v) {
  struct jctx *j = ctx;
  const struct cx_table *tb = &cx_tables[t];
  putc('{', j->f);
  int first = 1;
  for (int i = 0; i < tb->ncols; i++) {
    if (v[i].null)
      continue; /* absent, as in the trace */
    fprintf(j->f, "%s\"%s\":", first ? "" : ",", tb->cols[i].name);
    first = 0;
    if (tb->cols[i].type != CX_INT)
      ct_json_fput(j->f, v[i].s, v[i].n);
    else if (!strcmp(tb->cols[i].name, "is_active"))
      fputs(v[i].i ? "true" : "false", j->f);
    else
      fprintf(j->f, "%" PRIu64, (uint64_t)v[i].i);
  }
  fputs("}\n", j->f);
  if (ferror(j->f))
    return -(errno ? errno : EIO);
  if ((++j->n & 4095) == 0 && j->prog)
    j->prog(j->pctx, j->n, j->total);
  return 0;
}

int cx_write_jsonl(FILE *f, const struct cx_model *m, uint64_t *rows, cx_progress_fn prog,
                   void *pctx) {
  struct jctx j = {.f = f, .total = m->nev, .prog = prog, .pctx = pctx};
  int rc = cx_rows(m, CX_T_EVENTS, jsonl_row, &j);
  *rows = j.n;
  if (prog)
    prog(pctx, j.n, j.total);
  return rc;
}

struct v1ctx {
  FILE *f;
  uint64_t rows, skipped;
  int traced; /* a line made the input a trace (ct_line_is_trace) */
};

/* Event lines only: records and malformed lines would be read by the
 * reference as events with probe_id 0 and ts 0. Torn copies of the
 * reference's own traces are dropped for the same reason, and wakes: a v1
 * slot records state switches only, and a wake is none (create and destroy
 * keep their v1 look: not active, addr = the site, like a v1 SDK's initial
 * and final suspends). */
static int v1_line(void *ctx, uint64_t lineno, enum ct_line_err err, const struct ct_line *l) {
  struct v1ctx *v = ctx;
  char addr[20];
  (void)lineno;
  v->traced |= ct_line_is_trace(err, l);
  if (err != CT_LINE_OK || l->type != CT_LINE_EVENT || l->kind == CT_EV_WAKE) {
    v->skipped++;
    return 0;
  }
  cx_hex(l->addr, addr);
  fprintf(v->f,
          "{\"probe_id\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"addr\":\"%s\",\"seq\":%" PRIu64
          ",\"is_active\":%s,\"ts\":%" PRIu64 "}\n",
          l->probe_id, l->tid, addr, l->seq, l->is_active ? "true" : "false", l->ts);
  v->rows++;
  return ferror(v->f) ? -(errno ? errno : EIO) : 0;
}

int cx_write_jsonl_v1(int in_fd, FILE *f, uint64_t *rows, uint64_t *skipped,
                      struct ct_read_diag *diag) {
  struct v1ctx v = {.f = f};
  uint64_t bytes = 0;
  int rc = ct_trace_read_diag(in_fd, 1u << 20, v1_line, NULL, &v, &bytes, diag);
  *rows = v.rows;
  *skipped = v.skipped;
  if (!rc && !v.traced)
    return -EPROTO; /* lines, none of them a trace's (before any damage) */
  return rc;
}
