/* join-prog.c - joins recorded with COROTRACER_WAIT_COROUTINE, for
 * tests/test-report-join.sh: "main" joins "consumer", which waits on a
 * condition; with --bug nobody signals it, so main is stuck behind it. */
#include <corotracer.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static int cond; /* the consumer's wait object */

int main(int argc, char **argv) {
  int bug = argc > 1 && strcmp(argv[1], "--bug") == 0;
  corotracer_co *main_co = corotracer_create(0, "main", NULL);
  corotracer_resume(main_co);
  /* A yield first: the trace has wakes, so a missing one is evidence. */
  corotracer_suspend(main_co, NULL, COROTRACER_WAIT_NONE, 0);
  corotracer_wake(main_co, NULL);
  corotracer_resume(main_co);
  corotracer_co *consumer = corotracer_create(0, "consumer", NULL);
  /* main joins the consumer: it waits for it to finish. */
  corotracer_suspend(main_co, NULL, COROTRACER_WAIT_COROUTINE, corotracer_id(consumer));
  corotracer_resume(consumer);
  corotracer_suspend(consumer, NULL, COROTRACER_WAIT_PTR, (uint64_t)(uintptr_t)&cond);
  if (!bug)
    corotracer_wake(consumer, NULL); /* the signal the bug forgets */
  /* The program runs on: a stuck coroutine is one left parked a while. */
  struct timespec ts = {1, 300000000};
  while (nanosleep(&ts, &ts))
    ;
  if (bug)
    return 0;
  corotracer_resume(consumer);
  corotracer_exit(consumer, NULL);
  corotracer_wake(main_co, NULL); /* the join returns */
  corotracer_destroy(consumer);
  corotracer_resume(main_co);
  corotracer_exit(main_co, NULL);
  corotracer_destroy(main_co);
  return 0;
}
