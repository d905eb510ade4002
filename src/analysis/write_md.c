/* write_md.c - the report in Markdown: overview, findings with symbolized
 * sites and per-coroutine evidence, suspension sites with percentiles. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "analysis/model.h"

#define MD_COROS_SHOWN 20
#define MD_SITES_SHOWN 10

/* One list item of fi's site rs: where, how many, and its percentiles. */
static void site_line(FILE *f, const struct ct_finding *fi, const struct ct_rsite *rs) {
  char s[512], a[32], b[32], c[32];
  int blocker = strcmp(fi->kind, "blocker") == 0;
  fprintf(f, "- `%s`: %" PRIu64 " %s", ct_fmt_site(rs, s, sizeof s), rs->count,
          blocker ? (rs->count == 1 ? "long run" : "long runs")
                  : (rs->count == 1 ? "coroutine" : "coroutines"));
  if (rs->has_fd && rs->fd_min == rs->fd_max)
    fprintf(f, ", fd %" PRIu64, rs->fd_min);
  else if (rs->has_fd)
    fprintf(f, ", fds %" PRIu64 "-%" PRIu64, rs->fd_min, rs->fd_max);
  if (rs->has_dur)
    fprintf(f, ", %s %s median (p99 %s, max %s)", blocker ? "ran" : "suspended",
            ct_fmt_ns(rs->p50, a, sizeof a), ct_fmt_ns(rs->p99, b, sizeof b),
            ct_fmt_ns(rs->max, c, sizeof c));
  if (rs->has_runnable)
    fprintf(f, ", runnable %s median (p99 %s, max %s)", ct_fmt_ns(rs->r_p50, a, sizeof a),
            ct_fmt_ns(rs->r_p99, b, sizeof b), ct_fmt_ns(rs->r_max, c, sizeof c));
  fputc('\n', f);
}

/* The overview's line on n coroutines that waited (what) min to max ns, no
 * longer than the never-woken threshold: not judged, so said here with the
 * option (and a value, when one fits) that would judge them. */
static void short_waits(FILE *f, const struct ct_rtrace *st, const char *what, uint64_t n,
                        uint64_t min, uint64_t max) {
  char a[32], b[32], t[32];
  fprintf(f, "- **Not judged, short waits**: %" PRIu64 " coroutine%s %s, after %s", n,
          n == 1 ? "" : "s", what, ct_fmt_ns(min, a, sizeof a));
  if (max != min)
    fprintf(f, " to %s", ct_fmt_ns(max, b, sizeof b));
  fprintf(f, ", not longer than the %s threshold", ct_fmt_ns(st->stuck_ns, t, sizeof t));
  if (min > 1000000u)
    fprintf(f, ": `--stuck-ms %" PRIu64 "` would judge %s\n", (min - 1) / 1000000u,
            n == 1 ? "it" : "them all");
  else
    fputs(": too short for `--stuck-ms` to judge\n", f);
}

/* Markdown table cells must not contain '|' or newlines. */
static void cell(FILE *f, const char *s) {
  for (; s && *s; s++) {
    if (*s == '|')
      fputs("\\|", f);
    else
      fputc(*s == '\n' ? ' ' : *s, f);
  }
}

/* The coroutines of fi whose likely_idle is idle, as a table. */
static void coro_table(FILE *f, const struct ct_finding *fi, int idle) {
  size_t n = 0, shown = 0;
  for (size_t i = 0; i < fi->ncoros; i++)
    n += fi->coros[i].likely_idle == idle;
  if (!n)
    return;
  if (idle)
    fputs("Likely idle: parked where they were woken many times in a row before (an accept loop"
          " waiting for the next client looks like this); unwoken all the same:\n\n",
          f);
  if (n > MD_COROS_SHOWN)
    fprintf(f, "First %d of %zu coroutines:\n\n", MD_COROS_SHOWN, n);
  fputs("| coroutine | label | waits on | site | evidence |\n| --- | --- | --- | --- | --- |\n", f);
  for (size_t i = 0; i < fi->ncoros && shown < MD_COROS_SHOWN; i++) {
    const struct ct_rcoro *c = &fi->coros[i];
    char s[512] = "";
    if (c->likely_idle != idle)
      continue;
    shown++;
    fprintf(f, "| %" PRIu64, c->probe_id);
    if (c->incarnation)
      fprintf(f, " (#%" PRIu32 ")", c->incarnation + 1);
    fputs(" | ", f);
    cell(f, c->label ? c->label : "");
    fputs(" | ", f);
    if (c->wait == CTP_WAIT_FD)
      fprintf(f, "fd %" PRId64, (int64_t)c->obj);
    else if (c->wait == CTP_WAIT_PTR && c->obj_name)
      cell(f, c->obj_name);
    else if (c->wait == CTP_WAIT_PTR)
      fprintf(f, "0x%" PRIx64, c->obj);
    else if (c->wait == CTP_WAIT_COROUTINE)
      fprintf(f, "coroutine %" PRIu64, c->obj);
    if (c->waits_for && c->wait != CTP_WAIT_COROUTINE)
      fprintf(f, " (coroutine %" PRIu64 ")", c->waits_for);
    fputs(" | ", f);
    if (c->site_index >= 0)
      cell(f, ct_fmt_site(&fi->sites[c->site_index], s, sizeof s));
    fputs(" | ", f);
    cell(f, c->evidence);
    fputs(" |\n", f);
  }
  fputc('\n', f);
}

/* Finding idx: heading, evidence, its first MD_SITES_SHOWN sites, coroutine tables. */
static void finding(FILE *f, const struct ct_report *r, size_t idx) {
  const struct ct_finding *fi = &r->f[idx];
  fprintf(f, "### %zu. [%s] %s\n\n", idx + 1, ct_sev_name(fi->sev), fi->title);
  fprintf(f, "`%s`", fi->kind);
  for (size_t i = 0; i < fi->nevidence; i++)
    fprintf(f, "%s %s", i ? ";" : ":", fi->evidence[i]);
  fputs(".\n\n", f);
  size_t nsites = fi->nsites < MD_SITES_SHOWN ? fi->nsites : MD_SITES_SHOWN;
  for (size_t i = 0; i < nsites; i++)
    site_line(f, fi, &fi->sites[i]);
  if (nsites < fi->nsites)
    fprintf(f, "- %zu more sites (all in the JSON)\n", fi->nsites - nsites);
  if (fi->nsites)
    fputc('\n', f);
  coro_table(f, fi, 0);
  coro_table(f, fi, 1);
}

/* The overview's list: the run, its time line, the trace's health. */
static void overview(FILE *f, const struct ct_report *r) {
  const struct ct_rtrace *st = &r->t;
  char a[32], b[32];
  fprintf(f,
          "- **Trace**: `%s`, %" PRIu64 " %s%s (%.1f MB), %" PRIu64 " events, %" PRIu64
          " coroutine%s, %" PRIu64 " thread%s",
          r->path, st->lines, r->binary ? "record" : "line", st->lines == 1 ? "" : "s",
          (double)r->bytes / 1e6, st->events, r->coroutines, r->coroutines == 1 ? "" : "s",
          r->threads, r->threads == 1 ? "" : "s");
  if (st->run_id[0])
    fprintf(f, "; run `%s`", st->run_id);
  if (st->host[0])
    fprintf(f, " on `%s`", st->host);
  fputs(!st->has_meta ? " (no meta line: a reference-engine or v1 trace)\n" : "\n", f);
  if (!st->events)
    fputs("- **Duration**: no events\n", f);
  else
    fprintf(f, "- **Duration**: %s (from the first event to %s)\n",
            ct_fmt_ns(r->duration_ns, a, sizeof a),
            st->has_end && st->end_ts ? "the end line" : "the last event");
  if (st->reused_ids)
    fprintf(f,
            "- **Reused ids**: %" PRIu64 " coroutines were created with the id of one destroyed "
            "before them (memory reused): each is a new incarnation, shown as `id (#N)`\n",
            st->reused_ids);
  if (st->returned)
    fprintf(f, "- **Returned**: %" PRIu64 " final suspends (coroutines that finished their body)\n",
            st->returned);
  if (r->gaps_total) {
    fprintf(f, "- **Idle gaps**: only %s of it had events; %zu stretch%s over 60 s without any:",
            ct_fmt_ns(r->active_ns, a, sizeof a), r->gaps_total, r->gaps_total == 1 ? "" : "es");
    for (size_t i = 0; i < r->ngaps; i++)
      fprintf(f, "%s %s from +%s", i ? "," : "",
              ct_fmt_ns(r->gaps[i].to - r->gaps[i].from, a, sizeof a),
              ct_fmt_ns(r->gaps[i].from - r->start_ts, b, sizeof b));
    fputs(" (machine asleep, or timestamps of several runs in one file)\n", f);
  }
  if (st->has_window)
    fprintf(f,
            "- **Flight window**: a flight recorder's dump (trigger: %s); %" PRIu64
            " coroutines alive at its start come from its snapshot, their state then\n",
            st->window_trigger[0] ? st->window_trigger : "?", st->snapshot_coros);
  if (st->other_records)
    fprintf(f,
            "- **Unknown records**: %" PRIu64
            " lines of a record type this report does not know, skipped\n",
            st->other_records);
  if (r->absurd_ts)
    fprintf(f,
            "- **Absurd timestamps**: %" PRIu64 " events lie more than a day away from all others"
            " (torn clocks); left out of the duration\n",
            r->absurd_ts);
  if (st->dwait_short)
    short_waits(f, st, "destroyed while still waiting, never woken", st->dwait_short,
                st->dwait_short_min, st->dwait_short_max);
  if (st->left_short) /* a trace without wakes cannot tell a lost one sooner */
    short_waits(f, st, "still suspended at the end of a trace that records no wakes",
                st->left_short, st->left_short_min, st->left_short_max);
  for (size_t i = 0; ct_symbolizer_stale(r->sym, i); i++)
    fprintf(f,
            "- **Warning: rebuilt since the run**: `%s` on disk has another build id than the"
            " file that ran: its sites are shown as module+offset, unsymbolized, not as lines of"
            " the new build\n",
            ct_symbolizer_stale(r->sym, i));
  if (r->damage)
    fprintf(f, "- **Damaged**: %s; the report covers what came before\n", r->damage);
  if (!st->has_end && st->cut_reason[0])
    fprintf(f,
            "- **End**: no end line: the trace was cut by %s (the engine could not write more)\n",
            st->cut_reason);
  else if (!st->has_end)
    fputs("- **End**: no end line: the trace was cut short\n", f);
  else if (st->exit_has_signal)
    fprintf(f, "- **End**: killed by %s (signal %" PRId64 ")\n",
            st->exit_name[0] ? st->exit_name : "?", st->exit_signal);
  else if (st->exit_has_code)
    fprintf(f, "- **End**: exited with code %" PRId64 "\n", st->exit_code);
  uint64_t bad = st->bad[CT_LINE_SYNTAX] + st->bad[CT_LINE_SHAPE] + st->bad[CT_LINE_TORN];
  if (bad) {
    fprintf(f,
            "- **Malformed lines**: %" PRIu64 " skipped (%" PRIu64 " torn records, %" PRIu64
            " invalid JSON, %" PRIu64 " of an unexpected shape); first at line%s",
            bad, st->bad[CT_LINE_TORN], st->bad[CT_LINE_SYNTAX], st->bad[CT_LINE_SHAPE],
            st->nbad_kept == 1 ? "" : "s");
    for (uint64_t i = 0; i < st->nbad_kept; i++)
      fprintf(f, "%s %" PRIu64, i ? "," : "", st->bad_lines[i]);
    fputc('\n', f);
  }
  if (st->window_has_lost)
    fprintf(f,
            "- **Completeness**: %" PRIu64 " events lost in the window, %" PRIu64
            " before it (the engine's counts when the dump was written)\n",
            st->window_lost - st->window_dropped_lost, st->window_dropped_lost);
  else if (st->any_ev || st->has_end_counts)
    fprintf(f, "- **Completeness**: %" PRIu64 " events lost%s\n", r->lost_events,
            st->has_end || !st->has_meta
                ? ""
                : " up to the cut (the end line, which holds the totals, is missing)");
  else if (st->has_meta)
    fputs("- **Completeness**: unknown: the trace ends before its end line, which holds the"
          " loss counts\n",
          f);
  else
    fprintf(f,
            "- **Completeness**: %" PRIu64
            " events lost as far as a v1 trace can tell (it has no loss counts)\n",
            r->lost_events);
  uint64_t nj = 0;
  for (int k = 0; k < CT_V_KINDS_; k++)
    nj += st->viol[k].not_judged;
  if (nj) {
    fputs("- **Not judged, evidence lost**:", f);
    for (int k = 0, first = 1; k < CT_V_KINDS_; k++)
      if (st->viol[k].not_judged) {
        fprintf(f, "%s %" PRIu64 " `%s`", first ? "" : ",", st->viol[k].not_judged,
                ct_viol_kinds[k]);
        first = 0;
      }
    fputs(": each came after lost events (a gap in `ev`: the events may have been lost anywhere"
          " after it), which may hold the suspend, wake or create it lacks; not reported\n",
          f);
  }
  fprintf(f,
          "- **Thread migrations**: %" PRIu64 " of %" PRIu64
          " resumes ran on another thread than the coroutine's previous resume\n",
          st->migrations, st->resumes);
  if (r->alive_at_end && r->killed)
    fprintf(f,
            "- **Alive at the end**: %" PRIu64 " coroutines; not reported as leaks because %s "
            "(a live server's connections are not leaks)\n",
            r->alive_at_end, st->has_end ? "the program was killed" : "the trace was cut short");
  if (st->sites_not_code)
    fprintf(
        f,
        "- **Suspend addresses are not code**: no module map and %" PRIu64
        "+ distinct addresses, about"
        " one per coroutine (a reference SDK's frame or future addresses): not listed or timed as"
        " sites\n",
        st->sites_dropped);
  else if (!st->modules)
    fputs("- **Symbols**: the trace has no module lines: sites are raw addresses, unsymbolized"
          " (in a v1 trace, suspend addresses are the SDK's frame addresses, not code)\n",
          f);
  else if (st->sym_err)
    fprintf(f, "- **Symbols**: some module lines could not be used (%s)\n", strerror(-st->sym_err));
}

/* Three table cells: p50, p99, max, or dashes without them. */
static void times(FILE *f, int has, uint64_t p50, uint64_t p99, uint64_t max) {
  char a[32], b[32], c[32];
  if (has)
    fprintf(f, " | %s | %s | %s", ct_fmt_ns(p50, a, sizeof a), ct_fmt_ns(p99, b, sizeof b),
            ct_fmt_ns(max, c, sizeof c));
  else
    fputs(" | - | - | -", f);
}

/* model.h: 0, or -EIO when a write to f failed (ferror). */
int ct_write_markdown(FILE *f, const struct ct_report *r) {
  char s[512];
  if (r->runs > 1)
    fprintf(f, "# corotracer report: run %u of %u\n\n## Overview\n\n", r->run, r->runs);
  else
    fprintf(f, "# corotracer report\n\n## Overview\n\n");
  overview(f, r);
  fprintf(f, "\n## Findings\n\n");
  if (!r->nf)
    fputs("No findings.\n\n", f);
  else {
    size_t by[3] = {0, 0, 0};
    for (size_t i = 0; i < r->nf; i++)
      by[r->f[i].sev]++;
    fprintf(f, "%zu finding%s: %zu error, %zu warning, %zu info.\n\n", r->nf, r->nf == 1 ? "" : "s",
            by[CT_SEV_ERROR], by[CT_SEV_WARNING], by[CT_SEV_INFO]);
  }
  for (size_t i = 0; i < r->nf; i++)
    finding(f, r, i);
  if (r->nsites) {
    fputs("## Suspension sites\n\nOver every suspension seen: waited, from the suspend to its wake"
          " (to the resume when none is recorded); runnable, from the wake to the resume, queued"
          " for a thread (estimated from log-linear buckets, about 6%).\n\n"
          "| site | suspensions | waited p50 | p99 | max | runnable p50 | p99 | max |\n"
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
          f);
    size_t shown = r->nsites < 3 * MD_SITES_SHOWN ? r->nsites : 3 * MD_SITES_SHOWN;
    for (size_t i = 0; i < shown; i++) {
      const struct ct_rsite *rs = &r->sites[i];
      fputs("| `", f);
      cell(f, ct_fmt_site(rs, s, sizeof s));
      fprintf(f, "` | %" PRIu64, rs->count);
      times(f, rs->has_dur, rs->p50, rs->p99, rs->max);
      times(f, rs->has_runnable, rs->r_p50, rs->r_p99, rs->r_max);
      fputs(" |\n", f);
    }
    if (shown < r->nsites)
      fprintf(f, "\n%zu more sites not shown.\n", r->nsites - shown);
  }
  fflush(f);
  return ferror(f) ? -EIO : 0;
}
