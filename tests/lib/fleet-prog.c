/* fleet-prog.c - a traced program with one of two lost wakeups, for the
 * fleet's tests (tests/test-fleet-pg.sh), written with the public SDK only.
 *
 *   fleet-prog a|b MS [LABEL]
 *       A coroutine (labelled LABEL, default "waiter") parks on an event
 *       nobody will set, at park_a (a) or park_b (b): two bugs at two sites.
 *       A worker coroutine yields, is woken, and finishes beside it; the program then
 *       sleeps MS milliseconds and exits, the waiter still parked.
 *
 * Exit 3 when not traced. */
#include <corotracer.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int event;

__attribute__((noinline)) static void park_a(corotracer_co *c) {
  corotracer_suspend(c, NULL, COROTRACER_WAIT_PTR, (uint64_t)(uintptr_t)&event);
  __asm__ volatile("");
}

__attribute__((noinline)) static void park_b(corotracer_co *c) {
  corotracer_suspend(c, NULL, COROTRACER_WAIT_PTR, (uint64_t)(uintptr_t)&event + 1);
  __asm__ volatile("");
}

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "a") && strcmp(argv[1], "b"))) {
    fprintf(stderr, "usage: fleet-prog a|b MS [LABEL]\n");
    return 2;
  }
  if (!corotracer_enabled())
    return 3;
  long ms = strtol(argv[2], NULL, 10);
  corotracer_co *w = corotracer_create(0, argc > 3 ? argv[3] : "waiter", NULL);
  corotracer_co *k = corotracer_create(0, "worker", NULL);
  corotracer_resume(w);
  if (argv[1][0] == 'a')
    park_a(w);
  else
    park_b(w);
  corotracer_resume(k); /* a yield, woken and resumed: the trace records wakes */
  corotracer_suspend(k, NULL, COROTRACER_WAIT_NONE, 0);
  corotracer_wake(k, NULL);
  corotracer_resume(k);
  corotracer_exit(k, NULL);
  corotracer_destroy(k);
  struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
  return 0;
}
