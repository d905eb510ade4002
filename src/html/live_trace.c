/* live_trace.c - the live view's reading (live_int.h): the trace file's
 * appended lines or chunks, or a flight recorder's window in memory
 * (docs/FLIGHT.md "Live view"), fed to its aggregate; the window's facts as
 * tick fields. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html/live_int.h"
#include "html/page.h"

/* ---- the trace -------------------------------------------------------------- */
/* A new run: the aggregate starts afresh with it (runs are never merged). On
 * ENOMEM the old one stays, marked by nothing: the view lags, as on any ENOMEM. */
static void restart(struct ct_live *l) {
  struct ct_state *st;
  struct ct_model m;
  if (ct_state_new_judging(&l->judge, &st))
    return;
  if (ct_model_init(&m, CT_DASH_SPAN_BUDGET, CT_DASH_SPAN_BUDGET / 5 * 7)) {
    ct_state_free(st);
    return;
  }
  ct_model_prune(&m);
  ct_state_free(l->st);
  ct_model_free(&l->m);
  l->st = st;
  l->m = m;
}

/* One line (or binary entry) to the aggregate. ENOMEM: the aggregate lags;
 * the next snapshot tries again. */
static void feed(struct ct_live *l, enum ct_line_err err, const struct ct_line *line) {
  /* A flight window's begin ends with a window record (flight_live.c), for
   * its decoder (what was dropped before the window: the end's counts). The
   * view is no dump: the aggregate judges it live, the window's facts are
   * the source's (l->win). */
  if (l->windowed && err == CT_LINE_OK && line->type == CT_LINE_WINDOW) {
    l->lineno++;
    return;
  }
  if (ct_line_new_run(ct_state_lines(l->st), err, line)) {
    restart(l); /* a run appended (run --append): the view follows it */
    l->runs++;
  }
  (void)ct_state_line(l->st, ++l->lineno, err, line);
  (void)ct_model_line(&l->m, err, line);
  if (err == CT_LINE_OK && line->type == CT_LINE_EVENT) {
    if (line->e.ts < l->blk_t0)
      l->blk_t0 = line->e.ts;
    if (line->e.ts > l->blk_t1)
      l->blk_t1 = line->e.ts;
  }
}

/* The index's block being read ends at file offset end: kept (a block that
 * grows past the array's room is merged into the last one, never lost). */
static void blk_close(struct ct_live *l, uint64_t end) {
  if (end <= l->blk_off)
    return;
  if (l->nblk == l->capblk) {
    size_t nc = l->capblk ? 2 * l->capblk : 1024;
    struct ct_live_blk *nb = realloc(l->blk, nc * sizeof *nb);
    if (nb) {
      l->blk = nb;
      l->capblk = nc;
    }
  }
  if (l->nblk < l->capblk) {
    l->blk[l->nblk++] =
        (struct ct_live_blk){l->blk_off, end - l->blk_off, l->blk_t0, l->blk_t1, l->blk_pid};
  } else if (l->nblk) { /* no memory: the last block covers this one too */
    struct ct_live_blk *b = &l->blk[l->nblk - 1];
    b->len = end - b->off;
    b->t0 = b->t0 < l->blk_t0 ? b->t0 : l->blk_t0;
    b->t1 = b->t1 > l->blk_t1 ? b->t1 : l->blk_t1;
  }
  l->blk_off = end;
  l->blk_t0 = UINT64_MAX;
  l->blk_t1 = 0;
  l->blk_pid = l->m.target_pid; /* the next block's first line is of the run read so far */
}

/* The whole chunks at p (n bytes; at file offset off, UINT64_MAX for a
 * flight window's, which has no index): fed entry by entry; a chunk still
 * being written waits for the next call. Returns the bytes used. A corrupt
 * chunk ends the feeding (l->bad): nothing after it can be framed. */
static size_t feed_frames(struct ct_live *l, const uint8_t *p, size_t n, uint64_t off) {
  size_t start = 0, clen;
  char why[192], label[CT_CTR_LABEL_MAX];
  struct ct_line line;
  enum ct_line_err err;
  int c;
  if (!l->it && (l->it = malloc(sizeof *l->it)))
    ct_ctr_init(l->it);
  if (!l->it)
    return 0;
  while (!l->bad && (c = ct_ctr_chunk(p + start, n - start, 0, &clen, why, sizeof why)) != 0) {
    if (c < 0) {
      l->bad = 1;
      break;
    }
    ct_ctr_begin(l->it, p + start);
    while (ct_ctr_next(l->it, &line, &err, label) > 0)
      feed(l, err, &line);
    start += clen;
    if (off != UINT64_MAX)
      blk_close(l, off + start);
  }
  return l->bad ? n : start;
}

/* The whole chunks at the start of the buffer (a binary trace file, at
 * offset off), after its header. Returns the bytes used. */
static size_t feed_chunks(struct ct_live *l, uint64_t off) {
  size_t start = 0;
  char why[192];
  if (l->skip_hdr) {
    if (l->lbn < sizeof(struct ctr_file_hdr))
      return 0;
    if (ct_ctr_file_header(l->lb, l->lbn, why, sizeof why) < 0)
      l->bad = 1;
    start = sizeof(struct ctr_file_hdr);
    l->skip_hdr = 0;
    l->blk_off = off + start;
  }
  return start + feed_frames(l, (const uint8_t *)l->lb + start, l->lbn - start, off + start);
}

/* A flight window's new chunks (at most about TAIL_MAX bytes) to the
 * aggregate, and its facts. At the start, when the aggregate has fallen out
 * of the window (the window moved past a chunk not read yet) or has taken
 * the window's SIZE since it started, it starts over from the window: the
 * lines and snapshot a dump starts with, then the window's chunks; at most
 * once a call. Returns the bytes taken. */
static size_t follow(struct ct_live *l) {
  size_t got = 0, n;
  int begun = 0;
  l->ndumps = l->src.facts(l->src.ctx, &l->win, l->dumps);
  while (got < TAIL_MAX) {
    if (l->begin) {
      uint8_t *b = NULL;
      if (begun || l->src.begin(l->src.ctx, &l->at, &b, &n))
        break;
      begun = 1;
      restart(l);
      l->bad = 0;
      feed_frames(l, b, n, UINT64_MAX);
      free(b);
      l->begin = 0;
      l->gen_bytes = 0;
      got += n;
    }
    int rc = l->src.next(l->src.ctx, &l->at, &l->cb, &l->cbcap, &n);
    if (rc == -ESTALE) {
      l->begin = 1;
      continue;
    }
    if (rc <= 0)
      break;
    feed_frames(l, l->cb, n, UINT64_MAX);
    got += n;
    l->gen_bytes += n;
    if (l->gen_bytes >= l->win.size)
      l->begin = 1; /* the aggregate spans twice the window: bounded */
  }
  if (got) {
    l->bytes += got;
    l->last_growth = ct_mono_ns();
  }
  return got;
}

#define READ_STEP (64u << 10)

/* live_int.h: the complete lines (or a binary trace's whole chunks), within
 * the byte and time budgets; l->behind says whether one of them ended it
 * (more may be there) rather than the file's end. */
size_t ct_live_tail(struct ct_live *l, size_t max_bytes, uint64_t max_ns) {
  if (l->windowed)
    return follow(l);
  size_t budget = max_bytes, got = 0;
  uint64_t t0 = ct_mono_ns();
  l->behind = 1; /* till a read finds nothing more */
  while (budget && !(got && ct_mono_ns() - t0 >= max_ns)) {
    if (l->lbcap - l->lbn < 65536) {
      size_t nc = l->lbcap ? l->lbcap * 2 : 1 << 20;
      char *np = realloc(l->lb, nc);
      if (!np)
        break;
      l->lb = np;
      l->lbcap = nc;
    }
    size_t room = l->lbcap - l->lbn; /* in small reads: the time budget is checked between them */
    ssize_t k = read(l->tfd, l->lb + l->lbn, room < READ_STEP ? room : READ_STEP);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      l->behind = 0;
      break;
    }
    if (l->bytes == 0) /* the first bytes tell the format */
      l->binary = l->skip_hdr = l->lb[0] == CTR_MAGIC[0];
    l->bytes += (uint64_t)k;
    got += (size_t)k;
    l->last_growth = ct_mono_ns();
    budget = (size_t)k > budget ? 0 : budget - (size_t)k;
    l->lbn += (size_t)k;
    size_t start = 0;
    char *nl;
    struct ct_line line;
    uint64_t off = l->bytes - l->lbn; /* the file offset of lb[0] */
    if (l->binary) {
      start = feed_chunks(l, off);
    } else {
      while ((nl = memchr(l->lb + start, '\n', l->lbn - start))) {
        size_t e = (size_t)(nl - l->lb);
        enum ct_line_err err = ct_parse_line(l->lb + start, e - start, &line);
        feed(l, err, &line);
        start = e + 1;
        if (off + start - l->blk_off >= BLK_LINES)
          blk_close(l, off + start);
      }
    }
    memmove(l->lb, l->lb + start, l->lbn - start);
    l->lbn -= start;
    if (l->lbn > (l->binary ? CTR_CHUNK_MAX + sizeof(struct ctr_chunk_hdr) : LINE_MAX_LIVE))
      l->lbn = 0; /* an absurd line: dropped, as the reader would */
  }
  return got;
}

/* A flight window's facts and dumps as tick fields (docs/FLIGHT.md "Live
 * view"): a ts as ns from the view's first event ("t" of the tick: its
 * timeline; before it, negative) and as ns before now ("ago"). */
void ct_live_window_json(const struct ct_live *l, struct ct_buf *b, uint64_t now) {
  const struct ct_live_window *w = &l->win;
  int64_t t0 = (int64_t)l->m.start_ts;
#define T(ts) ((ts) ? (int64_t)(ts)-t0 : 0)
#define AGO(ts) ((ts) && now > (ts) ? now - (ts) : 0)
  ct_buf_printf(b,
                ",\"window\":{\"start\":%" PRId64 ",\"start_ago\":%" PRIu64 ",\"end\":%" PRId64
                ",\"span\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"size\":%" PRIu64
                ",\"dropped_bytes\":%" PRIu64 ",\"dropped_chunks\":%" PRIu64
                ",\"dropped_ago\":%" PRIu64 ",\"ndumps\":%" PRIu64 "},\"dumps\":[",
                T(w->start_ts), AGO(w->start_ts), T(w->end_ts),
                w->end_ts > w->start_ts ? w->end_ts - w->start_ts : 0, w->bytes, w->size,
                w->dropped_bytes, w->dropped_chunks, AGO(w->dropped_ts), w->dumps);
  for (size_t i = 0; i < l->ndumps; i++) {
    const struct ct_live_dump *d = &l->dumps[i];
    ct_buf_printf(b, "%s{\"t\":%" PRId64 ",\"ago\":%" PRIu64 ",\"trigger\":", i ? "," : "",
                  T(d->ts), AGO(d->ts));
    ct_buf_json(b, d->trigger, strlen(d->trigger));
    ct_buf_puts(b, ",\"path\":");
    ct_buf_json(b, d->path, strlen(d->path));
    ct_buf_printf(b, ",\"error\":%d,\"start\":%" PRId64 ",\"end\":%" PRId64 "}", d->err,
                  T(d->start_ts), T(d->end_ts));
  }
#undef T
#undef AGO
  ct_buf_puts(b, "]");
}
