/* trace_read.c - streaming a trace's lines through the parser (trace.c) in
 * a bounded buffer, optionally parsing some lines ahead of their analysis;
 * a binary trace's entries (ctrace_dec.c) come out as the same lines. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/trace.h"

#define MAX_LINE_BUF (64u << 20)
/* Events of a run handed to run at once: a run's events stay in the L1 cache. */
#define RUN_MAX 64

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
  ct_entry_fn entry; /* set: entries as they are, instead of fn */
  ct_line_fn fn;
  ct_run_fn run; /* set: a binary trace's runs of events through it (ct_ctr_run) */
  ct_peek_fn peek;
  void *ctx;
  uint64_t peeked; /* the coroutine of the last event line shown to peek */
  unsigned depth, first, n;
  struct {
    uint64_t lineno;
    enum ct_line_err err;
    struct ct_line l;
    char label[CT_CTR_LABEL_MAX]; /* a binary coroutine's label, l points into it */
  } ring[CT_TRACE_AHEAD];
  struct ct_event evs[RUN_MAX]; /* the run for run */
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

/* The ring slot the next line goes to, handing the oldest to fn when the
 * ring is full (*rc: fn's value then). */
static unsigned next_slot(struct reader *r, int *rc) {
  *rc = r->n == r->depth ? pop_line(r) : 0;
  return (r->first + r->n) % CT_TRACE_AHEAD;
}

/* The line in slot i is filled: it joins the ring, shown to peek unless an
 * event line of the coroutine the last one shown was of (read speed: most
 * lines, two calls saved a line). */
static inline __attribute__((always_inline)) void commit(struct reader *r, unsigned i,
                                                         uint64_t lineno) {
  const struct ct_line *l = &r->ring[i].l;
  r->n++;
  r->ring[i].lineno = lineno;
  r->ring[i].l.e.line = lineno; /* the event's line, as numbered here */
  if (!r->peek || r->ring[i].err != CT_LINE_OK)
    return;
  if (l->type == CT_LINE_EVENT) {
    if (l->probe_id == r->peeked)
      return;
    r->peeked = l->probe_id;
  }
  r->peek(r->ctx, l);
}

/* Parses line (len bytes; skipped: the rest of a line too long to keep, a
 * syntax error) into the ring, handing the oldest to fn when the ring is full. */
static int push_line(struct reader *r, uint64_t lineno, int skipped, const char *line, size_t len) {
  int rc;
  if (r->entry)
    return skipped ? 0 : r->entry(r->ctx, NULL, NULL, line, len);
  unsigned i = next_slot(r, &rc);
  if (rc)
    return rc;
  r->ring[i].err = skipped ? CT_LINE_SYNTAX : ct_parse_line(line, len, &r->ring[i].l);
  commit(r, i, lineno);
  return 0;
}

/* A buffer of the trace's bytes: buf[0] is at file offset off. */
struct rbuf {
  int fd;
  char *p;
  size_t cap, len;
  uint64_t off, *bytes;
};

/* More bytes at the end (the buffer grown to hold want bytes, at most
 * MAX_LINE_BUF unless want is more): the count read, 0 at EOF, or -errno. */
static ssize_t fill(struct rbuf *b, size_t want) {
  if (want > b->cap || b->len == b->cap) {
    size_t nc = b->cap * 2 > want ? b->cap * 2 : want;
    char *np = realloc(b->p, nc);
    if (!np)
      return -ENOMEM;
    b->p = np;
    b->cap = nc;
  }
  ssize_t n = read_some(b->fd, b->p + b->len, b->cap - b->len);
  if (n < 0)
    return -errno;
  *b->bytes += (uint64_t)n;
  b->len += (size_t)n;
  return n;
}

static int read_text(struct reader *r, struct rbuf *b) {
  int rc = 0, skipping = 0; /* skipping: inside a line longer than MAX_LINE_BUF */
  size_t pos = 0;           /* where the '\n' search resumes */
  uint64_t lineno = 0;
  for (;;) {
    size_t start = 0;
    char *nl;
    while ((nl = memchr(b->p + pos, '\n', b->len - pos))) {
      size_t end = (size_t)(nl - b->p);
      if ((rc = push_line(r, ++lineno, skipping, b->p + start, end - start)))
        return rc;
      skipping = 0;
      start = pos = end + 1;
    }
    if ((rc = drain(r)))
      return rc;
    pos = b->len;
    if (start) { /* keep only the partial line, at the front */
      memmove(b->p, b->p + start, b->len - start);
      b->len -= start;
      pos = b->len;
    }
    if (b->len == b->cap && b->cap >= MAX_LINE_BUF) {
      skipping = 1;
      b->len = pos = 0;
    }
    ssize_t n = fill(b, b->cap);
    if (n < 0)
      return (int)n;
    if (n == 0)
      break;
  }
  if (b->len || skipping) /* the last line had no '\n' */
    if ((rc = push_line(r, ++lineno, skipping, b->p, b->len)))
      return rc;
  return drain(r);
}

/* The chunks of a binary trace, each checked whole before its entries go
 * to fn. A bad or cut chunk ends the reading: its reason in d. */
static int read_binary(struct reader *r, struct rbuf *b, struct ct_read_diag *d) {
  struct ct_ctr_iter *it = malloc(sizeof *it);
  int rc = 0;
  size_t pos = 0, clen;
  uint64_t lineno = 0, chunks = 0;
  ssize_t n = 1;
  if (!it)
    return -ENOMEM;
  ct_ctr_init(it);
  while (b->len < sizeof(struct ctr_file_hdr) && (n = fill(b, b->cap)) > 0)
    ;
  if (n < 0) {
    rc = (int)n;
    goto out;
  }
  if ((n = ct_ctr_file_header(b->p, b->len, d->why, sizeof d->why)) < 0)
    goto out;
  pos = (size_t)n;
  for (;;) {
    int c;
    while ((c = ct_ctr_chunk(b->p + pos, b->len - pos, b->off + pos, &clen, d->why,
                             sizeof d->why)) > 0) {
      ct_ctr_begin(it, b->p + pos);
      for (;;) {
        unsigned i = 0;
        int k;
        if (r->entry) {
          struct ct_ev_item ev;
          struct ct_coro_item co;
          const char *s = NULL;
          size_t sn = 0;
          if ((k = ct_ctr_entry(it, &ev, &co, &s, &sn)) > 0 &&
              (rc = r->entry(r->ctx, k == 1 ? &ev : NULL, k == 3 ? &co : NULL, s, sn)))
            goto out;
        } else {
          unsigned m = r->run ? ct_ctr_run(it, r->evs, RUN_MAX, lineno + 1) : 0;
          if (m) { /* after the lines before it */
            lineno += m;
            if ((rc = drain(r)) || (rc = r->run(r->ctx, r->evs, m)))
              goto out;
            continue;
          }
          if ((i = next_slot(r, &rc)), rc)
            goto out;
          k = ct_ctr_next(it, &r->ring[i].l, &r->ring[i].err, r->ring[i].label);
        }
        if (k == 0)
          break;
        if (k < 0) {
          snprintf(d->why, sizeof d->why,
                   k == -2 ? "offset %llu: entry %llu is a line that is not one JSON object of "
                             "valid UTF-8"
                           : "offset %llu: entry %llu does not decode",
                   (unsigned long long)(b->off + pos), (unsigned long long)lineno + 1);
          c = -1;
          break;
        }
        if (r->entry)
          ++lineno;
        else
          commit(r, i, ++lineno);
      }
      if (c < 0)
        break;
      pos += clen;
      chunks++;
    }
    if ((rc = drain(r)) || c < 0)
      goto out;
    memmove(b->p, b->p + pos, b->len - pos);
    b->off += pos;
    b->len -= pos;
    pos = 0;
    /* Room for the whole chunk whose header is in: read until it is in. */
    struct ctr_chunk_hdr h = {0};
    if (b->len >= sizeof h)
      memcpy(&h, b->p, sizeof h);
    if ((n = fill(b, sizeof h + h.len)) <= 0)
      break;
  }
  if (n < 0)
    rc = (int)n;
  else if (b->len)
    snprintf(d->why, sizeof d->why, "offset %llu: truncated: the last chunk is cut (%zu bytes)",
             (unsigned long long)b->off, b->len);
  else if (!chunks) /* a run stopped before its first chunk: say so, not "empty" */
    snprintf(d->why, sizeof d->why, "offset %llu: no chunk after the file header: no record",
             (unsigned long long)b->off);
out:
  if (d->why[0])
    d->offset = b->off + pos;
  ct_ctr_fini(it);
  free(it);
  return rc;
}

/* Either reading: lines through fn (and peek; runs through run), or
 * entries through entry. */
static int read_any(int fd, size_t bufsize, ct_entry_fn entry, ct_line_fn fn, ct_run_fn run,
                    ct_peek_fn peek, void *ctx, uint64_t *bytes, struct ct_read_diag *diag) {
  struct rbuf b = {.fd = fd, .cap = bufsize < 4096 ? 4096 : bufsize, .bytes = bytes};
  struct ct_read_diag local;
  struct ct_read_diag *d = diag ? diag : &local;
  struct reader *r = malloc(sizeof *r);
  int rc = 0;
  memset(d, 0, sizeof *d);
  b.p = malloc(b.cap);
  if (!b.p || !r) {
    rc = -ENOMEM;
    goto out;
  }
  memset(r, 0, sizeof *r);
  r->entry = entry;
  r->fn = fn;
  r->run = run;
  r->peek = peek;
  r->ctx = ctx;
  r->depth = peek ? CT_TRACE_AHEAD : 1;
  /* The first bytes tell the format: a JSONL trace starts with '{'. */
  ssize_t n = 1;
  while (b.len < CTR_MAGIC_LEN && (n = fill(&b, b.cap)) > 0)
    ;
  if (n < 0) {
    rc = (int)n;
    goto out;
  }
  d->binary = b.len > 0 && b.p[0] == CTR_MAGIC[0];
  if (b.len == 0) /* every reader's one word for it (docs/TRACE_FORMAT.md, "Bad input") */
    snprintf(d->why, sizeof d->why, "empty file, not a trace");
  else
    rc = d->binary ? read_binary(r, &b, d) : read_text(r, &b);
  /* A caller that cannot show the reason gets an error, never silence. */
  if (!rc && !diag && d->why[0])
    rc = -EBADMSG;
out:
  free(r);
  free(b.p);
  return rc;
}

int ct_trace_read_runs(int fd, size_t bufsize, ct_line_fn fn, ct_run_fn run, ct_peek_fn peek,
                       void *ctx, uint64_t *bytes, struct ct_read_diag *diag) {
  return read_any(fd, bufsize, NULL, fn, run, peek, ctx, bytes, diag);
}

int ct_trace_read_diag(int fd, size_t bufsize, ct_line_fn fn, ct_peek_fn peek, void *ctx,
                       uint64_t *bytes, struct ct_read_diag *diag) {
  return read_any(fd, bufsize, NULL, fn, NULL, peek, ctx, bytes, diag);
}

int ct_trace_read_entries(int fd, size_t bufsize, ct_entry_fn fn, void *ctx, uint64_t *bytes,
                          struct ct_read_diag *diag) {
  return read_any(fd, bufsize, fn, NULL, NULL, NULL, ctx, bytes, diag);
}

int ct_trace_read_ahead(int fd, size_t bufsize, ct_line_fn fn, ct_peek_fn peek, void *ctx,
                        uint64_t *bytes) {
  return ct_trace_read_diag(fd, bufsize, fn, peek, ctx, bytes, NULL);
}

int ct_trace_read(int fd, size_t bufsize, ct_line_fn fn, void *ctx, uint64_t *bytes) {
  return ct_trace_read_diag(fd, bufsize, fn, NULL, ctx, bytes, NULL);
}
