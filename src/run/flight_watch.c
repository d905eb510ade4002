/* flight_watch.c - the flight recorder's live findings (--dump-on
 * lost_wakeup,...): a thread of normal priority feeds the window's chunks
 * to the report's incremental analysis (src/analysis/watch.c) and asks the
 * harvest loop for a dump when a finding kind appears (docs/FLIGHT.md). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "analysis/watch.h"
#include "run/flight_watch.h"

/* Chunks waiting for the watch thread: at most this many (64 KiB each); a
 * chunk that finds the queue full is not watched (counted), and the watch
 * starts over after the gap (ct_watch_gap). */
#define FW_QUEUE 64u
/* How often the findings are asked (ns). */
#define FW_ASK_NS 200000000ull

struct ct_fwatch {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint8_t *q[FW_QUEUE]; /* under mu: chunks [head, tail) */
  size_t qn[FW_QUEUE];
  unsigned char qgap[FW_QUEUE]; /* chunks were skipped before this one */
  unsigned head, tail;
  int stop, gap;    /* gap: skipped since the last chunk queued */
  uint64_t skipped; /* under mu */
  int efd;          /* the harvest loop's wake-up (an eventfd): kinds are pending */
  /* The watch thread's own. */
  struct ct_watch *w;
  unsigned mask;
  uint64_t window_bytes, fed_bytes;
  uint64_t last_count[CT_WATCH_KINDS], rearm_at[CT_WATCH_KINDS];
  _Atomic unsigned pending; /* kinds found, for the harvest thread to take */
};

int ct_fwatch_parse(const char *list, unsigned *mask, int *on_exit) {
  *mask = 0;
  *on_exit = 0;
  for (const char *p = list; *p;) {
    size_t n = strcspn(p, ",");
    int known = 0;
    if (n == 4 && !memcmp(p, "exit", 4))
      *on_exit = known = 1;
    else if (n == 3 && !memcmp(p, "any", 3))
      *mask |= CT_WATCH_ALL, known = 1;
    for (unsigned i = 0; i < CT_WATCH_KINDS && !known; i++)
      if (strlen(ct_watch_kind(i)) == n && !memcmp(p, ct_watch_kind(i), n)) {
        *mask |= 1u << i;
        known = 1;
      }
    if (!known)
      return -EINVAL;
    p += n;
    if (*p == ',' && *++p == 0)
      return -EINVAL;
  }
  return *mask || *on_exit ? 0 : -EINVAL;
}

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The kinds found now that warrant a dump: wanted, more of them than at the
 * kind's last dump, and the window has turned over since (one dump per
 * kind per window). */
static unsigned ask(struct ct_fwatch *fw) {
  uint64_t count[CT_WATCH_KINDS];
  unsigned found = ct_watch_kinds(fw->w, mono_ns(), count) & fw->mask, fresh = 0;
  for (unsigned k = 0; k < CT_WATCH_KINDS; k++)
    if ((found >> k & 1) && count[k] > fw->last_count[k] && fw->fed_bytes >= fw->rearm_at[k]) {
      fresh |= 1u << k;
      fw->last_count[k] = count[k];
      fw->rearm_at[k] = fw->fed_bytes + fw->window_bytes;
    }
  return fresh;
}

/* Chunk p (n bytes) to the analysis; after a gap, which may have held a
 * wake, resume or destroy of any coroutine, the analysis starts over: a
 * kind counts again from there (its re-arm by the window still holds). */
static void feed(struct ct_fwatch *fw, uint8_t *p, size_t n, int gap) {
  if (gap && ct_watch_gap(fw->w) == 0)
    memset(fw->last_count, 0, sizeof fw->last_count);
  (void)ct_watch_chunk(fw->w, p, n); /* out of memory: findings lost, not the run */
  fw->fed_bytes += n;
  free(p);
}

/* The watch thread: feed what the formatter queued, ask every FW_ASK_NS. */
static void *watch_main(void *arg) {
  struct ct_fwatch *fw = arg;
  uint64_t next_ask = mono_ns() + FW_ASK_NS;
  pthread_mutex_lock(&fw->mu);
  while (!fw->stop) {
    if (fw->head == fw->tail) {
      struct timespec dl; /* the cv waits on CLOCK_MONOTONIC: a clock step cannot stall it */
      clock_gettime(CLOCK_MONOTONIC, &dl);
      dl.tv_nsec += 50000000;
      if (dl.tv_nsec >= 1000000000) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000;
      }
      pthread_cond_timedwait(&fw->cv, &fw->mu, &dl);
    }
    while (fw->head != fw->tail) {
      unsigned i = fw->head++ % FW_QUEUE;
      pthread_mutex_unlock(&fw->mu);
      feed(fw, fw->q[i], fw->qn[i], fw->qgap[i]);
      pthread_mutex_lock(&fw->mu);
    }
    if (mono_ns() < next_ask)
      continue;
    pthread_mutex_unlock(&fw->mu);
    unsigned fresh = ask(fw);
    if (fresh) {
      atomic_fetch_or_explicit(&fw->pending, fresh, memory_order_release);
      /* The harvest loop polls the eventfd (a full counter: it is awake). */
      uint64_t one = 1;
      while (write(fw->efd, &one, sizeof one) < 0 && errno == EINTR) {
      }
    }
    next_ask = mono_ns() + FW_ASK_NS;
    pthread_mutex_lock(&fw->mu);
  }
  pthread_mutex_unlock(&fw->mu);
  return NULL;
}

int ct_fwatch_start(struct ct_fwatch **out, unsigned mask, uint64_t stuck_ns, uint64_t runnable_ns,
                    uint64_t blocker_ns, uint64_t window_bytes) {
  struct ct_fwatch *fw = calloc(1, sizeof *fw);
  pthread_condattr_t ca;
  int mu = 0, cv = 0; /* what fail: undoes */
  if (fw)
    fw->efd = -1;
  int rc = fw ? ct_watch_new(stuck_ns, runnable_ns, blocker_ns, &fw->w) : -ENOMEM;
  if (rc)
    goto fail;
  fw->mask = mask;
  fw->window_bytes = window_bytes;
  if ((fw->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
    rc = -errno;
    goto fail;
  }
  if ((rc = -pthread_mutex_init(&fw->mu, NULL)))
    goto fail;
  mu = 1;
  if ((rc = -pthread_condattr_init(&ca)))
    goto fail;
  rc = -pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  rc = rc ? rc : -pthread_cond_init(&fw->cv, &ca);
  pthread_condattr_destroy(&ca);
  if (rc)
    goto fail;
  cv = 1;
  if ((rc = -pthread_create(&fw->thread, NULL, watch_main, fw)))
    goto fail;
  *out = fw;
  return 0;
fail:
  if (cv)
    pthread_cond_destroy(&fw->cv);
  if (mu)
    pthread_mutex_destroy(&fw->mu);
  if (fw && fw->efd >= 0)
    close(fw->efd);
  if (fw)
    ct_watch_free(fw->w);
  free(fw);
  return rc;
}

void ct_fwatch_chunk(void *ctx, const uint8_t *p, size_t n) {
  struct ct_fwatch *fw = ctx;
  /* Room first (only this thread queues, so it stays), then the copy
   * outside the lock: a full queue costs no allocation. */
  pthread_mutex_lock(&fw->mu);
  int room = fw->tail - fw->head < FW_QUEUE;
  pthread_mutex_unlock(&fw->mu);
  uint8_t *c = room ? malloc(n) : NULL;
  pthread_mutex_lock(&fw->mu);
  if (!c) {
    fw->skipped++;
    fw->gap = 1;
  } else {
    memcpy(c, p, n);
    unsigned i = fw->tail++ % FW_QUEUE;
    fw->q[i] = c;
    fw->qn[i] = n;
    fw->qgap[i] = (unsigned char)fw->gap;
    fw->gap = 0;
    pthread_cond_signal(&fw->cv);
  }
  pthread_mutex_unlock(&fw->mu);
}

int ct_fwatch_fd(const struct ct_fwatch *fw) {
  return fw ? fw->efd : -1;
}

unsigned ct_fwatch_take(struct ct_fwatch *fw) {
  if (!fw)
    return 0;
  uint64_t v;
  while (read(fw->efd, &v, sizeof v) < 0 && errno == EINTR) {
  }
  return atomic_exchange_explicit(&fw->pending, 0, memory_order_acquire);
}

uint64_t ct_fwatch_stop(struct ct_fwatch *fw) {
  if (!fw)
    return 0;
  pthread_mutex_lock(&fw->mu);
  fw->stop = 1;
  pthread_cond_signal(&fw->cv);
  pthread_mutex_unlock(&fw->mu);
  pthread_join(fw->thread, NULL);
  for (; fw->head != fw->tail; fw->head++)
    free(fw->q[fw->head % FW_QUEUE]);
  uint64_t skipped = fw->skipped;
  pthread_cond_destroy(&fw->cv);
  pthread_mutex_destroy(&fw->mu);
  close(fw->efd);
  ct_watch_free(fw->w);
  free(fw);
  return skipped;
}
