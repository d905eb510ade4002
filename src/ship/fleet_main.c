/* fleet_main.c - `corotracer fleet --db URL [--since 24h] [--host H]...
 * [--json]`: the findings shipped from every host grouped by root cause (a
 * signature: kind, the user's site as function and file:line, the executable),
 * each with its runs, hosts, first and last seen and its worst example's run
 * id, in Markdown or JSON (docs/FLEET.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/args.h"
#include "common/buf.h"
#include "common/commands.h"
#include "common/jsonesc.h"
#include "ship/ship.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: corotracer fleet [--db URL] [--since DURATION] [--host H]... [--json] [--all]\n"
          "The findings shipped by `corotracer ship` / `run --ship`, grouped by root cause\n"
          "(kind, the user's site, the executable), with their runs, hosts, first and last\n"
          "seen and the worst example's run id.\n"
          "  --db URL     postgres://... or a conninfo (else libpq's environment)\n"
          "  --since D    only findings seen in the last D (30m, 24h, 7d; default: all)\n"
          "  --host H     only these hosts (repeat)   --all  info findings too\n"
          "  --json       JSON instead of Markdown\n"
          "See docs/FLEET.md.\n");
}

/* "24h", "30m", "7d", "90s", "250ms" as ns; 0 on a bad one. */
static uint64_t parse_duration(const char *s) {
  char *end;
  double v = strtod(s, &end);
  double unit = !strcmp(end, "ms")           ? 1e6
                : !strcmp(end, "s") || !*end ? 1e9
                : !strcmp(end, "m")          ? 60e9
                : !strcmp(end, "h")          ? 3600e9
                : !strcmp(end, "d")          ? 86400e9
                                             : 0;
  return v > 0 && unit > 0 && v * unit < 1.8e19 ? (uint64_t)(v * unit) : 0;
}

/* The filter every fleet query shares: $1 since (wall ns), $2 hosts separated
 * by newlines (NULL: all), $3 1 to include info findings. */
#define FLEET_FROM                                                                                 \
  " FROM fleet_findings f JOIN dumps d USING (run_id, host)"                                       \
  " WHERE coalesce(f.seen_wall_ns, 0) >= $1::bigint"                                               \
  " AND ($2::text IS NULL OR f.host = ANY (string_to_array($2, E'\\n')))"                          \
  " AND ($3::int = 1 OR f.severity <> 'info')"
#define FLEET_SIG "f.kind, f.function, f.file, f.line, f.executable"

/* The groups: one row per signature, most hosts first (CT_FG_*). */
static const char group_sql[] =
    "SELECT " FLEET_SIG ","
    " count(DISTINCT d.trace_run_id), count(DISTINCT f.host), count(*),"
    " min(f.seen_wall_ns), max(f.seen_wall_ns),"
    " (array_agg(d.trace_run_id ORDER BY f.worst_ns DESC, f.seen_wall_ns DESC))[1],"
    " (array_agg(f.run_id ORDER BY f.worst_ns DESC, f.seen_wall_ns DESC))[1],"
    " max(f.worst_ns), json_agg(DISTINCT f.host ORDER BY f.host), max(f.severity)" FLEET_FROM
    " GROUP BY " FLEET_SIG " ORDER BY count(DISTINCT f.host) DESC,"
    " count(DISTINCT d.trace_run_id) DESC, f.kind, f.function";
/* Each group's dumps: the signature, then CT_FR_*, newest first. */
static const char runs_sql[] =
    "SELECT DISTINCT " FLEET_SIG ", f.run_id, f.host, d.file,"
    " d.end_wall_ns" FLEET_FROM " ORDER BY d.end_wall_ns DESC NULLS LAST";

int ct_fleet_opt(const char *cmd, int id, const char *val, struct ct_fleet_query *q,
                 struct cx_conn *c) {
  if (id == CT_FO_ALL) {
    q->all = 1;
  } else if (id == CT_FO_DB) {
    c->url = val;
  } else if (id == CT_FO_HOST) {
    if ((q->hosts.n && ct_buf_put(&q->hosts, "\n", 1)) ||
        ct_buf_put(&q->hosts, val, strlen(val) + 1)) {
      fprintf(stderr, "corotracer: %s: out of memory\n", cmd);
      return 1;
    }
    q->hosts.n--; /* the NUL stays after the text */
  } else if (id == CT_FO_SINCE) {
    uint64_t d = parse_duration(val);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (!d)
      return ct_usage_error(cmd, "--since: not a duration (30m, 24h, 7d)", val);
    q->since = val, q->since_ns = d < now ? now - d : 0;
  } else {
    return ct_usage_error(cmd,
                          id == CT_ARGS_NO_VALUE     ? "option needs a value"
                          : id == CT_ARGS_POSITIONAL ? "unexpected argument"
                                                     : "unknown option (see --help)",
                          val);
  }
  return 0;
}

int ct_fleet_groups(PGconn *conn, const struct ct_fleet_query *q, int runs, PGresult **out,
                    char *err, size_t n) {
  char sn[24], flag[2] = {q->all ? '1' : '0', 0};
  snprintf(sn, sizeof sn, "%" PRIu64, q->since_ns);
  const char *pv[3] = {sn, q->hosts.n ? q->hosts.p : NULL, flag};
  PGresult *r = PQexec(conn, "SELECT to_regclass('fleet_findings') IS NOT NULL");
  int have = PQresultStatus(r) == PGRES_TUPLES_OK && !strcmp(PQgetvalue(r, 0, 0), "t");
  PQclear(r);
  r = have ? PQexecParams(conn, runs ? runs_sql : group_sql, 3, NULL, pv, NULL, NULL, 0)
           : PQexec(conn, "SELECT 1 WHERE false"); /* nothing shipped yet: no group */
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    snprintf(err, n, "postgres: %s", PQresultErrorMessage(r));
    err[strcspn(err, "\n")] = 0;
    cx_pg_scrub(conn, err);
    PQclear(r);
    return -EIO;
  }
  *out = r;
  return 0;
}

/* Markdown cells hold no '|' nor newline. */
static void cell(FILE *f, const char *s) {
  for (; *s; s++)
    fputs(*s == '|' ? "\\|" : *s == '\n' ? " " : (char[]){*s, 0}, f);
}

const char *ct_fleet_when(const char *ns, char *buf, size_t n) {
  time_t t = (time_t)(strtoull(ns, NULL, 10) / 1000000000u);
  struct tm tm;
  if (!*ns || !gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%SZ", &tm))
    snprintf(buf, n, "unknown");
  return buf;
}

/* "key":"s" (escaped), or "key":null. */
static void json_str(FILE *f, const char *key, const char *s, int null) {
  size_t n = strlen(s);
  char *o = null ? NULL : malloc(CT_JSON_ESC_MAX(n));
  fprintf(f, "\"%s\":", key);
  if (!o) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  fwrite(o, 1, ct_json_escape(o, s, n), f);
  fputc('"', f);
  free(o);
}

/* The groups as one JSON object; host_names comes from the server as JSON. */
static void write_json(FILE *f, PGresult *r, uint64_t since) {
  static const char *const keys[] = {"kind",
                                     "function",
                                     "file",
                                     "line",
                                     "executable",
                                     "runs",
                                     "hosts",
                                     "dumps",
                                     "first_seen_wall_ns",
                                     "last_seen_wall_ns",
                                     "worst_trace_run_id",
                                     "worst_run_id",
                                     "worst_ns",
                                     "host_names",
                                     "severity"};
  fprintf(f, "{\"since_wall_ns\":%" PRIu64 ",\"groups\":[", since);
  for (int i = 0; i < PQntuples(r); i++) {
    fputs(i ? ",\n{" : "\n{", f);
    for (int c = 0; c <= CT_FG_SEV; c++) {
      int raw = c == CT_FG_LINE || (c >= CT_FG_RUNS && c <= CT_FG_LAST) || c == CT_FG_WORST_NS ||
                c == CT_FG_HOST_JSON;
      const char *v = PQgetvalue(r, i, c);
      if (c)
        fputc(',', f);
      if (raw && !PQgetisnull(r, i, c))
        fprintf(f, "\"%s\":%s", keys[c], v);
      else
        json_str(f, keys[c], v, PQgetisnull(r, i, c));
    }
    fputc('}', f);
  }
  fputs("\n]}\n", f);
}

/* The groups as a Markdown table. */
static void write_md(FILE *f, PGresult *r, const char *since) {
  char a[40], b[40];
  fprintf(f, "# Fleet: %d finding groups%s%s\n\n", PQntuples(r), since ? " seen in the last " : "",
          since ? since : "");
  if (!PQntuples(r))
    return;
  fputs("| # | kind | site | executable | runs | hosts | dumps | first seen | last seen | worst "
        "run |\n| ---: | --- | --- | --- | ---: | ---: | ---: | --- | --- | --- |\n",
        f);
  for (int i = 0; i < PQntuples(r); i++) {
    fprintf(f, "| %d | ", i + 1);
    cell(f, PQgetvalue(r, i, CT_FG_KIND));
    fputs(" | ", f);
    cell(f, PQgetisnull(r, i, CT_FG_FN) ? "unknown" : PQgetvalue(r, i, CT_FG_FN));
    if (!PQgetisnull(r, i, CT_FG_FILE)) {
      fputs(" (", f);
      cell(f, PQgetvalue(r, i, CT_FG_FILE));
      fprintf(f, ":%s)", PQgetvalue(r, i, CT_FG_LINE));
    }
    fputs(" | ", f);
    cell(f, PQgetvalue(r, i, CT_FG_EXE));
    fprintf(f, " | %s | %s | %s | %s | %s | ", PQgetvalue(r, i, CT_FG_RUNS),
            PQgetvalue(r, i, CT_FG_HOSTS), PQgetvalue(r, i, CT_FG_DUMPS),
            ct_fleet_when(PQgetvalue(r, i, CT_FG_FIRST), a, sizeof a),
            ct_fleet_when(PQgetvalue(r, i, CT_FG_LAST), b, sizeof b));
    cell(f, PQgetvalue(r, i, CT_FG_WORST_DUMP));
    fputs(" |\n", f);
  }
}

enum { O_HELP = 1, O_JSON };
static const struct ct_opt fleet_opts[] = {
    {"-h --help", O_HELP, 0}, {"--json", O_JSON, 0}, CT_FLEET_OPTS, {NULL, 0, 0}};

int ct_fleet_main(int argc, char **argv) {
  struct cx_conn c = {.url = getenv("COROTRACER_SHIP_URL")};
  struct ct_fleet_query fq = {0};
  const char *val;
  int json = 0, id, status = 2;
  struct ct_args it;
  PGconn *conn = NULL;
  PGresult *r = NULL;
  char err[1024];
  ct_args_init(&it, argc, argv, 0);
  while ((id = ct_args_next(&it, fleet_opts, &val)) != CT_ARGS_END) {
    if (id == O_HELP) {
      usage(stdout);
      status = 0;
      goto out;
    } else if (id == O_JSON) {
      json = 1;
    } else if ((status = ct_fleet_opt("fleet", id, val, &fq, &c))) {
      goto out;
    }
  }
  status = 1;
  if (cx_pg_connect(&c, "corotracer fleet", &conn, err, sizeof err) ||
      ct_fleet_groups(conn, &fq, 0, &r, err, sizeof err)) {
    fprintf(stderr, "corotracer: fleet: %s\n", err);
    goto out;
  }
  if (json)
    write_json(stdout, r, fq.since_ns);
  else
    write_md(stdout, r, fq.since);
  status = fflush(stdout) ? 1 : 0;
out:
  PQclear(r);
  PQfinish(conn);
  ct_buf_free(&fq.hosts);
  return status;
}
