/* flight_watch.c - the flight recorder's live findings (--dump-on
 * lost_wakeup,...): a thread of normal priority feeds the window's chunks
 * to the report's incremental analysis (src/analysis/watch.c) and asks the
 * harvest loop for a dump when a finding kind appears (docs/FLIGHT.md). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/watch.h"
#include "engine/flight.h"

/* Chunks waiting for the watch thread: at most this many (64 KiB each); a
 * chunk that finds the queue full is not watched (counted). */
#define FW_QUEUE 64u
/* How often the findings are asked (ns). */
#define FW_ASK_NS 200000000ull

struct ct_fwatch {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint8_t *q[FW_QUEUE]; /* under mu: chunks [head, tail) */
  size_t qn[FW_QUEUE];
  unsigned head, tail;
  int stop;
  uint64_t skipped; /* under mu */
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

/* The watch thread: feed what the formatter queued, ask every FW_ASK_NS. */
static void *watch_main(void *arg) {
  struct ct_fwatch *fw = arg;
  uint64_t next_ask = mono_ns() + FW_ASK_NS;
  pthread_mutex_lock(&fw->mu);
  while (!fw->stop) {
    if (fw->head == fw->tail) {
      struct timespec dl;
      clock_gettime(CLOCK_REALTIME, &dl);
      dl.tv_nsec += 50000000;
      if (dl.tv_nsec >= 1000000000) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000;
      }
      pthread_cond_timedwait(&fw->cv, &fw->mu, &dl);
    }
    while (fw->head != fw->tail) {
      uint8_t *p = fw->q[fw->head % FW_QUEUE];
      size_t n = fw->qn[fw->head % FW_QUEUE];
      fw->head++;
      pthread_mutex_unlock(&fw->mu);
      (void)ct_watch_chunk(fw->w, p, n); /* out of memory: findings lost, not the run */
      fw->fed_bytes += n;
      free(p);
      pthread_mutex_lock(&fw->mu);
    }
    if (mono_ns() < next_ask)
      continue;
    pthread_mutex_unlock(&fw->mu);
    unsigned fresh = ask(fw);
    if (fresh) {
      atomic_fetch_or_explicit(&fw->pending, fresh, memory_order_release);
      /* The harvest loop reads its signals at once (a dump's usual way). */
      sigqueue(getpid(), SIGUSR1, (union sigval){.sival_int = CT_FWATCH_SIGVAL});
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
  int rc = fw ? ct_watch_new(stuck_ns, runnable_ns, blocker_ns, &fw->w) : -ENOMEM;
  if (rc)
    goto fail;
  fw->mask = mask;
  fw->window_bytes = window_bytes;
  if ((rc = -pthread_mutex_init(&fw->mu, NULL)))
    goto fail;
  if ((rc = -pthread_cond_init(&fw->cv, NULL))) {
    pthread_mutex_destroy(&fw->mu);
    goto fail;
  }
  if ((rc = -pthread_create(&fw->thread, NULL, watch_main, fw))) {
    pthread_cond_destroy(&fw->cv);
    pthread_mutex_destroy(&fw->mu);
    goto fail;
  }
  *out = fw;
  return 0;
fail:
  if (fw)
    ct_watch_free(fw->w);
  free(fw);
  return rc;
}

void ct_fwatch_chunk(void *ctx, const uint8_t *p, size_t n) {
  struct ct_fwatch *fw = ctx;
  uint8_t *c = malloc(n);
  pthread_mutex_lock(&fw->mu);
  if (!c || fw->tail - fw->head >= FW_QUEUE) {
    fw->skipped++;
    pthread_mutex_unlock(&fw->mu);
    free(c);
    return;
  }
  memcpy(c, p, n);
  fw->q[fw->tail % FW_QUEUE] = c;
  fw->qn[fw->tail % FW_QUEUE] = n;
  fw->tail++;
  pthread_cond_signal(&fw->cv);
  pthread_mutex_unlock(&fw->mu);
}

unsigned ct_fwatch_take(struct ct_fwatch *fw) {
  return fw ? atomic_exchange_explicit(&fw->pending, 0, memory_order_acquire) : 0;
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
  ct_watch_free(fw->w);
  free(fw);
  return skipped;
}
