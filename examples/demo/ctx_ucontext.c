/* ctx_ucontext.c - portable raw context switch on getcontext/makecontext/
 * swapcontext, for architectures without a hand-written switch (and to test
 * the scheduler against a switch we did not write). Slower: swapcontext
 * saves the signal mask with a system call. */
#include "ctx.h"

#include <stdint.h>
#include <ucontext.h>

/* A thread's own context (a worker loop) has no ucontext of its own yet when
 * it first switches away; it is saved here. */
static _Thread_local ucontext_t tls_thread_uc;

/* makecontext passes int arguments only: the pointer travels in two halves. */
/* getcontext returns twice; kept out of ctx_raw_make so its locals are not at
 * risk (makecontext replaces the saved context anyway). */
static __attribute__((noinline)) int uc_get(ucontext_t *uc) {
  return getcontext(uc);
}

static void ctx_uc_entry(unsigned hi, unsigned lo, unsigned ehi, unsigned elo) {
  void *arg = (void *)(uintptr_t)(((uint64_t)hi << 32) | lo);
  void (*entry)(void *) = (void (*)(void *))(uintptr_t)(((uint64_t)ehi << 32) | elo);
  entry(arg);
}

/* See ctx.h: the handle is a ucontext_t carved from the top of the stack. */
void *ctx_raw_make(void *stack_lo, size_t size, void (*entry)(void *), void *arg) {
  if (size < sizeof(ucontext_t) + 4096)
    return (void *)0;
  /* The ucontext lives at the top of the coroutine's own stack. */
  uintptr_t top = ((uintptr_t)stack_lo + size - sizeof(ucontext_t)) & ~(uintptr_t)63;
  ucontext_t *uc = (ucontext_t *)top;
  if (uc_get(uc) != 0)
    return (void *)0;
  uc->uc_stack.ss_sp = stack_lo;
  uc->uc_stack.ss_size = top - (uintptr_t)stack_lo;
  uc->uc_link = (void *)0;
  uint64_t a = (uint64_t)(uintptr_t)arg, e = (uint64_t)(uintptr_t)entry;
  makecontext(uc, (void (*)(void))ctx_uc_entry, 4, (unsigned)(a >> 32), (unsigned)a,
              (unsigned)(e >> 32), (unsigned)e);
  return uc;
}

/* See ctx.h: a coroutine saves into its own ucontext, a thread into its TLS one. */
void ctx_raw_swap(void **save, void *to) {
  if (!*save)
    *save = &tls_thread_uc;
  swapcontext(*save, to);
}
