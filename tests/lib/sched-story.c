/* sched-story.c - traced programs for the report's scheduling findings
 * (tests/test-report-sched.sh), written with the public SDK only (include/corotracer.h), as a user
 * would.
 *
 *   sched-story starve | fair
 *       One thread, one run queue. A victim parks on an event; the first
 *       busy coroutine sets it and wakes the victim (queued at the back), and
 *       every busy coroutine yields between slices of 1 ms of work. starve: one
 *       busy coroutine, 1001 slices, and a yield goes to the front of the queue
 *       (unfair): the victim stays runnable for over a second while the busy one
 *       is resumed 1000 times. fair: 200 busy coroutines, 2 slices each, yields go
 *       to the back: the victim waits for each of the others once (about 0.2 s),
 *       as in any overloaded server, and nobody runs twice before it.
 *   sched-story dwait | dwait-ok
 *       A waiter parks on an event that (dwait) was set before it started
 *       waiting and is never set again: its owner destroys it at shutdown 1.5 s
 *       later; dwait-ok: set after it parks, which wakes it. Beside it in both:
 *       an accept loop woken 3 times at its accept site, parked there again and
 *       destroyed at shutdown (likely idle), and a read cancelled by a 20 ms
 *       timeout (destroyed while waiting, but briefly).
 *
 * Exit 3 when not traced. */
#include <corotracer.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct co {
  corotracer_co *t;
  struct co *next;    /* run queue */
  int slices, parked; /* busy: slices left; waiter: parked on the event */
};

static struct co *head, *tail;
static int unfair; /* a yield goes to the front */

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static struct co *spawn(const char *label) {
  struct co *c = calloc(1, sizeof *c);
  if (!c)
    abort();
  c->t = corotracer_create(0, label, NULL);
  return c;
}

static void push(struct co *c, int front) {
  if (front || !head) { /* also the first in an empty queue */
    c->next = head;
    head = c;
    tail = tail ? tail : c;
    return;
  }
  c->next = NULL;
  tail->next = c;
  tail = c;
}

static struct co *pop(void) {
  struct co *c = head;
  if (c && !(head = c->next))
    tail = NULL;
  return c;
}

/* Makes c runnable: the wake is recorded where it is decided, then queued. */
__attribute__((noinline)) static void wake(struct co *c, int front) {
  corotracer_wake(c->t, NULL);
  push(c, front);
}

/* The site: our caller's, a scheduler primitive's way (corotracer.h). */
__attribute__((noinline)) static void park(struct co *c, const void *obj) {
  corotracer_suspend(c->t, COROTRACER_CALLER, COROTRACER_WAIT_PTR, (uint64_t)(uintptr_t)obj);
}

/* The accept loop's one wait site (NULL: the return address into this
 * function), however the compiler unrolls the loop; the empty asm after the
 * call keeps it from being a tail call, whose site would be our caller. */
__attribute__((noinline)) static void accept_wait(struct co *c, int fd) {
  corotracer_suspend(c->t, NULL, COROTRACER_WAIT_FD, (uint64_t)fd);
  __asm__ volatile("");
}

static void finish(struct co *c) {
  corotracer_exit(c->t, NULL);
  corotracer_destroy(c->t);
  free(c);
}

/* starve / fair: see the top of the file. */
static void story_sched(int nbusy, int slices) {
  static int event;
  struct co *victim = spawn("victim");
  corotracer_resume(victim->t);
  park(victim, &event);
  for (int i = 0; i < nbusy; i++) {
    struct co *b = spawn("busy");
    b->slices = slices;
    push(b, 0);
  }
  struct co *c;
  while ((c = pop())) {
    corotracer_resume(c->t);
    if (c == victim) {
      finish(c);
      continue;
    }
    if (!event) {
      event = 1;
      wake(victim, 0);
    }
    sleep_ms(1);
    if (--c->slices == 0) {
      finish(c);
      continue;
    }
    corotracer_suspend(c->t, NULL, COROTRACER_WAIT_NONE, 0); /* yield */
    wake(c, unfair);
  }
}

/* dwait / dwait-ok: see the top of the file. */
static void story_dwait(int ok) {
  static int event, listen_fd = 3, conn_fd = 9;
  struct co *waiter = spawn("waiter"), *acceptor = spawn("acceptor"), *reader = spawn("reader");
  if (!ok)
    event = 1; /* set before anyone waits: nobody to wake */
  corotracer_resume(waiter->t);
  park(waiter, &event);
  corotracer_resume(acceptor->t);
  for (int i = 0; i < 4; i++) { /* three clients, then none */
    accept_wait(acceptor, listen_fd);
    if (i == 3)
      break;
    sleep_ms(5);
    corotracer_wake(acceptor->t, NULL);
    corotracer_resume(acceptor->t);
  }
  corotracer_resume(reader->t);
  corotracer_suspend(reader->t, NULL, COROTRACER_WAIT_FD, (uint64_t)conn_fd);
  sleep_ms(20);
  corotracer_destroy(reader->t); /* its timeout: cancelled */
  free(reader);
  if (ok) {
    event = 1;
    corotracer_wake(waiter->t, NULL);
    corotracer_resume(waiter->t);
    corotracer_exit(waiter->t, NULL);
  }
  sleep_ms(1500);
  corotracer_destroy(waiter->t); /* shutdown: the owner frees what is left */
  corotracer_destroy(acceptor->t);
  free(waiter);
  free(acceptor);
}

int main(int argc, char **argv) {
  const char *m = argc == 2 ? argv[1] : "";
  if (strcmp(m, "starve") && strcmp(m, "fair") && strcmp(m, "dwait") && strcmp(m, "dwait-ok")) {
    fprintf(stderr, "usage: sched-story starve|fair|dwait|dwait-ok\n");
    return 2;
  }
  if (corotracer_init() != 0)
    return 3;
  unfair = !strcmp(m, "starve");
  if (!strcmp(m, "starve"))
    story_sched(1, 1001);
  else if (!strcmp(m, "fair"))
    story_sched(200, 2);
  else
    story_dwait(!strcmp(m, "dwait-ok"));
  return 0;
}
