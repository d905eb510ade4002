/* rip-pc-x86_64.h - current instruction address on x86-64 (included by rip.h). */
#ifndef RIP_PC_X86_64_H
#define RIP_PC_X86_64_H

/* pc = the address of this very lea, one instruction, no call, no memory
 * access. Not "leaq 0(%rip)" (librip's), which gives the address of the next
 * instruction, and that one may belong to another source line. site (an
 * integer constant, the caller's __LINE__) is an unused operand that makes the
 * captures of different sites different instructions for the optimizer, which
 * would otherwise merge identical volatile asm. */
#define RIP_CURRENT_PC(pc, site)                                                                   \
  __asm__ __volatile__("1: leaq 1b(%%rip), %0" : "=r"(pc) : "i"(site))

#endif
