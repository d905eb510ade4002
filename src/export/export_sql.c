/* export_sql.c - SQL statements of the shared schema, every identifier
 * through the database's own quoting function (a hostile table name stays a
 * name), and the table names of an export. */
#include "export/export_sql.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

/* Statements are built in a struct ct_buf (common/buf.h): its error is
 * sticky, so a failure is checked once, by sb_done. s NULL: a quoting
 * function's ENOMEM. */
static void sb_add(struct ct_buf *b, const char *s) {
  if (!s) {
    b->err = -ENOMEM;
    return;
  }
  ct_buf_puts(b, s);
}

static void sb_quoted(struct ct_buf *b, const struct cx_dialect *d, const char *name) {
  char *q = d->quote(d->ctx, name);
  sb_add(b, q);
  free(q);
}

/* The statement, NUL-terminated (the caller's, to free), or NULL on ENOMEM
 * (b freed). */
static char *sb_done(struct ct_buf *b) {
  if (ct_buf_put(b, "", 1)) {
    ct_buf_free(b);
    return NULL;
  }
  return b->p;
}

static void sb_param(struct ct_buf *b, const struct cx_dialect *d, int i) {
  char num[16];
  if (d->param[0] == '$') {
    snprintf(num, sizeof num, "$%d", i);
    sb_add(b, num);
  } else
    sb_add(b, d->param);
}

/* "a, b" (column names of an index) into quoted names. */
static void sb_index_cols(struct ct_buf *b, const struct cx_dialect *d, const char *list) {
  char col[64];
  const char *p = list;
  while (*p) {
    size_t k = strcspn(p, ",");
    snprintf(col, sizeof col, "%.*s", (int)k, p);
    sb_quoted(b, d, col);
    p += k;
    if (*p == ',') {
      sb_add(b, ", ");
      p++;
      while (*p == ' ')
        p++;
    }
  }
}

/* Index names: the table's name + "_i0"/"_i1", so they stay unique per table. */
static char *index_name(const char *table, int which) {
  size_t n = strlen(table) + 8;
  char *s = malloc(n);
  if (s)
    snprintf(s, n, "%s_i%d", table, which);
  return s;
}

char *cx_sql_cols(const struct cx_dialect *d, int t) {
  struct ct_buf b = {0};
  const struct cx_table *tb = &cx_tables[t];
  sb_add(&b, "(");
  for (int i = 0; i < tb->ncols; i++) {
    if (i)
      sb_add(&b, ", ");
    sb_quoted(&b, d, tb->cols[i].name);
  }
  sb_add(&b, ")");
  return sb_done(&b);
}

/* A column's definition: its quoted name and the dialect's type. */
static void sb_column(struct ct_buf *b, const struct cx_dialect *d, const struct cx_col *c) {
  sb_quoted(b, d, c->name);
  sb_add(b, " ");
  sb_add(b, c->type == CX_INT ? d->int_type : c->type == CX_KEY ? d->key_type : d->text_type);
}

char *cx_sql_create(const struct cx_dialect *d, int t, const char *name) {
  struct ct_buf b = {0};
  const struct cx_table *tb = &cx_tables[t];
  sb_add(&b, "CREATE TABLE IF NOT EXISTS ");
  sb_quoted(&b, d, name);
  sb_add(&b, " (");
  for (int i = 0; i < tb->ncols; i++) {
    if (i)
      sb_add(&b, ", ");
    sb_column(&b, d, &tb->cols[i]);
  }
  for (int k = 0; d->inline_indexes && k < 2 && tb->index[k]; k++) {
    char *in = index_name(name, k);
    sb_add(&b, ", INDEX ");
    sb_quoted(&b, d, in);
    free(in);
    sb_add(&b, " (");
    sb_index_cols(&b, d, tb->index[k]);
    sb_add(&b, ")");
  }
  sb_add(&b, ")");
  sb_add(&b, d->table_suffix);
  return sb_done(&b);
}

char *cx_sql_add_column(const struct cx_dialect *d, int t, const char *name, int col) {
  struct ct_buf b = {0};
  sb_add(&b, "ALTER TABLE ");
  sb_quoted(&b, d, name);
  sb_add(&b, " ADD COLUMN ");
  sb_column(&b, d, &cx_tables[t].cols[col]);
  return sb_done(&b);
}

char *cx_sql_insert(const struct cx_dialect *d, int t, const char *name) {
  struct ct_buf b = {0};
  char *cols = cx_sql_cols(d, t);
  sb_add(&b, "INSERT INTO ");
  sb_quoted(&b, d, name);
  sb_add(&b, " ");
  sb_add(&b, cols);
  free(cols);
  sb_add(&b, " VALUES (");
  for (int i = 0; i < cx_tables[t].ncols; i++) {
    if (i)
      sb_add(&b, ", ");
    sb_param(&b, d, i + 1);
  }
  sb_add(&b, ")");
  return sb_done(&b);
}

char *cx_sql_delete_run(const struct cx_dialect *d, const char *name) {
  struct ct_buf b = {0};
  sb_add(&b, "DELETE FROM ");
  sb_quoted(&b, d, name);
  sb_add(&b, " WHERE ");
  sb_quoted(&b, d, "run_id");
  sb_add(&b, " = ");
  sb_param(&b, d, 1);
  sb_add(&b, " AND ");
  sb_quoted(&b, d, "host");
  sb_add(&b, " = ");
  sb_param(&b, d, 2);
  return sb_done(&b);
}

char *cx_sql_index(const struct cx_dialect *d, int t, const char *name, int which) {
  const char *cols = cx_tables[t].index[which];
  if (which >= 2 || !cols)
    return NULL;
  struct ct_buf b = {0};
  char *in = index_name(name, which);
  sb_add(&b, "CREATE INDEX IF NOT EXISTS ");
  sb_quoted(&b, d, in);
  free(in);
  sb_add(&b, " ON ");
  sb_quoted(&b, d, name);
  sb_add(&b, " (");
  sb_index_cols(&b, d, cols);
  sb_add(&b, ")");
  return sb_done(&b);
}

int cx_names_init(struct cx_names *n, const char *prefix, const char *events) {
  memset(n, 0, sizeof *n);
  for (int t = 0; t < CX_NTABLES; t++) {
    const char *base = cx_tables[t].name;
    size_t k;
    if (events && t == CX_T_EVENTS) {
      n->t[t] = strdup(events);
    } else if (events) {
      k = strlen(events) + strlen(base) + 2;
      if ((n->t[t] = malloc(k)))
        snprintf(n->t[t], k, "%s_%s", events, base);
    } else {
      k = strlen(prefix ? prefix : "") + strlen(base) + 1;
      if ((n->t[t] = malloc(k)))
        snprintf(n->t[t], k, "%s%s", prefix ? prefix : "", base);
    }
    if (!n->t[t]) {
      cx_names_free(n);
      return -ENOMEM;
    }
  }
  return 0;
}

void cx_names_free(struct cx_names *n) {
  for (int t = 0; t < CX_NTABLES; t++)
    free(n->t[t]), n->t[t] = NULL;
}
