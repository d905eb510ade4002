/* write_json.c - the findings JSON, exactly the keys of docs/FINDINGS.md
 * (plus a few added ones: trace.bytes/torn/migrations/idle_gaps/not_judged,
 * likely_idle on coroutines, top-level sites). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "analysis/model.h"
#include "common/jsonesc.h"

/* A JSON string through the one escaper (common/jsonesc.h); NULL as "". */
static void jstr(FILE *f, const char *s) {
  ct_json_fput(f, s ? s : "", s ? strlen(s) : 0);
}

/* A site object (blocker: its durations are run times, not suspended times). */
static void site(FILE *f, const struct ct_rsite *rs, int blocker) {
  fprintf(f, "{\"site\":\"0x%016" PRIx64 "\"", rs->site);
  if (rs->symbolized) {
    if (rs->sym.function) {
      fputs(",\"function\":", f);
      jstr(f, rs->sym.function);
    }
    if (rs->sym.file) {
      fputs(",\"file\":", f);
      jstr(f, rs->sym.file);
      fprintf(f, ",\"line\":%d", rs->sym.line);
    }
    fputs(",\"module\":", f);
    jstr(f, rs->sym.module);
    fprintf(f, ",\"offset\":\"0x%" PRIx64 "\"", rs->sym.offset);
  }
  if (rs->count)
    fprintf(f, ",\"count\":%" PRIu64, rs->count); /* 0: a wake's or run end's site */
  if (rs->has_dur)
    fprintf(f, ",\"%s\":{\"p50\":%" PRIu64 ",\"p99\":%" PRIu64 ",\"max\":%" PRIu64 "}",
            blocker ? "run_ns" : "suspended_ns", rs->p50, rs->p99, rs->max);
  if (rs->has_runnable)
    fprintf(f, ",\"runnable_ns\":{\"p50\":%" PRIu64 ",\"p99\":%" PRIu64 ",\"max\":%" PRIu64 "}",
            rs->r_p50, rs->r_p99, rs->r_max);
  if (rs->has_fd)
    fprintf(f, ",\"fds\":[%" PRIu64 ",%" PRIu64 "]", rs->fd_min, rs->fd_max);
  fputc('}', f);
}

/* The object of a wake or destroy w: who, when, where. */
static void event(FILE *f, const struct ct_report *r, const struct ct_rwake *w) {
  fprintf(f, "{\"from\":%" PRIu64 ",\"ts\":%" PRIu64 ",\"at_ns\":%" PRIu64, w->from, w->ts,
          w->ts > r->start_ts ? w->ts - r->start_ts : 0);
  if (!w->from && w->tid)
    fprintf(f, ",\"tid\":%" PRIu32, w->tid);
  if (w->absorbed)
    fprintf(f, ",\"absorbed\":true,\"yield_ts\":%" PRIu64 ",\"resume_ts\":%" PRIu64, w->yield_ts,
            w->resume_ts);
  fputs(",\"site\":", f);
  site(f, &w->site, 0);
  fputc('}', f);
}

/* A coroutine object of a finding. */
static void coro(FILE *f, const struct ct_report *r, const struct ct_rcoro *c) {
  fprintf(f, "{\"probe_id\":%" PRIu64, c->probe_id);
  if (c->incarnation)
    fprintf(f, ",\"incarnation\":%" PRIu32, c->incarnation + 1);
  if (c->label) {
    fputs(",\"label\":", f);
    jstr(f, c->label);
  }
  if (c->wait == CTP_WAIT_FD)
    fprintf(f, ",\"wait\":\"fd\",\"obj\":%" PRId64, (int64_t)c->obj);
  else if (c->wait == CTP_WAIT_PTR)
    fprintf(f, ",\"wait\":\"ptr\",\"obj\":\"0x%016" PRIx64 "\"", c->obj);
  else if (c->wait == CTP_WAIT_COROUTINE)
    fprintf(f, ",\"wait\":\"coroutine\",\"obj\":%" PRIu64, c->obj);
  if (c->site_index >= 0)
    fprintf(f, ",\"site_index\":%d", c->site_index);
  if (c->has_susp)
    fprintf(f, ",\"suspended_ns\":%" PRIu64, c->suspended_ns);
  if (c->waits_for)
    fprintf(f, ",\"waits_for\":%" PRIu64, c->waits_for);
  if (c->likely_idle)
    fputs(",\"likely_idle\":true", f);
  fputs(",\"evidence\":", f);
  jstr(f, c->evidence);
  if (c->never_destroyed)
    fputs(",\"never_destroyed\":true", f);
  if (c->returned)
    fputs(",\"returned\":true", f);
  if (c->wake) {
    fputs(",\"wake\":", f);
    event(f, r, c->wake);
  }
  if (c->destroyed) {
    fputs(",\"destroyed\":", f);
    event(f, r, c->destroyed);
  }
  if (c->obj_name) {
    fputs(",\"obj_name\":", f);
    jstr(f, c->obj_name);
  }
  if (c->obj_wake) {
    fputs(",\"obj_last_wake\":", f);
    event(f, r, c->obj_wake);
  }
  if (c->runnable_ns)
    fprintf(f, ",\"runnable_ns\":%" PRIu64 ",\"tid\":%" PRIu32 ",\"others\":%" PRIu64,
            c->runnable_ns, c->tid, c->others);
  for (size_t i = 0; i < c->nheld; i++) {
    fprintf(f, "%s{\"probe_id\":%" PRIu64, i ? "," : ",\"held_by\":[", c->held_by[i].probe_id);
    if (c->held_by[i].incarnation)
      fprintf(f, ",\"incarnation\":%" PRIu32, c->held_by[i].incarnation + 1);
    if (c->held_by[i].label) {
      fputs(",\"label\":", f);
      jstr(f, c->held_by[i].label);
    }
    fprintf(f, ",\"resumes\":%" PRIu64 "}%s", c->held_by[i].resumes, i + 1 == c->nheld ? "]" : "");
  }
  if (c->run_end) {
    fprintf(f, ",\"run_end\":{\"kind\":\"%s\"", c->run_end);
    if (c->end_site) {
      fputs(",\"site\":", f);
      site(f, c->end_site, 0);
    }
    fputc('}', f);
  }
  fputc('}', f);
}

/* The "trace" object: the run, its counts, what was lost or left out. */
static void trace(FILE *f, const struct ct_report *r) {
  const struct ct_rtrace *st = &r->t;
  uint64_t bad = st->bad[CT_LINE_SYNTAX] + st->bad[CT_LINE_SHAPE] + st->bad[CT_LINE_TORN];
  fputs("\"trace\":{\"path\":", f);
  jstr(f, r->path);
  if (r->damage) {
    fputs(",\"damaged\":", f);
    jstr(f, r->damage);
  }
  if (st->dwait_short || st->left_short) { /* waits not longer than the threshold */
    fputs(",\"short_waits\":{", f);
    if (st->dwait_short) /* destroyed while waiting */
      fprintf(f, "\"destroyed_waiting\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",",
              st->dwait_short, st->dwait_short_min, st->dwait_short_max);
    if (st->left_short) /* still suspended at the end of a trace without wakes */
      fprintf(f,
              "\"still_waiting\":%" PRIu64 ",\"still_min_ns\":%" PRIu64 ",\"still_max_ns\":%" PRIu64
              ",",
              st->left_short, st->left_short_min, st->left_short_max);
    fprintf(f, "\"stuck_ns\":%" PRIu64 ",\"option\":\"--stuck-ms\"}", st->stuck_ns);
  }
  if (ct_symbolizer_stale(r->sym, 0)) { /* files rebuilt since the run: not symbolized */
    fputs(",\"rebuilt_modules\":[", f);
    for (size_t i = 0; ct_symbolizer_stale(r->sym, i); i++) {
      fputs(i ? "," : "", f);
      jstr(f, ct_symbolizer_stale(r->sym, i));
    }
    fputc(']', f);
  }
  fprintf(f,
          ",\"bytes\":%" PRIu64 ",\"lines\":%" PRIu64 ",\"malformed\":%" PRIu64 ",\"torn\":%" PRIu64
          ",\"malformed_lines\":[",
          r->bytes, st->lines, bad, st->bad[CT_LINE_TORN]);
  for (uint64_t i = 0; i < st->nbad_kept; i++)
    fprintf(f, "%s%" PRIu64, i ? "," : "", st->bad_lines[i]);
  fprintf(f,
          "],\"events\":%" PRIu64 ",\"coroutines\":%" PRIu64 ",\"threads\":%" PRIu64
          ",\"start_ts\":%" PRIu64 ",\"end_ts\":%" PRIu64 ",\"duration_ns\":%" PRIu64
          ",\"active_ns\":%" PRIu64 ",\"lost_events\":%" PRIu64 ",\"migrations\":%" PRIu64
          ",\"resumes\":%" PRIu64 ",\"alive_at_end\":%" PRIu64 ",\"absurd_ts\":%" PRIu64,
          st->events, r->coroutines, r->threads, r->start_ts, r->end_ts, r->duration_ns,
          r->active_ns, r->lost_events, st->migrations, st->resumes, r->alive_at_end, r->absurd_ts);
  fprintf(f, ",\"reused_ids\":%" PRIu64 ",\"returned\":%" PRIu64 ",\"sites_not_code\":%s",
          st->reused_ids, st->returned, st->sites_not_code ? "true" : "false");
  fputs(",\"idle_gaps\":[", f);
  for (size_t i = 0; i < r->ngaps; i++)
    fprintf(f, "%s{\"from_ts\":%" PRIu64 ",\"to_ts\":%" PRIu64 "}", i ? "," : "", r->gaps[i].from,
            r->gaps[i].to);
  fputs("],\"not_judged\":{", f);
  for (int k = 0; k < CT_V_KINDS_; k++)
    fprintf(f, "%s\"%s\":%" PRIu64, k ? "," : "", ct_viol_kinds[k], st->viol[k].not_judged);
  fputc('}', f);
  if (r->runs > 1)
    fprintf(f, ",\"run\":%u,\"runs\":%u", r->run, r->runs);
  if (st->run_id[0]) {
    fputs(",\"run_id\":", f);
    jstr(f, st->run_id);
  }
  if (st->host[0]) {
    fputs(",\"host\":", f);
    jstr(f, st->host);
  }
  if (st->exit_has_signal) {
    fprintf(f, ",\"exit\":{\"signal\":%" PRId64 ",\"name\":", st->exit_signal);
    jstr(f, st->exit_name);
    fputc('}', f);
  } else if (st->exit_has_code) {
    fprintf(f, ",\"exit\":{\"code\":%" PRId64 "}", st->exit_code);
  }
  fputc('}', f);
}

/* model.h: 0, or -EIO when a write to f failed (ferror). */
int ct_write_json(FILE *f, const struct ct_report *r) {
  fputs("{\"format\":\"corotracer-findings\",\"version\":1,\n", f);
  trace(f, r);
  fputs(",\n\"findings\":[", f);
  for (size_t i = 0; i < r->nf; i++) {
    const struct ct_finding *fi = &r->f[i];
    int blocker = strcmp(fi->kind, "blocker") == 0;
    fprintf(f, "%s\n{\"kind\":\"%s\",\"severity\":\"%s\",\"count\":%" PRIu64 ",\"title\":",
            i ? "," : "", fi->kind, ct_sev_name(fi->sev), fi->count);
    jstr(f, fi->title);
    fputs(",\n \"sites\":[", f);
    for (size_t k = 0; k < fi->nsites; k++) {
      if (k)
        fputc(',', f);
      site(f, &fi->sites[k], blocker);
    }
    fputs("],\n \"coroutines\":[", f);
    for (size_t k = 0; k < fi->ncoros; k++) {
      fputs(k ? ",\n  " : "\n  ", f);
      coro(f, r, &fi->coros[k]);
    }
    fputs("],\n \"related\":[", f);
    for (size_t k = 0; k < fi->nrelated; k++)
      fprintf(f, "%s{\"kind\":\"%s\",\"count\":%" PRIu64 ",\"relation\":\"%s\"}", k ? "," : "",
              fi->related[k].kind, fi->related[k].count, fi->related[k].relation);
    fputs("],\n \"evidence\":[", f);
    for (size_t k = 0; k < fi->nevidence; k++) {
      if (k)
        fputc(',', f);
      jstr(f, fi->evidence[k]);
    }
    fputs("]}", f);
  }
  fputs("],\n\"sites\":[", f);
  for (size_t i = 0; i < r->nsites; i++) {
    fputs(i ? ",\n " : "\n ", f);
    site(f, &r->sites[i], 0);
  }
  fputs("]}\n", f);
  fflush(f);
  return ferror(f) ? -EIO : 0;
}
