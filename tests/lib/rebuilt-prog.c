/* rebuilt-prog.c - a program traced and then rebuilt, for
 * tests/test-report-rebuilt.sh: one coroutine parks on `mailbox` in park()
 * and is never woken. Built twice; the REBUILT build has more code before
 * park(), so its file has another build id and what was park's call address
 * is other code at another line.
 *
 * Exit 3 when not traced. */
#include <corotracer.h>

#include <stdint.h>
#include <stdio.h>

static int mailbox;

#ifdef REBUILT
/* The code the rebuild added: it moves park() and its line. */
__attribute__((noinline)) static unsigned mix(unsigned x) {
  for (int i = 0; i < 8; i++)
    x = x * 2654435761u + (x >> 13);
  return x;
}
#endif

__attribute__((noinline)) static void park(corotracer_co *co) {
  corotracer_suspend(co, NULL, COROTRACER_WAIT_PTR, (uint64_t)(uintptr_t)&mailbox); // PARK-SITE
  __asm__ volatile("" ::: "memory"); /* no tail call: the site stays in park() */
}

int main(void) {
  corotracer_co *co = corotracer_create(0, "parked", NULL);
#ifdef REBUILT
  printf("%u\n", mix((unsigned)(uintptr_t)co));
#endif
  corotracer_resume(co);
  park(co);
  return corotracer_enabled() ? 0 : 3;
}
