/* writer.c - buffered trace writer: numbers and JSON strings without printf. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/outfile.h"
#include "engine/engine.h"

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

int ct_writer_flush(struct ct_writer *w) {
  if (w->sink) { /* a text writer: its bytes go to the formatter's queue */
    ct_sink_text(w->sink, w->buf, w->len);
    w->len = 0;
    return 0;
  }
  size_t off = 0;
  while (!w->err && off < w->len) {
    ssize_t k = write(w->fd, w->buf + off, w->len - off);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0)
      w->err = errno;
    else if (k == 0)
      w->err = EIO;
    else
      off += (size_t)k;
  }
  w->len = 0;
  return w->err ? -w->err : 0;
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

/* Escapes what JSON requires (quote, backslash, control characters). Bytes
 * >= 0x80 that are not valid UTF-8 (labels are arbitrary bytes) become
 * U+FFFD so the line stays valid UTF-8. */
void ct_w_json(struct ct_writer *w, const char *s, size_t n) {
  static const char digits[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)s;
  ct_w_raw(w, "\"", 1);
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      ct_w_raw(w, e, 2);
      i++;
    } else if (c < 0x20 || c == 0x7f) {
      char e[6] = {'\\', 'u', '0', '0', digits[c >> 4], digits[c & 0xf]};
      ct_w_raw(w, e, 6);
      i++;
    } else if (c < 0x80) {
      size_t j = i;
      while (j < n && p[j] >= 0x20 && p[j] < 0x7f && p[j] != '"' && p[j] != '\\')
        j++;
      ct_w_raw(w, s + i, j - i);
      i = j;
    } else {
      /* Validate one UTF-8 sequence (no overlongs, no surrogates). */
      size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
      if (c > 0xf4)
        len = 0;
      int ok = len > 0 && i + len <= n;
      for (size_t k = 1; ok && k < len; k++)
        ok = (p[i + k] & 0xc0) == 0x80;
      if (ok && len == 3) {
        unsigned c1 = p[i + 1];
        ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
      }
      if (ok && len == 4) {
        unsigned c1 = p[i + 1];
        ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
      }
      if (ok) {
        ct_w_raw(w, s + i, len);
        i += len;
      } else {
        ct_w_raw(w, "\xef\xbf\xbd", 3);
        i++;
      }
    }
  }
  ct_w_raw(w, "\"", 1);
}
