/* live_detail.c - detail on request (docs/DASHBOARD.md "Detail on
 * request"): GET /detail?t0=&t1=&lanes= answers the exact spans and wake
 * edges of the window [t0, t1] (ns from the view's start) for the
 * coroutines listed (ids, comma-separated), in the page's blob encoding, from
 * the trace file itself: its index by time (live_int.h, struct ct_live_blk,
 * built as the file is read) names the stretches of the file to read, so a
 * window costs its own bytes, not the whole file's. A window that holds more
 * than DETAIL_MAX_BYTES of trace is refused (413): the page's summary is
 * what that width shows. The server's thread checks the query and names the
 * stretches; one worker thread reads and decodes them, so that ticks, pages
 * and other requests never wait for an answer; at most DETAIL_QUEUE requests
 * wait for it (one more supersedes the oldest, which gets 503: a page wants
 * the window its view stopped at, not those the wheel went through), and the
 * last answer is kept for the same query.
 * A packing trace (`run --pack`, docs/ROUTE1.md) names a pack's coroutines
 * by station only: a stretch from the middle of the file is decoded with the
 * station -> coroutine map of the coroutine lines before it, which the worker
 * learns once by reading the file from its start (struct scan); what still
 * does not decode is refused, never answered in part. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html/live_int.h"
#include "html/page.h"

#define DETAIL_MAX_BYTES (48u << 20)
#define DETAIL_MAX_LANES 4096
#define DETAIL_SPANS 1000000u /* the detail model's budget: bounded whatever the window */
#define DETAIL_QUEUE 2        /* requests waiting for the worker (one more being answered) */

/* A request: the query, the stretches of the file named for it, and, once
 * the worker is done, its answer. */
struct detail {
  uint64_t client; /* the connection it is for */
  uint64_t a0, a1; /* the window, absolute ts */
  uint64_t *ids;   /* the coroutines asked for, sorted */
  size_t nids;
  struct ct_live_blk *blk; /* the index's blocks that hold the window */
  size_t nblk;
  uint64_t indexed; /* the file's bytes indexed when asked: part of the cache's key */
  int binary, fd;
  const char *status, *type;
  struct ct_buf body;
  struct detail *next; /* in the worker's queue or its finished list */
};

/* A coroutine line of a binary trace: the file offset of its chunk (gen:
 * the decoder checks a pack's first station by it). */
struct cline {
  uint64_t off, probe_id;
  uint32_t station, gen;
};

/* The worker's reading of a binary trace from its start, as far as the
 * requests needed: its coroutine lines in file order, the offset of the
 * next chunk to read (0: not begun), whether a pack chunk came (CHK4), and
 * the offset where a chunk did not frame or decode (bad: nothing after it
 * can be attributed). Its iterator keeps the stream's state of packs. */
struct scan {
  struct cline *v;
  size_t n, cap;
  struct cline *runs; /* each run's meta line: its chunk, and (probe_id) v's length there */
  size_t nruns, capruns;
  uint64_t at, bad_at;
  int packs, bad;
  struct ct_ctr_iter it;
  uint8_t *buf;
  size_t bcap;
};

/* The worker and what it shares with the server's thread, under mu. */
struct ct_live_detailq {
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int quit, wakefd;
  struct detail *todo, *done; /* FIFO, and the answers not yet taken */
  size_t ntodo;
  struct detail *last; /* the last answer made (its query and body) */
  struct scan *sc;     /* the worker's: a packing trace's coroutine lines */
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

/* Room for n bytes in *buf (*cap bytes now): 0 or -ENOMEM. */
static int room(uint8_t **buf, size_t *cap, size_t n) {
  if (n <= *cap)
    return 0;
  uint8_t *nb = realloc(*buf, n);
  if (!nb)
    return -ENOMEM;
  *buf = nb;
  *cap = n;
  return 0;
}

/* c appended to *v (*n of *cap). 0 or -ENOMEM. */
static int push(struct cline **v, size_t *n, size_t *cap, struct cline c) {
  if (*n == *cap) {
    size_t nc = *cap ? 2 * *cap : 1024;
    struct cline *nv = realloc(*v, nc * sizeof *nv);
    if (!nv)
      return -ENOMEM;
    *v = nv;
    *cap = nc;
  }
  (*v)[(*n)++] = c;
  return 0;
}

/* The coroutine lines and run starts (run --append: a meta line) of the
 * chunk at p (whole, checked), at file offset off, into sc. 0, -1 when an
 * entry does not decode, -ENOMEM. */
static int scan_chunk(struct scan *sc, const uint8_t *p, uint64_t off) {
  struct ctr_chunk_hdr h;
  struct ct_ev_item ev;
  struct ct_coro_item co;
  const char *line;
  size_t n;
  int k;
  memcpy(&h, p, sizeof h);
  sc->packs |= ctr_chunk_packs(h.tag);
  ct_ctr_begin(&sc->it, p);
  static const char meta[] = "{\"type\":\"meta\",";
  while ((k = ct_ctr_entry(&sc->it, &ev, &co, &line, &n)) > 0) {
    if (k == 2 && n > sizeof meta && !memcmp(line, meta, sizeof meta - 1) &&
        push(&sc->runs, &sc->nruns, &sc->capruns, (struct cline){off, sc->n, 0, 0}))
      return -ENOMEM;
    if (k == 3 &&
        push(&sc->v, &sc->n, &sc->cap, (struct cline){off, co.probe_id, co.station, co.gen}))
      return -ENOMEM;
  }
  return k;
}

/* sc read from where it stopped to file offset to (a chunk's start: the
 * index's blocks are whole chunks), from fd. 0, or -1 when a chunk before
 * to does not frame or decode (sc->bad, for good), -errno on a read. */
static int scan_to(struct scan *sc, int fd, uint64_t to) {
  char why[160];
  size_t clen;
  if (!sc->at) {
    sc->at = sizeof(struct ctr_file_hdr);
    ct_ctr_init(&sc->it);
  }
  while (!sc->bad && sc->at < to) {
    struct ctr_chunk_hdr h;
    ssize_t got = pread(fd, &h, sizeof h, (off_t)sc->at);
    if (got != (ssize_t)sizeof h)
      return got < 0 ? -errno : -EIO;
    size_t len = sizeof h + (size_t)h.len;
    if (room(&sc->buf, &sc->bcap, len))
      return -ENOMEM;
    if ((got = pread(fd, sc->buf, len, (off_t)sc->at)) != (ssize_t)len)
      return got < 0 ? -errno : -EIO;
    int rc = ct_ctr_chunk(sc->buf, len, sc->at, &clen, why, sizeof why) == 1
                 ? scan_chunk(sc, sc->buf, sc->at)
                 : -1;
    if (rc == -ENOMEM)
      return rc;
    if (rc < 0) {
      sc->bad = 1;
      sc->bad_at = sc->at;
    } else {
      sc->at += clen;
    }
  }
  return sc->bad ? -1 : 0;
}

static void scan_free(struct scan *sc) {
  if (!sc)
    return;
  if (sc->at)
    ct_ctr_fini(&sc->it);
  free(sc->v);
  free(sc->runs);
  free(sc->buf);
  free(sc);
}

/* it made ready for a stretch of the file that starts at off with the
 * chunk p: a pack chunk past the file's first gets the station ->
 * coroutine map of the coroutine lines before off (read into sc as far as
 * needed). 0; -1 when the lines before off cannot be read (it is then
 * still ready, its packs unattributed); -errno. */
static int seed(struct scan *sc, int fd, struct ct_ctr_iter *it, uint64_t off, const uint8_t *p) {
  struct ctr_chunk_hdr h;
  memcpy(&h, p, sizeof h);
  ct_ctr_init(it);
  if (!ctr_chunk_packs(h.tag) || off <= sizeof(struct ctr_file_hdr))
    return 0;
  int rc = scan_to(sc, fd, off);
  if (rc < 0 && rc != -1)
    return rc;
  if (!(it->st = ctr_stream_new()))
    return -ENOMEM;
  /* In file order from the run's meta line (the decoder starts afresh
   * there), as the decoder names them: the last line of a station wins. */
  size_t i = 0;
  for (size_t r = 0; r < sc->nruns && sc->runs[r].off < off; r++)
    i = (size_t)sc->runs[r].probe_id;
  for (; i < sc->n && sc->v[i].off < off; i++) {
    struct ct_coro_item co = {
        .probe_id = sc->v[i].probe_id, .station = sc->v[i].station, .gen = sc->v[i].gen};
    ctr_stream_post(it->st, 3, NULL, &co);
  }
  return rc;
}

/* The lines of one block of the file (buf, n bytes: binary chunks, read
 * with it, or JSONL lines) that concern d, into m. 0, or -1 when an entry
 * does not decode (the rest of its chunk is not read). */
static int feed_block(const struct detail *d, struct ct_ctr_iter *it, struct ct_model *m,
                      const uint8_t *buf, size_t n) {
  struct ct_line line;
  enum ct_line_err err;
  int k, rc = 0;
  if (d->binary) {
    char why[160], label[CT_CTR_LABEL_MAX];
    size_t start = 0, clen;
    while (start < n && ct_ctr_chunk(buf + start, n - start, 0, &clen, why, sizeof why) > 0) {
      ct_ctr_begin(it, buf + start);
      while ((k = ct_ctr_next(it, &line, &err, label)) > 0)
        if (err == CT_LINE_OK && wanted(d, &line))
          (void)ct_model_line(m, err, &line);
      if (k < 0)
        rc = -1;
      start += clen;
    }
    return rc;
  }
  for (const char *p = (const char *)buf, *end = p + n, *nl; p < end; p = nl + 1) {
    if (!(nl = memchr(p, '\n', (size_t)(end - p))))
      break;
    err = ct_parse_line(p, (size_t)(nl - p), &line);
    if (err == CT_LINE_OK && wanted(d, &line))
      (void)ct_model_line(m, err, &line);
  }
  return 0;
}

/* Names in d the blocks of the index that hold events of the window (the
 * one still being read included), copied: the index grows on the server's
 * thread meanwhile. 0, -E2BIG past DETAIL_MAX_BYTES (*bytes: what it would
 * take), or -ENOMEM. */
static int name_blocks(const struct ct_live *l, struct detail *d, uint64_t *bytes) {
  struct ct_live_blk open = {l->blk_off, l->bytes - l->lbn - l->blk_off, l->blk_t0, l->blk_t1,
                             l->blk_pid};
  size_t n = 0;
  *bytes = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i <= l->nblk; i++) {
      const struct ct_live_blk *b = i < l->nblk ? &l->blk[i] : &open;
      if (!b->len || b->t0 > d->a1 || b->t1 < d->a0)
        continue;
      if (pass)
        d->blk[d->nblk++] = *b;
      else
        *bytes += b->len, n++;
    }
    if (!pass && *bytes > DETAIL_MAX_BYTES)
      return -E2BIG;
    if (!pass && n && !(d->blk = malloc(n * sizeof *d->blk)))
      return -ENOMEM;
  }
  d->indexed = l->bytes - l->lbn;
  return 0;
}

/* Reads and feeds d's blocks into m (the worker's, with its scan sc): a
 * block that follows the one before in the file goes on with its decoder's
 * state, any other starts afresh (seed). 0, the read's -errno, or -EBADMSG
 * when a block does not decode (*bad_at: the offset to name). */
static int read_blocks(const struct detail *d, struct scan *sc, struct ct_model *m,
                       uint64_t *bad_at) {
  uint8_t *buf = NULL;
  size_t cap = 0;
  int rc = 0, open = 0;
  struct ct_ctr_iter it;
  for (size_t i = 0; i < d->nblk && !rc; i++) {
    const struct ct_live_blk *b = &d->blk[i];
    if ((rc = room(&buf, &cap, (size_t)b->len)))
      break;
    ssize_t got = pread(d->fd, buf, (size_t)b->len, (off_t)b->off);
    if (got != (ssize_t)b->len) {
      rc = got < 0 ? -errno : -EIO;
      break;
    }
    int apart = !i || b->off != d->blk[i - 1].off + d->blk[i - 1].len;
    if (apart && b->pid) /* the run's meta line is in no block read */
      m->target_pid = b->pid;
    if (d->binary && apart) {
      if (open)
        ct_ctr_fini(&it);
      open = 1;
      if (b->len < sizeof(struct ctr_chunk_hdr))
        ct_ctr_init(&it); /* (no chunk: nothing will decode) */
      else if ((rc = seed(sc, d->fd, &it, b->off, buf))) {
        *bad_at = rc == -1 ? sc->bad_at : b->off;
        rc = rc == -1 ? -EBADMSG : rc;
        break;
      }
    }
    if (feed_block(d, &it, m, buf, (size_t)b->len)) {
      *bad_at = b->off;
      rc = -EBADMSG;
    }
  }
  if (open)
    ct_ctr_fini(&it);
  free(buf);
  return rc;
}

/* Drops from m the spans and wake edges wholly outside d's window (the
 * stretch read is whole chunks, wider than the window): the answer carries
 * the window. The spans' rows keep their counts: only the page's blob reads
 * them, which counts from the spans themselves. */
static void clip(const struct detail *d, struct ct_model *m) {
  size_t k = 0;
  for (size_t i = 0; i < m->nspans; i++)
    if (m->spans[i].t1 >= d->a0 && m->spans[i].t0 <= d->a1)
      m->spans[k++] = m->spans[i];
  m->nspans = k;
  k = 0;
  for (size_t i = 0; i < m->tail_n; i++) /* ring order no longer matters: lanes sort by time */
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

/* The worker's part: d's answer (status, type, body) from its blocks. */
static void answer(struct detail *d, struct scan *sc) {
  struct ct_model m;
  uint64_t bad_at = 0;
  int rc = ct_model_init(&m, DETAIL_SPANS, DETAIL_SPANS);
  d->status = "503 Service Unavailable";
  d->type = "text/plain; charset=utf-8";
  if (rc) {
    ct_buf_puts(&d->body, "detail: out of memory\n");
    return;
  }
  m.lod_cap = 0; /* no summary: the page draws the answer's exact spans, the summary is its own */
  if ((rc = read_blocks(d, sc, &m, &bad_at)) == -EBADMSG) {
    /* A part of an answer would draw as a coroutine that did nothing. */
    d->status = "500 Internal Server Error";
    ct_buf_printf(&d->body,
                  "detail: the trace's chunk at offset %" PRIu64
                  " does not decode (its packs' coroutines cannot be named): this window cannot "
                  "be shown\n",
                  bad_at);
    goto out;
  }
  if (rc) {
    d->status = "500 Internal Server Error";
    ct_buf_printf(&d->body, "detail: reading the trace: %s\n", strerror(-rc));
    goto out;
  }
  clip(d, &m);
  struct ct_model_page pg = {NULL, 0, NULL, "detail", m.last_ts, 0};
  uint64_t raw = 0;
  if (ct_model_serialize(&m, &pg, &d->body, NULL, &raw)) {
    ct_buf_free(&d->body);
    ct_buf_puts(&d->body, "detail: out of memory\n");
    goto out;
  }
  d->status = "200 OK";
  d->type = "application/octet-stream";
out:
  ct_model_free(&m);
}

static void detail_free(struct detail *d) {
  if (!d)
    return;
  free(d->ids);
  free(d->blk);
  ct_buf_free(&d->body);
  free(d);
}

/* 1 when a and b ask the same of the same index (the cache's key). */
static int same(const struct detail *a, const struct detail *b) {
  return a->a0 == b->a0 && a->a1 == b->a1 && a->indexed == b->indexed && a->nids == b->nids &&
         !memcmp(a->ids, b->ids, a->nids * sizeof *a->ids);
}

/* A copy of d's query and answer for the cache, when it is one to keep (a
 * 200); NULL otherwise or on ENOMEM. */
static struct detail *keep(const struct detail *d) {
  struct detail *c;
  if (strcmp(d->status, "200 OK") || !(c = calloc(1, sizeof *c)))
    return NULL;
  c->a0 = d->a0;
  c->a1 = d->a1;
  c->indexed = d->indexed;
  c->nids = d->nids;
  c->status = d->status;
  c->type = d->type;
  ct_buf_put(&c->body, d->body.p, d->body.n);
  if (!(c->ids = malloc(d->nids * sizeof *d->ids)) || c->body.err) {
    detail_free(c);
    return NULL;
  }
  memcpy(c->ids, d->ids, d->nids * sizeof *d->ids);
  return c;
}

static void list_free(struct detail *d) {
  while (d) {
    struct detail *next = d->next;
    detail_free(d);
    d = next;
  }
}

/* d's answer to the finished list, and the server's thread woken to send
 * it. Under q->mu. */
static void answered(struct ct_live_detailq *q, struct detail *d) {
  d->next = q->done;
  q->done = d;
  if (write(q->wakefd, "d", 1) < 0) { /* a full pipe: the server's thread wakes anyway */
  }
}

/* The worker: answers the queue's requests in turn, keeps the last answer,
 * and wakes the server's thread for each. */
static void *worker(void *arg) {
  struct ct_live_detailq *q = arg;
  pthread_mutex_lock(&q->mu);
  for (;;) {
    while (!q->quit && !q->todo)
      pthread_cond_wait(&q->cv, &q->mu);
    if (q->quit)
      break;
    struct detail *d = q->todo;
    q->todo = d->next;
    q->ntodo--;
    pthread_mutex_unlock(&q->mu);
    if (!q->sc)
      q->sc = calloc(1, sizeof *q->sc); /* none: a stretch past the first chunk is refused */
    answer(d, q->sc ? q->sc : &(struct scan){.bad = 1});
    struct detail *c = keep(d);
    pthread_mutex_lock(&q->mu);
    if (c) {
      detail_free(q->last);
      q->last = c;
    }
    answered(q, d);
  }
  pthread_mutex_unlock(&q->mu);
  return NULL;
}

/* The worker started (on the first request that needs it). 0 or -errno. */
static int queue_start(struct ct_live *l) {
  struct ct_live_detailq *q = calloc(1, sizeof *q);
  int rc;
  if (!q)
    return -ENOMEM;
  q->wakefd = l->wake[1];
  if ((rc = -pthread_mutex_init(&q->mu, NULL))) {
    free(q);
    return rc;
  }
  if ((rc = -pthread_cond_init(&q->cv, NULL))) {
    pthread_mutex_destroy(&q->mu);
    free(q);
    return rc;
  }
  if ((rc = -pthread_create(&q->th, NULL, worker, q))) {
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
    return rc;
  }
  l->dq = q;
  return 0;
}

int ct_live_detail(struct ct_live *l, uint64_t client, const char *q, size_t qn,
                   struct ct_buf *body, const char **status, const char **type) {
  struct detail *d = calloc(1, sizeof *d);
  char why[200];
  uint64_t bytes = 0;
  int rc, queued = 0;
  *status = "400 Bad Request";
  *type = "text/plain; charset=utf-8";
  if (!d) {
    body->err = 1;
    goto out;
  }
  if (l->windowed || l->tfd < 0) {
    *status = "404 Not Found";
    ct_buf_puts(body, "detail: only for a trace file (serve FILE, run --serve)\n");
    goto out;
  }
  if (!l->m.start_ts) /* nobody watched so far: the index is built as the file is read */
    ct_live_tail(l, FIRST_BYTES, FIRST_NS);
  if (!l->m.start_ts) {
    *status = "503 Service Unavailable";
    ct_buf_puts(body, "detail: no events yet\n");
    goto out;
  }
  if ((rc = parse(d, q, qn, l->m.start_ts, why, sizeof why))) {
    ct_buf_puts(body, why);
    goto out;
  }
  if ((rc = name_blocks(l, d, &bytes)) == -E2BIG) {
    *status = "413 Content Too Large";
    ct_buf_printf(body, "detail: the window holds %" PRIu64 " MB of trace (at most %u): zoom in\n",
                  bytes >> 20, DETAIL_MAX_BYTES >> 20);
    goto out;
  }
  *status = "503 Service Unavailable";
  if (rc || (!l->dq && (rc = queue_start(l)))) {
    ct_buf_printf(body, "detail: %s\n", strerror(-rc));
    goto out;
  }
  d->client = client;
  d->binary = l->binary;
  d->fd = l->tfd;
  struct ct_live_detailq *w = l->dq;
  pthread_mutex_lock(&w->mu);
  if (w->last && same(w->last, d)) {
    *status = w->last->status;
    *type = w->last->type;
    ct_buf_put(body, w->last->body.p, w->last->body.n);
  } else {
    if (w->ntodo >= DETAIL_QUEUE) { /* the oldest waiting, answered at once */
      struct detail *o = w->todo;
      w->todo = o->next;
      w->ntodo--;
      o->status = "503 Service Unavailable";
      o->type = "text/plain; charset=utf-8";
      ct_buf_puts(&o->body, "detail: superseded by a newer window: ask again\n");
      answered(w, o);
    }
    struct detail **at = &w->todo;
    while (*at)
      at = &(*at)->next;
    *at = d;
    w->ntodo++;
    queued = 1;
    pthread_cond_signal(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
out:
  if (!queued)
    detail_free(d);
  return !queued;
}

int ct_live_detail_done(struct ct_live *l, uint64_t *client, struct ct_buf *body,
                        const char **status, const char **type) {
  struct ct_live_detailq *w = l->dq;
  struct detail *d;
  if (!w)
    return 0;
  pthread_mutex_lock(&w->mu);
  if ((d = w->done))
    w->done = d->next;
  pthread_mutex_unlock(&w->mu);
  if (!d)
    return 0;
  *client = d->client;
  *status = d->status;
  *type = d->type;
  *body = d->body;
  d->body = (struct ct_buf){0};
  detail_free(d);
  return 1;
}

void ct_live_detail_stop(struct ct_live *l) {
  struct ct_live_detailq *w = l->dq;
  if (!w)
    return;
  pthread_mutex_lock(&w->mu);
  w->quit = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->th, NULL);
  list_free(w->todo);
  list_free(w->done);
  detail_free(w->last);
  scan_free(w->sc);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  free(w);
  l->dq = NULL;
}
