/* writer.c - buffered trace writer: numbers and JSON strings without printf. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/jsonesc.h"
#include "common/outfile.h"
#include "format/writer.h"

int ct_writer_open(struct ct_writer *w, const char *path, int append) {
  memset(w, 0, sizeof(*w));
  w->fd = -1;
  w->buf = malloc(CT_W_BUF);
  if (!w->buf)
    return -ENOMEM;
  /* Never written through a link or into another file (docs/SECURITY.md). */
  int fd, rc = ct_outfile_trace(path, append, &fd);
  if (rc) {
    free(w->buf);
    w->buf = NULL;
    return rc;
  }
  w->fd = fd;
  return 0;
}

/* Write n bytes at p to the file (EINTR, short writes handled); pos counts
 * what reached it. 0 or -errno (w->err set). */
static int write_all(struct ct_writer *w, const char *p, size_t n, size_t *done) {
  size_t off = 0;
  while (!w->err && off < n) {
    ssize_t k = write(w->fd, p + off, n - off);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0)
      w->err = errno;
    else if (k == 0)
      w->err = EIO;
    else
      off += (size_t)k;
  }
  w->pos += off;
  *done = off;
  return w->err ? -w->err : 0;
}

int ct_writer_flush(struct ct_writer *w) {
  if (w->drain) { /* a text writer: its bytes go to the drain */
    w->drain(w->drain_ctx, w->buf, w->len);
    w->len = 0;
    return 0;
  }
  uint64_t start = w->pos;
  size_t done = 0;
  int rc = write_all(w, w->buf, w->len, &done);
  /* The end of the last whole line that reached the file. */
  const char *nl = done ? memrchr(w->buf, '\n', done) : NULL;
  if (w->binary && !rc)
    w->safe = w->pos;
  else if (!w->binary && nl)
    w->safe = start + (uint64_t)(nl - w->buf) + 1;
  w->len = 0;
  return rc;
}

int ct_writer_put(struct ct_writer *w, const void *p, size_t n) {
  int rc = w->len ? ct_writer_flush(w) : 0;
  size_t done;
  if (rc || (rc = write_all(w, p, n, &done)))
    return rc;
  w->safe = w->pos;
  return 0;
}

int ct_writer_cut(struct ct_writer *w, const void *mark, size_t n) {
  w->len = 0;
  if (w->fd < 0)
    return -EBADF;
  if (ftruncate(w->fd, (off_t)w->safe) < 0)
    return -errno;
  w->pos = w->safe;
  /* Room freed by the cut may take the marker; if not, the file still ends
   * on a whole record. The error stays: nothing else is written. */
  int err = w->err, rc = 0;
  size_t done;
  w->err = 0;
  if (n && (lseek(w->fd, (off_t)w->safe, SEEK_SET) < 0 || (rc = write_all(w, mark, n, &done)))) {
    rc = rc ? rc : -errno;
    if (ftruncate(w->fd, (off_t)w->safe) == 0)
      w->pos = w->safe;
  }
  w->safe = w->pos;
  w->err = err;
  return rc;
}

int ct_writer_close(struct ct_writer *w) {
  int rc = 0;
  if (w->buf && w->fd >= 0)
    rc = ct_writer_flush(w);
  /* close() can report a delayed write error (NFS); EINTR must not be retried. */
  if (w->fd >= 0 && close(w->fd) < 0 && errno != EINTR && !w->err) {
    w->err = errno;
    rc = -errno;
  }
  w->fd = -1;
  free(w->buf);
  w->buf = NULL;
  return rc;
}

void ct_w_raw(struct ct_writer *w, const char *s, size_t n) {
  if (w->err)
    return;
  while (n > 0) {
    if (w->len == CT_W_BUF)
      ct_writer_flush(w);
    if (w->err)
      return;
    size_t k = CT_W_BUF - w->len;
    if (k > n)
      k = n;
    memcpy(w->buf + w->len, s, k);
    w->len += k;
    s += k;
    n -= k;
  }
}

void ct_w_str(struct ct_writer *w, const char *s) {
  ct_w_raw(w, s, strlen(s));
}

char *ct_w_reserve(struct ct_writer *w, size_t n) {
  if (!w->err && CT_W_BUF - w->len < n)
    ct_writer_flush(w);
  return w->err ? NULL : w->buf + w->len;
}

void ct_w_commit(struct ct_writer *w, const char *end) {
  w->len = (size_t)(end - w->buf);
}

void ct_w_u64(struct ct_writer *w, uint64_t v) {
  char *p = ct_w_reserve(w, 20);
  if (p)
    ct_w_commit(w, ct_put_u64(p, v));
}

void ct_w_hex(struct ct_writer *w, uint64_t v) {
  char *p = ct_w_reserve(w, 20);
  if (p)
    ct_w_commit(w, ct_put_hex(p, v));
}

/* Quoted and escaped (common/jsonesc.h), in place, in pieces that never
 * split a UTF-8 sequence: a piece ends before the last byte (of the 4 at its
 * end) that is no continuation byte; with none there, no sequence crosses. */
void ct_w_json(struct ct_writer *w, const char *s, size_t n) {
  ct_w_raw(w, "\"", 1);
  while (n > 0) {
    size_t k = n;
    if (k > 4096) {
      k = 4096;
      for (size_t b = 0; b < 4; b++)
        if (((unsigned char)s[4096 - b] & 0xc0) != 0x80) {
          k = 4096 - b;
          break;
        }
    }
    char *p = ct_w_reserve(w, CT_JSON_ESC_MAX(k));
    if (!p)
      return;
    ct_w_commit(w, p + ct_json_escape(p, s, k));
    s += k;
    n -= k;
  }
  ct_w_raw(w, "\"", 1);
}
