/* report_main.c - `corotracer report` (and the reference's `-deepdive -out`):
 * options, streaming the trace through the analysis, writing Markdown/JSON. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/model.h"
#include "analysis/trace.h"
#include "common/args.h"
#include "common/commands.h"
#include "common/outfile.h"
#include "common/ticks.h"

#define READ_BUF (4u << 20)

struct opts {
  const char *trace, *out, *json, *skip_frames;
  int fail_on; /* -1: no gate */
  struct ct_thresholds th;
  int stats;
};

static void usage(FILE *f) {
  fprintf(f, "usage: corotracer report TRACE [-o report.md] [--json findings.json]\n"
             "                         [--fail-on info|warning|error] [--blocker-ms MS]\n"
             "                         [--runnable-ms MS] [--stuck-ms MS]\n"
             "                         [--skip-frames PATTERN,...]\n"
             "       corotracer -deepdive -out TRACE [-o report.md]   (reference spelling)\n"
             "Reads a trace, binary (run's default) or JSONL (ours or the reference engine's;\n"
             "'-' = stdin), and writes a Markdown diagnosis (stdout unless -o) and, with\n"
             "--json, the findings JSON of docs/FINDINGS.md.\n"
             "--fail-on SEV: exit 1 when a finding of at least SEV exists.\n" CT_THRESHOLDS_USAGE
             "--skip-frames: inlined frames whose function or file matches a glob are the\n"
             "runtime's: a site in one is shown where it was called (besides boost::*, std::*,\n"
             "asio::*, corotracer::* and files under /usr/include).\n");
}

static int bad_usage(const char *what, const char *arg) {
  return ct_usage_error("report", what, arg);
}

enum { O_HELP = 1, O_DEEPDIVE, O_STATS, O_OUTPUT, O_JSON, O_TRACE, O_FAIL_ON, O_SKIP_FRAMES };
static const struct ct_opt report_opts[] = {
    {"-h --help", O_HELP, 0},
    {"-deepdive --deepdive", O_DEEPDIVE, 0}, /* the reference's spelling: a no-op */
    {"--stats", O_STATS, 0},                 /* hidden: throughput and peak RSS on stderr */
    {"-o --output", O_OUTPUT, 1},
    {"--json", O_JSON, 1},
    {"-out --out", O_TRACE, 1}, /* the reference's spelling of the trace */
    {"--fail-on", O_FAIL_ON, 1},
    CT_ARGS_THRESHOLD_OPTS,
    {"--skip-frames", O_SKIP_FRAMES, 1},
    {NULL, 0, 0}};

/* Returns -1 when parsed, else the exit status (0 for --help). */
static int parse(int argc, char **argv, struct opts *o) {
  *o = (struct opts){.fail_on = -1, .th = CT_THRESHOLDS_DEFAULT};
  struct ct_args it;
  const char *val;
  char why[128];
  int id, rc;
  ct_args_init(&it, argc, argv, 0);
  while ((id = ct_args_next(&it, report_opts, &val)) != CT_ARGS_END) {
    if ((rc = ct_args_threshold(&o->th, id, val, why, sizeof why)) <= 0) {
      if (rc)
        return bad_usage(why, NULL);
      continue;
    }
    switch (id) {
    case O_HELP:
      usage(stdout);
      return 0;
    case O_DEEPDIVE:
      break;
    case O_STATS:
      o->stats = 1;
      break;
    case O_OUTPUT:
      o->out = val;
      break;
    case O_JSON:
      o->json = val;
      break;
    case O_TRACE:
      o->trace = val;
      break;
    case O_FAIL_ON:
      if (!strcmp(val, "info"))
        o->fail_on = CT_SEV_INFO;
      else if (!strcmp(val, "warning"))
        o->fail_on = CT_SEV_WARNING;
      else if (!strcmp(val, "error"))
        o->fail_on = CT_SEV_ERROR;
      else
        return bad_usage("--fail-on wants info, warning or error, not", val);
      break;
    case O_SKIP_FRAMES:
      o->skip_frames = val;
      break;
    case CT_ARGS_NO_VALUE:
      return bad_usage("option needs a value", val);
    case CT_ARGS_UNKNOWN:
      return bad_usage("unknown option", val);
    case CT_ARGS_HAS_VALUE:
      return bad_usage("option takes no value", val);
    default: /* CT_ARGS_POSITIONAL */
      if (o->trace)
        return bad_usage("more than one trace given", val);
      o->trace = val;
    }
  }
  if (!o->trace)
    return bad_usage("no trace given (corotracer report TRACE)", NULL);
  return -1;
}

/* The runs of the trace, each its own state and report. */
struct run {
  struct ct_state *st;
  struct ct_report r;
};

struct feed {
  struct run *runs;
  size_t n;
  struct ct_thresholds th;
  const char *skip_frames; /* --skip-frames, for each run's symbolizer */
  uint64_t run_lines;      /* lines of the current run so far (ct_line_new_run's count) */
};

/* A fresh state for the next run; 0 or -ENOMEM. */
static int run_add(struct feed *f) {
  struct run *n = realloc(f->runs, (f->n + 1) * sizeof *n);
  if (!n)
    return -ENOMEM;
  f->runs = n;
  memset(&n[f->n], 0, sizeof n[f->n]);
  int rc = ct_state_new_judging(&f->th, &n[f->n].st);
  if (!rc && f->skip_frames &&
      (rc = ct_symbolizer_skip_frames(ct_state_symbolizer(n[f->n].st), f->skip_frames)))
    ct_state_free(n[f->n].st);
  if (!rc)
    f->n++;
  return rc;
}

static int on_line(void *ctx, uint64_t lineno, enum ct_line_err err, const struct ct_line *l) {
  struct feed *f = ctx;
  int rc;
  if (ct_line_new_run(f->run_lines, err, l)) {
    if ((rc = run_add(f)))
      return rc;
    f->run_lines = 0;
  }
  f->run_lines++;
  return ct_state_line(f->runs[f->n - 1].st, lineno, err, l);
}

static int on_run(void *ctx, const struct ct_event *ev, size_t n) {
  struct feed *f = ctx;
  f->run_lines += n; /* events: none starts a run */
  return ct_state_run(f->runs[f->n - 1].st, ev, n);
}

static void on_peek(void *ctx, const struct ct_line *l) {
  struct feed *f = ctx;
  ct_state_prefetch(f->runs[f->n - 1].st, l);
}

static uint64_t peak_rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "re");
  char line[256];
  uint64_t kb = 0;
  if (!f)
    return 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %" SCNu64, &kb) == 1)
      break;
  fclose(f);
  return kb;
}

/* Writes the runs' reports to path ("-" or NULL: stdout) with fn, one after
 * the other (JSON with several runs: {"runs":[...]}), a file through
 * src/common/outfile.h (renamed into place once whole). Returns 0 or the
 * exit status. */
static int write_to(const char *path, const struct feed *runs, int json,
                    int (*fn)(FILE *, const struct ct_report *)) {
  int to_stdout = !path || !strcmp(path, "-"), rc = 0;
  struct ct_outfile of = {.fd = -1, .dirfd = -1};
  FILE *f = stdout;
  if (!to_stdout && (rc = ct_outfile_open(&of, AT_FDCWD, path)) == 0 &&
      !(f = ct_outfile_stream(&of)))
    rc = -errno;
  if (!rc && json && runs->n > 1)
    fputs("{\"runs\":[\n", f);
  for (size_t i = 0; i < runs->n && !rc; i++) {
    if (i)
      fputs(json ? ",\n" : "\n", f);
    rc = fn(f, &runs->runs[i].r);
  }
  if (!rc && json && runs->n > 1)
    fputs("]}\n", f);
  if (!rc && ferror(f))
    rc = -EIO;
  if (!to_stdout && rc)
    ct_outfile_abort(&of);
  else if (!to_stdout)
    rc = ct_outfile_commit(&of);
  if (rc) {
    fprintf(stderr, "corotracer: %s: %s\n", to_stdout ? "stdout" : path, strerror(-rc));
    return 1;
  }
  return 0;
}

int ct_report_main(int argc, char **argv) {
  struct opts o;
  int status = parse(argc, argv, &o), fd = -1;
  struct feed feed = {.th = o.th, .skip_frames = o.skip_frames};
  if (status >= 0)
    return status;
  double t0 = ct_mono_s();
  int from_stdin = !strcmp(o.trace, "-");
  fd = from_stdin ? STDIN_FILENO : open(o.trace, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "corotracer: %s: %s\n", o.trace, strerror(errno));
    status = 2;
    goto out;
  }
  uint64_t bytes = 0, lines = 0, events = 0;
  struct ct_read_diag diag;
  int rc = run_add(&feed);
  if (!rc)
    rc = ct_trace_read_runs(fd, READ_BUF, on_line, on_run, on_peek, &feed, &bytes, &diag);
  if (!rc && diag.why[0]) /* a binary trace's bad chunk: the report covers what came before */
    fprintf(stderr, "corotracer: %s: %s\n", o.trace, diag.why);
  if (rc) {
    fprintf(stderr, "corotracer: %s: %s\n", o.trace, strerror(-rc));
    status = rc == -ENOMEM ? 1 : 2;
    goto out;
  }
  int max_sev = -1;
  for (size_t i = 0; i < feed.n; i++) {
    struct run *r = &feed.runs[i];
    if ((rc = ct_report_build(r->st, o.trace, bytes, o.th.stuck_ns, 0, &r->r))) {
      fprintf(stderr, "corotracer: %s: %s\n", o.trace, strerror(-rc));
      status = 1;
      goto out;
    }
    r->r.run = (unsigned)i + 1;
    r->r.runs = (unsigned)feed.n;
    r->r.binary = diag.binary;
    r->r.damage = i + 1 == feed.n && diag.why[0] ? diag.why : NULL;
    const char *rec = ct_state_record_damage(r->st); /* a record that cannot be true */
    if (rec) {
      fprintf(stderr, "corotracer: %s: %s\n", o.trace, rec);
      if (!r->r.damage)
        r->r.damage = rec;
    }
    int sev = ct_report_max_severity(&r->r);
    max_sev = sev > max_sev ? sev : max_sev;
    lines += r->r.t.lines;
    events += r->r.t.events;
  }
  const struct ct_rtrace *t = &feed.runs[0].r.t;
  if (!t->lines) {
    if (!diag.why[0]) /* else said above: nothing came before the bad chunk */
      fprintf(stderr, "corotracer: %s: empty file, not a trace\n", o.trace);
    status = 2;
    goto out;
  }
  if (feed.n == 1 && !t->events && !t->has_meta && !t->has_end && !t->modules && !t->stations) {
    if (!diag.why[0]) /* else said above: the damage came before any trace line */
      fprintf(stderr,
              "corotracer: %s:%" PRIu64 ": not a corotracer trace: none of its %" PRIu64
              " lines is a trace event or record\n",
              o.trace, t->nbad_kept ? t->bad_lines[0] : 1, t->lines);
    status = 2;
    goto out;
  }
  double t1 = ct_mono_s();
  if ((status = write_to(o.out, &feed, 0, ct_write_markdown)))
    goto out;
  if (o.json && (status = write_to(o.json, &feed, 1, ct_write_json)))
    goto out;
  if (o.stats)
    fprintf(stderr,
            "corotracer: stats: %" PRIu64 " bytes, %" PRIu64 " lines, %" PRIu64
            " events in %.3f s: %.1f MB/s; peak RSS %" PRIu64 " kB\n",
            bytes, lines, events, t1 - t0, (double)bytes / 1e6 / (t1 - t0), peak_rss_kb());
  status = o.fail_on >= 0 && max_sev >= o.fail_on ? 1 : 0;
out:
  for (size_t i = 0; i < feed.n; i++) {
    ct_report_free(&feed.runs[i].r); /* also a partly built one */
    ct_state_free(feed.runs[i].st);
  }
  free(feed.runs);
  if (fd > STDIN_FILENO)
    close(fd);
  return status;
}
