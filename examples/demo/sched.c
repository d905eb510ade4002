/* sched.c - the scheduler core: worker threads with a run queue each, work
 * stealing, idle workers asleep on a condition variable, coroutine stacks, and
 * the park/wake state machine that keeps a wake from being lost. */
#include "sched_int.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Coroutine state word: a phase in the low bits plus a NOTIFIED bit. The bit
 * is the "wake permit": a wake that finds the coroutine running (on its way
 * to sch_park) sets it, and the next sch_park consumes it instead of
 * sleeping. A wake that finds it queued (RUNNABLE) does nothing: it will run
 * and re-check its condition anyway (which is also how the trace reads it: a
 * wake to a runnable coroutine coalesces). A parked coroutine is only ever
 * committed to PARKED by its worker after the switch away from its stack, so
 * a waker can never queue a coroutine whose registers are still being saved. */
enum {
  SCH_PH_RUNNING = 0,
  SCH_PH_RUNNABLE = 1,
  SCH_PH_PARKED = 2,
  SCH_PH_MASK = 3,
  SCH_NOTIFIED = 4,
};

/* What a coroutine asked its worker to do when it switched back. */
enum { ACT_YIELD, ACT_PARK, ACT_EXIT };

struct worker {
  pthread_mutex_t mu; /* guards the queue */
  struct sch_co *head, *tail;
  _Atomic size_t len; /* queue length; read without the lock by thieves and sleepers */
  struct ctx ctx;     /* the worker loop's own context */
  struct sch_co *cur;
  int act;
  int index;
  pthread_t th;
  _Atomic uint64_t switches, steals;
} __attribute__((aligned(64)));

#define STACK_CACHE_MAX 256

static struct {
  struct worker *w;
  int n;
  size_t stack_size, page;
  _Atomic int stop;
  _Atomic unsigned rr; /* round robin for wakes from plain threads */
  _Atomic uint64_t next_id;
  _Atomic long live;
  _Atomic uint64_t spawned, finished;
  /* Idle protocol: a worker announces itself in `idle`, re-checks the queues,
   * then sleeps until `epoch` moves; a pusher bumps `epoch` when it sees idle
   * workers. Both sides use seq_cst so one of them sees the other. */
  _Atomic int idle;
  _Atomic unsigned epoch;
  pthread_mutex_t idle_mu;
  pthread_cond_t idle_cv;
  pthread_mutex_t done_mu; /* sch_wait_idle */
  pthread_cond_t done_cv;
  pthread_mutex_t stack_mu;
  void *stack_cache[STACK_CACHE_MAX];
  int stack_cached;
} g = {
    .idle_mu = PTHREAD_MUTEX_INITIALIZER,
    .idle_cv = PTHREAD_COND_INITIALIZER,
    .done_mu = PTHREAD_MUTEX_INITIALIZER,
    .done_cv = PTHREAD_COND_INITIALIZER,
    .stack_mu = PTHREAD_MUTEX_INITIALIZER,
};

static _Thread_local struct worker *tls_worker;

/* The worker running the caller. A coroutine may resume on another thread
 * after any switch, and compilers cache thread-local addresses within a
 * function: the opaque asm keeps every call a fresh look-up. */
static __attribute__((noinline)) struct worker *this_worker(void) {
  struct worker *w = tls_worker;
  __asm__ volatile("" : "+r"(w));
  return w;
}

/* ---- stacks: mmap'd, guard page at the low end, small cache ------------- */

static size_t map_size(void) {
  return g.stack_size + g.page;
}

/* A stack mapping, from the cache or new; NULL with errno set. */
static void *stack_get(void) {
  void *m = NULL;
  pthread_mutex_lock(&g.stack_mu);
  if (g.stack_cached > 0)
    m = g.stack_cache[--g.stack_cached];
  pthread_mutex_unlock(&g.stack_mu);
  if (m)
    return m;
  m = mmap(NULL, map_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1,
           0);
  if (m == MAP_FAILED)
    return NULL;
  if (mprotect(m, g.page, PROT_NONE) != 0) {
    int e = errno;
    munmap(m, map_size());
    errno = e;
    return NULL;
  }
  return m;
}

static void stack_put(void *m) {
  pthread_mutex_lock(&g.stack_mu);
  if (g.stack_cached < STACK_CACHE_MAX) {
    g.stack_cache[g.stack_cached++] = m;
    m = NULL;
  }
  pthread_mutex_unlock(&g.stack_mu);
  if (m)
    munmap(m, map_size());
}

/* ---- run queues ----------------------------------------------------------- */

static void q_push(struct worker *w, struct sch_co *co) {
  co->next = NULL;
  pthread_mutex_lock(&w->mu);
  if (w->tail)
    w->tail->next = co;
  else
    w->head = co;
  w->tail = co;
  atomic_store(&w->len, atomic_load_explicit(&w->len, memory_order_relaxed) + 1);
  pthread_mutex_unlock(&w->mu);
}

/* Detach up to `max` coroutines from the head of w's queue; returns the chain. */
static struct sch_co *q_take(struct worker *w, size_t max, size_t *taken) {
  struct sch_co *first = NULL, *last = NULL;
  size_t k = 0;
  pthread_mutex_lock(&w->mu);
  while (k < max && w->head) {
    struct sch_co *co = w->head;
    w->head = co->next;
    if (!w->head)
      w->tail = NULL;
    co->next = NULL;
    if (last)
      last->next = co;
    else
      first = co;
    last = co;
    k++;
  }
  atomic_store(&w->len, atomic_load_explicit(&w->len, memory_order_relaxed) - k);
  pthread_mutex_unlock(&w->mu);
  *taken = k;
  return first;
}

/* Take half of a victim's queue: run the first, keep the rest locally. */
static struct sch_co *q_steal(struct worker *self) {
  for (int i = 1; i < g.n; i++) {
    struct worker *v = &g.w[(self->index + i) % g.n];
    size_t len = atomic_load(&v->len), k;
    if (len == 0)
      continue;
    struct sch_co *chain = q_take(v, (len + 1) / 2, &k);
    if (!chain)
      continue;
    atomic_fetch_add_explicit(&self->steals, k, memory_order_relaxed);
    for (struct sch_co *co = chain->next, *nx; co; co = nx) {
      nx = co->next;
      q_push(self, co);
    }
    return chain;
  }
  return NULL;
}

static int any_work(void) {
  for (int i = 0; i < g.n; i++)
    if (atomic_load(&g.w[i].len) > 0)
      return 1;
  return 0;
}

/* Wake one sleeping worker, if any, after queueing work. */
static void notify_idle(void) {
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load(&g.idle) == 0)
    return;
  pthread_mutex_lock(&g.idle_mu);
  atomic_fetch_add(&g.epoch, 1);
  pthread_cond_signal(&g.idle_cv);
  pthread_mutex_unlock(&g.idle_mu);
}

/* Queue a runnable coroutine: on the caller's worker, or round robin from a
 * plain thread (idle workers steal to spread the load). */
static void make_runnable(struct sch_co *co) {
  struct worker *w = this_worker();
  if (!w)
    w = &g.w[atomic_fetch_add_explicit(&g.rr, 1, memory_order_relaxed) % (unsigned)g.n];
  q_push(w, co);
  notify_idle();
}

static void idle_wait(void) {
  atomic_fetch_add(&g.idle, 1);
  unsigned e = atomic_load(&g.epoch);
  if (!any_work() && !atomic_load(&g.stop)) {
    pthread_mutex_lock(&g.idle_mu);
    while (atomic_load(&g.epoch) == e && !atomic_load(&g.stop))
      pthread_cond_wait(&g.idle_cv, &g.idle_mu);
    pthread_mutex_unlock(&g.idle_mu);
  }
  atomic_fetch_sub(&g.idle, 1);
}

/* ---- coroutines ----------------------------------------------------------- */

static void co_free(struct sch_co *co) {
  ctx_release(&co->ctx);
  stack_put(co->map);
  atomic_fetch_add_explicit(&g.finished, 1, memory_order_relaxed);
  if (atomic_fetch_sub(&g.live, 1) == 1) {
    pthread_mutex_lock(&g.done_mu);
    pthread_cond_broadcast(&g.done_cv);
    pthread_mutex_unlock(&g.done_mu);
  }
}

/* co yielded: record its suspend and wake and queue it again. When w's queue
 * has another coroutine, that one is taken first and its resume recorded with
 * them, one clock read for the three (corotracer_switch); co is queued only
 * after, so no thief can resume it before its suspend is recorded. Returns the
 * coroutine taken (its resume recorded), or NULL; NULL once stopping, so a
 * stopping worker runs at most one more. */
static struct sch_co *yielded(struct worker *w, struct sch_co *co) {
  size_t k = 0;
  struct sch_co *next = atomic_load(&g.stop) ? NULL : q_take(w, 1, &k);
  corotracer_switch(co->tr, co->yield_site, COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE,
                    next ? next->tr : NULL);
  atomic_fetch_or(&co->state, SCH_PH_RUNNABLE);
  q_push(w, co); /* no notify: this worker picks it up again itself */
  return next;
}

/* Run co on w until it switches back, then do what it asked; resumed: co's
 * resume is already recorded. Returns the next coroutine to run, its resume
 * recorded, or NULL (the caller picks one). */
static struct sch_co *run_co(struct worker *w, struct sch_co *co, int resumed) {
  atomic_fetch_and(&co->state, ~(unsigned)SCH_PH_MASK); /* RUNNABLE -> RUNNING, permit kept */
  w->cur = co;
  if (!resumed)
    corotracer_resume(co->tr);
  atomic_fetch_add_explicit(&w->switches, 1, memory_order_relaxed);
  ctx_switch(&w->ctx, &co->ctx);
  w->cur = NULL;
  switch (w->act) {
  case ACT_YIELD:
    return yielded(w, co);
  case ACT_PARK: {
    unsigned s = SCH_PH_RUNNING;
    if (!atomic_compare_exchange_strong(&co->state, &s, SCH_PH_PARKED)) {
      /* A wake came between sch_park's check and now: consume it, run again. */
      atomic_store(&co->state, SCH_PH_RUNNABLE);
      q_push(w, co);
    }
    break;
  }
  default: /* ACT_EXIT */
    corotracer_destroy(co->tr);
    co_free(co);
    break;
  }
  return NULL;
}

static void *worker_main(void *p) {
  struct worker *w = p;
  tls_worker = w;
  ctx_init_thread(&w->ctx);
  struct sch_co *next = NULL; /* taken by a yield, its resume recorded */
  while (!atomic_load(&g.stop) || next) {
    if (next) {
      next = run_co(w, next, 1);
      continue;
    }
    size_t k;
    struct sch_co *co = q_take(w, 1, &k);
    if (!co)
      co = q_steal(w);
    if (co)
      next = run_co(w, co, 0);
    else
      idle_wait();
  }
  tls_worker = NULL;
  return NULL;
}

/* Switch from the running coroutine back to its worker loop. */
static void switch_out(struct sch_co *co, int act) {
  struct worker *w = this_worker();
  w->act = act;
  ctx_switch(&co->ctx, &w->ctx);
}

static void co_main(void *p) {
  struct sch_co *co = p;
  co->fn(co->arg);
  /* It returned: its final suspend, so the trace says finished, not parked
   * (run_co then records its destroy). The site is here, where fn returned. */
  corotracer_exit(co->tr, NULL);
  struct worker *w = this_worker();
  w->act = ACT_EXIT;
  ctx_exit(&co->ctx, &w->ctx);
}

/* scheduler.h. noinline: COROTRACER_CALLER must be our caller's return address. */
__attribute__((noinline)) sch_co *sch_spawn(void (*fn)(void *), void *arg, const char *label,
                                            int *err) {
  const void *site = COROTRACER_CALLER;
  void *m = stack_get();
  if (!m) {
    if (err)
      *err = -errno;
    return NULL;
  }
  /* The coroutine record sits at the top of its stack, cache-line aligned. */
  uintptr_t top = ((uintptr_t)m + map_size() - sizeof(struct sch_co)) & ~(uintptr_t)63;
  struct sch_co *co = (struct sch_co *)top;
  memset(co, 0, sizeof *co);
  co->map = m;
  co->fn = fn;
  co->arg = arg;
  co->armed_fd = -1;
  atomic_init(&co->wait_fd, -1);
  char *lo = (char *)m + g.page;
  if (ctx_make(&co->ctx, lo, (size_t)((char *)co - lo), co_main, co) != 0) {
    stack_put(m);
    if (err)
      *err = -EINVAL;
    return NULL;
  }
  co->id = atomic_fetch_add_explicit(&g.next_id, 1, memory_order_relaxed);
  atomic_fetch_add(&g.live, 1);
  atomic_fetch_add_explicit(&g.spawned, 1, memory_order_relaxed);
  co->tr = corotracer_create(co->id, label, site);
  atomic_init(&co->state, SCH_PH_RUNNABLE);
  make_runnable(co);
  return co;
}

/* scheduler.h: the coroutine the calling worker is running. */
sch_co *sch_self(void) {
  struct worker *w = this_worker();
  return w ? w->cur : NULL;
}

/* scheduler.h: -1 on a plain thread. */
int sch_worker_index(void) {
  struct worker *w = this_worker();
  return w ? w->index : -1;
}

/* scheduler.h. Recorded by the worker when it queues the coroutine again
 * (yielded): a suspend (no wait object) and a wake by the worker, with the
 * resume of the next coroutine. */
__attribute__((noinline)) void sch_yield(void) {
  const void *site = COROTRACER_CALLER;
  struct sch_co *co = sch_self();
  if (!co) {
    sched_yield();
    return;
  }
  co->yield_site = site;
  switch_out(co, ACT_YIELD);
}

/* scheduler.h: records the suspend; the state word is untouched until sch_park. */
void sch_park_prepare(const void *site, enum corotracer_wait wait, uint64_t obj) {
  struct sch_co *co = sch_self();
  if (co)
    corotracer_suspend(co->tr, site, wait, obj);
}

/* scheduler.h: consume a pending wake, or switch out and let the worker
 * commit PARKED. */
void sch_park(void) {
  struct sch_co *co = sch_self();
  if (!co)
    return;
  unsigned s = SCH_PH_RUNNING | SCH_NOTIFIED;
  if (atomic_compare_exchange_strong(&co->state, &s, SCH_PH_RUNNING)) {
    corotracer_resume(co->tr); /* woken before we got to sleep: keep running */
    return;
  }
  switch_out(co, ACT_PARK);
}

/* sched_int.h: the worker's CAS to PARKED (seq_cst) came after the coroutine
 * switched out. */
int sch_parked(struct sch_co *co) {
  return (atomic_load(&co->state) & SCH_PH_MASK) == SCH_PH_PARKED;
}

/* scheduler.h: PARKED -> RUNNABLE and queue it, RUNNING -> set NOTIFIED,
 * RUNNABLE or already NOTIFIED: nothing to do. */
__attribute__((noinline)) void sch_wake(sch_co *co) {
  const void *site = COROTRACER_CALLER;
  unsigned s = atomic_load(&co->state);
  if ((s & SCH_NOTIFIED) || (s & SCH_PH_MASK) == SCH_PH_RUNNABLE)
    return;
  /* Recorded first: once the state changes the coroutine may run at once,
   * and its resume must come after this wake in the trace. */
  corotracer_wake(co->tr, site);
  for (;;) {
    if ((s & SCH_NOTIFIED) || (s & SCH_PH_MASK) == SCH_PH_RUNNABLE)
      return;
    if ((s & SCH_PH_MASK) == SCH_PH_PARKED) {
      if (atomic_compare_exchange_weak(&co->state, &s, SCH_PH_RUNNABLE)) {
        make_runnable(co);
        return;
      }
    } else if (atomic_compare_exchange_weak(&co->state, &s, s | SCH_NOTIFIED)) {
      return;
    }
  }
}

/* scheduler.h: waits on the live-coroutine count. */
long sch_wait_idle(int timeout_ms) {
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  if (timeout_ms >= 0) {
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
      dl.tv_sec++;
      dl.tv_nsec -= 1000000000L;
    }
  }
  pthread_mutex_lock(&g.done_mu);
  while (atomic_load(&g.live) > 0) {
    if (timeout_ms < 0)
      pthread_cond_wait(&g.done_cv, &g.done_mu);
    else if (pthread_cond_timedwait(&g.done_cv, &g.done_mu, &dl) == ETIMEDOUT)
      break;
  }
  pthread_mutex_unlock(&g.done_mu);
  return atomic_load(&g.live);
}

/* scheduler.h: counters summed over the workers (relaxed: approximate while running). */
void sch_get_stats(struct sch_stats *s) {
  memset(s, 0, sizeof *s);
  for (int i = 0; i < g.n; i++) {
    s->switches += atomic_load_explicit(&g.w[i].switches, memory_order_relaxed);
    s->steals += atomic_load_explicit(&g.w[i].steals, memory_order_relaxed);
  }
  s->spawned = atomic_load_explicit(&g.spawned, memory_order_relaxed);
  s->finished = atomic_load_explicit(&g.finished, memory_order_relaxed);
  s->bug_closed = rx_bug_closed();
  s->reactor_error = rx_error();
}

/* scheduler.h: reactor first (workers need it for I/O), then the workers. */
int sch_start(const struct sch_opts *o) {
  int rc = 0, started = 0;
  if (o->workers < 1 || (o->bug_close_on_hup && (o->bug_storm < 1 || o->bug_storm > 128)))
    return -EINVAL;
  g.page = (size_t)sysconf(_SC_PAGESIZE);
  g.stack_size = o->stack_size ? o->stack_size : 64 * 1024;
  g.stack_size = (g.stack_size + g.page - 1) & ~(g.page - 1);
  g.n = o->workers;
  atomic_store(&g.next_id, 1);
  atomic_store(&g.stop, 0);
  g.w = calloc((size_t)g.n, sizeof *g.w);
  if (!g.w)
    return -ENOMEM;
  rc = rx_start(o);
  if (rc != 0) {
    free(g.w);
    g.w = NULL;
    return rc;
  }
  for (; started < g.n; started++) {
    struct worker *w = &g.w[started];
    w->index = started;
    pthread_mutex_init(&w->mu, NULL);
    int e = pthread_create(&w->th, NULL, worker_main, w);
    if (e != 0) {
      pthread_mutex_destroy(&w->mu);
      rc = -e;
      break;
    }
  }
  if (rc != 0) {
    g.n = started; /* join what started, stop the reactor */
    sch_stop();
  }
  return rc;
}

/* scheduler.h: wake every idle worker, join them, stop the reactor, unmap
 * the cached stacks. */
void sch_stop(void) {
  atomic_store(&g.stop, 1);
  pthread_mutex_lock(&g.idle_mu);
  atomic_fetch_add(&g.epoch, 1);
  pthread_cond_broadcast(&g.idle_cv);
  pthread_mutex_unlock(&g.idle_mu);
  for (int i = 0; i < g.n; i++) {
    pthread_join(g.w[i].th, NULL);
    pthread_mutex_destroy(&g.w[i].mu);
  }
  rx_stop();
  free(g.w);
  g.w = NULL;
  g.n = 0;
  while (g.stack_cached > 0)
    munmap(g.stack_cache[--g.stack_cached], map_size());
}
