/* rip-pc-aarch64.h - current instruction address on AArch64 (included by rip.h). */
#ifndef RIP_PC_AARCH64_H
#define RIP_PC_AARCH64_H

/* pc = the address of this very adr ("." is the instruction itself): one
 * instruction, no call. site: as on x86-64, keeps sites apart. */
#define RIP_CURRENT_PC(pc, site) __asm__ __volatile__("adr %0, ." : "=r"(pc) : "i"(site))

#endif
