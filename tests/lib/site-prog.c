/* site-prog.c - text sites (corotracer_site), for tests/test-report-site.sh:
 * a coroutine created and parked at lines of a file it names itself (as
 * generated code would), never woken. */
#include <corotracer.h>
#include <time.h>

int main(void) {
  const void *made = corotracer_site("grammar.y", 17, "start_rule");
  corotracer_co *co = corotracer_create(0, "parser", made);
  corotracer_resume(co);
  corotracer_suspend(co, NULL, COROTRACER_WAIT_NONE, 0); /* a yield: the trace has wakes */
  corotracer_wake(co, NULL);
  corotracer_resume(co);
  static int token;
  corotracer_suspend(co, corotracer_site("grammar.y", 42, "parse_rule"), COROTRACER_WAIT_PTR,
                     (uint64_t)(uintptr_t)&token);
  /* The same literals again: the same token (the probe's cache). */
  if (corotracer_site("grammar.y", 17, "start_rule") != made)
    return 3;
  struct timespec ts = {1, 300000000}; /* left parked a while: stuck */
  while (nanosleep(&ts, &ts))
    ;
  return 0;
}
