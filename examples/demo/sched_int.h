/* sched_int.h - what the scheduler core (sched.c) and the reactor (reactor.c)
 * share; not for users of the scheduler. */
#ifndef DEMO_SCHED_INT_H
#define DEMO_SCHED_INT_H

#include <stdatomic.h>

#include "ctx.h"
#include "scheduler.h"

/* A coroutine; it lives at the top of its own stack mapping. */
struct sch_co {
  struct ctx ctx;
  _Atomic unsigned state; /* SCH_PH_* | SCH_NOTIFIED, see sched.c */
  struct sch_co *next;    /* run-queue link, owned by the queue's lock */
  void (*fn)(void *);
  void *arg;
  corotracer_co *tr;
  uint64_t id;
  void *map; /* the stack mapping (guard page first) */
  const void *yield_site;
  int armed_fd;        /* fd registered in epoll for us, -1: none (our thread only) */
  _Atomic int wait_fd; /* fd we park on; release-stored before arming epoll */
};

/* Reactor (reactor.c): started and stopped by sch_start/sch_stop. */
int rx_start(const struct sch_opts *o);
void rx_stop(void);
uint64_t rx_bug_closed(void);
int rx_error(void); /* 0, or the negative errno that stopped the reactor */
/* 1 once co is parked (sched.c): an acquire, so what it did before it
 * parked happened before the caller's next steps. */
int sch_parked(struct sch_co *co);

#endif
