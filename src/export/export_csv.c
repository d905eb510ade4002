/* export_csv.c - the CSV target: one RFC 4180 file per table (header row,
 * CRLF, fields quoted when they hold a comma, quote, CR or LF; NULL is an
 * empty field) in a directory. Written to temporary names and renamed at the
 * commit, so a failed export leaves the previous files as they were. */
#include "export/export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct csv {
  struct cx_sink base;
  const char *dir;
  const struct cx_names *names;
  FILE *f;
  char tmp[CX_NTABLES][4096], final[CX_NTABLES][4096];
  int made[CX_NTABLES];
};

/* Records "path: strerror(e)" in the sink's err; returns -e. */
static int csv_fail(struct csv *s, const char *path, int e) {
  snprintf(s->base.err, sizeof s->base.err, "%s: %s", path, strerror(e));
  return -e;
}

/* Sink begin: makes the directory, checks the table names are file names, computes the
 * temporary and final paths. Opens nothing yet. */
static int csv_begin(struct cx_sink *b, const struct cx_model *m, const struct cx_names *n) {
  struct csv *s = (struct csv *)b;
  (void)m;
  s->names = n;
  if (mkdir(s->dir, 0777) && errno != EEXIST)
    return csv_fail(s, s->dir, errno);
  for (int t = 0; t < CX_NTABLES; t++) {
    if (strchr(n->t[t], '/') || !strcmp(n->t[t], ".") || !strcmp(n->t[t], "..")) {
      snprintf(s->base.err, sizeof s->base.err, "%s: table name is not a file name", n->t[t]);
      return -EINVAL;
    }
    int k = snprintf(s->final[t], sizeof s->final[t], "%s/%s.csv", s->dir, n->t[t]);
    int j = snprintf(s->tmp[t], sizeof s->tmp[t], "%s/.%s.csv.tmp", s->dir, n->t[t]);
    if (k >= (int)sizeof s->final[t] || j >= (int)sizeof s->tmp[t])
      return csv_fail(s, s->dir, ENAMETOOLONG);
  }
  return 0;
}

/* One text field, quoted (quotes doubled) only when RFC 4180 requires it. */
static void put_field(FILE *f, const char *p, size_t n) {
  if (strcspn(p, ",\"\r\n") >= n && memchr(p, 0, n) == NULL) {
    fwrite(p, 1, n, f);
    return;
  }
  putc('"', f);
  for (size_t i = 0; i < n; i++) {
    if (p[i] == '"')
      putc('"', f);
    putc(p[i], f);
  }
  putc('"', f);
}

/* Opens the table's temporary file and writes the header row. */
static int csv_table_begin(struct cx_sink *b, int t) {
  struct csv *s = (struct csv *)b;
  if (!(s->f = fopen(s->tmp[t], "we")))
    return csv_fail(s, s->tmp[t], errno);
  s->made[t] = 1;
  const struct cx_table *tb = &cx_tables[t];
  for (int i = 0; i < tb->ncols; i++) {
    if (i)
      putc(',', s->f);
    fputs(tb->cols[i].name, s->f);
  }
  fputs("\r\n", s->f);
  return 0;
}

static int csv_row(struct cx_sink *b, int t, const struct cx_val *v) {
  struct csv *s = (struct csv *)b;
  const struct cx_table *tb = &cx_tables[t];
  for (int i = 0; i < tb->ncols; i++) {
    if (i)
      putc(',', s->f);
    if (v[i].null)
      continue;
    if (tb->cols[i].type == CX_INT)
      fprintf(s->f, "%lld", (long long)v[i].i);
    else
      put_field(s->f, v[i].s, v[i].n);
  }
  fputs("\r\n", s->f);
  return ferror(s->f) ? csv_fail(s, s->tmp[t], errno ? errno : EIO) : 0;
}

static int csv_table_end(struct cx_sink *b, int t) {
  struct csv *s = (struct csv *)b;
  int bad = ferror(s->f);
  int rc = fclose(s->f);
  s->f = NULL;
  if (rc || bad)
    return csv_fail(s, s->tmp[t], errno ? errno : EIO);
  return 0;
}

/* Renames every temporary file to its final name. */
static int csv_commit(struct cx_sink *b) {
  struct csv *s = (struct csv *)b;
  for (int t = 0; t < CX_NTABLES; t++) {
    if (rename(s->tmp[t], s->final[t]))
      return csv_fail(s, s->final[t], errno);
    s->made[t] = 0;
  }
  return 0;
}

/* Closes and removes the temporary files; earlier final files stay as they were. */
static void csv_abort(struct cx_sink *b) {
  struct csv *s = (struct csv *)b;
  if (s->f)
    fclose(s->f);
  s->f = NULL;
  for (int t = 0; t < CX_NTABLES; t++)
    if (s->made[t])
      unlink(s->tmp[t]), s->made[t] = 0;
}

static void csv_free(struct cx_sink *b) {
  free(b);
}

int cx_csv_sink(const struct cx_conn *c, struct cx_sink **out) {
  struct csv *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  s->dir = c->out;
  s->base = CX_SINK_OPS("csv", csv);
  *out = &s->base;
  return 0;
}
