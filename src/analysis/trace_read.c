/* trace_read.c - streaming a trace's lines through the parser (trace.c) in
 * a bounded buffer, optionally parsing some lines ahead of their analysis. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/trace.h"

#define MAX_LINE_BUF (64u << 20)

/* read(2), retried on EINTR. */
static ssize_t read_some(int fd, char *buf, size_t n) {
  ssize_t r;
  do
    r = read(fd, buf, n);
  while (r < 0 && errno == EINTR);
  return r;
}

/* Lines parsed and not yet handed to fn: a ring of up to depth lines. */
struct reader {
  ct_line_fn fn;
  ct_peek_fn peek;
  void *ctx;
  unsigned depth, first, n;
  struct {
    uint64_t lineno;
    enum ct_line_err err;
    struct ct_line l;
  } ring[CT_TRACE_AHEAD];
};

/* Hands the oldest parsed line to fn; returns fn's value. */
static int pop_line(struct reader *r) {
  unsigned i = r->first;
  r->first = (r->first + 1) % CT_TRACE_AHEAD;
  r->n--;
  return r->fn(r->ctx, r->ring[i].lineno, r->ring[i].err, &r->ring[i].l);
}

/* Hands every parsed line to fn (before the buffer they point into moves). */
static int drain(struct reader *r) {
  int rc = 0;
  while (r->n && !(rc = pop_line(r)))
    ;
  return rc;
}

/* Parses line (len bytes; skipped: the rest of a line too long to keep, a
 * syntax error) into the ring, handing the oldest to fn when the ring is full. */
static int push_line(struct reader *r, uint64_t lineno, int skipped, const char *line, size_t len) {
  int rc;
  if (r->n == r->depth && (rc = pop_line(r)))
    return rc;
  unsigned i = (r->first + r->n++) % CT_TRACE_AHEAD;
  r->ring[i].lineno = lineno;
  r->ring[i].err = skipped ? CT_LINE_SYNTAX : ct_parse_line(line, len, &r->ring[i].l);
  if (r->peek && r->ring[i].err == CT_LINE_OK)
    r->peek(r->ctx, &r->ring[i].l);
  return 0;
}

int ct_trace_read_ahead(int fd, size_t bufsize, ct_line_fn fn, ct_peek_fn peek, void *ctx,
                        uint64_t *bytes) {
  size_t cap = bufsize < 4096 ? 4096 : bufsize;
  char *buf = malloc(cap);
  struct reader *r = malloc(sizeof *r);
  int rc = 0, skipping = 0; /* skipping: inside a line longer than MAX_LINE_BUF */
  size_t len = 0, pos = 0;  /* bytes in buf; where the '\n' search resumes */
  uint64_t lineno = 0;
  if (!buf || !r) {
    rc = -ENOMEM;
    goto out;
  }
  *r = (struct reader){fn, peek, ctx, peek ? CT_TRACE_AHEAD : 1, 0, 0, {{0}}};
  for (;;) {
    if (len == cap) {
      if (cap < MAX_LINE_BUF) {
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
          rc = -ENOMEM;
          goto out;
        }
        buf = nb;
        cap *= 2;
      } else {
        skipping = 1;
        len = pos = 0;
      }
    }
    ssize_t n = read_some(fd, buf + len, cap - len);
    if (n < 0) {
      rc = -errno;
      goto out;
    }
    if (n == 0)
      break;
    *bytes += (uint64_t)n;
    len += (size_t)n;
    size_t start = 0;
    char *nl;
    while ((nl = memchr(buf + pos, '\n', len - pos))) {
      size_t end = (size_t)(nl - buf);
      if ((rc = push_line(r, ++lineno, skipping, buf + start, end - start)))
        goto out;
      skipping = 0;
      start = pos = end + 1;
    }
    if ((rc = drain(r)))
      goto out;
    pos = len;
    if (start) { /* keep only the partial line, at the front */
      memmove(buf, buf + start, len - start);
      len -= start;
      pos = len;
    }
  }
  if (len || skipping) { /* the last line had no '\n' */
    if ((rc = push_line(r, ++lineno, skipping, buf, len)))
      goto out;
  }
  rc = drain(r);
out:
  free(r);
  free(buf);
  return rc;
}

int ct_trace_read(int fd, size_t bufsize, ct_line_fn fn, void *ctx, uint64_t *bytes) {
  return ct_trace_read_ahead(fd, bufsize, fn, NULL, ctx, bytes);
}
