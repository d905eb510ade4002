/* ship_db.c - the fleet's own tables beside the export's (docs/FLEET.md):
 * `dumps` (one row per shipped file's run) and `fleet_findings` (one row per
 * finding, with its signature: kind, the user's site, the executable),
 * created and upgraded by versioned migrations, filled in the export's
 * transaction so a dump lands whole or not at all. */
#include "ship/ship.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fleet tables' migrations, in order: migrations[v] brings a database at
 * version v to v + 1 (corotracer_schema.version of part 'fleet'). Only ever
 * appended: a database made by an older corotracer runs the ones it lacks. */
static const char *const migrations[] = {
    /* 1: the first release */
    "CREATE TABLE IF NOT EXISTS dumps (run_id TEXT NOT NULL, host TEXT NOT NULL,"
    " trace_run_id TEXT NOT NULL, dump_id TEXT NOT NULL, dump_trigger TEXT, command TEXT,"
    " executable TEXT, file TEXT, file_bytes BIGINT, start_wall_ns BIGINT, end_wall_ns BIGINT,"
    " events BIGINT, lost_events BIGINT, findings BIGINT, damaged TEXT,"
    " shipped_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (run_id, host));"
    "CREATE UNIQUE INDEX IF NOT EXISTS dumps_i0 ON dumps (trace_run_id, host, dump_id);"
    "CREATE TABLE IF NOT EXISTS fleet_findings (run_id TEXT NOT NULL, host TEXT NOT NULL,"
    " finding BIGINT NOT NULL, kind TEXT NOT NULL, severity TEXT, count BIGINT, title TEXT,"
    " function TEXT, file TEXT, line BIGINT, executable TEXT, worst_ns BIGINT,"
    " seen_wall_ns BIGINT, PRIMARY KEY (run_id, host, finding));"
    "CREATE INDEX IF NOT EXISTS fleet_findings_i0 ON fleet_findings"
    " (kind, function, file, line, executable);"
    "CREATE INDEX IF NOT EXISTS fleet_findings_i1 ON fleet_findings (seen_wall_ns);",
};
#define NMIGRATIONS (sizeof migrations / sizeof migrations[0])

/* One line from a failed result into err (no password); returns -EIO. */
static int db_fail(PGconn *conn, PGresult *r, const char *what, char *err, size_t n) {
  const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
  snprintf(err, n, "postgres: %s: %s", what, msg ? msg : PQerrorMessage(conn));
  for (char *p = err; *p; p++)
    if (*p == '\n')
      *p = ' ';
  cx_pg_scrub(conn, err);
  return -EIO;
}

/* Runs sql with text parameters; 0, or -EIO with err. *out (if not NULL)
 * gets the result of a query, which the caller clears. */
static int db_exec(PGconn *conn, const char *sql, int np, const char *const *pv, PGresult **out,
                   const char *what, char *err, size_t n) {
  /* without parameters: PQexec, which takes several statements (a migration) */
  PGresult *r = np ? PQexecParams(conn, sql, np, NULL, pv, NULL, NULL, 0) : PQexec(conn, sql);
  int st = PQresultStatus(r);
  int rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? 0 : db_fail(conn, r, what, err, n);
  if (!rc && out)
    *out = r;
  else
    PQclear(r);
  return rc;
}

void ct_ship_run_id(const char *trace_run_id, const char *dump_id, size_t i, char *buf) {
  if (i)
    snprintf(buf, 80, "%.40s/%s.%zu", trace_run_id, dump_id, i + 1);
  else
    snprintf(buf, 80, "%.40s/%s", trace_run_id, dump_id);
}

int ct_ship_shipped(PGconn *conn, const struct ct_ship_facts *f, char *err, size_t n) {
  const char *pv[3] = {f->trace_run_id, f->host, f->dump_id};
  PGresult *r = NULL;
  int rc = db_exec(conn,
                   "SELECT 1 FROM pg_class WHERE oid = to_regclass('dumps') AND EXISTS"
                   " (SELECT 1 FROM dumps WHERE trace_run_id = $1 AND host = $2 AND dump_id = $3)",
                   3, pv, &r, "asking whether the dump was shipped", err, n);
  if (rc == -EIO && strstr(err, "does not exist")) /* checked before the table was made */
    return 0;
  if (!rc)
    rc = PQntuples(r) > 0;
  PQclear(r);
  return rc;
}

/* Runs the migrations the database lacks (the export's advisory lock is held:
 * one shipper at a time does this). */
static int migrate(PGconn *conn, char *err, size_t n) {
  PGresult *r = NULL;
  int rc = db_exec(conn,
                   "CREATE TABLE IF NOT EXISTS corotracer_schema (part TEXT PRIMARY KEY,"
                   " version BIGINT NOT NULL)",
                   0, NULL, NULL, "CREATE TABLE corotracer_schema", err, n);
  if (!rc)
    rc = db_exec(conn, "SELECT version FROM corotracer_schema WHERE part = 'fleet'", 0, NULL, &r,
                 "reading the schema version", err, n);
  if (rc)
    return rc;
  uint64_t v = PQntuples(r) ? strtoull(PQgetvalue(r, 0, 0), NULL, 10) : 0;
  PQclear(r);
  if (v > NMIGRATIONS) { /* a newer corotracer's: its tables only grew, ours still fit */
    return 0;
  }
  for (; !rc && v < NMIGRATIONS; v++)
    rc = db_exec(conn, migrations[v], 0, NULL, NULL, "migrating the fleet tables", err, n);
  char ver[24];
  snprintf(ver, sizeof ver, "%" PRIu64, v);
  const char *pv[1] = {ver};
  return rc ? rc
            : db_exec(conn,
                      "INSERT INTO corotracer_schema VALUES ('fleet', $1) ON CONFLICT (part)"
                      " DO UPDATE SET version = EXCLUDED.version",
                      1, pv, NULL, "writing the schema version", err, n);
}

/* A number as a parameter: into buf, or NULL (SQL NULL) when !has. */
static const char *num(char *buf, int has, uint64_t v) {
  if (!has)
    return NULL;
  snprintf(buf, 24, "%" PRIu64, v);
  return buf;
}

/* The site a finding's signature names: its first coroutine's, else its
 * first site; NULL when it names none. */
static const struct ct_rsite *finding_site(const struct ct_finding *f) {
  if (f->ncoros && f->coros[0].site_index >= 0 && (size_t)f->coros[0].site_index < f->nsites)
    return &f->sites[f->coros[0].site_index];
  return f->nsites ? &f->sites[0] : NULL;
}

/* The longest any coroutine of f waited (its measure of "worst"), else its count. */
static uint64_t finding_worst(const struct ct_finding *f) {
  uint64_t w = 0;
  for (size_t i = 0; i < f->ncoros; i++)
    if (f->coros[i].has_susp && f->coros[i].suspended_ns > w)
      w = f->coros[i].suspended_ns;
  return w ? w : f->count;
}

/* The fleet_findings rows of one run. */
static int finding_rows(PGconn *conn, const struct ct_ship_facts *f, const struct cx_run *run,
                        const char *run_id, const char *seen, char *err, size_t n) {
  int rc = 0;
  for (size_t i = 0; !rc && i < run->rep.nf; i++) {
    const struct ct_finding *fi = &run->rep.f[i];
    const struct ct_rsite *s = finding_site(fi);
    const struct ct_sym *y = s && s->symbolized ? &s->sym : NULL;
    char b[5][24], title[sizeof fi->title * 3 + 1], fn[1024], file[4096], mod[4096];
    ct_utf8_clean(fi->title, strlen(fi->title), title, sizeof title);
    if (y && y->function) /* debug info's names are bytes: stored as valid UTF-8 */
      ct_utf8_clean(y->function, strlen(y->function), fn, sizeof fn);
    else if (y) /* no debug info: the offset in its module stands for the site */
      snprintf(fn, sizeof fn, "+0x%" PRIx64, y->offset);
    if (y && y->file)
      ct_utf8_clean(y->file, strlen(y->file), file, sizeof file);
    if (y)
      ct_utf8_clean(y->module, strlen(y->module), mod, sizeof mod);
    const char *pv[13] = {run_id,
                          run->host,
                          num(b[0], 1, i),
                          fi->kind,
                          ct_sev_name(fi->sev),
                          num(b[1], 1, fi->count),
                          title,
                          y ? fn : NULL,
                          y && y->file ? file : NULL,
                          num(b[2], y && y->line, y ? (uint64_t)y->line : 0),
                          y ? mod : f->executable,
                          num(b[3], 1, finding_worst(fi)),
                          seen};
    rc = db_exec(conn,
                 "INSERT INTO fleet_findings (run_id, host, finding, kind, severity, count,"
                 " title, function, file, line, executable, worst_ns, seen_wall_ns)"
                 " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                 13, pv, NULL, "INSERT INTO fleet_findings", err, n);
  }
  return rc;
}

int ct_ship_tx(void *ctx, PGconn *conn, char *err, size_t n) {
  const struct ct_ship_tx *tx = ctx;
  const struct ct_ship_facts *f = tx->f;
  int rc = migrate(conn, err, n);
  for (size_t i = 0; !rc && i < tx->m->nruns; i++) {
    const struct cx_run *run = &tx->m->runs[i];
    const struct ct_report *rep = &run->rep;
    char b[8][24], damage[512], dump_id[24];
    const char *key[2] = {run->run_id, run->host};
    snprintf(dump_id, sizeof dump_id, i ? "%s.%zu" : "%s", f->dump_id, i + 1);
    const char *seen = num(b[0], run->has_clock, cx_wall_ns(run, rep->end_ts));
    const char *pv[15] = {run->run_id,
                          run->host,
                          f->trace_run_id,
                          dump_id,
                          rep->t.has_window ? rep->t.window_trigger : NULL,
                          f->command,
                          f->executable,
                          f->file,
                          num(b[1], 1, f->file_bytes),
                          num(b[2], run->has_clock, cx_wall_ns(run, rep->start_ts)),
                          seen,
                          num(b[3], 1, run->nev),
                          num(b[4], 1, rep->lost_events),
                          num(b[5], 1, rep->nf),
                          cx_damage(run, damage, sizeof damage)};
    if ((rc = db_exec(conn, "DELETE FROM dumps WHERE run_id = $1 AND host = $2", 2, key, NULL,
                      "replacing the dump's row", err, n)) ||
        (rc = db_exec(conn, "DELETE FROM fleet_findings WHERE run_id = $1 AND host = $2", 2, key,
                      NULL, "replacing the dump's findings", err, n)) ||
        (rc = db_exec(conn,
                      "INSERT INTO dumps (run_id, host, trace_run_id, dump_id, dump_trigger,"
                      " command, executable, file, file_bytes, start_wall_ns, end_wall_ns,"
                      " events, lost_events, findings, damaged) VALUES ($1, $2, $3, $4, $5, $6,"
                      " $7, $8, $9, $10, $11, $12, $13, $14, $15)",
                      15, pv, NULL, "INSERT INTO dumps", err, n)))
      break;
    rc = finding_rows(conn, f, run, run->run_id, seen, err, n);
  }
  return rc;
}
