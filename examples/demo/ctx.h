/* ctx.h - execution contexts for the demo scheduler: make a context on a
 * stack, switch between contexts, with the sanitizers told about each switch.
 *
 * ctx.c holds the portable part (sanitizer annotations, the start trampoline);
 * one of ctx_x86_64.c, ctx_aarch64.c or ctx_ucontext.c provides the raw switch
 * (chosen by examples/demo/build.mk). */
#ifndef DEMO_CTX_H
#define DEMO_CTX_H

#include <stddef.h>

struct ctx {
  void *sp;             /* raw handle: saved stack pointer (asm) or ucontext_t * */
  const void *stack_lo; /* lowest usable address of this context's stack (ASan) */
  size_t stack_size;    /* its size in bytes (ASan) */
  void *fake_stack;     /* ASan's fake stack saved while switched out */
  void *fiber;          /* TSan's fiber for this context */
  void (*fn)(void *);   /* entry of a made context */
  void *arg;
};

/* Describe the calling thread's own context (a worker's scheduler loop), so
 * contexts made with ctx_make can switch back to it. */
void ctx_init_thread(struct ctx *c);

/* Prepare c to run fn(arg) on [stack_lo, stack_lo + size) at its first
 * ctx_switch. fn must never return: it ends with ctx_exit(). Returns 0, or -1
 * when the stack is too small. */
int ctx_make(struct ctx *c, void *stack_lo, size_t size, void (*fn)(void *), void *arg);

/* Save the running context into from and continue to. Returns when someone
 * switches back to from (possibly on another thread). */
void ctx_switch(struct ctx *from, struct ctx *to);

/* Last switch out of a context that will never run again (its stack may be
 * unmapped afterwards by whoever runs `to`). Does not return. */
_Noreturn void ctx_exit(struct ctx *from, struct ctx *to);

/* Release what ctx_make allocated for c (not the stack). c must not be running. */
void ctx_release(struct ctx *c);

/* Raw, platform-specific part (ctx_<arch>.c). ctx_raw_make returns the handle
 * that resumes entry(arg) on the stack; ctx_raw_swap stores the running
 * context's handle into *save and resumes `to`. */
void *ctx_raw_make(void *stack_lo, size_t size, void (*entry)(void *), void *arg);
void ctx_raw_swap(void **save, void *to);

#endif
