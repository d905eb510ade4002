/* html_main.c - `corotracer html TRACE [-o dashboard.html]` (and the
 * reference's `-html -out TRACE`): the offline dashboard, one file. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/args.h"
#include "common/commands.h"
#include "common/outfile.h"
#include "common/ticks.h"
#include "html/page.h"

static void usage(FILE *f) {
  fprintf(f, "usage: corotracer html TRACE [-o dashboard.html] [--run N] [--stuck-ms MS]\n"
             "                       [--runnable-ms MS] [--blocker-ms MS]\n"
             "       corotracer -html -out TRACE [-o dashboard.html]   (reference spelling)\n"
             "Writes one self-contained HTML file (no network, no second file) showing the\n"
             "trace: timeline, findings, sites, coroutines, counters. See docs/DASHBOARD.md.\n"
             "A trace of several runs (run --append) shows its last run, or run N (1 = first).\n"
             "The findings' thresholds, as `corotracer report`'s:\n" CT_THRESHOLDS_USAGE);
}

static int bad_usage(const char *what, const char *arg) {
  return ct_usage_error("html", what, arg);
}

/* Ends the output (src/common/outfile.h): renamed into place when rc is 0,
 * else removed. Returns rc, or the close's or rename's error. */
static int out_close(struct ct_outfile *o, int rc) {
  if (rc) {
    ct_outfile_abort(o);
    return rc;
  }
  return ct_outfile_commit(o);
}

enum { O_HELP = 1, O_HTML, O_STATS, O_OUTPUT, O_TRACE, O_RUN, O_SPAN_BUDGET };
static const struct ct_opt html_opts[] = {
    {"-h --help", O_HELP, 0},
    {"-html --html", O_HTML, 0}, /* the reference's spelling: a no-op */
    {"--stats", O_STATS, 0},     /* hidden: speed and peak RSS on stderr */
    {"-o --output", O_OUTPUT, 1},
    {"-out --out", O_TRACE, 1}, /* the reference's spelling of the trace */
    {"--run", O_RUN, 1},
    {"--span-budget", O_SPAN_BUDGET, 1}, /* hidden: the tests' small budget */
    CT_ARGS_THRESHOLD_OPTS,
    {NULL, 0, 0}};

struct opts {
  const char *trace, *out;
  int stats;
  size_t budget;
  unsigned run; /* 0: the last */
  struct ct_thresholds th;
};

/* Returns -1 when parsed, else the exit status (0 for --help). */
static int parse(int argc, char **argv, struct opts *o) {
  *o = (struct opts){.out = "dashboard.html", .th = CT_THRESHOLDS_DEFAULT};
  struct ct_args it;
  const char *val;
  char why[128], *end;
  int id, rc;
  ct_args_init(&it, argc, argv, 0);
  while ((id = ct_args_next(&it, html_opts, &val)) != CT_ARGS_END) {
    if ((rc = ct_args_threshold(&o->th, id, val, why, sizeof why)) <= 0) {
      if (rc)
        return bad_usage(why, NULL);
      continue;
    }
    if (id == O_HELP) {
      usage(stdout);
      return 0;
    } else if (id == O_HTML) {
      continue;
    } else if (id == O_STATS) {
      o->stats = 1;
    } else if (id == O_OUTPUT) {
      o->out = val;
    } else if (id == O_RUN) {
      unsigned long v = strtoul(val, &end, 10);
      if (*end || !v || v > 1000000 || val[0] == '-')
        return bad_usage("--run wants a run number (1 = the trace's first)", val);
      o->run = (unsigned)v;
    } else if (id == O_SPAN_BUDGET) {
      unsigned long long v = strtoull(val, &end, 10);
      if (*end || !v || v > 100000000ull || val[0] == '-')
        return bad_usage("--span-budget wants a count", val);
      o->budget = (size_t)v;
    } else if (id == CT_ARGS_NO_VALUE) {
      return bad_usage("option needs a value", val);
    } else if (id == CT_ARGS_UNKNOWN || id == CT_ARGS_HAS_VALUE) {
      return bad_usage("unknown option", val);
    } else if (id == O_TRACE || !o->trace) { /* -out TRACE, or CT_ARGS_POSITIONAL */
      o->trace = val;
    } else {
      return bad_usage("more than one trace given", val);
    }
  }
  if (!o->trace)
    return bad_usage("no trace given (corotracer html TRACE [-o dashboard.html])", NULL);
  return -1;
}

int ct_html_main(int argc, char **argv) {
  struct opts o;
  int status = parse(argc, argv, &o);
  if (status >= 0)
    return status;
  status = 0;
  const char *trace = o.trace, *out = o.out;
  unsigned run = o.run;
  double t0 = ct_mono_s();
  int from_stdin = !strcmp(trace, "-");
  int fd = from_stdin ? STDIN_FILENO : open(trace, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "corotracer: %s: %s\n", trace, strerror(errno));
    return 2;
  }
  struct stat sb;
  int seekable = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
  struct ct_buf z = {0};
  struct ct_dash_stats st;
  struct ct_outfile of = {.fd = -1, .dirfd = -1};
  struct ct_page_stream ps = {.fd = -1};
  struct ct_zdrain drain = {ct_page_drain, &ps};
  int rc = ct_outfile_open(&of, AT_FDCWD, out);
  if (rc) {
    fprintf(stderr, "corotracer: %s: %s\n", out, strerror(-rc));
    status = 1;
    goto out;
  }
  ps.fd = of.fd;
  /* The page is written while the data is compressed: neither is ever whole in memory. */
  rc = ct_dash_build(fd, from_stdin ? "stdin" : trace, seekable, 0, 0, o.budget, run, &o.th, &z,
                     &drain, &st);
  int wrote = ps.bytes > 0; /* else the build failed before its output */
  if (st.why[0])            /* the page shows what came before it */
    fprintf(stderr, "corotracer: %s: %s\n", trace, st.why);
  rc = out_close(&of, rc);
  if (rc && wrote) {
    fprintf(stderr, "corotracer: %s: %s\n", out, strerror(-rc));
    status = 1;
    goto out;
  }
  if (rc == -EINVAL && st.not_a_trace) {
    if (!st.why[0]) /* else said above: nothing came before the bad chunk */
      fprintf(stderr,
              "corotracer: %s:%d: not a corotracer trace: none of its lines is a trace event or "
              "record\n",
              trace, st.bad_line);
    status = 2;
    goto out;
  }
  if (rc == -ENOENT) {
    fprintf(stderr, "corotracer: %s: --run %u: the trace holds %u run%s\n", trace, run, st.runs,
            st.runs == 1 ? "" : "s");
    status = 2;
    goto out;
  }
  if (rc) {
    fprintf(stderr, "corotracer: %s: %s\n", trace, strerror(-rc));
    status = rc == -ENOMEM ? 1 : 2;
    goto out;
  }
  if (st.runs > 1)
    fprintf(stderr, "corotracer: %s holds %u runs (run --append): the dashboard shows run %u%s\n",
            trace, st.runs, st.run, run ? "" : ", the last; --run N shows another");
  double t1 = ct_mono_s();
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  if (o.stats)
    fprintf(stderr,
            "corotracer: stats: %" PRIu64 " bytes, %" PRIu64 " events, %d pass(es), %" PRIu64
            " spans (%" PRIu64 " summarized), blob %" PRIu64 " B, page %zu B in %.3f s: %.1f MB/s;"
            " peak RSS %" PRIu64 " kB\n",
            st.bytes, st.events, st.passes, st.spans, st.spans_dropped, st.blob_bytes,
            (size_t)ps.bytes, t1 - t0, (double)st.bytes / 1e6 / (t1 - t0), (uint64_t)ru.ru_maxrss);
out:
  ct_buf_free(&z);
  ct_buf_free(&ps.text);
  if (fd > STDIN_FILENO)
    close(fd);
  return status;
}
