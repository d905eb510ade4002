/* export_pg.c - the PostgreSQL target (libpq): settings from the options or
 * libpq's environment and files (PGHOST, PGPORT, PGUSER, PGPASSWORD,
 * PGSSLMODE, ~/.pgpass...), one transaction, the run's old rows replaced,
 * rows through COPY ... FROM STDIN (text format), indexes after the load.
 * Identifiers are quoted by PQescapeIdentifier. */
#include "export/export_pg.h"
#include "export/export_sql.h"

#include <errno.h>
#include <inttypes.h>
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
  cx_pg_tx_fn before_commit; /* cx_pg_sink_tx's: more rows in the same transaction */
  void *tx_ctx;
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

/* A libpq message as one line: newlines to spaces, no trailing blank, no
 * password (cx_pg_scrub). */
static void one_line(const PGconn *conn, char *err) {
  for (char *p = err; *p; p++)
    if (*p == '\n')
      *p = ' ';
  for (int i = (int)strlen(err) - 1; i >= 0 && err[i] == ' '; i--)
    err[i] = 0;
  cx_pg_scrub(conn, err);
}

/* The server's primary message of r if any, else libpq's, on one line. */
static int pg_fail_res(struct pgs *s, const char *what, const PGresult *r) {
  const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
  if (!msg)
    msg = s->conn ? PQerrorMessage(s->conn) : "out of memory";
  snprintf(s->base.err, sizeof s->base.err, "postgres: %s: %s", what, msg && *msg ? msg : "failed");
  one_line(s->conn, s->base.err);
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

/* Sink begin: connects (cx_pg_connect), BEGIN, the advisory lock, creates
 * missing tables and deletes the run's old rows, all in the transaction. */
static int pg_begin(struct cx_sink *b, const struct cx_model *m, const struct cx_names *n) {
  struct pgs *s = (struct pgs *)b;
  int rc;
  s->names = n;
  if ((rc = cx_pg_connect(s->c, "corotracer export", &s->conn, s->base.err, sizeof s->base.err)))
    return rc;
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

/* Commits, after the rows of cx_pg_sink_tx's before_commit if any. */
static int pg_commit(struct cx_sink *b) {
  struct pgs *s = (struct pgs *)b;
  int rc =
      s->before_commit ? s->before_commit(s->tx_ctx, s->conn, s->base.err, sizeof s->base.err) : 0;
  if (rc)
    return rc;
  rc = pg_exec(s, "COMMIT", 0, NULL, "COMMIT");
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
  return cx_pg_sink_tx(c, NULL, NULL, out);
}

int cx_pg_sink_tx(const struct cx_conn *c, cx_pg_tx_fn before_commit, void *ctx,
                  struct cx_sink **out) {
  struct pgs *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  s->c = c;
  s->before_commit = before_commit;
  s->tx_ctx = ctx;
  s->d = pg_dialect;
  s->d.ctx = s; /* pg_quote asks the connection */
  s->base = CX_SINK_OPS("postgres", pg);
  *out = &s->base;
  return 0;
}

/* Replaces each occurrence of pw (k bytes) in msg by "***" (at most k
 * characters: it fits in place). */
static void scrub_word(char *msg, const char *pw, size_t k) {
  char *p;
  size_t r = k < 3 ? k : 3;
  while (k && (p = memmem(msg, strlen(msg), pw, k))) {
    memcpy(p, "***", r);
    memmove(p + r, p + k, strlen(p + k) + 1);
    msg = p + r; /* on after it: a password of stars is not found in its own mask */
  }
}

void cx_pg_scrub(const PGconn *conn, char *msg) {
  const char *pw = conn ? PQpass(conn) : NULL;
  if (pw)
    scrub_word(msg, pw, strlen(pw));
}

/* The password a connection URI or conninfo holds, out of msg: as libpq
 * decodes it, and as written (a URI's user:password@ part), for messages
 * about a URI libpq could not parse, which may quote it whole. */
static void scrub_url(const char *url, char *msg) {
  char *perr = NULL;
  PQconninfoOption *o = PQconninfoParse(url, &perr);
  for (PQconninfoOption *i = o; i && i->keyword; i++)
    if (!strcmp(i->keyword, "password") && i->val)
      scrub_word(msg, i->val, strlen(i->val));
  PQconninfoFree(o);
  PQfreemem(perr);
  const char *a = strstr(url, "://"), *at, *colon;
  if (!a)
    return;
  a += 3;
  size_t auth = strcspn(a, "/?");
  for (at = a + auth; at > a && at[-1] != '@'; at--) {
  }
  if (at > a && (colon = memchr(a, ':', (size_t)(at - 1 - a))))
    scrub_word(msg, colon + 1, (size_t)(at - 1 - (colon + 1)));
}

int cx_pg_connect(const struct cx_conn *c, const char *app, PGconn **out, char *err, size_t n) {
  const char *kw[10], *val[10];
  int k = 0;
#define KV(key, v)                                                                                 \
  if (v)                                                                                           \
  kw[k] = key, val[k++] = v
  KV("dbname", c->url); /* first: expanded, and the options after it override its parts */
  KV("host", c->host);
  KV("port", c->port);
  KV("user", c->user);
  KV("dbname", c->dbname);
  KV("sslmode", c->sslmode);
  KV("password", c->password);
#undef KV
  kw[k] = "application_name", val[k++] = app;
  kw[k] = NULL, val[k] = NULL;
  PGconn *conn = PQconnectdbParams(kw, val, c->url != NULL);
  if (conn && PQstatus(conn) == CONNECTION_OK) {
    PQsetNoticeProcessor(conn, quiet_notice, NULL); /* "already exists, skipping" */
    *out = conn;
    return 0;
  }
  snprintf(err, n, "postgres: cannot connect: %s", conn ? PQerrorMessage(conn) : "out of memory");
  one_line(conn, err);
  if (c->url)
    scrub_url(c->url, err);
  PQfinish(conn);
  *out = NULL;
  return -EIO;
}
