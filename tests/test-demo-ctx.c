/* test-demo-ctx.c - the demo's raw context switch alone (examples/demo/ctx.h),
 * linked against each switch (ctx_<arch>.c and ctx_ucontext.c): a made
 * context starts in its function with its argument on a 16-byte aligned
 * stack; every value a function keeps in callee-saved registers (integer and
 * floating point: more live values than there are such registers) survives
 * switches both ways while the other side fills those registers with its own;
 * a finished context's last switch lands back where it should. Each step is
 * bounded: a switch that goes astray fails here, never hangs (alarm). */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "../examples/demo/ctx.h"
#include "lib/check.h"

#define ROUNDS 1000
#define NV                                                                                         \
  16 /* live values of each kind across a switch (EACH): more than the callee-saved registers */

static struct ctx main_ctx, co_ctx;
static _Alignas(16) unsigned char co_stack[256 * 1024];
/* volatile: values the compiler can neither fold nor recompute after the switch */
static volatile uint64_t salt = 0x9E3779B97F4A7C15ull;
static volatile double fsalt = 1.5;
static int co_started, co_arg_ok, co_aligned, co_rounds;

/* Computes NV integers and NV doubles from seed, keeps them live across one
 * switch from `self` to `other`, and returns how many changed. Separate
 * scalars (no array the compiler could keep in memory), computed from
 * volatiles (nothing it could recompute): the compiler keeps them in
 * callee-saved registers across the call, spilling only what does not fit. */
#define V_INT(i) (seed + (i)) * salt
#define V_FP(i) (double)(seed * 31u + (i)) * fsalt
#define EACH(M)                                                                                    \
  M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)
#define DEF(i)                                                                                     \
  uint64_t a##i = V_INT(i);                                                                        \
  double f##i = V_FP(i);
#define BAD(i) bad += (a##i != V_INT(i)) + (f##i != V_FP(i));
static __attribute__((noinline)) int churn(uint64_t seed, struct ctx *self, struct ctx *other) {
  EACH(DEF)
  ctx_switch(self, other);
  int bad = 0;
  EACH(BAD)
  return bad;
}

static int co_bad;

/* A frame record (x29 / rbp after its push) is 16-aligned iff sp was, as the
 * ABI requires, at the call to this function. */
static __attribute__((noinline)) int frame_aligned(void) {
  return ((uintptr_t)__builtin_frame_address(0) & 15) == 0;
}

static void co_fn(void *arg) {
  co_started = 1;
  co_arg_ok = arg == (void *)&co_ctx;
  co_aligned = frame_aligned();
  for (int r = 0; r < ROUNDS; r++) {
    co_bad += churn(1000003u * (uint64_t)(r + 1), &co_ctx, &main_ctx);
    co_rounds++;
  }
  ctx_exit(&co_ctx, &main_ctx);
}

int main(void) {
  alarm(60); /* a lost switch spins or blocks: SIGALRM fails the test */
  ctx_init_thread(&main_ctx);
  ASSERT_EQ(ctx_make(&co_ctx, co_stack, 100, co_fn, &co_ctx), -1); /* a 100-byte stack */
  /* Odd bounds: ctx_make must align the top itself. */
  ASSERT_EQ(ctx_make(&co_ctx, co_stack + 8, sizeof co_stack - 24, co_fn, &co_ctx), 0);
  int main_bad = 0;
  for (int r = 0; r < ROUNDS; r++) {
    main_bad += churn(7u * (uint64_t)(r + 1), &main_ctx, &co_ctx);
    if (r == 0) {
      ASSERT(co_started); /* the new context ran its function */
      ASSERT(co_arg_ok);  /* with its argument */
      ASSERT(co_aligned); /* on 16-byte aligned frames */
    }
    ASSERT_EQ(co_rounds, r);
  }
  /* The context's last churn returns, it leaves through ctx_exit. */
  ctx_switch(&main_ctx, &co_ctx);
  ASSERT_EQ(co_rounds, ROUNDS); /* it finished */
  ctx_release(&co_ctx);
  ASSERT_EQ(main_bad, 0); /* values changed on the thread's side */
  ASSERT_EQ(co_bad, 0);   /* values changed on the context's side */
  printf("%d rounds of %d integer and %d floating-point values across switches each way: ok\n",
         ROUNDS, NV, NV);
  return 0;
}
