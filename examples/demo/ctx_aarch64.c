/* ctx_aarch64.c - raw context switch for AArch64 (AAPCS64): saves x19-x30 and
 * d8-d15 on the stack and swaps stack pointers. */
#include "ctx.h"

#include <stdint.h>

/* Frame on a suspended stack (176 bytes, 16-aligned), from sp up:
 *   x19..x28 at 0..72, x29 at 80, x30 (return address) at 88, d8..d15 at 96..152 */
__asm__(".text\n"
        ".globl ctx_raw_swap\n"
        ".hidden ctx_raw_swap\n"
        ".type ctx_raw_swap,%function\n"
        ".p2align 4\n"
        "ctx_raw_swap:\n"
        "  .cfi_startproc\n"
        "  sub sp, sp, #176\n"
        "  stp x19, x20, [sp, #0]\n"
        "  stp x21, x22, [sp, #16]\n"
        "  stp x23, x24, [sp, #32]\n"
        "  stp x25, x26, [sp, #48]\n"
        "  stp x27, x28, [sp, #64]\n"
        "  stp x29, x30, [sp, #80]\n"
        "  stp d8, d9, [sp, #96]\n"
        "  stp d10, d11, [sp, #112]\n"
        "  stp d12, d13, [sp, #128]\n"
        "  stp d14, d15, [sp, #144]\n"
        "  mov x2, sp\n"
        "  str x2, [x0]\n"
        "  mov sp, x1\n"
        "  ldp x19, x20, [sp, #0]\n"
        "  ldp x21, x22, [sp, #16]\n"
        "  ldp x23, x24, [sp, #32]\n"
        "  ldp x25, x26, [sp, #48]\n"
        "  ldp x27, x28, [sp, #64]\n"
        "  ldp x29, x30, [sp, #80]\n"
        "  ldp d8, d9, [sp, #96]\n"
        "  ldp d10, d11, [sp, #112]\n"
        "  ldp d12, d13, [sp, #128]\n"
        "  ldp d14, d15, [sp, #144]\n"
        "  add sp, sp, #176\n"
        "  ret\n"
        "  .cfi_endproc\n"
        ".size ctx_raw_swap,.-ctx_raw_swap\n"
        /* A new context lands here with entry in x19 and its argument in x20;
         * sp is the 16-aligned top of its stack, as a call requires. */
        ".globl ctx_raw_entry\n"
        ".hidden ctx_raw_entry\n"
        ".type ctx_raw_entry,%function\n"
        ".p2align 4\n"
        "ctx_raw_entry:\n"
        "  .cfi_startproc\n"
        "  .cfi_undefined x30\n"
        "  mov x0, x20\n"
        "  blr x19\n"
        "  brk #0\n"
        "  .cfi_endproc\n"
        ".size ctx_raw_entry,.-ctx_raw_entry\n");

/* Hidden, here and in the asm: the address must be taken PC-relative
 * (adrp+add). Declared plainly, -fPIC loads it from a GOT slot, and for a
 * file-local asm label the assembler writes that GOT relocation against
 * ".text+offset"; GNU ld's AArch64 GOT entries ignore the offset, so the slot
 * held ctx_raw_swap's address and every new context "returned" into
 * ctx_raw_swap, switching to itself forever (issue #15). */
__attribute__((visibility("hidden"))) void ctx_raw_entry(void);

/* See ctx.h: the first switch to the returned stack pointer "returns" into
 * ctx_raw_entry, which calls entry(arg). */
void *ctx_raw_make(void *stack_lo, size_t size, void (*entry)(void *), void *arg) {
  if (size < 512)
    return (void *)0;
  uintptr_t top = ((uintptr_t)stack_lo + size) & ~(uintptr_t)15;
  uint64_t *f = (uint64_t *)(top - 176);
  for (int i = 0; i < 22; i++)
    f[i] = 0;                                 /* x29 = 0 ends frame-pointer walks */
  f[0] = (uint64_t)(uintptr_t)entry;          /* x19 */
  f[1] = (uint64_t)(uintptr_t)arg;            /* x20 */
  f[11] = (uint64_t)(uintptr_t)ctx_raw_entry; /* x30 */
  return f;
}
