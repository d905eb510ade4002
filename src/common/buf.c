/* buf.c - the growable byte buffer (buf.h). */
#include "common/buf.h"
#include "common/jsonesc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ct_buf_reserve(struct ct_buf *b, size_t more) {
  if (b->err)
    return b->err;
  if (b->cap - b->n > more)
    return 0;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap - b->n <= more) {
    if (cap > SIZE_MAX / 2)
      return b->err = -ENOMEM;
    cap *= 2;
  }
  char *p = realloc(b->p, cap);
  if (!p)
    return b->err = -ENOMEM;
  b->p = p;
  b->cap = cap;
  return 0;
}

int ct_buf_put(struct ct_buf *b, const void *p, size_t n) {
  int rc = ct_buf_reserve(b, n);
  if (rc)
    return rc;
  memcpy(b->p + b->n, p, n);
  b->n += n;
  return 0;
}

void ct_buf_puts(struct ct_buf *b, const char *s) {
  ct_buf_put(b, s, strlen(s));
}

void ct_buf_printf(struct ct_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (k < 0 || ct_buf_reserve(b, (size_t)k + 1))
    return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)k;
}

void ct_buf_json(struct ct_buf *b, const char *s, size_t n) {
  if (ct_buf_reserve(b, CT_JSON_ESC_MAX(n)))
    return;
  char *o = b->p + b->n;
  *o++ = '"';
  o += ct_json_escape_as(o, s, n, CT_JSON_HTML);
  *o++ = '"';
  b->n = (size_t)(o - b->p);
}

void ct_buf_align(struct ct_buf *b, size_t align) {
  static const char zeros[16];
  size_t pad = (align - b->n % align) % align;
  ct_buf_put(b, zeros, pad);
}

void ct_buf_free(struct ct_buf *b) {
  free(b->p);
  *b = (struct ct_buf){0};
}
