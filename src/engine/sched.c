/* sched.c - let the harvest loop run as soon as it wakes: a real-time
 * priority when the system grants one. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>

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
