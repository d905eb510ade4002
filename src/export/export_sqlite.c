/* export_sqlite.c - the SQLite target (libsqlite3): WAL, 16 KiB pages in a new
 * file, a 32 MiB page cache (the export's memory budget), one transaction,
 * one prepared INSERT per table bound and stepped per row, the run's old rows
 * replaced, indexes built after the load. */
#include "export/export_sql.h"

#include "common/outfile.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct sq {
  struct cx_sink base;
  sqlite3 *db;
  sqlite3_stmt *ins;
  const struct cx_names *names;
  struct cx_dialect d;
  const char *path;
  int in_tx;
};

static char *sq_quote(void *ctx, const char *name);

/* SQLite's SQL: its quoting, column types and parameters. */
static const struct cx_dialect sq_dialect = {.quote = sq_quote,
                                             .int_type = "INTEGER",
                                             .text_type = "TEXT",
                                             .key_type = "TEXT",
                                             .table_suffix = "",
                                             .param = "?"};

/* "%w" is SQLite's identifier quoting: doubled double quotes. */
static char *sq_quote(void *ctx, const char *name) {
  (void)ctx;
  char *q = sqlite3_mprintf("\"%w\"", name), *r = q ? strdup(q) : NULL;
  sqlite3_free(q);
  return r;
}

static int sq_fail(struct sq *s, const char *what) {
  snprintf(s->base.err, sizeof s->base.err, "%s: %s: %s", s->path, what,
           s->db ? sqlite3_errmsg(s->db) : "out of memory");
  return -EIO;
}

static int sq_exec(struct sq *s, const char *sql, const char *what) {
  if (!sql)
    return sq_fail(s, "out of memory building SQL");
  return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : sq_fail(s, what);
}

/* Runs malloc'd sql and frees it. */
static int sq_exec_own(struct sq *s, char *sql, const char *what) {
  int rc = sq_exec(s, sql, what);
  free(sql);
  return rc;
}

/* Adds to table t (name) the columns an older corotracer's table lacks (cx_col.added). */
static int sq_upgrade(struct sq *s, int t, const char *name) {
  static const char has_col[] = "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2";
  const struct cx_table *tb = &cx_tables[t];
  sqlite3_stmt *st = NULL;
  int rc = 0;
  if (sqlite3_prepare_v2(s->db, has_col, -1, &st, NULL) != SQLITE_OK)
    return sq_fail(s, "reading the table's columns");
  for (int i = 0; !rc && i < tb->ncols; i++) {
    if (!tb->cols[i].added)
      continue;
    int step = SQLITE_ERROR;
    if (sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_bind_text(st, 2, tb->cols[i].name, -1, SQLITE_STATIC) == SQLITE_OK)
      step = sqlite3_step(st);
    if (step == SQLITE_DONE) /* no row: the column is missing */
      rc = sq_exec_own(s, cx_sql_add_column(&s->d, t, name, i), "ALTER TABLE");
    else if (step != SQLITE_ROW)
      rc = sq_fail(s, "reading the table's columns");
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  return rc;
}

static int sq_begin(struct cx_sink *b, const struct cx_model *m, const struct cx_names *n) {
  struct sq *s = (struct sq *)b;
  int rc;
  s->names = n;
  /* A new database is made 0600 by us; a link at its name is refused
   * (src/common/outfile.h, docs/SECURITY.md "Outputs"). */
  if ((rc = ct_outfile_precreate(s->path))) {
    snprintf(s->base.err, sizeof s->base.err, "%s: %s", s->path, strerror(-rc));
    return rc;
  }
  if (sqlite3_open_v2(s->path, &s->db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
                      NULL) != SQLITE_OK)
    return sq_fail(s, "cannot open");
  sqlite3_busy_timeout(s->db, 10000);
  if ((rc = sq_exec(s,
                    "PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                    " PRAGMA cache_size=-32768",
                    "setting WAL")))
    return rc;
  if ((rc = sq_exec(s, "BEGIN IMMEDIATE", "BEGIN")))
    return rc;
  s->in_tx = 1;
  for (int t = 0; t < CX_NTABLES; t++) {
    if ((rc = sq_exec_own(s, cx_sql_create(&s->d, t, n->t[t]), "CREATE TABLE")) ||
        (rc = sq_upgrade(s, t, n->t[t])))
      return rc;
    char *del = cx_sql_delete_run(&s->d, n->t[t]);
    sqlite3_stmt *st = NULL;
    if (!del)
      return sq_fail(s, "out of memory building SQL");
    int ok = sqlite3_prepare_v2(s->db, del, -1, &st, NULL) == SQLITE_OK;
    for (size_t i = 0; ok && i < m->nruns; i++)
      ok = sqlite3_bind_text(st, 1, m->runs[i].run_id, -1, SQLITE_STATIC) == SQLITE_OK &&
           sqlite3_bind_text(st, 2, m->runs[i].host, -1, SQLITE_STATIC) == SQLITE_OK &&
           sqlite3_step(st) == SQLITE_DONE && sqlite3_reset(st) == SQLITE_OK;
    free(del);
    sqlite3_finalize(st);
    if (!ok)
      return sq_fail(s, "replacing the run's old rows");
  }
  return 0;
}

static int sq_table_begin(struct cx_sink *b, int t) {
  struct sq *s = (struct sq *)b;
  char *sql = cx_sql_insert(&s->d, t, s->names->t[t]);
  if (!sql)
    return sq_fail(s, "out of memory building SQL");
  int rc = sqlite3_prepare_v2(s->db, sql, -1, &s->ins, NULL);
  free(sql);
  return rc == SQLITE_OK ? 0 : sq_fail(s, "preparing INSERT");
}

static int sq_row(struct cx_sink *b, int t, const struct cx_val *v) {
  struct sq *s = (struct sq *)b;
  const struct cx_table *tb = &cx_tables[t];
  for (int i = 0; i < tb->ncols; i++) {
    int rc = v[i].null ? sqlite3_bind_null(s->ins, i + 1)
             : tb->cols[i].type == CX_INT
                 ? sqlite3_bind_int64(s->ins, i + 1, v[i].i)
                 : sqlite3_bind_text(s->ins, i + 1, v[i].s, (int)v[i].n, SQLITE_STATIC);
    if (rc != SQLITE_OK)
      return sq_fail(s, "binding");
  }
  if (sqlite3_step(s->ins) != SQLITE_DONE)
    return sq_fail(s, "INSERT");
  sqlite3_reset(s->ins);
  return 0;
}

static int sq_table_end(struct cx_sink *b, int t) {
  struct sq *s = (struct sq *)b;
  int rc = 0;
  sqlite3_finalize(s->ins);
  s->ins = NULL;
  for (int k = 0; !rc && k < 2 && cx_tables[t].index[k]; k++)
    rc = sq_exec_own(s, cx_sql_index(&s->d, t, s->names->t[t], k), "CREATE INDEX");
  return rc;
}

static int sq_commit(struct cx_sink *b) {
  struct sq *s = (struct sq *)b;
  int rc = sq_exec(s, "COMMIT", "COMMIT");
  if (!rc)
    s->in_tx = 0;
  return rc;
}

static void sq_abort(struct cx_sink *b) {
  struct sq *s = (struct sq *)b;
  sqlite3_finalize(s->ins);
  s->ins = NULL;
  if (s->in_tx)
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
  s->in_tx = 0;
}

static void sq_free(struct cx_sink *b) {
  struct sq *s = (struct sq *)b;
  sqlite3_finalize(s->ins);
  sqlite3_close(s->db);
  free(s);
}

int cx_sqlite_sink(const struct cx_conn *c, struct cx_sink **out) {
  struct sq *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  s->path = c->out;
  s->d = sq_dialect;
  s->base = CX_SINK_OPS("sqlite", sq);
  *out = &s->base;
  return 0;
}
