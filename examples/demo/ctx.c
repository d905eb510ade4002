/* ctx.c - the portable half of a context switch: tells ASan and TSan that the
 * stack changes (they would otherwise report false errors or lose track of
 * the stack), and starts a new context through a trampoline. */
#include "ctx.h"

#include <pthread.h>
#include <stdlib.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CTX_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define CTX_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(CTX_ASAN)
#define CTX_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(CTX_TSAN)
#define CTX_TSAN 1
#endif

#ifdef CTX_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define ASAN_START(save, to)                                                                       \
  __sanitizer_start_switch_fiber((save), (to)->stack_lo, (to)->stack_size)
#define ASAN_FINISH(fake) __sanitizer_finish_switch_fiber((fake), NULL, NULL)
/* A reused stack may keep the poisoned redzones of frames that never
 * returned (the previous coroutine's last ones). */
#define ASAN_FRESH_STACK(lo, size) __asan_unpoison_memory_region((lo), (size))
#else
#define ASAN_START(save, to) ((void)(save), (void)(to))
#define ASAN_FINISH(fake) ((void)(fake))
#define ASAN_FRESH_STACK(lo, size) ((void)(lo), (void)(size))
#endif

#ifdef CTX_TSAN
#include <sanitizer/tsan_interface.h>
#define TSAN_SWITCH(to) __tsan_switch_to_fiber((to)->fiber, 0)
#else
#define TSAN_SWITCH(to) ((void)(to))
#endif

void ctx_init_thread(struct ctx *c) {
  pthread_attr_t attr;
  void *lo = NULL;
  size_t size = 0;
  /* ASan needs the bounds of the stack we return to; a failure only costs
   * precision of its reports, so it is not an error. */
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    if (pthread_attr_getstack(&attr, &lo, &size) != 0) {
      lo = NULL;
      size = 0;
    }
    pthread_attr_destroy(&attr);
  }
  *c = (struct ctx){.stack_lo = lo, .stack_size = size};
#ifdef CTX_TSAN
  c->fiber = __tsan_get_current_fiber();
#endif
}

/* First code run on a new stack: finish the switch that brought us here. */
static void ctx_start(void *p) {
  struct ctx *c = p;
  ASAN_FINISH(NULL);
  c->fn(c->arg);
  abort(); /* fn must end with ctx_exit() */
}

int ctx_make(struct ctx *c, void *stack_lo, size_t size, void (*fn)(void *), void *arg) {
  *c = (struct ctx){.stack_lo = stack_lo, .stack_size = size, .fn = fn, .arg = arg};
  ASAN_FRESH_STACK(stack_lo, size);
  c->sp = ctx_raw_make(stack_lo, size, ctx_start, c);
  if (!c->sp)
    return -1;
#ifdef CTX_TSAN
  c->fiber = __tsan_create_fiber(0);
#endif
  return 0;
}

void ctx_switch(struct ctx *from, struct ctx *to) {
  ASAN_START(&from->fake_stack, to);
  TSAN_SWITCH(to);
  ctx_raw_swap(&from->sp, to->sp);
  ASAN_FINISH(from->fake_stack);
}

_Noreturn void ctx_exit(struct ctx *from, struct ctx *to) {
  ASAN_START(NULL, to); /* NULL: this context's fake stack can be freed */
  TSAN_SWITCH(to);
  ctx_raw_swap(&from->sp, to->sp);
  abort(); /* nobody switches back to a finished context */
}

void ctx_release(struct ctx *c) {
#ifdef CTX_TSAN
  if (c->fiber)
    __tsan_destroy_fiber(c->fiber);
#endif
  c->fiber = NULL;
}
