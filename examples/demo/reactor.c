/* reactor.c - the scheduler's epoll reactor thread and timers, and the
 * coroutine-aware I/O built on them. Also home of the seed's bug (--bug):
 * on a storm of hangups the reactor closes the fds itself and never wakes
 * the coroutines parked on them. */
#include "sched_int.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RX_HUPS (EPOLLRDHUP | EPOLLHUP | EPOLLERR)
#define RX_STORM_MAX 128    /* largest bug_storm */
#define RX_STORM_NS 500000u /* bug_storm hangups within this window make a storm */

struct rx_timer {
  uint64_t deadline; /* CLOCK_MONOTONIC ns */
  struct sch_co *co;
  int fired; /* under rx.tmu: set after the wake, so the sleeper can leave */
};

static struct {
  int ep, evfd;
  pthread_t th;
  _Atomic int stop;
  int bug, storm;
  uint64_t hup_ts[RX_STORM_MAX]; /* times of the last `storm` hangups (ring), reactor thread only */
  unsigned hup_n;
  void (*bug_log)(int fd, uint64_t coroutine_id);
  _Atomic uint64_t bug_closed;
  _Atomic int error;   /* why the loop stopped early, negative errno */
  pthread_mutex_t tmu; /* guards the timer heap */
  struct rx_timer **heap;
  size_t n, cap;
} rx = {.ep = -1, .evfd = -1, .tmu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Wake the reactor out of epoll_wait (a new earliest timer, or stop). */
static void rx_nudge(void) {
  uint64_t one = 1;
  ssize_t r;
  do
    r = write(rx.evfd, &one, sizeof one);
  while (r < 0 && errno == EINTR);
  /* EAGAIN: the counter is already non-zero, the reactor will wake anyway. */
}

/* ---- timer heap (min-heap on deadline), under rx.tmu -------------------- */

static void heap_swap(size_t a, size_t b) {
  struct rx_timer *t = rx.heap[a];
  rx.heap[a] = rx.heap[b];
  rx.heap[b] = t;
}

static int heap_push(struct rx_timer *t) {
  if (rx.n == rx.cap) {
    size_t cap = rx.cap ? rx.cap * 2 : 64;
    struct rx_timer **h = realloc(rx.heap, cap * sizeof *h);
    if (!h)
      return -ENOMEM;
    rx.heap = h;
    rx.cap = cap;
  }
  size_t i = rx.n++;
  rx.heap[i] = t;
  while (i > 0 && rx.heap[(i - 1) / 2]->deadline > rx.heap[i]->deadline) {
    heap_swap(i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
  return 0;
}

static struct rx_timer *heap_pop(void) {
  struct rx_timer *top = rx.heap[0];
  rx.heap[0] = rx.heap[--rx.n];
  for (size_t i = 0;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < rx.n && rx.heap[l]->deadline < rx.heap[m]->deadline)
      m = l;
    if (r < rx.n && rx.heap[r]->deadline < rx.heap[m]->deadline)
      m = r;
    if (m == i)
      break;
    heap_swap(i, m);
    i = m;
  }
  return top;
}

/* Wake the sleepers whose deadline passed; return the epoll timeout (ms) until
 * the next one, -1 when none. */
static int rx_fire_timers(void) {
  int timeout = -1;
  uint64_t now = now_ns();
  pthread_mutex_lock(&rx.tmu);
  while (rx.n > 0 && rx.heap[0]->deadline <= now) {
    struct rx_timer *t = heap_pop();
    sch_wake(t->co);
    t->fired = 1;
  }
  if (rx.n > 0) {
    uint64_t ms = (rx.heap[0]->deadline - now + 999999u) / 1000000u;
    timeout = ms > INT_MAX ? INT_MAX : (int)ms;
  }
  pthread_mutex_unlock(&rx.tmu);
  return timeout;
}

/* ---- the reactor thread --------------------------------------------------- */

/* Note a hangup seen at `now`; 1 when it completes a storm: bug_storm
 * hangups within RX_STORM_NS. One client at a time never makes one (a new
 * process connecting takes milliseconds); a crowd of reconnecting clients does. */
static int rx_storm(uint64_t now) {
  unsigned i = rx.hup_n++ % (unsigned)rx.storm;
  uint64_t oldest = rx.hup_ts[i]; /* the hangup `storm` hangups ago (0: none yet) */
  rx.hup_ts[i] = now;
  return rx.hup_n >= (unsigned)rx.storm && now - oldest <= RX_STORM_NS;
}

/* Yields the reactor waits at most for a coroutine whose fd fired to have
 * parked (it armed the fd and parks right after: a few microseconds). */
#define RX_PARK_WAIT 10000

/* THE BUG (--bug): under a storm of dead peers the reactor tears the
 * connections down right here to spare a round trip through each coroutine;
 * it closes the fd, but nobody ever resumes the coroutine parked on it. It
 * closes once the coroutine has parked, done with the fd: the bug is a lost
 * wakeup and nothing else (closed while the coroutine re-armed it, the fd
 * would be raced over, and ThreadSanitizer said so in 1 run of 7: it orders
 * an EPOLL_CTL_MOD with nothing). */
static void rx_bug_close(struct sch_co *co, int fd) {
  for (int i = 0; i < RX_PARK_WAIT && !sch_parked(co); i++)
    sched_yield();
  close(fd);
  atomic_fetch_add(&rx.bug_closed, 1);
  if (rx.bug_log)
    rx.bug_log(fd, co->id);
}

static void *rx_main(void *unused) {
  (void)unused;
  struct epoll_event evs[128];
  int timeout = -1;
  while (!atomic_load(&rx.stop)) {
    int n = epoll_wait(rx.ep, evs, 128, timeout);
    if (n < 0 && errno != EINTR) {
      atomic_store(&rx.error, -errno); /* a bug of ours (EBADF, EINVAL): sch_get_stats tells */
      break;
    }
    uint64_t now = rx.bug && n > 0 ? now_ns() : 0;
    for (int i = 0; i < n; i++) {
      struct sch_co *co = evs[i].data.ptr;
      if (!co) { /* the eventfd */
        uint64_t v;
        ssize_t r;
        do
          r = read(rx.evfd, &v, sizeof v);
        while (r < 0 && errno == EINTR);
        continue;
      }
      /* Acquire pairs with the coroutine's release before it armed epoll:
       * everything it wrote is visible here (also to TSan). */
      int fd = atomic_load_explicit(&co->wait_fd, memory_order_acquire);
      if (rx.bug && (evs[i].events & RX_HUPS) && rx_storm(now))
        rx_bug_close(co, fd);
      else
        sch_wake(co);
    }
    timeout = rx_fire_timers();
  }
  return NULL;
}

/* Create the epoll instance and the eventfd, start the reactor thread.
 * Returns 0 or a negative errno (nothing is left open then). */
int rx_start(const struct sch_opts *o) {
  int rc = 0;
  rx.bug = o->bug_close_on_hup;
  rx.storm = o->bug_storm;
  rx.hup_n = 0;
  rx.bug_log = o->bug_log;
  atomic_store(&rx.stop, 0);
  rx.ep = epoll_create1(EPOLL_CLOEXEC);
  rx.evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (rx.ep < 0 || rx.evfd < 0) {
    rc = -errno;
    goto out;
  }
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
  if (epoll_ctl(rx.ep, EPOLL_CTL_ADD, rx.evfd, &ev) != 0) {
    rc = -errno;
    goto out;
  }
  rc = -pthread_create(&rx.th, NULL, rx_main, NULL);
out:
  if (rc != 0) {
    if (rx.ep >= 0)
      close(rx.ep);
    if (rx.evfd >= 0)
      close(rx.evfd);
    rx.ep = rx.evfd = -1;
  }
  return rc;
}

/* Stop and join the reactor thread, close its fds. Pending sleepers stay parked. */
void rx_stop(void) {
  atomic_store(&rx.stop, 1);
  rx_nudge();
  pthread_join(rx.th, NULL);
  close(rx.ep);
  close(rx.evfd);
  rx.ep = rx.evfd = -1;
  free(rx.heap);
  rx.heap = NULL;
  rx.n = rx.cap = 0;
}

/* Fds the bug closed without a wake, so far. */
uint64_t rx_bug_closed(void) {
  return atomic_load(&rx.bug_closed);
}

/* 0, or the negative errno that made the reactor loop stop. */
int rx_error(void) {
  return atomic_load(&rx.error);
}

/* ---- coroutine-aware I/O -------------------------------------------------- */

/* Park the running coroutine until fd is ready for `events` (or hung up).
 * Returns 0, or a negative errno when fd cannot be watched. */
static int wait_fd(int fd, uint32_t events, const void *site) {
  struct sch_co *co = sch_self();
  if (!co)
    return -EPERM;
  sch_park_prepare(site, COROTRACER_WAIT_FD, (uint64_t)fd);
  atomic_store_explicit(&co->wait_fd, fd, memory_order_release);
  struct epoll_event ev = {.events = events | EPOLLRDHUP | EPOLLONESHOT, .data.ptr = co};
  /* One-shot: a fired fd stays disarmed until we re-arm it, so the reactor
   * never wakes us twice for one wait nor after we closed the fd. */
  int op = co->armed_fd == fd ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
  int rc = epoll_ctl(rx.ep, op, fd, &ev);
  if (rc != 0 && (errno == ENOENT || errno == EEXIST))
    rc = epoll_ctl(rx.ep, op == EPOLL_CTL_MOD ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev);
  if (rc != 0) {
    rc = -errno;
    corotracer_resume(co->tr); /* we never stopped running */
    return rc;
  }
  co->armed_fd = fd;
  sch_park();
  return 0;
}

/* The raw calls, reading errno before anything can switch threads. */
static ssize_t sys_read(int fd, void *buf, size_t n) {
  ssize_t r = read(fd, buf, n);
  return r < 0 ? -errno : r;
}

static ssize_t sys_write(int fd, const void *buf, size_t n) {
  ssize_t r = write(fd, buf, n);
  return r < 0 ? -errno : r;
}

static int sys_accept(int lfd) {
  int r = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  return r < 0 ? -errno : r;
}

/* scheduler.h. noinline: the suspend site is our caller (e.g. conn_read). */
__attribute__((noinline)) ssize_t sch_read(int fd, void *buf, size_t n) {
  const void *site = COROTRACER_CALLER;
  for (;;) {
    ssize_t r = sys_read(fd, buf, n);
    if (r != -EAGAIN && r != -EWOULDBLOCK && r != -EINTR)
      return r;
    if (r == -EINTR)
      continue;
    int e = wait_fd(fd, EPOLLIN, site);
    if (e < 0)
      return e;
  }
}

/* scheduler.h: loops over short writes, parks on EAGAIN. */
__attribute__((noinline)) ssize_t sch_write(int fd, const void *buf, size_t n) {
  const void *site = COROTRACER_CALLER;
  size_t done = 0;
  while (done < n) {
    ssize_t r = sys_write(fd, (const char *)buf + done, n - done);
    if (r >= 0) {
      done += (size_t)r;
    } else if (r == -EAGAIN || r == -EWOULDBLOCK) {
      int e = wait_fd(fd, EPOLLOUT, site);
      if (e < 0)
        return e;
    } else if (r != -EINTR) {
      return r;
    }
  }
  return (ssize_t)done;
}

/* scheduler.h: retries EINTR and ECONNABORTED, parks on EAGAIN. */
__attribute__((noinline)) int sch_accept(int lfd) {
  const void *site = COROTRACER_CALLER;
  for (;;) {
    int r = sys_accept(lfd);
    if (r >= 0)
      return r;
    if (r == -EINTR || r == -ECONNABORTED)
      continue;
    if (r != -EAGAIN && r != -EWOULDBLOCK)
      return r;
    int e = wait_fd(lfd, EPOLLIN, site);
    if (e < 0)
      return e;
  }
}

/* scheduler.h. The timer lives on our stack; we leave only once the reactor
 * marked it fired (under rx.tmu, after its wake), so it never touches a
 * coroutine that is gone. */
__attribute__((noinline)) int sch_sleep_ns(uint64_t ns) {
  const void *site = COROTRACER_CALLER;
  struct rx_timer t = {.deadline = now_ns() + ns, .co = sch_self()};
  if (!t.co) {
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    return 0;
  }
  pthread_mutex_lock(&rx.tmu);
  int rc = heap_push(&t);
  int nudge = rc == 0 && rx.heap[0] == &t; /* new earliest deadline */
  while (rc == 0 && !t.fired) {
    sch_park_prepare(site, COROTRACER_WAIT_PTR, (uint64_t)(uintptr_t)&t);
    pthread_mutex_unlock(&rx.tmu);
    if (nudge)
      rx_nudge();
    nudge = 0;
    sch_park();
    pthread_mutex_lock(&rx.tmu);
  }
  pthread_mutex_unlock(&rx.tmu);
  return rc;
}
