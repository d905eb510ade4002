/* probe-noinline.c - linked into test-probe (not a test of its own): the
 * same calls through the library's exported plain names, without the header's
 * inline wrappers, as dlsym and FFI callers make them. */
#define COROTRACER_NO_INLINE
#include <stdint.h>

#include "corotracer.h"

void ct_test_plain_calls(corotracer_co *co, corotracer_co *null);

/* Contract: co is a traced handle, null is NULL. Writes resume, suspend (default
 * site: inside this function, fd 9), wake (site 0x99), then a switch from co to
 * co (suspend and wake, default site, and resume) into co, and makes the same
 * calls on null, which must do nothing. */
__attribute__((noinline)) void ct_test_plain_calls(corotracer_co *co, corotracer_co *null) {
  corotracer_resume(null);
  corotracer_suspend(null, 0, COROTRACER_WAIT_NONE, 0);
  corotracer_wake(null, 0);
  corotracer_destroy(null);
  corotracer_switch(null, 0, COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, null);
  corotracer_resume(co);
  corotracer_suspend(co, 0, COROTRACER_WAIT_FD, 9);
  __asm__ volatile("" ::: "memory");
  corotracer_wake(co, (const void *)(uintptr_t)0x99);
  __asm__ volatile("" ::: "memory");
  corotracer_switch(co, 0, COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, co);
  __asm__ volatile("" ::: "memory"); /* no tail call: the sites must stay in this function */
}
