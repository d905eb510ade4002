/* scheduler.h - a small M:N coroutine scheduler: N worker threads with a run
 * queue each and work stealing, an epoll reactor thread, coroutines on their
 * own mmap'd stacks, coroutine-aware I/O and sleep. Traced with the corotracer
 * probe SDK (create, suspend, wake, resume, destroy).
 *
 * One scheduler per process: sch_start() once, sch_stop() once. */
#ifndef DEMO_SCHED_H
#define DEMO_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "corotracer.h"

struct sch_opts {
  int workers;       /* worker threads, >= 1 */
  size_t stack_size; /* bytes per coroutine stack, 0 = 64 KiB */
  /* The seed's bug, off when 0: on a hangup (EPOLLRDHUP/HUP/ERR) the reactor
   * closes the fd itself and does not wake the coroutine waiting on it,
   * whenever that hangup is one of bug_storm hangups within 0.5 ms. */
  int bug_close_on_hup;
  int bug_storm; /* 1..128 */
  /* Called by the reactor thread for each fd the bug closed (the program's
   * own log of what it did); may be NULL. */
  void (*bug_log)(int fd, uint64_t coroutine_id);
};

typedef struct sch_co sch_co;

/* Start the workers and the reactor. Returns 0 or a negative errno. */
int sch_start(const struct sch_opts *o);

/* Stop the workers and the reactor and join them. Coroutines still parked are
 * abandoned (their stacks stay mapped). Call from a plain thread. */
void sch_stop(void);

/* Create a coroutine running fn(arg), labelled for the tracer; the trace
 * records the caller of sch_spawn as its creation site. Callable from
 * coroutines and plain threads. Returns NULL on failure, with a negative errno
 * in *err when err is not NULL. */
sch_co *sch_spawn(void (*fn)(void *), void *arg, const char *label, int *err);

/* The running coroutine, or NULL on a plain thread. */
sch_co *sch_self(void);

/* Index of the worker running the caller, -1 on a plain thread. */
int sch_worker_index(void);

/* Let other coroutines run; the caller stays runnable. */
void sch_yield(void);

/* Parking, in two steps so a wake cannot be lost: sch_park_prepare records
 * the suspension (site: the blocking primitive's caller, wait/obj: what it
 * waits for); then the caller publishes itself to its waker (wait list, epoll);
 * then sch_park() suspends until a sch_wake() that came after
 * sch_park_prepare. A wake that arrives before sch_park() makes it return at
 * once. Wakes may be spurious: re-check the condition in a loop. Do not yield
 * between the two steps: a wake finding the coroutine queued is dropped (it
 * will run and re-check anyway), which is only right outside a wait. */
void sch_park_prepare(const void *site, enum corotracer_wait wait, uint64_t obj);
void sch_park(void);

/* Make co runnable (or, if it is running, make its next sch_park() return;
 * if it is already queued, nothing).
 * Callable from coroutines and plain threads; co must still exist. */
void sch_wake(sch_co *co);

/* Block the calling plain thread until no coroutine is alive, or until
 * timeout_ms passed (-1: no limit). Returns the number still alive. */
long sch_wait_idle(int timeout_ms);

/* Coroutine-aware I/O on non-blocking fds: when the call would block, the
 * coroutine parks on the fd (the trace names the caller of these functions)
 * until the reactor sees it ready. They return the count (or the new fd), or a
 * negative errno (errno itself is per thread, and a coroutine may come back on
 * another thread); sch_write writes everything or fails. Call them from
 * coroutines only; ignore SIGPIPE before writing to sockets. */
ssize_t sch_read(int fd, void *buf, size_t n);
ssize_t sch_write(int fd, const void *buf, size_t n);
int sch_accept(int lfd); /* the new fd is non-blocking and close-on-exec */

/* Park the calling coroutine for at least ns nanoseconds (a plain thread
 * sleeps). Returns 0 or -ENOMEM. */
int sch_sleep_ns(uint64_t ns);

struct sch_stats {
  uint64_t switches; /* switches into coroutines */
  uint64_t steals;   /* coroutines taken from another worker's queue */
  uint64_t spawned, finished;
  uint64_t bug_closed; /* fds the bug closed without waking their waiter */
  int reactor_error;   /* 0, or the negative errno that stopped the reactor */
};
void sch_get_stats(struct sch_stats *s);

#endif
