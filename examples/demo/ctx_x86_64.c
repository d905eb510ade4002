/* ctx_x86_64.c - raw context switch for x86-64 (System V ABI): saves the
 * callee-saved registers, MXCSR and the x87 control word on the stack and
 * swaps stack pointers. */
#include "ctx.h"

#include <stdint.h>

/* Frame on a suspended stack, from the saved stack pointer up:
 *   [0] mxcsr (low 4 bytes) | x87 cw (next 2)   [1] r15  [2] r14  [3] r13
 *   [4] r12  [5] rbx  [6] rbp  [7] return address */
__asm__(".text\n"
        ".globl ctx_raw_swap\n"
        ".hidden ctx_raw_swap\n"
        ".type ctx_raw_swap,@function\n"
        ".p2align 4\n"
        "ctx_raw_swap:\n"
        "  .cfi_startproc\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  subq $8, %rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  addq $8, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        "  .cfi_endproc\n"
        ".size ctx_raw_swap,.-ctx_raw_swap\n"
        /* A new context lands here with entry in r12 and its argument in r13;
         * the stack is 16-byte aligned, as a call requires. */
        ".type ctx_raw_entry,@function\n"
        ".p2align 4\n"
        "ctx_raw_entry:\n"
        "  .cfi_startproc\n"
        "  .cfi_undefined rip\n"
        "  movq %r13, %rdi\n"
        "  callq *%r12\n"
        "  ud2\n"
        "  .cfi_endproc\n"
        ".size ctx_raw_entry,.-ctx_raw_entry\n");

void ctx_raw_entry(void);

/* See ctx.h: the first switch to the returned stack pointer "returns" into
 * ctx_raw_entry, which calls entry(arg). */
void *ctx_raw_make(void *stack_lo, size_t size, void (*entry)(void *), void *arg) {
  if (size < 256)
    return (void *)0;
  uintptr_t top = ((uintptr_t)stack_lo + size) & ~(uintptr_t)15;
  uint64_t *f = (uint64_t *)(top - 8 * sizeof(uint64_t));
  uint32_t mxcsr;
  uint16_t cw;
  /* Start with the creator's floating-point modes, as a new thread would. */
  __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
  __asm__ volatile("fnstcw %0" : "=m"(cw));
  f[0] = (uint64_t)mxcsr | ((uint64_t)cw << 32);
  f[1] = 0;                          /* r15 */
  f[2] = 0;                          /* r14 */
  f[3] = (uint64_t)(uintptr_t)arg;   /* r13 */
  f[4] = (uint64_t)(uintptr_t)entry; /* r12 */
  f[5] = 0;                          /* rbx */
  f[6] = 0;                          /* rbp: ends frame-pointer walks */
  f[7] = (uint64_t)(uintptr_t)ctx_raw_entry;
  return f;
}
