/* export_sql.h - the SQL text the three databases share (CREATE TABLE,
 * INSERT, DELETE of a run, CREATE INDEX), built around each database's own
 * identifier quoting. Internal to src/export; returns NULL on ENOMEM. */
#ifndef CT_EXPORT_SQL_H
#define CT_EXPORT_SQL_H

#include "export/export.h"

/* Quotes one identifier with the database's own rules: a malloc'd string, or
 * NULL (error, e.g. a name the database cannot hold). */
typedef char *(*cx_quote_fn)(void *ctx, const char *name);

struct cx_dialect {
  cx_quote_fn quote;
  void *ctx;
  const char *int_type, *text_type, *key_type; /* column types */
  const char *table_suffix;                    /* after ")" of CREATE TABLE, or "" */
  const char *param;                           /* "?" or "$" (numbered $1, $2...) */
  int inline_indexes;                          /* indexes in CREATE TABLE (MySQL: DDL commits) */
};

/* All malloc'd, NULL on error (ENOMEM or a refused name). */
char *cx_sql_create(const struct cx_dialect *d, int t, const char *name);
char *cx_sql_insert(const struct cx_dialect *d, int t, const char *name);
char *cx_sql_delete_run(const struct cx_dialect *d, const char *name); /* 2 params: run_id, host */
char *cx_sql_index(const struct cx_dialect *d, int t, const char *name, int which);
/* ALTER TABLE name ADD COLUMN: column col of table t (a cx_col.added one, which
 * a table of an older corotracer lacks; the sink asks first). */
char *cx_sql_add_column(const struct cx_dialect *d, int t, const char *name, int col);
/* "(col, col, ...)" list, quoted. */
char *cx_sql_cols(const struct cx_dialect *d, int t);

/* Table names: prefix + default name, or the events table named by `events`
 * (the reference's -db-table) with its name + "_" as the prefix of the others. */
int cx_names_init(struct cx_names *n, const char *prefix, const char *events);
void cx_names_free(struct cx_names *n);

#endif
