/* rip-pc-generic.h - current instruction address on other CPUs (included by rip.h). */
#ifndef RIP_PC_GENERIC_H
#define RIP_PC_GENERIC_H

#include <stdint.h>

/* No portable way to read the PC inline, so call a function that is never
 * inlined and take its return address: one call per snapshot. The return
 * address points after the call, possibly at the next source line, so it
 * gives ret - 1, an address inside the call instruction; readers then look
 * every snapshot up as-is, whatever the CPU. */
static __attribute__((noinline, unused)) uintptr_t rip_pc_of_caller_(void) {
  return (uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)) - 1;
}

/* The empty asm with site (the caller's __LINE__) as operand follows the call
 * and consumes its result, so two sites' calls are not merged into one. */
#define RIP_CURRENT_PC(pc, site)                                                                   \
  do {                                                                                             \
    (pc) = rip_pc_of_caller_();                                                                    \
    __asm__ __volatile__("" : "+r"(pc) : "i"(site));                                               \
  } while (0)

#endif
