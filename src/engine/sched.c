/* sched.c - let the harvest loop run as soon as it wakes: a real-time
 * priority when the system grants one, else a short time slice. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/sched.h"

/* Contract: see sched.h. SCHED_FIFO at a low priority: when its nap
 * ends (or a wake-up byte arrives), the engine preempts whatever runs on the
 * CPU. Under SCHED_OTHER on a busy CPU it waits for the running task's time
 * slice to end, 3-8 ms measured on a 2-core machine beside a CPU hog (up to
 * 28 ms), longer than a v1 ring's fill time at gentle rates (issue #11).
 * SCHED_RESET_ON_FORK: nothing the engine forks inherits the priority. The
 * engine sleeps between scans, so it takes no more CPU than before; the
 * kernel's RT throttling (5% left to others) bounds a runaway. */
int ct_sched_realtime(void) {
  /* The lowest real-time priority: above every SCHED_OTHER task, the
   * program's included, only for the loop's short passes (a copy out of the
   * rings and slots, then a nap). The formatter, which formats and writes the
   * trace for as long as a backlog lasts, stays SCHED_OTHER (issue #20: never
   * a busy thread above the program); it was created before this call, and
   * threads created after it do not inherit it (SCHED_RESET_ON_FORK). */
  struct sched_param sp = {.sched_priority = 1};
  if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0)
    return 0;
  return -errno;
}

/* The kernel's struct sched_attr as first published (SCHED_ATTR_SIZE_VER0,
 * 48 bytes): glibc 2.36 has no sched_setattr, and <linux/sched/types.h>
 * defines a second struct sched_param beside <sched.h>'s. */
struct ct_sched_attr {
  uint32_t size;
  uint32_t policy;
  uint64_t flags;
  int32_t nice;
  uint32_t priority;
  uint64_t runtime; /* SCHED_OTHER: the slice asked for (EEVDF, Linux >= 6.12) */
  uint64_t deadline;
  uint64_t period;
};

#define CT_SCHED_FLAG_RESET_ON_FORK 0x01 /* <linux/sched.h> SCHED_FLAG_RESET_ON_FORK */

/* Contract: see sched.h. Without SCHED_FIFO (--no-realtime, or no
 * CAP_SYS_NICE) the loop's wake-up waited for the running task's slice
 * (3 ms by default, more beside other load): a back-to-back writer filled
 * its ring and the spares meanwhile (issue #32: 35 % lost in a round, the
 * loop 31 ms late). EEVDF gives a task that asks for a short slice an early
 * deadline, so its wake-up preempts the running task (PREEMPT_SHORT) and it
 * gets no more CPU than before: the loop naps between passes. Unprivileged:
 * the policy stays SCHED_OTHER at the thread's own nice. Older kernels ignore
 * sched_runtime for SCHED_OTHER (no harm); the slice is not inherited
 * (RESET_ON_FORK). */
int ct_sched_short_slice(uint64_t slice_ns) {
  errno = 0;
  int nice = getpriority(PRIO_PROCESS, 0); /* 0: the calling thread */
  if (nice == -1 && errno)
    return -errno;
  struct ct_sched_attr a = {.size = sizeof a,
                            .policy = SCHED_OTHER,
                            .flags = CT_SCHED_FLAG_RESET_ON_FORK,
                            .nice = nice,
                            .runtime = slice_ns};
  if (syscall(SYS_sched_setattr, 0, &a, 0) == 0)
    return 0;
  return -errno;
}

/* Contract: see sched.h. A loop blocked on a mutex a preempted SCHED_OTHER
 * holder keeps is a priority inversion: beside a CPU hog the holder waits
 * for its next slice, 3-8 ms, two v1 rings' fill time at 20 us per event
 * (CI lost 84 of 3200 events so, the loop's naps all on time). */
int ct_sched_mutex_init(pthread_mutex_t *mu) {
  pthread_mutexattr_t a;
  if (pthread_mutexattr_init(&a) != 0)
    return -pthread_mutex_init(mu, NULL);
  int rc = pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
  rc = rc ? rc : pthread_mutex_init(mu, &a);
  if (rc)
    rc = pthread_mutex_init(mu, NULL);
  pthread_mutexattr_destroy(&a);
  return -rc;
}
