/* live_detail.c - detail on request (docs/DASHBOARD.md "Detail on
 * request"): GET /detail?t0=&t1=&lanes= answers the exact spans and wake
 * edges of the window [t0, t1] (ns from the view's start) for the
 * coroutines listed (ids, comma-separated), in the page's blob encoding, from
 * the trace file itself: its index by time (live_int.h, struct ct_live_blk,
 * built as the file is read) names the stretches of the file to read, so a
 * window costs its own bytes, not the whole file's. A window that holds more
 * than DETAIL_MAX_BYTES of trace is refused (413): the page's summary is
 * what that width shows. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html/live_int.h"
#include "html/page.h"

#define DETAIL_MAX_BYTES (48u << 20)
#define DETAIL_MAX_LANES 4096
#define DETAIL_SPANS 400000u /* the detail model's budget: bounded whatever the window */

struct detail {
  uint64_t a0, a1; /* the window, absolute ts */
  uint64_t *ids;   /* the coroutines asked for, sorted */
  size_t nids;
  struct ct_model m;
};

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* 1 when the line concerns the coroutines asked for (or no coroutine) and,
 * an event, lies within a window's width of the window (the chunks read are
 * wider: a state that began earlier than that starts at the margin's first
 * event; the answer stays near the window's own size). */
static int wanted(const struct detail *d, const struct ct_line *line) {
  uint64_t id, w = d->a1 - d->a0 > 1000000 ? d->a1 - d->a0 : 1000000;
  if (line->type == CT_LINE_EVENT && ((line->e.ts < d->a0 && d->a0 - line->e.ts > w) ||
                                      (line->e.ts > d->a1 && line->e.ts - d->a1 > w)))
    return 0;
  if (line->type == CT_LINE_EVENT)
    id = line->e.probe_id;
  else if (line->type == CT_LINE_COROUTINE)
    id = line->probe_id;
  else
    return line->type == CT_LINE_META;
  return bsearch(&id, d->ids, d->nids, sizeof id, cmp_u64) != NULL;
}

/* The value of name in the query (its bytes, *vn), or NULL. */
static const char *param(const char *q, size_t qn, const char *name, size_t *vn) {
  size_t nn = strlen(name);
  for (const char *p = q; p < q + qn;) {
    const char *amp = memchr(p, '&', (size_t)(q + qn - p)), *e = amp ? amp : q + qn;
    if ((size_t)(e - p) > nn && !memcmp(p, name, nn) && p[nn] == '=') {
      *vn = (size_t)(e - p - nn - 1);
      return p + nn + 1;
    }
    p = e + 1;
  }
  return NULL;
}

/* A whole number of at most 19 digits at v (n bytes) into *out; 0 or -EINVAL. */
static int number(const char *v, size_t n, uint64_t *out) {
  uint64_t x = 0;
  if (!n || n > 19)
    return -EINVAL;
  for (size_t i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9')
      return -EINVAL;
    x = x * 10 + (uint64_t)(v[i] - '0');
  }
  *out = x;
  return 0;
}

/* The query into d (the window made absolute from start); 0, or -EINVAL
 * with the reason in why. */
static int parse(struct detail *d, const char *q, size_t qn, uint64_t start, char *why, size_t wn) {
  size_t n;
  const char *v;
  uint64_t t0, t1;
  if (!(v = param(q, qn, "t0", &n)) || number(v, n, &t0))
    return snprintf(why, wn, "detail: t0: want ns from the start (a whole number)\n"), -EINVAL;
  if (!(v = param(q, qn, "t1", &n)) || number(v, n, &t1) || t1 < t0)
    return snprintf(why, wn, "detail: t1: want ns from the start, at least t0\n"), -EINVAL;
  if (!(v = param(q, qn, "lanes", &n)) || !n)
    return snprintf(why, wn, "detail: lanes: want coroutine ids, comma-separated\n"), -EINVAL;
  if (!(d->ids = malloc(DETAIL_MAX_LANES * sizeof *d->ids)))
    return snprintf(why, wn, "detail: out of memory\n"), -ENOMEM;
  for (const char *p = v, *end = v + n; p < end;) {
    const char *c = memchr(p, ',', (size_t)(end - p)), *e = c ? c : end;
    if (d->nids == DETAIL_MAX_LANES)
      return snprintf(why, wn, "detail: lanes: at most %d ids\n", DETAIL_MAX_LANES), -EINVAL;
    if (number(p, (size_t)(e - p), &d->ids[d->nids]))
      return snprintf(why, wn, "detail: lanes: id %zu (byte %zu): not a whole number\n",
                      d->nids + 1, (size_t)(p - v)),
             -EINVAL;
    d->nids++;
    p = e + 1;
  }
  qsort(d->ids, d->nids, sizeof *d->ids, cmp_u64);
  d->a0 = start + t0;
  d->a1 = t1 > UINT64_MAX - start ? UINT64_MAX : start + t1;
  return 0;
}

/* The lines of one block of the file (buf, n bytes: binary chunks or
 * JSONL lines) that concern d, into d's model. */
static void feed_block(struct detail *d, int binary, const uint8_t *buf, size_t n) {
  struct ct_line line;
  enum ct_line_err err;
  if (binary) {
    struct ct_ctr_iter it;
    char why[160], label[CT_CTR_LABEL_MAX];
    size_t start = 0, clen;
    while (start < n && ct_ctr_chunk(buf + start, n - start, 0, &clen, why, sizeof why) > 0) {
      ct_ctr_begin(&it, buf + start);
      while (ct_ctr_next(&it, &line, &err, label) > 0)
        if (err == CT_LINE_OK && wanted(d, &line))
          (void)ct_model_line(&d->m, err, &line);
      start += clen;
    }
    return;
  }
  for (const char *p = (const char *)buf, *end = p + n, *nl; p < end; p = nl + 1) {
    if (!(nl = memchr(p, '\n', (size_t)(end - p))))
      break;
    err = ct_parse_line(p, (size_t)(nl - p), &line);
    if (err == CT_LINE_OK && wanted(d, &line))
      (void)ct_model_line(&d->m, err, &line);
  }
}

/* Reads and feeds the blocks of the index that hold events of the window
 * (the one still being read included). 0, -E2BIG past DETAIL_MAX_BYTES
 * (*bytes: what it would take), or the read's -errno. */
static int read_window(struct ct_live *l, struct detail *d, uint64_t *bytes) {
  struct ct_live_blk open = {l->blk_off, l->bytes - l->lbn - l->blk_off, l->blk_t0, l->blk_t1};
  *bytes = 0;
  for (size_t i = 0; i <= l->nblk; i++) {
    const struct ct_live_blk *b = i < l->nblk ? &l->blk[i] : &open;
    if (b->len && b->t0 <= d->a1 && b->t1 >= d->a0)
      *bytes += b->len;
  }
  if (*bytes > DETAIL_MAX_BYTES)
    return -E2BIG;
  uint8_t *buf = NULL;
  size_t cap = 0;
  int rc = 0;
  for (size_t i = 0; i <= l->nblk && !rc; i++) {
    const struct ct_live_blk *b = i < l->nblk ? &l->blk[i] : &open;
    if (!b->len || b->t0 > d->a1 || b->t1 < d->a0)
      continue;
    if (b->len > cap) {
      uint8_t *nb = realloc(buf, (size_t)b->len);
      if (!nb) {
        rc = -ENOMEM;
        break;
      }
      buf = nb;
      cap = (size_t)b->len;
    }
    ssize_t got = pread(l->tfd, buf, (size_t)b->len, (off_t)b->off);
    if (got != (ssize_t)b->len) {
      rc = got < 0 ? -errno : -EIO;
      break;
    }
    feed_block(d, l->binary, buf, (size_t)b->len);
  }
  free(buf);
  return rc;
}

/* Drops from d's model the spans and wake edges wholly outside the window
 * (the stretch read is whole chunks, wider than the window): the answer
 * carries the window. The spans' rows keep their counts: only the page's
 * blob reads them, which counts from the spans themselves. */
static void clip(struct detail *d) {
  struct ct_model *m = &d->m;
  size_t k = 0;
  for (size_t i = 0; i < m->nspans; i++)
    if (m->spans[i].t1 >= d->a0 && m->spans[i].t0 <= d->a1)
      m->spans[k++] = m->spans[i];
  m->nspans = k;
  k = 0;
  for (size_t i = 0; i < m->tail_n;
       i++) /* ring order no longer matters: lanes are sorted by time */
    if (m->tail[i].t1 >= d->a0 && m->tail[i].t0 <= d->a1)
      m->tail[k++] = m->tail[i];
  m->tail_n = k;
  m->tail_at = 0;
  k = 0;
  for (size_t i = 0; i < m->nwakes; i++)
    if (m->wakes[i].ts >= d->a0 && m->wakes[i].ts <= d->a1)
      m->wakes[k++] = m->wakes[i];
  m->nwakes = k;
}

void ct_live_detail(struct ct_live *l, const char *q, size_t qn, struct ct_buf *body,
                    const char **status, const char **type) {
  struct detail d = {0};
  char why[200];
  uint64_t bytes = 0;
  int rc, inited = 0;
  *status = "400 Bad Request";
  *type = "text/plain; charset=utf-8";
  if (l->windowed || l->tfd < 0) {
    *status = "404 Not Found";
    ct_buf_puts(body, "detail: only for a trace file (serve FILE, run --serve)\n");
    goto out;
  }
  if (!l->m.start_ts) {
    ct_live_tail(l); /* nobody watched so far: the index is built as the file is read */
    if (!l->m.start_ts) {
      *status = "503 Service Unavailable";
      ct_buf_puts(body, "detail: no events yet\n");
      goto out;
    }
  }
  if ((rc = parse(&d, q, qn, l->m.start_ts, why, sizeof why))) {
    ct_buf_puts(body, why);
    goto out;
  }
  if ((rc = ct_model_init(&d.m, DETAIL_SPANS, DETAIL_SPANS)) == 0)
    inited = 1;
  if (!rc)
    rc = read_window(l, &d, &bytes);
  if (rc == -E2BIG) {
    *status = "413 Content Too Large";
    ct_buf_printf(body, "detail: the window holds %" PRIu64 " MB of trace (at most %u): zoom in\n",
                  bytes >> 20, DETAIL_MAX_BYTES >> 20);
    goto out;
  }
  if (rc) {
    *status = "500 Internal Server Error";
    ct_buf_printf(body, "detail: reading the trace: %s\n", strerror(-rc));
    goto out;
  }
  clip(&d);
  struct ct_model_page pg = {NULL, 0, NULL, "detail", d.m.last_ts, 0};
  uint64_t raw = 0;
  if (ct_model_serialize(&d.m, &pg, body, NULL, &raw)) {
    body->err = 1;
    goto out;
  }
  *status = "200 OK";
  *type = "application/octet-stream";
out:
  if (inited)
    ct_model_free(&d.m);
  free(d.ids);
}
