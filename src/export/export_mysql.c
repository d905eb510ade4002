/* export_mysql.c - the MariaDB/MySQL target (libmariadb): settings from the
 * options, the client's option files ([client] of my.cnf) and MYSQL_PWD;
 * tables created first (DDL commits implicitly in MySQL, so the indexes are
 * declared there), then one transaction: the run's old rows deleted, rows
 * inserted by prepared statements with array binding (STMT_ATTR_ARRAY_SIZE,
 * one round trip per batch). Identifiers: backquoted, backquotes doubled
 * (MySQL's quoting rule; the connector has no function for identifiers). */
#include "export/export_sql.h"

#include <errno.h>
#include <mysql.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

#define BATCH 2000
#define NAME_MAX_MYSQL 64

struct col {
  int64_t *i;
  char **s;
  unsigned long *len;
  char *ind;
};

struct my {
  struct cx_sink base;
  MYSQL *db;
  MYSQL_STMT *st;
  const struct cx_conn *c;
  const struct cx_names *names;
  struct cx_dialect d;
  struct col col[CX_MAX_COLS];
  size_t *off[CX_MAX_COLS]; /* text offsets into arena until the batch is sent */
  struct ct_buf arena;
  unsigned nrows;
  int t, in_tx;
};

static char *my_quote(void *ctx, const char *name);

/* MySQL and MariaDB's SQL: its quoting, column types and parameters. */
static const struct cx_dialect my_dialect = {.quote = my_quote,
                                             .int_type = "BIGINT",
                                             .text_type = "LONGTEXT CHARACTER SET utf8mb4",
                                             .key_type = "VARCHAR(255) CHARACTER SET utf8mb4",
                                             .table_suffix = " ENGINE=InnoDB",
                                             .param = "?",
                                             .inline_indexes = 1};

/* MySQL identifier quoting: backquotes, a backquote doubled; NULL for an empty name or one
 * past MySQL's 64 characters. The caller frees. */
static char *my_quote(void *ctx, const char *name) {
  (void)ctx;
  size_t n = strlen(name), k = 0;
  if (n == 0 || n > NAME_MAX_MYSQL)
    return NULL;
  char *q = malloc(2 * n + 3);
  if (!q)
    return NULL;
  q[k++] = '`';
  for (size_t i = 0; i < n; i++) {
    if (name[i] == '`')
      q[k++] = '`';
    q[k++] = name[i];
  }
  q[k++] = '`';
  q[k] = 0;
  return q;
}

/* Records the statement's or the connection's error in err; returns -EIO. */
static int my_fail(struct my *s, const char *what) {
  const char *msg = s->st && mysql_stmt_errno(s->st) ? mysql_stmt_error(s->st)
                    : s->db                          ? mysql_error(s->db)
                                                     : "out of memory";
  snprintf(s->base.err, sizeof s->base.err, "mysql: %s: %s", what, msg && *msg ? msg : "failed");
  return -EIO;
}

static int my_exec(struct my *s, const char *sql, const char *what) {
  if (!sql) {
    snprintf(s->base.err, sizeof s->base.err, "mysql: %s: out of memory building SQL", what);
    return -ENOMEM;
  }
  return mysql_real_query(s->db, sql, strlen(sql)) ? my_fail(s, what) : 0;
}

static int my_exec_own(struct my *s, char *sql, const char *what) {
  int rc = my_exec(s, sql, what);
  free(sql);
  return rc;
}

/* DELETE of a run through a prepared statement (run_id, host bound). */
static int delete_run(struct my *s, const struct cx_run *m, const char *table) {
  char *sql = cx_sql_delete_run(&s->d, table);
  MYSQL_BIND bd[2];
  unsigned long len[2] = {strlen(m->run_id), strlen(m->host)};
  int rc = 0;
  if (!sql)
    return my_exec(s, NULL, "DELETE");
  memset(bd, 0, sizeof bd);
  bd[0] = (MYSQL_BIND){
      .buffer_type = MYSQL_TYPE_STRING, .buffer = (void *)m->run_id, .length = &len[0]};
  bd[1] =
      (MYSQL_BIND){.buffer_type = MYSQL_TYPE_STRING, .buffer = (void *)m->host, .length = &len[1]};
  if (!(s->st = mysql_stmt_init(s->db)) || mysql_stmt_prepare(s->st, sql, strlen(sql)) ||
      mysql_stmt_bind_param(s->st, bd) || mysql_stmt_execute(s->st))
    rc = my_fail(s, "replacing the run's old rows");
  if (s->st)
    mysql_stmt_close(s->st);
  s->st = NULL;
  free(sql);
  return rc;
}

/* Adds to table t (name) the columns an older corotracer's table lacks
 * (cx_col.added). Asked first (MySQL has no ADD COLUMN IF NOT EXISTS, MariaDB's
 * own), so a table already up to date sees no ALTER and none of its locks. */
static int my_upgrade(struct my *s, int t, const char *name) {
  const struct cx_table *tb = &cx_tables[t];
  char *quoted = my_quote(s, name), sql[512];
  int rc = quoted ? 0 : my_exec(s, NULL, "ALTER TABLE");
  for (int i = 0; !rc && i < tb->ncols; i++) {
    if (!tb->cols[i].added)
      continue;
    /* the column's name is ours, a constant: no quoting needed */
    snprintf(sql, sizeof sql, "SHOW COLUMNS FROM %s WHERE Field = '%s'", quoted, tb->cols[i].name);
    MYSQL_RES *res = NULL;
    if (mysql_real_query(s->db, sql, strlen(sql)) || !(res = mysql_store_result(s->db)))
      rc = my_fail(s, "reading the table's columns");
    else if (!mysql_num_rows(res))
      rc = my_exec_own(s, cx_sql_add_column(&s->d, t, name, i), "ALTER TABLE");
    if (res)
      mysql_free_result(res);
  }
  free(quoted);
  return rc;
}

/* Sink begin: connects (options, option files, MYSQL_PWD), creates missing tables (DDL
 * commits implicitly, so before the transaction), starts the transaction and deletes the
 * run's old rows. */
static int my_begin(struct cx_sink *b, const struct cx_model *m, const struct cx_names *n) {
  struct my *s = (struct my *)b;
  int rc;
  unsigned port = 0;
  s->names = n;
  for (int t = 0; t < CX_NTABLES; t++)
    if (strlen(n->t[t]) + 3 > NAME_MAX_MYSQL) { /* + "_i0" of its indexes */
      snprintf(s->base.err, sizeof s->base.err,
               "mysql: table name %s: longer than MySQL's %d-character limit (with _i0)", n->t[t],
               NAME_MAX_MYSQL);
      return -EINVAL;
    }
  if (s->c->port) {
    char *end;
    unsigned long p = strtoul(s->c->port, &end, 10);
    if (*end || end == s->c->port || p == 0 || p > 65535) {
      snprintf(s->base.err, sizeof s->base.err, "--db-port: not a port number: %s", s->c->port);
      return -EINVAL;
    }
    port = (unsigned)p;
  }
  if (!(s->db = mysql_init(NULL)))
    return my_fail(s, "init");
  mysql_options(s->db, MYSQL_READ_DEFAULT_GROUP, "client");
  mysql_options(s->db, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  /* passwd NULL: the connector takes the option files' or MYSQL_PWD. */
  if (!mysql_real_connect(s->db, s->c->host, s->c->user, s->c->password, s->c->dbname, port,
                          s->c->socket, 0))
    return my_fail(s, "cannot connect");
  for (int t = 0; t < CX_NTABLES; t++)
    if ((rc = my_exec_own(s, cx_sql_create(&s->d, t, n->t[t]), "CREATE TABLE")) ||
        (rc = my_upgrade(s, t, n->t[t])))
      return rc;
  if (mysql_autocommit(s->db, 0))
    return my_fail(s, "autocommit off");
  if ((rc = my_exec(s, "START TRANSACTION", "START TRANSACTION")))
    return rc;
  s->in_tx = 1;
  for (int t = 0; t < CX_NTABLES; t++)
    for (size_t i = 0; i < m->nruns; i++)
      if ((rc = delete_run(s, &m->runs[i], n->t[t])))
        return rc;
  return 0;
}

/* Prepares the table's INSERT; rows are gathered into column arrays. */
static int my_table_begin(struct cx_sink *b, int t) {
  struct my *s = (struct my *)b;
  char *sql = cx_sql_insert(&s->d, t, s->names->t[t]);
  s->t = t;
  s->nrows = 0;
  if (!sql)
    return my_exec(s, NULL, "INSERT");
  int bad = !(s->st = mysql_stmt_init(s->db)) || mysql_stmt_prepare(s->st, sql, strlen(sql));
  free(sql);
  return bad ? my_fail(s, "preparing INSERT") : 0;
}

/* Sends the gathered rows in one execute (array binding), then empties the batch. */
static int send_batch(struct my *s) {
  const struct cx_table *tb = &cx_tables[s->t];
  MYSQL_BIND bd[CX_MAX_COLS];
  unsigned n = s->nrows;
  if (!n)
    return 0;
  memset(bd, 0, sizeof bd);
  for (int i = 0; i < tb->ncols; i++) {
    struct col *c = &s->col[i];
    bd[i].u.indicator = c->ind;
    if (tb->cols[i].type == CX_INT) {
      bd[i].buffer_type = MYSQL_TYPE_LONGLONG;
      bd[i].buffer = c->i;
    } else {
      for (unsigned r = 0; r < n; r++)
        c->s[r] = s->arena.p + s->off[i][r];
      bd[i].buffer_type = MYSQL_TYPE_STRING;
      bd[i].buffer = c->s;
      bd[i].length = c->len;
    }
  }
  if (mysql_stmt_attr_set(s->st, STMT_ATTR_ARRAY_SIZE, &n) || mysql_stmt_bind_param(s->st, bd) ||
      mysql_stmt_execute(s->st))
    return my_fail(s, "INSERT");
  s->nrows = 0;
  s->arena.n = 0;
  return 0;
}

/* Copies one row into the column arrays (texts into the arena); sends a full batch. */
static int my_row(struct cx_sink *b, int t, const struct cx_val *v) {
  struct my *s = (struct my *)b;
  const struct cx_table *tb = &cx_tables[t];
  unsigned r = s->nrows;
  for (int i = 0; i < tb->ncols; i++) {
    struct col *c = &s->col[i];
    c->ind[r] = v[i].null ? STMT_INDICATOR_NULL : STMT_INDICATOR_NONE;
    if (tb->cols[i].type == CX_INT) {
      c->i[r] = v[i].null ? 0 : v[i].i;
      continue;
    }
    size_t k = v[i].null ? 0 : v[i].n;
    s->off[i][r] = s->arena.n;
    if (k && ct_buf_put(&s->arena, v[i].s, k))
      return my_exec(s, NULL, "INSERT");
    c->len[r] = (unsigned long)k;
  }
  return ++s->nrows == BATCH ? send_batch(s) : 0;
}

static int my_table_end(struct cx_sink *b, int t) {
  struct my *s = (struct my *)b;
  (void)t;
  int rc = send_batch(s);
  mysql_stmt_close(s->st);
  s->st = NULL;
  return rc;
}

static int my_commit(struct cx_sink *b) {
  struct my *s = (struct my *)b;
  if (mysql_commit(s->db))
    return my_fail(s, "COMMIT");
  s->in_tx = 0;
  return 0;
}

/* Rolls the transaction back; the connection stays for free(). */
static void my_abort(struct cx_sink *b) {
  struct my *s = (struct my *)b;
  if (s->st)
    mysql_stmt_close(s->st);
  s->st = NULL;
  if (s->in_tx)
    mysql_rollback(s->db);
  s->in_tx = 0;
}

static void my_free(struct cx_sink *b) {
  struct my *s = (struct my *)b;
  if (s->st)
    mysql_stmt_close(s->st);
  if (s->db)
    mysql_close(s->db);
  for (int i = 0; i < CX_MAX_COLS; i++) {
    free(s->col[i].i);
    free(s->col[i].s);
    free(s->col[i].len);
    free(s->col[i].ind);
    free(s->off[i]);
  }
  ct_buf_free(&s->arena);
  free(s);
}

int cx_mysql_sink(const struct cx_conn *c, struct cx_sink **out) {
  struct my *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  s->c = c;
  s->d = my_dialect;
  s->base = CX_SINK_OPS("mysql", my);
  for (int i = 0; i < CX_MAX_COLS; i++) {
    struct col *k = &s->col[i];
    k->i = malloc(BATCH * sizeof *k->i);
    k->s = malloc(BATCH * sizeof *k->s);
    k->len = malloc(BATCH * sizeof *k->len);
    k->ind = malloc(BATCH);
    s->off[i] = malloc(BATCH * sizeof *s->off[i]);
    if (!k->i || !k->s || !k->len || !k->ind || !s->off[i]) {
      my_free(&s->base);
      return -ENOMEM;
    }
  }
  *out = &s->base;
  return 0;
}
