/* export_pg.c - the PostgreSQL target (libpq): settings from the options or
 * libpq's environment and files (PGHOST, PGPORT, PGUSER, PGPASSWORD,
 * PGSSLMODE, ~/.pgpass...), one transaction, the run's old rows replaced,
 * rows through COPY ... FROM STDIN (text format), indexes after the load.
 * Identifiers are quoted by PQescapeIdentifier. */
#include "export/export_sql.h"

#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

#define COPY_CHUNK (256u << 10)

struct pgs {
  struct cx_sink base;
  PGconn *conn;
  const struct cx_conn *c;
  const struct cx_names *names;
  struct cx_dialect d;
  struct ct_buf copy; /* COPY data not sent yet */
  int in_tx, in_copy;
};

static char *pg_quote(void *ctx, const char *name);

/* PostgreSQL's SQL: its quoting, column types and parameters. */
static const struct cx_dialect pg_dialect = {.quote = pg_quote,
                                             .int_type = "BIGINT",
                                             .text_type = "TEXT",
                                             .key_type = "TEXT",
                                             .table_suffix = "",
                                             .param = "$"};

/* Drops server notices ("relation ... already exists, skipping"): stderr gets one line. */
static void quiet_notice(void *arg, const char *msg) {
  (void)arg;
  (void)msg;
}

/* libpq's identifier quoting into a malloc'd copy (the caller frees); NULL on error. */
static char *pg_quote(void *ctx, const char *name) {
  struct pgs *s = ctx;
  char *q = PQescapeIdentifier(s->conn, name, strlen(name)), *r = q ? strdup(q) : NULL;
  PQfreemem(q);
  return r;
}

/* The server's primary message of r if any, else libpq's, on one line. */
static int pg_fail_res(struct pgs *s, const char *what, const PGresult *r) {
  const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
  if (!msg)
    msg = s->conn ? PQerrorMessage(s->conn) : "out of memory";
  int k = snprintf(s->base.err, sizeof s->base.err, "postgres: %s: %s", what,
                   msg && *msg ? msg : "failed");
  for (int i = 0; i < k && i < (int)sizeof s->base.err; i++)
    if (s->base.err[i] == '\n')
      s->base.err[i] = ' ';
  for (int i = (int)strlen(s->base.err) - 1; i >= 0 && s->base.err[i] == ' '; i--)
    s->base.err[i] = 0;
  return -EIO;
}

static int pg_fail(struct pgs *s, const char *what) {
  return pg_fail_res(s, what, NULL);
}

/* Runs sql (with up to 2 text parameters); a NULL sql is ENOMEM. */
static int pg_exec(struct pgs *s, const char *sql, int np, const char *const *pv,
                   const char *what) {
  if (!sql)
    return pg_fail(s, "out of memory building SQL");
  PGresult *r = PQexecParams(s->conn, sql, np, NULL, pv, NULL, NULL, 0);
  int st = PQresultStatus(r);
  int rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? 0 : pg_fail_res(s, what, r);
  PQclear(r);
  return rc;
}

static int pg_exec_own(struct pgs *s, char *sql, int np, const char *const *pv, const char *what) {
  int rc = pg_exec(s, sql, np, pv, what);
  free(sql);
  return rc;
}

/* Adds to table t (name) the columns an older corotracer's table lacks
 * (cx_col.added): asked first, so a table already up to date is not locked
 * (ALTER TABLE holds an exclusive lock until the commit, readers included). */
static int pg_upgrade(struct pgs *s, int t, const char *name) {
  const struct cx_table *tb = &cx_tables[t];
  char *quoted = pg_quote(s, name); /* resolved as CREATE TABLE resolved it */
  int rc = quoted ? 0 : pg_fail(s, "out of memory");
  for (int i = 0; !rc && i < tb->ncols; i++) {
    if (!tb->cols[i].added)
      continue;
    const char *pv[2] = {quoted, tb->cols[i].name};
    PGresult *r = PQexecParams(s->conn,
                               "SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1)"
                               " AND attname = $2 AND NOT attisdropped",
                               2, NULL, pv, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
      rc = pg_fail_res(s, "reading the table's columns", r);
    else if (!PQntuples(r))
      rc = pg_exec_own(s, cx_sql_add_column(&s->d, t, name, i), 0, NULL, "ALTER TABLE");
    PQclear(r);
  }
  free(quoted);
  return rc;
}

/* Sink begin: connects (options, then libpq's environment and files), BEGIN, the advisory
 * lock, creates missing tables and deletes the run's old rows, all in the transaction. */
static int pg_begin(struct cx_sink *b, const struct cx_model *m, const struct cx_names *n) {
  struct pgs *s = (struct pgs *)b;
  const char *kw[10], *val[10];
  int k = 0, rc;
  s->names = n;
#define KV(key, v)                                                                                 \
  if (v)                                                                                           \
  kw[k] = key, val[k++] = v
  KV("host", s->c->host);
  KV("port", s->c->port);
  KV("user", s->c->user);
  KV("dbname", s->c->dbname);
  KV("sslmode", s->c->sslmode);
  KV("password", s->c->password);
#undef KV
  kw[k] = "application_name", val[k++] = "corotracer export";
  kw[k] = NULL, val[k] = NULL;
  s->conn = PQconnectdbParams(kw, val, 0);
  if (!s->conn || PQstatus(s->conn) != CONNECTION_OK)
    return pg_fail(s, "cannot connect");
  PQsetNoticeProcessor(s->conn, quiet_notice, NULL); /* "already exists, skipping" */
  if ((rc = pg_exec(s, "BEGIN", 0, NULL, "BEGIN")))
    return rc;
  s->in_tx = 1;
  /* Exports from many hosts into one database: one at a time creates tables. */
  if ((rc = pg_exec(s, "SELECT pg_advisory_xact_lock(7021815640623616)", 0, NULL, "lock")))
    return rc;
  for (int t = 0; t < CX_NTABLES; t++) {
    if ((rc = pg_exec_own(s, cx_sql_create(&s->d, t, n->t[t]), 0, NULL, "CREATE TABLE")) ||
        (rc = pg_upgrade(s, t, n->t[t])))
      return rc;
    for (size_t i = 0; i < m->nruns; i++) {
      const char *key[2] = {m->runs[i].run_id, m->runs[i].host};
      if ((rc = pg_exec_own(s, cx_sql_delete_run(&s->d, n->t[t]), 2, key,
                            "replacing the run's old rows")))
        return rc;
    }
  }
  return 0;
}

/* Starts COPY table (cols) FROM STDIN. */
static int pg_table_begin(struct cx_sink *b, int t) {
  struct pgs *s = (struct pgs *)b;
  char *tn = pg_quote(s, s->names->t[t]), *cols = cx_sql_cols(&s->d, t), *sql = NULL;
  int rc = -ENOMEM;
  size_t k = (tn ? strlen(tn) : 0) + (cols ? strlen(cols) : 0) + 32;
  if (tn && cols && (sql = malloc(k))) {
    snprintf(sql, k, "COPY %s %s FROM STDIN", tn, cols);
    PGresult *r = PQexec(s->conn, sql);
    rc = PQresultStatus(r) == PGRES_COPY_IN ? 0 : pg_fail_res(s, "COPY", r);
    PQclear(r);
    if (!rc)
      s->in_copy = 1;
  } else {
    pg_fail(s, "out of memory building SQL");
  }
  free(tn);
  free(cols);
  free(sql);
  return rc;
}

/* Sends the buffered COPY data. */
static int flush_copy(struct pgs *s) {
  if (s->copy.n && PQputCopyData(s->conn, s->copy.p, (int)s->copy.n) != 1)
    return pg_fail(s, "COPY data");
  s->copy.n = 0;
  return 0;
}

/* COPY's text format: tab-separated, \N for NULL, backslash escapes. */
static int pg_row(struct cx_sink *b, int t, const struct cx_val *v) {
  struct pgs *s = (struct pgs *)b;
  const struct cx_table *tb = &cx_tables[t];
  struct ct_buf *o = &s->copy;
  char num[24];
  int rc = 0;
  for (int i = 0; i < tb->ncols && !rc; i++) {
    if (i)
      rc = ct_buf_put(o, "\t", 1);
    if (v[i].null)
      rc = rc ? rc : ct_buf_put(o, "\\N", 2);
    else if (tb->cols[i].type == CX_INT)
      rc = rc ? rc : ct_buf_put(o, num, (size_t)snprintf(num, sizeof num, "%" PRId64, v[i].i));
    else
      for (size_t j = 0; j < v[i].n && !rc; j++) {
        char c = v[i].s[j];
        rc = c == '\\'   ? ct_buf_put(o, "\\\\", 2)
             : c == '\t' ? ct_buf_put(o, "\\t", 2)
             : c == '\n' ? ct_buf_put(o, "\\n", 2)
             : c == '\r' ? ct_buf_put(o, "\\r", 2)
                         : ct_buf_put(o, &c, 1);
      }
  }
  if (!rc)
    rc = ct_buf_put(o, "\n", 1);
  if (rc) {
    snprintf(s->base.err, sizeof s->base.err, "postgres: out of memory");
    return rc;
  }
  return o->n >= COPY_CHUNK ? flush_copy(s) : 0;
}

/* Ends the COPY, checks its result, builds the table's indexes. */
static int pg_table_end(struct cx_sink *b, int t) {
  struct pgs *s = (struct pgs *)b;
  int rc = flush_copy(s);
  if (rc)
    return rc;
  s->in_copy = 0;
  if (PQputCopyEnd(s->conn, NULL) != 1)
    return pg_fail(s, "COPY end");
  PGresult *r = PQgetResult(s->conn);
  rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : pg_fail_res(s, "COPY", r);
  PQclear(r);
  while ((r = PQgetResult(s->conn)))
    PQclear(r);
  for (int k = 0; !rc && k < 2 && cx_tables[t].index[k]; k++)
    rc = pg_exec_own(s, cx_sql_index(&s->d, t, s->names->t[t], k), 0, NULL, "CREATE INDEX");
  return rc;
}

static int pg_commit(struct cx_sink *b) {
  struct pgs *s = (struct pgs *)b;
  int rc = pg_exec(s, "COMMIT", 0, NULL, "COMMIT");
  if (!rc)
    s->in_tx = 0;
  return rc;
}

/* Cancels a COPY in progress and rolls back. */
static void pg_abort(struct cx_sink *b) {
  struct pgs *s = (struct pgs *)b;
  if (s->in_copy) {
    PGresult *r;
    PQputCopyEnd(s->conn, "export aborted");
    while ((r = PQgetResult(s->conn)))
      PQclear(r);
    s->in_copy = 0;
  }
  if (s->in_tx)
    PQclear(PQexec(s->conn, "ROLLBACK"));
  s->in_tx = 0;
}

static void pg_free(struct cx_sink *b) {
  struct pgs *s = (struct pgs *)b;
  if (s->conn)
    PQfinish(s->conn);
  ct_buf_free(&s->copy);
  free(s);
}

int cx_pg_sink(const struct cx_conn *c, struct cx_sink **out) {
  struct pgs *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  s->c = c;
  s->d = pg_dialect;
  s->d.ctx = s; /* pg_quote asks the connection */
  s->base = CX_SINK_OPS("postgres", pg);
  *out = &s->base;
  return 0;
}
