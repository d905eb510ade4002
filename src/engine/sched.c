/* sched.c - let the harvest loop run as soon as it wakes: a real-time
 * priority when the system grants one. */
#include <errno.h>
#include <sched.h>

#include "engine/engine.h"

/* Contract: see engine.h. SCHED_FIFO at a low priority: when its nap
 * ends (or a wake-up byte arrives), the engine preempts whatever runs on the
 * CPU. Under SCHED_OTHER on a busy CPU it waits for the running task's time
 * slice to end, 3-8 ms measured on a 2-core machine beside a CPU hog (up to
 * 28 ms), longer than a v1 ring's fill time at gentle rates (issue #11).
 * SCHED_RESET_ON_FORK: nothing the engine forks inherits the priority. The
 * engine sleeps between scans, so it takes no more CPU than before; the
 * kernel's RT throttling (5% left to others) bounds a runaway. */
int ct_sched_realtime(void) {
  /* One above the formatter thread's (sink.c): a woken loop must not wait
   * for the formatter to finish a backlog on its CPU (equal FIFO priorities
   * never preempt each other). 1 where only that is allowed (RLIMIT_RTPRIO). */
  for (int prio = 2; prio >= 1; prio--) {
    struct sched_param sp = {.sched_priority = prio};
    if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0)
      return 0;
  }
  return -errno;
}
