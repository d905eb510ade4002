/* export_csv.c - the CSV target: one RFC 4180 file per table (header row,
 * CRLF, fields quoted when they hold a comma, quote, CR or LF; NULL is an
 * empty field) in a directory. Written to temporary names and renamed at the
 * commit, so a failed export leaves the previous files as they were
 * (src/common/outfile.h: random O_EXCL temporary names, a 0700 directory). */
#include "export/export.h"

#include "common/outfile.h"

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
  int dirfd; /* the directory (ct_outdir_open), -1 before begin */
  char final[CX_NTABLES][4096];
  struct ct_outfile of[CX_NTABLES];
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
  int rc = ct_outdir_open(s->dir, &s->dirfd);
  if (rc)
    return csv_fail(s, s->dir, -rc);
  for (int t = 0; t < CX_NTABLES; t++) {
    if (strchr(n->t[t], '/') || !strcmp(n->t[t], ".") || !strcmp(n->t[t], "..")) {
      snprintf(s->base.err, sizeof s->base.err, "%s: table name is not a file name", n->t[t]);
      return -EINVAL;
    }
    int k = snprintf(s->final[t], sizeof s->final[t], "%s/%s.csv", s->dir, n->t[t]);
    if (k >= (int)sizeof s->final[t])
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
  const char *file = s->final[t] + strlen(s->dir) + 1; /* TABLE.csv, in dirfd */
  int rc = ct_outfile_open(&s->of[t], s->dirfd, file);
  if (rc)
    return csv_fail(s, s->final[t], -rc);
  if (!(s->f = ct_outfile_stream(&s->of[t])))
    return csv_fail(s, s->final[t], errno);
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
  return ferror(s->f) ? csv_fail(s, s->final[t], errno ? errno : EIO) : 0;
}

static int csv_table_end(struct cx_sink *b, int t) {
  struct csv *s = (struct csv *)b;
  int rc = ct_outfile_close(&s->of[t]); /* closes s->f */
  s->f = NULL;
  return rc ? csv_fail(s, s->final[t], -rc) : 0;
}

/* Renames every temporary file to its final name. */
static int csv_commit(struct cx_sink *b) {
  struct csv *s = (struct csv *)b;
  for (int t = 0; t < CX_NTABLES; t++) {
    int rc = ct_outfile_commit(&s->of[t]);
    if (rc)
      return csv_fail(s, s->final[t], -rc);
  }
  return 0;
}

/* Closes and removes the temporary files; earlier final files stay as they were. */
static void csv_abort(struct cx_sink *b) {
  struct csv *s = (struct csv *)b;
  s->f = NULL; /* owned by its ct_outfile */
  for (int t = 0; t < CX_NTABLES; t++)
    ct_outfile_abort(&s->of[t]);
}

static void csv_free(struct cx_sink *b) {
  struct csv *s = (struct csv *)b;
  for (int t = 0; t < CX_NTABLES; t++)
    ct_outfile_abort(&s->of[t]);
  if (s->dirfd >= 0)
    close(s->dirfd);
  free(b);
}

int cx_csv_sink(const struct cx_conn *c, struct cx_sink **out) {
  struct csv *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  s->dir = c->out;
  s->dirfd = -1;
  for (int t = 0; t < CX_NTABLES; t++)
    s->of[t] = (struct ct_outfile){.fd = -1, .dirfd = -1};
  s->base = CX_SINK_OPS("csv", csv);
  *out = &s->base;
  return 0;
}
