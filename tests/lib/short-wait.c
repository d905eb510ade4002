/* short-wait.c - a coroutine parked 300 ms on the global `mailbox`, never
 * woken, then destroyed while still waiting (a service's timeout cancelling
 * it), for tests/test-report-thresholds.sh; beside it a worker woken once,
 * so the trace records wakes. Written with the public SDK only.
 *
 *   short-wait          both park on globals (`work`, then `mailbox`)
 *   short-wait heap     both park on one malloc'd object, the worker first
 *   short-wait leave    as heap, but the waiter is left parked at the exit
 *                       (the object's last wake: the worker's, before it)
 *
 * Exit 3 when not traced. */
#include <corotracer.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int work;
static int mailbox; // MAILBOX-DEF

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Parks co on obj; noinline so the site is this call, in this file. */
__attribute__((noinline)) static void park(corotracer_co *co, const int *obj) {
  corotracer_suspend(co, NULL, COROTRACER_WAIT_PTR, (uint64_t)(uintptr_t)obj); // PARK-SITE
  __asm__ volatile("" ::: "memory"); /* no tail call: the site stays here */
}

int main(int argc, char **argv) {
  int leave = argc > 1 && strcmp(argv[1], "leave") == 0;
  int heap = leave || (argc > 1 && strcmp(argv[1], "heap") == 0);
  int *box = heap ? malloc(sizeof *box) : NULL;
  if (heap && !box)
    return 1;
  corotracer_co *worker = corotracer_create(0, "worker", NULL);
  corotracer_co *waiter = corotracer_create(0, "waiter", NULL);
  corotracer_resume(worker);
  park(worker, heap ? box : &work);
  corotracer_wake(worker, NULL); // WAKE-SITE
  corotracer_resume(worker);
  corotracer_exit(worker, NULL);
  corotracer_destroy(worker);
  corotracer_resume(waiter);
  park(waiter, heap ? box : &mailbox);
  sleep_ms(300);
  if (!leave)
    corotracer_destroy(waiter); /* cancelled while waiting: never woken */
  free(box);
  return corotracer_enabled() ? 0 : 3;
}
