/* pool.c - a small, correct scheduler of stackless coroutines that frees each
 * coroutine when it finishes, so malloc hands its memory (and, since the id is
 * the coroutine's address, as the README suggests, its id) to the next one.
 * Traced, it must give a report with no error or warning: reused ids are new
 * coroutines, and a finished coroutine (corotracer_exit) is not a parked one.
 *
 * Each round spawns PAIRS producer/consumer pairs on one run queue: the
 * consumer finds its channel empty and parks on it; the producer fills the
 * channel, wakes the consumer and returns; the consumer takes the item and
 * returns. Every coroutine records create, resume, (suspend, wake, resume),
 * exit and destroy: at most 7 events, fewer than a station's 8 slots, so no
 * event can be overwritten before the engine reads it.
 *
 * Usage: pool [COROUTINES [PAIRS]]   (default 100000 coroutines, 64 pairs a round)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <corotracer.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct chan {
  int full, item;
  struct coro *waiter;
};

struct coro {
  int (*step)(struct coro *); /* runs until the coroutine suspends or returns: 1 = returned */
  int state;
  struct chan *ch;
  corotracer_co *trace;
  struct coro *next; /* run queue */
};

static struct coro *rq_head, *rq_tail;
static uint64_t items;

static void push(struct coro *co) {
  co->next = NULL;
  if (rq_tail)
    rq_tail->next = co;
  else
    rq_head = co;
  rq_tail = co;
}

static struct coro *pop(void) {
  struct coro *co = rq_head;
  if (co && !(rq_head = co->next))
    rq_tail = NULL;
  return co;
}

/* Makes co runnable: recorded where the decision is taken, then queued. */
static void wake(struct coro *co) {
  corotracer_wake(co->trace, NULL);
  push(co);
}

__attribute__((noinline)) static int consumer(struct coro *co) {
  if (co->state == 0 && !co->ch->full) { /* nothing yet: park on the channel */
    co->state = 1;
    co->ch->waiter = co;
    corotracer_suspend(co->trace, NULL, COROTRACER_WAIT_PTR, (uint64_t)(uintptr_t)co->ch);
    return 0;
  }
  items += (uint64_t)co->ch->item;
  co->ch->full = 0;
  corotracer_exit(co->trace, NULL);
  return 1;
}

__attribute__((noinline)) static int producer(struct coro *co) {
  co->ch->item = 1;
  co->ch->full = 1;
  if (co->ch->waiter) {
    struct coro *w = co->ch->waiter;
    co->ch->waiter = NULL;
    wake(w);
  }
  corotracer_exit(co->trace, NULL);
  return 1;
}

__attribute__((noinline)) static struct coro *spawn(int (*step)(struct coro *), struct chan *ch,
                                                    const char *label) {
  struct coro *co = calloc(1, sizeof *co);
  if (!co) {
    perror("pool: calloc");
    exit(1);
  }
  co->step = step;
  co->ch = ch;
  co->trace = corotracer_create((uint64_t)(uintptr_t)co, label, NULL);
  push(co); /* runnable from creation: no wake needed */
  return co;
}

int main(int argc, char **argv) {
  long total = argc > 1 ? atol(argv[1]) : 100000, pairs = argc > 2 ? atol(argv[2]) : 64;
  if (total < 2 || pairs < 1) {
    fprintf(stderr, "usage: pool [COROUTINES [PAIRS]]\n");
    return 2;
  }
  struct chan *chans = calloc((size_t)pairs, sizeof *chans);
  if (!chans)
    return 1;
  long spawned = 0;
  while (spawned < total) {
    long n = 0;
    /* Consumers first, so they find their channels empty and park. */
    for (; n < pairs && spawned + 2 * n + 1 < total; n++)
      spawn(consumer, &chans[n], "consumer");
    for (long i = 0; i < n; i++)
      spawn(producer, &chans[i], "producer");
    spawned += 2 * n;
    if (!n)
      break;
    struct coro *co;
    while ((co = pop())) {
      corotracer_resume(co->trace);
      if (co->step(co)) {
        corotracer_destroy(co->trace);
        free(co); /* the next spawn gets this memory, and this id */
      }
    }
  }
  uint64_t recorded = 0, dropped = 0;
  corotracer_stats(&recorded, &dropped);
  printf("pool: %ld coroutines, %llu items, %llu events recorded, %llu dropped\n", spawned,
         (unsigned long long)items, (unsigned long long)recorded, (unsigned long long)dropped);
  free(chans);
  return items == (uint64_t)spawned / 2 ? 0 : 1;
}
