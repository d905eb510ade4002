/* sink.c - formatting off the harvest loop: the harvest thread pushes raw
 * items (events, coroutines, preformatted text) into a bounded single-producer
 * single-consumer queue; one formatter thread turns them into JSONL lines
 * (records.c) and owns the trace file. A full queue makes the producer wait
 * (backpressure), it never drops. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"

/* Items in the queue: 4 MiB, a few ms of a busy run's events. */
#define SINK_CAP_DEFAULT (1u << 15)
/* The formatter's idle wake-up: the trace on disk is never staler. */
#define SINK_IDLE_NS 50000000u
/* The producer wakes a sleeping formatter only for this many new items (or
 * a flush, a sync, a full queue): at a gentle rate one wake-up (two context
 * switches and a write(2)) per pass cost more than the formatting. */
#define SINK_BATCH(s) ((s)->cap / 8)

static void deadline_in(struct timespec *ts, uint64_t ns) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  ts->tv_sec += (time_t)(ns / 1000000000u);
  ts->tv_nsec += (long)(ns % 1000000000u);
  if (ts->tv_nsec >= 1000000000) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000;
  }
}

/* The formatter's side of one item. */
static void format_item(struct ct_sink *s, const struct ct_item *it) {
  switch (it->type) {
  case CT_IT_EVENT:
    ct_rec_event(&s->fw, &it->u.ev);
    break;
  case CT_IT_CORO:
    ct_rec_coroutine(&s->fw, &it->u.coro);
    break;
  case CT_IT_TEXT:
    ct_w_raw(&s->fw, it->u.text, it->len);
    break;
  case CT_IT_FLUSH:
    ct_writer_flush(&s->fw);
    break;
  case CT_IT_SYNC:
    ct_writer_flush(&s->fw);
    pthread_mutex_lock(&s->mu);
    s->synced = it->len;
    pthread_cond_broadcast(&s->cv_prod);
    pthread_mutex_unlock(&s->mu);
    break;
  }
  if (s->fw.err)
    atomic_store_explicit(&s->err, s->fw.err, memory_order_relaxed);
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
        if (s->fw.len == 0) {
          pthread_cond_wait(&s->cv_cons, &s->mu);
          continue;
        }
        struct timespec ts;
        deadline_in(&ts, SINK_IDLE_NS);
        if (pthread_cond_timedwait(&s->cv_cons, &s->mu, &ts) == ETIMEDOUT)
          ct_writer_flush(&s->fw);
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
  ct_writer_flush(&s->fw);
  if (s->fw.err)
    atomic_store_explicit(&s->err, s->fw.err, memory_order_relaxed);
  return NULL;
}

int ct_sink_open(struct ct_sink *s, const char *path, int append, uint32_t cap) {
  memset(s, 0, sizeof *s);
  s->cap = cap && !(cap & (cap - 1)) ? cap : SINK_CAP_DEFAULT;
  int rc = ct_writer_open(&s->fw, path, append);
  if (rc)
    return rc;
  s->tw.fd = -1;
  s->tw.sink = s;
  s->tw.buf = malloc(CT_W_BUF);
  s->q = malloc((size_t)s->cap * sizeof *s->q);
  if (!s->tw.buf || !s->q) {
    rc = -ENOMEM;
    goto fail;
  }
  /* Touch every page now: first-touch faults in the harvest loop cost a
   * busy ring its room (see rings.c). */
  memset(s->q, 0, (size_t)s->cap * sizeof *s->q);
  memset(s->tw.buf, 0, CT_W_BUF);
  memset(s->fw.buf, 0, CT_W_BUF);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&s->mu, NULL);
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
  s->running = 1;
  return 0;
fail:
  free(s->q);
  free(s->tw.buf);
  s->q = NULL;
  s->tw.buf = NULL;
  ct_writer_close(&s->fw);
  return rc;
}

int ct_sink_realtime(struct ct_sink *s) {
  struct sched_param sp = {.sched_priority = 1};
  return s->running ? -pthread_setschedparam(s->thread, SCHED_FIFO, &sp) : -ESRCH;
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

void ct_sink_flush(struct ct_sink *s) {
  text_out(s);
  struct ct_item *it = slot(s);
  it->type = CT_IT_FLUSH;
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
  free(s->q);
  free(s->tw.buf);
  s->q = NULL;
  s->tw.buf = NULL;
  return s->err ? -s->err : 0;
}
