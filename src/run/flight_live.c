/* flight_live.c - the flight window as the live view follows it (html/live.h
 * struct ct_live_source): chunks copied one at a time under the window's
 * lock, so the formatter never waits longer than one chunk's copy
 * (docs/FLIGHT.md "Live view"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "engine/flight.h"
#include "format/ctrace.h"
#include "html/live.h"

/* Where frame writes: begin's buffer, and the window (its chunks' tag). */
struct frame_to {
  struct ct_buf *fr;
  const struct ct_flight *f;
};

/* The payload p (n bytes, count entries) framed as one chunk at the end of
 * the buffer at ctx (a struct frame_to): whole or not at all. 0 or
 * -ENOMEM. */
static int frame(void *ctx, const uint8_t *p, size_t n, uint32_t count) {
  struct ct_buf *fr = ((struct frame_to *)ctx)->fr;
  struct ctr_chunk_hdr h = ct_flight_hdr(((struct frame_to *)ctx)->f, p, n, count);
  int rc = ct_buf_reserve(fr, sizeof h + n);
  if (rc)
    return rc;
  ct_buf_put(fr, &h, sizeof h);
  ct_buf_put(fr, p, n);
  return 0;
}

/* struct ct_live_source's begin: the pinned lines of dropped chunks, the
 * snapshot, then the window record (trigger "live"), as a dump starts
 * (ct_flight_begin): the view's decoder learns there what was dropped
 * before the window; the view's facts come from live_facts. */
static int live_begin(void *ctx, struct ct_live_cursor *cur, uint8_t **buf, size_t *n) {
  struct ct_flight *f = ctx;
  struct ct_buf fr = {0};
  pthread_mutex_lock(&f->mu);
  struct frame_to to = {.fr = &fr, .f = f};
  int rc = ct_flight_begin(f, frame, &to, "live");
  cur->seq = f->head ? f->head->seq : f->next_seq;
  cur->prev = NULL;
  pthread_mutex_unlock(&f->mu);
  if (rc) {
    ct_buf_free(&fr);
    return rc;
  }
  *buf = (uint8_t *)fr.p; /* the caller's now: it frees it */
  *n = fr.n;
  return 0;
}

/* struct ct_live_source's next. */
static int live_next(void *ctx, struct ct_live_cursor *cur, uint8_t **buf, size_t *cap, size_t *n) {
  struct ct_flight *f = ctx;
  int rc = 1;
  pthread_mutex_lock(&f->mu);
  const struct fl_chunk *c = NULL, *prev = cur->prev;
  if (!f->head || cur->seq > f->tail->seq) {
    rc = 0;
  } else if (cur->seq < f->head->seq) {
    rc = -ESTALE;
  } else if (prev && cur->seq - 1 >= f->head->seq) {
    c = prev->next; /* prev is still in the list: only the oldest leave */
  } else {
    for (c = f->head; c->seq < cur->seq; c = c->next) {
    }
  }
  if (c && c->len > *cap) {
    uint8_t *np = realloc(*buf, c->len);
    if (np) {
      *buf = np;
      *cap = c->len;
    } else {
      rc = -ENOMEM;
    }
  }
  if (c && rc == 1) {
    memcpy(*buf, c->data, c->len);
    *n = c->len;
    cur->seq++;
    cur->prev = c;
  }
  pthread_mutex_unlock(&f->mu);
  return rc;
}

/* struct ct_live_source's facts. */
static size_t live_facts(void *ctx, struct ct_live_window *w, struct ct_live_dump *d) {
  struct ct_flight *f = ctx;
  memset(w, 0, sizeof *w);
  pthread_mutex_lock(&f->mu);
  for (const struct fl_chunk *c = f->head; c; c = c->next) {
    if (!w->start_ts)
      w->start_ts = c->ts0;
    if (c->ts1)
      w->end_ts = c->ts1;
  }
  w->dropped_ts = f->dropped_ts;
  w->dropped_bytes = f->dropped_bytes;
  w->dropped_chunks = f->dropped_chunks;
  w->bytes = f->total_bytes - f->dropped_bytes;
  w->size = f->max_bytes;
  w->dumps = f->nmarks;
  size_t k = f->nmarks < CT_FLIGHT_MARKS ? (size_t)f->nmarks : CT_FLIGHT_MARKS;
  if (k > CT_LIVE_DUMPS)
    k = CT_LIVE_DUMPS;
  for (size_t i = 0; i < k; i++) {
    const struct ct_flight_note *m = &f->marks[(f->nmarks - k + i) % CT_FLIGHT_MARKS];
    d[i] = (struct ct_live_dump){
        .ts = m->ts, .start_ts = m->start_ts, .end_ts = m->end_ts, .err = m->err};
    snprintf(d[i].trigger, sizeof d[i].trigger, "%s", m->trigger);
    snprintf(d[i].path, sizeof d[i].path, "%s", m->path);
  }
  pthread_mutex_unlock(&f->mu);
  return k;
}

void ct_flight_live_source(struct ct_flight *f, struct ct_live_source *src) {
  *src = (struct ct_live_source){
      .ctx = f, .begin = live_begin, .next = live_next, .facts = live_facts};
}
