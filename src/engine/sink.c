/* sink.c - formatting off the harvest loop: the harvest thread pushes raw
 * items (events, coroutines, preformatted text, blocks of raw ring records)
 * into a bounded single-producer single-consumer queue; one formatter thread
 * writes them in the trace's format (binary: ctrace_enc.c; JSONL: records.c;
 * ring records through rings_format.c) and owns the trace file.
 * Blocks past the memory budget go to a spill file instead of waiting: the
 * binary capture. A full queue makes the producer wait; nothing is dropped. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "engine/flight.h"
#include "engine/opts.h"
#include "engine/sched.h"
#include "engine/sink.h"
#include "format/ctrace.h"
#include "format/ctw.h"
#include "format/records.h"
#include "format/writer.h"

/* Items in the queue: 4 MiB, a few ms of a busy run's events. */
#define SINK_CAP_DEFAULT (1u << 15)
/* The formatter's idle wake-up: the trace on disk is never staler. */
#define SINK_IDLE_NS 50000000u
/* The producer wakes a sleeping formatter only for this many new items (or
 * a flush, a sync, a full queue): at a gentle rate one wake-up (two context
 * switches and a write(2)) per pass cost more than the formatting. */
#define SINK_BATCH(s) ((s)->cap / 8)
/* The same for capture blocks, in bytes: 4 full blocks, 32768 records. */
#define SINK_BLOCK_WAKE (4u * CT_SINK_BLOCK)

static void deadline_in(struct timespec *ts, uint64_t ns) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  ts->tv_sec += (time_t)(ns / 1000000000u);
  ts->tv_nsec += (long)(ns % 1000000000u);
  if (ts->tv_nsec >= 1000000000) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000;
  }
}

/* A spilled block read back into a scratch block of the formatter's (short
 * reads and EINTR handled), its slot in the file then given back: the
 * producer writes its next spilled block there, over pages the page cache
 * already holds (a fresh page per 4 KiB written, then a hole punched, cost
 * three times as much). The scratch block is the handler's to keep like a
 * block in memory: a spilled pass merged from a copy of its records (the
 * batch and its sort) cost the formatter more per record than the lines, so
 * a formatter that lagged once fell further behind. NULL on error. */
static char *spill_read(struct ct_sink *s, uint64_t off, size_t len) {
  char *b = s->nscratch ? s->scratch[--s->nscratch] : malloc(CT_SINK_BLOCK);
  if (!b)
    return NULL;
  for (size_t got = 0; got < len;) {
    ssize_t k = pread(s->spill_fd, b + got, len - got, (off_t)(off + got));
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      s->scratch[s->nscratch++] = b;
      return NULL;
    }
    got += (size_t)k;
  }
  pthread_mutex_lock(&s->mu);
  s->spill_free[s->nspill_free++] = (uint32_t)(off / CT_SINK_BLOCK);
  pthread_mutex_unlock(&s->mu);
  return b;
}

/* A block the formatter is done with goes back to the producer's pool (a
 * scratch block to the formatter's). Under mu when the caller holds it. */
static void give_back_locked(struct ct_sink *s, char *b, int scratch) {
  if (scratch)
    s->scratch[s->nscratch++] = b;
  else
    s->free_blk[s->nfree++] = b;
}

/* Blocks the handler may keep at once: a pass's records are merged from the
 * blocks themselves (no copy), while the rest of the budget keeps the
 * harvest going (a kept block is not the producer's to fill). Scratch
 * blocks are no part of the budget: as many as the held array. */
static uint32_t hold_max(const struct ct_sink *s, int scratch) {
  uint32_t half = s->max_blk / 2;
  return scratch || half > CT_SINK_HELD_MAX ? CT_SINK_HELD_MAX : half;
}

static void format_block(struct ct_sink *s, const struct ct_item *it) {
  char *p = it->u.blk.p;
  int scratch = p == NULL;
  char *d = scratch ? spill_read(s, it->u.blk.off, it->len) : p;
  int kept = 0;
  if (!d)
    atomic_store_explicit(&s->err, errno ? errno : EIO, memory_order_relaxed);
  else if (s->on_block)
    kept = s->on_block(s->block_ctx, d, it->len, s->nheld < hold_max(s, scratch));
  if (kept) {
    s->held_scratch |= (uint32_t)scratch << s->nheld;
    s->held[s->nheld++] = d;
  } else if (d) {
    if (!scratch)
      pthread_mutex_lock(&s->mu);
    give_back_locked(s, d, scratch);
    if (!scratch) {
      pthread_cond_broadcast(&s->cv_prod);
      pthread_mutex_unlock(&s->mu);
    }
  }
}

void ct_sink_release_held(struct ct_sink *s) {
  if (!s->nheld)
    return;
  pthread_mutex_lock(&s->mu);
  for (uint32_t i = 0; i < s->nheld; i++)
    give_back_locked(s, s->held[i], (s->held_scratch >> i) & 1);
  pthread_cond_broadcast(&s->cv_prod);
  pthread_mutex_unlock(&s->mu);
  s->nheld = 0;
  s->held_scratch = 0;
}

void ct_sink_out_coro(struct ct_sink *s, const struct ct_coro_item *c) {
  if (s->enc) {
    ct_ctw_coro(s->enc, c);
  } else {
    ct_rec_coroutine(&s->fw, c);
  }
  if (s->jw.buf)
    ct_rec_coroutine(&s->jw, c);
}

static void out_text(struct ct_sink *s, const char *p, size_t n) {
  if (s->enc)
    ct_ctw_text(s->enc, p, n);
  else
    ct_w_raw(&s->fw, p, n);
  if (s->jw.buf)
    ct_w_raw(&s->jw, p, n);
}

/* Everything formatted so far to the file(s). */
static void out_flush(struct ct_sink *s) {
  if (s->enc)
    ct_ctw_flush(s->enc);
  ct_writer_flush(&s->fw);
  if (s->jw.buf)
    ct_writer_flush(&s->jw);
}

/* 1 when formatted bytes wait for a flush. */
static int out_pending(const struct ct_sink *s) {
  return s->fw.len || (s->enc && ct_ctw_pending(s->enc)) || (s->jw.buf && s->jw.len);
}

static void check_err(struct ct_sink *s) {
  int err = s->fw.err ? s->fw.err : s->jw.buf ? s->jw.err : 0;
  if (!err)
    return;
  atomic_store_explicit(&s->err, err, memory_order_relaxed);
  if (s->cut)
    return;
  s->cut = 1;
  if (s->fw.err)
    ct_sink_cut(&s->fw, s->enc != NULL);
  if (s->jw.buf && s->jw.err)
    ct_sink_cut(&s->jw, 0);
}

/* The formatter's side of one item. */
static void format_item(struct ct_sink *s, const struct ct_item *it) {
  switch (it->type) {
  case CT_IT_BLOCK:
    format_block(s, it);
    break;
  case CT_IT_EVENT:
    ct_sink_out_event(s, &it->u.ev);
    break;
  case CT_IT_CORO:
    ct_sink_out_coro(s, &it->u.coro);
    break;
  case CT_IT_TEXT:
    out_text(s, it->u.text, it->len);
    break;
  case CT_IT_FLUSH:
    out_flush(s);
    break;
  case CT_IT_DUMP:
    ct_ctw_flush(s->enc);
    (void)ct_flight_dump(s->flight, it->u.text); /* its note says how it went */
    break;
  case CT_IT_SYNC:
    out_flush(s);
    check_err(s);
    pthread_mutex_lock(&s->mu);
    s->synced = it->len;
    pthread_cond_broadcast(&s->cv_prod);
    pthread_mutex_unlock(&s->mu);
    break;
  }
  check_err(s);
}

static void *formatter(void *arg) {
  struct ct_sink *s = arg;
  uint64_t head = 0;
  for (;;) {
    uint64_t tail = atomic_load_explicit(&s->tail, memory_order_acquire);
    if (head == tail) {
      /* Idle: the lines wait in the buffer for a flush item, the idle
       * timeout, or a full buffer. With nothing buffered no timeout: an idle
       * engine's formatter stays asleep until the next kick. */
      pthread_mutex_lock(&s->mu);
      /* Dekker pair with ct_sink_kick: our seq_cst flag store, then the
       * seq_cst tail load; its seq_cst tail store, then the flag load. */
      atomic_store_explicit(&s->cons_sleep, 1, memory_order_seq_cst);
      while (head == atomic_load_explicit(&s->tail, memory_order_seq_cst) &&
             !atomic_load_explicit(&s->stop, memory_order_acquire)) {
        if (!out_pending(s)) {
          pthread_cond_wait(&s->cv_cons, &s->mu);
          continue;
        }
        struct timespec ts;
        deadline_in(&ts, SINK_IDLE_NS);
        if (pthread_cond_timedwait(&s->cv_cons, &s->mu, &ts) == ETIMEDOUT) {
          /* The write outside the lock: a kick waits for the lock. */
          pthread_mutex_unlock(&s->mu);
          out_flush(s);
          check_err(s);
          pthread_mutex_lock(&s->mu);
        }
      }
      atomic_store_explicit(&s->cons_sleep, 0, memory_order_relaxed);
      pthread_mutex_unlock(&s->mu);
      if (head == atomic_load_explicit(&s->tail, memory_order_acquire))
        break; /* stopped, and everything before the stop is written */
      continue;
    }
    for (; head != tail; head++)
      format_item(s, &s->q[head & (s->cap - 1)]);
    atomic_store_explicit(&s->head, head, memory_order_seq_cst);
    if (atomic_load_explicit(&s->prod_wait, memory_order_seq_cst)) {
      pthread_mutex_lock(&s->mu);
      pthread_cond_broadcast(&s->cv_prod);
      pthread_mutex_unlock(&s->mu);
    }
  }
  out_flush(s);
  check_err(s);
  return NULL;
}

/* The binary trace's encoder on fw: its file header on a new (or empty)
 * file; appended only to a binary trace. A JSONL trace is appended only to
 * a JSONL one. 0 or -errno. */
static int open_format(struct ct_sink *s, const char *path, int fmt) {
  off_t end = lseek(s->fw.fd, 0, SEEK_END);
  s->fw.pos = s->fw.safe = end > 0 ? (uint64_t)end : 0;
  char head[CTR_MAGIC_LEN] = {0};
  if (s->fw.pos) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t k = fd >= 0 ? pread(fd, head, sizeof head, 0) : -1;
    if (fd >= 0)
      close(fd);
    if (k < 0)
      return -errno;
    if ((memcmp(head, CTR_MAGIC, CTR_MAGIC_LEN) == 0) != (fmt == CT_FORMAT_CTRACE))
      return -EINVAL; /* two formats in one file: no reader could read it */
  }
  if (fmt != CT_FORMAT_CTRACE)
    return 0;
  s->fw.binary = 1;
  int rc = ct_ctw_open(&s->enc, &s->fw);
  if (rc)
    return rc;
  return s->fw.pos ? 0 : ct_ctw_header(s->enc);
}

/* The sink's fields before its output opens: queue size, budget, no files. */
static void init(struct ct_sink *s, uint32_t cap, uint32_t mem_mib) {
  memset(s, 0, sizeof *s);
  s->cap = cap && !(cap & (cap - 1)) ? cap : SINK_CAP_DEFAULT;
  s->spill_fd = -1;
  s->fw.fd = -1;
  s->jw.fd = -1;
  /* The default, 64 MiB, holds a few tenths of a second of the fastest
   * writers while the formatter catches up. */
  s->max_blk = (mem_mib ? mem_mib : CT_CAPTURE_MIB_DEFAULT) * (1024u * 1024u / CT_SINK_BLOCK);
}

/* The text writer's drain (format/writer.h): its bytes into the queue. */
static void text_drain(void *ctx, const char *p, size_t n) {
  ct_sink_text(ctx, p, n);
}

/* The rest of an open sink, its output set up (path names the directory of
 * the spill file), and the formatter started; on failure everything of s is
 * freed. 0 or -errno. */
static int start(struct ct_sink *s, const char *path) {
  int rc = 0;
  s->tw.fd = -1;
  s->tw.drain = text_drain;
  s->tw.drain_ctx = s;
  s->tw.buf = malloc(CT_W_BUF);
  s->q = malloc((size_t)s->cap * sizeof *s->q);
  s->free_blk = malloc(((size_t)s->max_blk + 1) * sizeof *s->free_blk);
  const char *slash = strrchr(path, '/');
  s->dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
  if (!s->tw.buf || !s->q || !s->free_blk || !s->dir) {
    rc = -ENOMEM;
    goto fail;
  }
  /* Touch the buffers' pages now: first-touch faults in the harvest loop
   * cost a busy ring its room (see rings.c). Not the queue's 4 MiB: v2
   * records come in blocks, an entry each, and a run that never fills the
   * queue (most do not) would pay ~2 ms of setup for nothing; a v1 flow
   * takes a fault per 32 entries on the queue's first lap only. But the
   * flight recorder's: it runs for days, and a server's gentle flow took
   * 15 minutes over that first lap, its RSS rising all along. */
  memset(s->tw.buf, 0, CT_W_BUF);
  if (s->flight)
    memset(s->q, 0, (size_t)s->cap * sizeof *s->q);
  if (s->fw.buf && !s->enc) /* the binary trace's chunks bypass fw's buffer */
    memset(s->fw.buf, 0, CT_W_BUF);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  ct_sched_mutex_init(&s->mu);
  pthread_cond_init(&s->cv_cons, &ca);
  pthread_cond_init(&s->cv_prod, &ca);
  pthread_condattr_destroy(&ca);
  rc = -pthread_create(&s->thread, NULL, formatter, s);
  if (rc) {
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv_cons);
    pthread_cond_destroy(&s->cv_prod);
    goto fail;
  }
  /* Its own name in /proc/PID/task/TID/comm, perf and top: its CPU is told
   * apart from the loop's (best effort). */
  (void)pthread_setname_np(s->thread, "ct-format");
  s->running = 1;
  return 0;
fail:
  free(s->q);
  free(s->tw.buf);
  free(s->free_blk);
  free(s->dir);
  ct_ctw_free(s->enc);
  s->q = NULL;
  s->tw.buf = NULL;
  s->free_blk = NULL;
  s->dir = NULL;
  s->enc = NULL;
  if (s->jw.buf)
    ct_writer_close(&s->jw);
  if (s->fw.buf)
    ct_writer_close(&s->fw);
  return rc;
}

int ct_sink_open(struct ct_sink *s, const char *path, int append, int fmt, const char *jsonl_copy,
                 uint32_t cap, uint32_t mem_mib) {
  init(s, cap, mem_mib);
  int rc = ct_writer_open(&s->fw, path, append);
  if (rc)
    return rc;
  if ((rc = open_format(s, path, fmt)) ||
      (jsonl_copy && (rc = ct_writer_open(&s->jw, jsonl_copy, append))))
    goto fail;
  return start(s, path);
fail:
  ct_ctw_free(s->enc);
  s->enc = NULL;
  ct_writer_close(&s->fw);
  return rc;
}

static int region_new(struct ct_sink *s);

int ct_sink_open_flight(struct ct_sink *s, struct ct_flight *f, uint32_t mem_mib) {
  init(s, 0, mem_mib);
  int rc = ct_ctw_open(&s->enc, &s->fw);
  if (rc)
    return rc;
  struct ct_ctw_to to = {.chunk = ct_flight_chunk, .line = ct_flight_line, .ctx = f};
  ct_ctw_redirect(s->enc, &to);
  s->flight = f;
  s->spill_broken = 1; /* the window's memory is the bound: no file grows */
  if ((rc = start(s, f->out)))
    return rc;
  /* The capture blocks' pages at once, before the program starts: a flight
   * recorder runs for days, and the first backlog the formatter leaves (a
   * dump, a busy machine) touches them all; in a soak, one at minute 21
   * added 12 MB to an RSS flat until then. Best effort: else as they are
   * written. */
  if (region_new(s) == 0 && madvise(s->region, s->region_len, MADV_POPULATE_WRITE) == 0)
    memset(s->popd, 1, s->max_blk);
  return 0;
}

/* Publish the queued items; wake the formatter when it sleeps and force is
 * set or a batch is waiting. */
static void kick(struct ct_sink *s, int force) {
  atomic_store_explicit(&s->tail, s->ptail, memory_order_seq_cst);
  if (!force && s->ptail - s->woke_at < SINK_BATCH(s))
    return;
  if (atomic_load_explicit(&s->cons_sleep, memory_order_seq_cst)) {
    s->woke_at = s->ptail;
    pthread_mutex_lock(&s->mu);
    pthread_cond_signal(&s->cv_cons);
    pthread_mutex_unlock(&s->mu);
  }
}

void ct_sink_kick(struct ct_sink *s) {
  kick(s, 0);
}

void ct_sink_wake(struct ct_sink *s) {
  kick(s, 1);
}

/* A free entry, waiting for the formatter while the queue is full. */
static struct ct_item *slot(struct ct_sink *s) {
  if (s->ptail - s->phead_cache >= s->cap) {
    s->phead_cache = atomic_load_explicit(&s->head, memory_order_acquire);
    while (s->ptail - s->phead_cache >= s->cap) {
      kick(s, 1);
      pthread_mutex_lock(&s->mu);
      atomic_store_explicit(&s->prod_wait, 1, memory_order_seq_cst);
      s->phead_cache = atomic_load_explicit(&s->head, memory_order_seq_cst);
      if (s->ptail - s->phead_cache >= s->cap) {
        struct timespec ts;
        deadline_in(&ts, 10000000u);
        pthread_cond_timedwait(&s->cv_prod, &s->mu, &ts);
        s->phead_cache = atomic_load_explicit(&s->head, memory_order_acquire);
      }
      atomic_store_explicit(&s->prod_wait, 0, memory_order_relaxed);
      pthread_mutex_unlock(&s->mu);
      s->stalls++;
    }
  }
  return &s->q[s->ptail & (s->cap - 1)];
}

/* Push the text writer's pending bytes, so items stay in call order. */
static void text_out(struct ct_sink *s) {
  if (s->tw.len)
    ct_writer_flush(&s->tw);
}

void ct_sink_text(struct ct_sink *s, const char *p, size_t n) {
  while (n > 0) {
    struct ct_item *it = slot(s);
    size_t k = n < sizeof it->u.text ? n : sizeof it->u.text;
    it->type = CT_IT_TEXT;
    it->len = (uint32_t)k;
    memcpy(it->u.text, p, k);
    s->ptail++;
    p += k;
    n -= k;
  }
}

void ct_sink_event(struct ct_sink *s, const struct ct_ev_item *ev) {
  text_out(s);
  struct ct_item *it = slot(s);
  it->type = CT_IT_EVENT;
  it->u.ev = *ev;
  s->ptail++;
}

void ct_sink_coro(struct ct_sink *s, const struct ct_coro_item *c) {
  text_out(s);
  struct ct_item *it = slot(s);
  it->type = CT_IT_CORO;
  it->u.coro = *c;
  s->ptail++;
}

void ct_sink_on_block(struct ct_sink *s, ct_sink_block_fn *fn, void *ctx) {
  s->on_block = fn;
  s->block_ctx = ctx;
}

/* The spill file: unlinked from the start (O_TMPFILE) in the trace's
 * directory, where the user chose to put the trace's bytes; else in /tmp. */
static int spill_open(struct ct_sink *s) {
  /* Broken first: a spill file that failed a write is open, yet every block
   * staged for it again would stay in memory one more over the budget (and
   * overrun free_blk, sized for the budget plus the one stage). */
  if (s->spill_broken)
    return -EIO;
  if (s->spill_fd >= 0)
    return 0;
  const char *dirs[] = {s->dir, "/tmp"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    s->spill_fd = open(dirs[i], O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (s->spill_fd >= 0)
      return 0;
  }
  s->spill_broken = 1;
  return -errno;
}

/* A slot of the spill file for the next block: one the formatter has read
 * (the latest, its pages warmest), else a new one at the end. -1: ENOMEM. */
static int64_t spill_slot(struct ct_sink *s) {
  int64_t slot = -1;
  pthread_mutex_lock(&s->mu);
  if (s->nspill_free) {
    slot = s->spill_free[--s->nspill_free];
  } else if (s->spill_slots < s->spill_cap) {
    slot = s->spill_slots++;
  } else {
    /* Grown under mu: the formatter pushes read slots into it. */
    uint32_t nc = s->spill_cap ? 2 * s->spill_cap : 64;
    uint32_t *v = nc > s->spill_cap ? realloc(s->spill_free, (size_t)nc * sizeof(*v)) : NULL;
    if (v) {
      s->spill_free = v;
      s->spill_cap = nc;
      slot = s->spill_slots++;
    }
  }
  pthread_mutex_unlock(&s->mu);
  return slot;
}

/* Once the formatter has read every spilled block back, the file's pages go
 * (a burst's spill is not kept for the rest of the run) and slots start
 * again from 0. Producer thread, outside any block's use. */
static void spill_trim(struct ct_sink *s) {
  if (!s->spill_slots)
    return;
  pthread_mutex_lock(&s->mu);
  int drained = s->nspill_free == s->spill_slots;
  if (drained)
    s->spill_slots = s->nspill_free = 0;
  pthread_mutex_unlock(&s->mu);
  if (drained) /* best effort: a file that keeps its pages is only bigger */
    (void)ftruncate(s->spill_fd, 0);
}

/* Write a block to a slot of the spill file (EINTR, short writes handled);
 * *off gets where. */
static int spill_write(struct ct_sink *s, const char *b, size_t n, uint64_t *off) {
  int64_t slot = spill_slot(s);
  if (slot < 0) {
    s->spill_broken = 1;
    return -ENOMEM;
  }
  *off = (uint64_t)slot * CT_SINK_BLOCK;
  for (size_t put = 0; put < n;) {
    ssize_t k = pwrite(s->spill_fd, b + put, n - put, (off_t)(*off + put));
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      s->spill_broken = 1;
      return k < 0 ? -errno : -EIO;
    }
    put += (size_t)k;
  }
  s->spill_end += n;
  return 0;
}

/* The budget's blocks, one reservation (its pages come as they are written,
 * or at once: ct_sink_populate). 0 or -ENOMEM. */
static int region_new(struct ct_sink *s) {
  size_t len = (size_t)s->max_blk * CT_SINK_BLOCK;
  uint8_t *popd = calloc(s->max_blk, 1);
  char *m = popd ? mmap(NULL, len, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                 : MAP_FAILED;
  if (m == MAP_FAILED) {
    free(popd);
    return -ENOMEM;
  }
  /* Not in the program's fork (best effort): nothing of it is the child's,
   * and a populated budget's page tables were copied into it and
   * write-protected here (a fault at the engine's next write of each). */
  (void)madvise(m, len, MADV_DONTFORK);
  s->region = m;
  s->region_len = len;
  s->popd = popd;
  return 0;
}

/* Block nblk of the budget, new (the reservation made at the first). NULL:
 * no memory. */
static char *block_new(struct ct_sink *s) {
  if (!s->region && region_new(s))
    return NULL;
  return s->region + (size_t)s->nblk * CT_SINK_BLOCK;
}

/* Writes of at least this many bytes at once fault their block in first. */
#define POPULATE_MIN (16u * 1024u)

/* Contract: see sink.h. The whole block, once: a burst's 64 MiB of
 * blocks took 16384 page faults in the harvest's copy. Not for smaller
 * writes: a gentle flow's passes are small blocks, a few pages of each ever
 * touched. Not in huge pages: in a VM their first touch cost ten times the
 * 4 KiB pages' clearing. */
void ct_sink_populate(struct ct_sink *s, size_t n) {
  if (n < POPULATE_MIN || !s->cur || s->cur < s->region || s->cur >= s->region + s->region_len)
    return;
  size_t i = (size_t)(s->cur - s->region) / CT_SINK_BLOCK;
  if (s->popd[i])
    return;
  s->popd[i] = 1;
  (void)madvise(s->cur, CT_SINK_BLOCK, MADV_POPULATE_WRITE); /* best effort: else faults */
}

/* Give back a block of any origin (close): the region's go with it. */
static void block_free(struct ct_sink *s, char *b) {
  if (b && !(b >= s->region && b < s->region + s->region_len))
    free(b);
}

/* A block to fill: a free one, a new one within the budget, else the staging
 * block bound for the spill file; when even that fails, wait for the
 * formatter to give one back. NULL when none will ever come. */
static char *take_block(struct ct_sink *s) {
  for (;;) {
    pthread_mutex_lock(&s->mu);
    char *b = s->nfree ? s->free_blk[--s->nfree] : NULL;
    pthread_mutex_unlock(&s->mu);
    if (b) {
      spill_trim(s);
      return b;
    }
    if (s->nblk < s->max_blk && (b = block_new(s)) != NULL) {
      s->nblk++;
      return b;
    }
    if (spill_open(s) == 0 && (s->stage || (s->stage = malloc(CT_SINK_BLOCK)) != NULL))
      return s->stage;
    if (s->nblk == 0)
      return NULL;
    kick(s, 1);
    pthread_mutex_lock(&s->mu);
    if (!s->nfree) {
      struct timespec ts;
      deadline_in(&ts, 10000000u);
      pthread_cond_timedwait(&s->cv_prod, &s->mu, &ts);
    }
    pthread_mutex_unlock(&s->mu);
    s->stalls++;
  }
}

char *ct_sink_room(struct ct_sink *s, size_t min, size_t *avail) {
  if (s->cur && CT_SINK_BLOCK - s->cur_len < min)
    ct_sink_push_block(s);
  if (!s->cur) {
    s->cur = take_block(s);
    s->cur_len = 0;
    if (!s->cur)
      return NULL;
  }
  *avail = CT_SINK_BLOCK - s->cur_len;
  return s->cur + s->cur_len;
}

void ct_sink_fill(struct ct_sink *s, size_t n) {
  s->cur_len += n;
}

void ct_sink_push_block(struct ct_sink *s) {
  if (!s->cur)
    return;
  struct ct_blk blk = {.p = s->cur};
  size_t n = s->cur_len;
  s->cur = NULL;
  s->cur_len = 0;
  if (blk.p == s->stage) {
    if (spill_write(s, blk.p, n, &blk.off) == 0) {
      blk.p = NULL;
    } else {
      s->stage = NULL; /* no spill: it stays in memory, one over the budget */
      s->nblk++;
    }
  }
  text_out(s);
  struct ct_item *it = slot(s);
  it->type = CT_IT_BLOCK;
  it->len = (uint32_t)n;
  it->u.blk = blk;
  s->ptail++;
  /* A pass of a gentle flow is a small block: the formatter takes it at its
   * next wake-up (a flush, the idle timeout); a wake-up per pass would cost
   * more than the lines. Full blocks' worth of records wake it at once. */
  s->unkicked += n;
  int force = s->unkicked >= SINK_BLOCK_WAKE;
  if (force)
    s->unkicked = 0;
  kick(s, force);
}

void ct_sink_flush(struct ct_sink *s) {
  text_out(s);
  struct ct_item *it = slot(s);
  it->type = CT_IT_FLUSH;
  s->ptail++;
  kick(s, 1);
}

void ct_sink_dump(struct ct_sink *s, const char *trigger) {
  text_out(s);
  struct ct_item *it = slot(s);
  it->type = CT_IT_DUMP;
  size_t n = strnlen(trigger, sizeof it->u.text - 1);
  memcpy(it->u.text, trigger, n);
  it->u.text[n] = 0;
  it->len = (uint32_t)n;
  s->ptail++;
  kick(s, 1);
}

int ct_sink_sync(struct ct_sink *s) {
  text_out(s);
  struct ct_item *it = slot(s);
  it->type = CT_IT_SYNC;
  it->len = ++s->sync_seq;
  s->ptail++;
  kick(s, 1);
  pthread_mutex_lock(&s->mu);
  while (s->synced != s->sync_seq)
    pthread_cond_wait(&s->cv_prod, &s->mu);
  pthread_mutex_unlock(&s->mu);
  return -ct_sink_err(s);
}

int ct_sink_err(const struct ct_sink *s) {
  return atomic_load_explicit(&((struct ct_sink *)s)->err, memory_order_relaxed);
}

int ct_sink_close(struct ct_sink *s) {
  if (s->running) {
    text_out(s);
    atomic_store_explicit(&s->stop, 1, memory_order_release);
    kick(s, 1);
    pthread_mutex_lock(&s->mu);
    pthread_cond_signal(&s->cv_cons);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv_cons);
    pthread_cond_destroy(&s->cv_prod);
    s->running = 0;
  }
  int rc = s->fw.buf || s->fw.fd >= 0 ? ct_writer_close(&s->fw) : 0;
  if (rc && !s->err)
    s->err = -rc;
  rc = s->jw.buf ? ct_writer_close(&s->jw) : 0;
  if (rc && !s->err)
    s->err = -rc;
  ct_ctw_free(s->enc);
  s->enc = NULL;
  free(s->q);
  free(s->tw.buf);
  s->q = NULL;
  s->tw.buf = NULL;
  for (uint32_t i = 0; i < s->nfree; i++)
    block_free(s, s->free_blk[i]);
  for (uint32_t i = 0; i < s->nheld; i++)
    block_free(s, s->held[i]); /* a scratch block is never in the region */
  s->nheld = 0;
  s->held_scratch = 0;
  for (uint32_t i = 0; i < s->nscratch; i++)
    free(s->scratch[i]);
  s->nscratch = 0;
  if (s->cur != s->stage)
    block_free(s, s->cur);
  free(s->stage);
  if (s->region)
    munmap(s->region, s->region_len);
  free(s->popd);
  s->popd = NULL;
  s->region = NULL;
  s->region_len = 0;
  free(s->spill_free);
  s->spill_free = NULL;
  s->nspill_free = s->spill_slots = s->spill_cap = 0;
  free(s->free_blk);
  free(s->dir);
  s->free_blk = NULL;
  s->dir = s->cur = s->stage = NULL;
  s->nfree = 0;
  if (s->spill_fd > 0) /* a zeroed sink has 0 there: not ours */
    close(s->spill_fd);
  s->spill_fd = -1;
  return s->err ? -s->err : 0;
}
