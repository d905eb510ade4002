/* export_main.c - `corotracer export FORMAT TRACE [options]` and the
 * reference's `-export FORMAT -in TRACE ...`: options, loading the trace,
 * running the target, the progress bar and the one-line summary. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/args.h"
#include "common/commands.h"
#include "common/outfile.h"
#include "common/ticks.h"
#include "export/export.h"
#include "export/export_sql.h"

enum fmt { F_SQLITE, F_PG, F_MYSQL, F_CSV, F_JSONL, F_JSONL_V1, F_JSONL_TRACE, F_PERFETTO, F_NONE };

static const struct {
  const char *name;
  enum fmt f;
} fmts[] = {{"sqlite", F_SQLITE},
            {"sqlite3", F_SQLITE},
            {"postgres", F_PG},
            {"postgresql", F_PG},
            {"pg", F_PG},
            {"mysql", F_MYSQL},
            {"mariadb", F_MYSQL},
            {"csv", F_CSV},
            {"dataframe", F_CSV},
            {"jsonl", F_JSONL_TRACE},
            {"jsonl-events", F_JSONL},
            {"jsonl-v1", F_JSONL_V1},
            {"perfetto", F_PERFETTO}};

struct opts {
  enum fmt fmt;
  const char *fmt_name, *trace, *prefix, *table, *run_id, *run_host;
  struct cx_conn conn;
  int quiet, progress, reference;
  struct ct_thresholds th;
};

static void usage(FILE *f) {
  fprintf(f,
          "usage: corotracer export FORMAT TRACE [options]\n"
          "FORMAT: sqlite (-o FILE), postgres, mysql (server from the options or the\n"
          "  environment), csv (-o DIR: one file per table), jsonl (-o FILE: the trace in\n"
          "  the JSONL trace format, e.g. from a binary one), jsonl-events (-o FILE: events\n"
          "  with derived columns), jsonl-v1 (-o FILE: event lines only, the reference's keys),\n"
          "  perfetto (-o FILE.pftrace: open in ui.perfetto.dev)\n"
          "options: -o OUT  --db-host H  --db-port P  --db-user U  --db-name D\n"
          "  --socket PATH (MySQL)  --sslmode MODE (PostgreSQL)  --prefix P (table names)\n"
          "  --table NAME (events table; the others are NAME_runs, ...)\n"
          "  --run-id ID  --run-host H (override the trace's)  -q (no summary)\n"
          "  --no-progress  --stuck-ms MS  --runnable-ms MS  --blocker-ms MS (the findings'\n"
          "  thresholds, as `corotracer report`'s; below)\n"
          "Passwords come from the environment (PGPASSWORD, MYSQL_PWD) or the client's\n"
          "files (~/.pgpass, ~/.my.cnf), never from the command line.\n"
          "reference spelling: corotracer -export sqlite|mysql|postgres|postgresql|csv|dataframe\n"
          "  -in TRACE [-sqlite-out F] [-csv-out D] [-db-host H] [-db-port P] [-db-user U]\n"
          "  [-db-name D (coro_tracer)] [-db-table T (coro_trace_events)] [-mysql-socket S]\n"
          "  [-pg-sslmode M]\n" CT_THRESHOLDS_USAGE "See docs/EXPORT.md.\n");
}

static int bad_usage(const char *what, const char *arg) {
  return ct_usage_error("export", what, arg);
}

static enum fmt fmt_of(const char *s) {
  for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++)
    if (!strcmp(fmts[i].name, s))
      return fmts[i].f;
  return F_NONE;
}

/* Every option: our spelling and the reference's, each with one or two dashes
 * (D). */
#define D(name) "-" name " --" name
enum {
  O_HELP = 1,
  O_QUIET,
  O_NO_PROGRESS,
  /* taking a value, in the order of value_slots[] in parse() */
  O_OUT,
  O_HOST,
  O_PORT,
  O_USER,
  O_DBNAME,
  O_SOCKET,
  O_SSLMODE,
  O_PREFIX,
  O_TABLE,
  O_RUN_ID,
  O_RUN_HOST,
  O_TRACE,
  O_PASSWORD,
  O_EXPORT
};
static const struct ct_opt export_opts[] = {
    {"-h --help", O_HELP, 0},
    {"-q --quiet", O_QUIET, 0},
    {"--no-progress", O_NO_PROGRESS, 0},
    {D("o") " " D("output") " " D("sqlite-out") " " D("csv-out"), O_OUT, 1},
    {D("db-host") " " D("host"), O_HOST, 1},
    {D("db-port") " " D("port"), O_PORT, 1},
    {D("db-user") " " D("user"), O_USER, 1},
    {D("db-name") " " D("dbname"), O_DBNAME, 1},
    {D("socket") " " D("mysql-socket"), O_SOCKET, 1},
    {D("sslmode") " " D("pg-sslmode"), O_SSLMODE, 1},
    {D("prefix"), O_PREFIX, 1},
    {D("table") " " D("db-table"), O_TABLE, 1},
    {D("run-id"), O_RUN_ID, 1},
    {D("run-host"), O_RUN_HOST, 1},
    {D("in"), O_TRACE, 1},
    {D("db-password"), O_PASSWORD, 1},
    {D("export"), O_EXPORT, 1}, /* the reference's `-export FORMAT`: its defaults too */
    CT_ARGS_THRESHOLD_OPTS,
    {NULL, 0, 0}};
#undef D

/* Returns -1 when parsed, else the exit status. */
static int parse(int argc, char **argv, struct opts *o) {
  *o = (struct opts){.fmt = F_NONE, .progress = isatty(STDERR_FILENO), .th = CT_THRESHOLDS_DEFAULT};
  const char **value_slots[] = {&o->conn.out,      &o->conn.host,   &o->conn.port,    &o->conn.user,
                                &o->conn.dbname,   &o->conn.socket, &o->conn.sslmode, &o->prefix,
                                &o->table,         &o->run_id,      &o->run_host,     &o->trace,
                                &o->conn.password, &o->fmt_name};
  int positional = 0, id, rc;
  struct ct_args it;
  const char *val;
  char why[128];
  ct_args_init(&it, argc, argv, 0);
  while ((id = ct_args_next(&it, export_opts, &val)) != CT_ARGS_END) {
    if ((rc = ct_args_threshold(&o->th, id, val, why, sizeof why)) <= 0) {
      if (rc)
        return bad_usage(why, NULL);
    } else if (id >= O_OUT) {
      if (id == O_EXPORT)
        o->reference = 1;
      *value_slots[id - O_OUT] = val;
    } else if (id == O_HELP) {
      usage(stdout);
      return 0;
    } else if (id == O_QUIET) {
      o->quiet = 1;
    } else if (id == O_NO_PROGRESS) {
      o->progress = 0;
    } else if (id == CT_ARGS_NO_VALUE) {
      return bad_usage("option needs a value", val);
    } else if (id == CT_ARGS_UNKNOWN) {
      return bad_usage("unknown option (see corotracer export --help)", val);
    } else if (id == CT_ARGS_HAS_VALUE) {
      return bad_usage("option takes no value", val);
    } else if (positional == 0 && !o->fmt_name) { /* CT_ARGS_POSITIONAL */
      o->fmt_name = val;
      positional++;
    } else if (!o->trace) {
      o->trace = val;
      positional++;
    } else {
      return bad_usage("unexpected argument", val);
    }
  }
  if (!o->fmt_name)
    return bad_usage("no format given (corotracer export FORMAT TRACE)", NULL);
  if ((o->fmt = fmt_of(o->fmt_name)) == F_NONE)
    return bad_usage(
        "unknown format (sqlite, postgres, mysql, csv, jsonl, jsonl-events, jsonl-v1, perfetto)",
        o->fmt_name);
  if (!o->trace)
    return bad_usage("no trace given (corotracer export FORMAT TRACE)", NULL);
  if (o->reference) { /* the reference's defaults */
    if (!o->conn.dbname)
      o->conn.dbname = "coro_tracer";
    if (!o->table && !o->prefix)
      o->table = "coro_trace_events";
  }
  if ((o->fmt == F_PG || o->fmt == F_MYSQL) && o->conn.out)
    return bad_usage("-o is for files; a database is named by --db-name", o->conn.out);
  if (o->fmt == F_SQLITE && !o->conn.out)
    return bad_usage("sqlite: no database file given (-o FILE or -sqlite-out FILE)", NULL);
  if (o->fmt == F_CSV && !o->conn.out)
    return bad_usage("csv: no output directory given (-o DIR or -csv-out DIR)", NULL);
  if (o->fmt == F_PERFETTO || o->fmt == F_JSONL || o->fmt == F_JSONL_V1 || o->fmt == F_JSONL_TRACE)
    if (!o->conn.out)
      return bad_usage("no output given (-o FILE, '-' for stdout)", NULL);
  return -1;
}

struct bar {
  const char *what;
  double last;
  int shown;
};

/* A progress bar on stderr, redrawn at most 10 times a second. */
static void progress(void *ctx, uint64_t done, uint64_t total) {
  struct bar *b = ctx;
  double t = ct_mono_s();
  if (done < total && t - b->last < 0.1)
    return;
  b->last = t;
  int w = 30, k = total ? (int)((double)done * w / (double)total) : w;
  fprintf(stderr, "\rexport %s [%.*s%*s] %3d%% %" PRIu64 "/%" PRIu64 " rows", b->what, k,
          "##############################", w - k, "", total ? (int)(done * 100 / total) : 100,
          done, total);
  b->shown = 1;
}

static void progress_end(struct bar *b) {
  if (b->shown)
    fprintf(stderr, "\r\033[K");
}

/* A file output: '-' is stdout; anything else through src/common/outfile.h
 * (written beside and renamed, so a failed export leaves no half file; a
 * device or FIFO such as /dev/null written in place). */
static int stream_out(const struct opts *o, const struct cx_model *m, int in_fd, uint64_t *rows,
                      struct bar *bar, struct ct_read_diag *diag) {
  int to_stdout = !strcmp(o->conn.out, "-"), rc = 0;
  struct ct_outfile of = {.fd = -1, .dirfd = -1};
  FILE *f = stdout;
  if (!to_stdout) {
    if ((rc = ct_outfile_open(&of, AT_FDCWD, o->conn.out)))
      return rc;
    if (!(f = ct_outfile_stream(&of))) {
      rc = -errno;
      ct_outfile_abort(&of);
      return rc;
    }
  }
  cx_progress_fn pf = o->progress ? progress : NULL;
  if (o->fmt == F_JSONL)
    rc = cx_write_jsonl(f, m, rows, pf, bar);
  else if (o->fmt == F_PERFETTO)
    rc = cx_write_perfetto(f, m, rows, pf, bar);
  else if (o->fmt == F_JSONL_TRACE)
    rc = fflush(f) ? -errno : cx_write_jsonl_trace(in_fd, fileno(f), rows, diag);
  else {
    uint64_t skipped = 0;
    rc = cx_write_jsonl_v1(in_fd, f, rows, &skipped, diag);
  }
  if (!rc && diag && diag->why[0] && !*rows)
    rc = -ENODATA; /* a bad chunk, nothing before it: no empty output as if it were a trace */
  if (fflush(f) && !rc)
    rc = -errno;
  if (!to_stdout && rc)
    ct_outfile_abort(&of);
  else if (!to_stdout)
    rc = ct_outfile_commit(&of);
  return rc;
}

static int open_sink(const struct opts *o, struct cx_sink **s) {
  switch (o->fmt) {
  case F_SQLITE:
    return ct_db.sqlite_sink(&o->conn, s);
  case F_PG:
    return ct_db.pg_sink(&o->conn, s);
  case F_MYSQL:
    return ct_db.mysql_sink(&o->conn, s);
  default:
    return cx_csv_sink(&o->conn, s);
  }
}

int ct_export_main(int argc, char **argv) {
  struct opts o;
  struct cx_model m;
  struct cx_names names = {0};
  struct cx_sink *sink = NULL;
  struct bar bar = {0};
  uint64_t counts[CX_NTABLES] = {0}, rows = 0, bad_line = 0;
  int status = parse(argc, argv, &o), rc;
  memset(&m, 0, sizeof m);
  if (status >= 0)
    return status;
  /* The database sinks are in corotracer-db (src/common/commands.h "ct_db"):
   * run there before anything is read. */
  if ((o.fmt == F_SQLITE || o.fmt == F_PG || o.fmt == F_MYSQL) && !ct_db.sqlite_sink)
    return ct_db_exec();
  if (o.conn.password) {
    /* The reference took it here; we accept it for its scripts, but it shows
     * in ps and shell history. */
    fprintf(stderr, "corotracer: export: warning: -db-password is visible to other users; "
                    "prefer PGPASSWORD / MYSQL_PWD or ~/.pgpass / ~/.my.cnf\n");
  }
  bar.what = o.fmt_name;
  double t0 = ct_mono_s();
  if (o.fmt == F_JSONL_V1 || o.fmt == F_JSONL_TRACE) { /* a filter: no model needed */
    int fd = strcmp(o.trace, "-") ? open(o.trace, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
    if (fd < 0) {
      fprintf(stderr, "corotracer: %s: %s\n", o.trace, strerror(errno));
      return 2;
    }
    struct ct_read_diag diag = {0};
    rc = stream_out(&o, NULL, fd, &rows, &bar, &diag);
    if (fd > STDIN_FILENO)
      close(fd);
    if (diag.why[0]) /* what came before it is exported */
      fprintf(stderr, "corotracer: %s: %s\n", o.trace, diag.why);
    if (rc == -ENODATA) /* nothing came before it: no output either */
      return 2;
    if (rc == -EPROTO) { /* as the other formats say it (cx_model_load's -EPROTO) */
      if (!diag.why[0])  /* else said above: the damage came before any trace line */
        fprintf(stderr, "corotracer: %s:1: not a corotracer trace: no event or record line\n",
                o.trace);
      return 2;
    }
    if (rc) {
      fprintf(stderr, "corotracer: %s: %s\n", o.conn.out, strerror(-rc));
      return 1;
    }
    goto summary;
  }
  if (o.progress) { /* loading a big trace takes a while too */
    fprintf(stderr, "export %s: reading %s...", o.fmt_name, o.trace);
    bar.shown = 1;
  }
  if ((rc = cx_model_load(o.trace, o.run_id, o.run_host, &o.th, &m, &bad_line))) {
    progress_end(&bar);
    if (rc == -EPROTO && m.diag.why[0]) /* a bad chunk with nothing before it */
      fprintf(stderr, "corotracer: %s: %s\n", o.trace, m.diag.why);
    else if (rc == -EPROTO)
      fprintf(stderr,
              "corotracer: %s:%" PRIu64 ": not a corotracer trace: no event or record line\n",
              o.trace, bad_line);
    else
      fprintf(stderr, "corotracer: %s: %s\n", o.trace, strerror(-rc));
    status = rc == -ENOMEM ? 1 : 2;
    goto out;
  }
  if (m.diag.why[0]) /* exported up to it */
    fprintf(stderr, "corotracer: %s: %s\n", o.trace, m.diag.why);
  if (o.fmt == F_JSONL || o.fmt == F_PERFETTO) {
    if ((rc = stream_out(&o, &m, -1, &rows, &bar, NULL))) {
      progress_end(&bar);
      fprintf(stderr, "corotracer: %s: %s\n", o.conn.out, strerror(-rc));
      status = 1;
      goto out;
    }
    goto summary;
  }
  if ((rc = cx_names_init(&names, o.prefix, o.table)))
    goto nomem;
  if ((rc = open_sink(&o, &sink)))
    goto nomem;
  if ((rc = cx_emit(sink, &m, &names, counts, o.progress ? progress : NULL, &bar))) {
    progress_end(&bar);
    fprintf(stderr, "corotracer: export %s: %s; nothing of this run was written\n", o.fmt_name,
            sink->err[0] ? sink->err : strerror(-rc));
    status = 1;
    goto out;
  }
  for (int t = 0; t < CX_NTABLES; t++)
    rows += counts[t];
summary:
  progress_end(&bar);
  if (!o.quiet) {
    double dt = ct_mono_s() - t0;
    char tables[512] = "";
    size_t n = 0;
    for (int t = 0; sink && t < CX_NTABLES && n < sizeof tables; t++)
      n += (size_t)snprintf(tables + n, sizeof tables - n, "%s%s %" PRIu64, t ? ", " : " (",
                            names.t[t], counts[t]);
    if (sink && n < sizeof tables)
      snprintf(tables + n, sizeof tables - n, ")");
    fprintf(stderr, "corotracer: export %s: %" PRIu64 " %s%s from %s%s%s in %.2f s (%.0f rows/s)\n",
            o.fmt_name, rows, o.fmt == F_PERFETTO ? "packets" : "rows", tables, o.trace,
            o.conn.out ? " to " : "", o.conn.out ? o.conn.out : "", dt, dt > 0 ? rows / dt : 0.0);
  }
  status = 0;
  goto out;
nomem:
  fprintf(stderr, "corotracer: export: out of memory\n");
  status = 1;
out:
  if (sink)
    sink->free(sink);
  cx_names_free(&names);
  cx_model_free(&m);
  return status;
}
