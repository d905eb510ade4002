/* rip.h - librip-compatible instruction-pointer snapshot rings.
 *
 * Source-compatible with Fastly's librip: a program written against librip.h
 * builds against this header unchanged, and, like librip, links nothing (the
 * writer is header-only, include/rip-writer.h). Each thread (or
 * coroutine, or any "concurrent process" id) owns one record in a file mapped
 * shared, ideally on tmpfs; rip_snap() stores the address of its call site in
 * the record's 32-entry ring. `corotracer rip -e EXE -r FILE` shows where every
 * thread is and was, while the program runs, hangs, or after it died.
 *
 * Storage: as in librip, the consumer defines the per-thread state and the ring
 * pointer, once, in one translation unit:
 *
 *     RIP_DEFINE_STORAGE;
 *
 * which expands to the librip definitions of rip_tid, rip_idx, rip_ctr and
 * rip_ring.
 *
 * File layout (docs/RIP.md): record i (320 bytes) at offset i * 320 = 64-byte
 * NUL-terminated name + 32 little-endian u64 entries; entry = (counter << 56) |
 * 56-bit address, 0 = unused, 2^64-1 = exit marker. Beyond librip,
 * rip_create_ring() also writes the process's executable mappings next to the
 * ring, in "<file>.maps", so PIE executables and shared libraries symbolize;
 * the ring file itself is byte-for-byte librip's.
 *
 * Threads: rip_snap() and rip_exit() touch only the caller's record with
 * relaxed atomic 64-bit stores, so a reader in another process sees each entry
 * old or new, never torn; the reader orders entries by their counters, so no
 * store ordering is needed. Ids must be below the max_procs given to
 * rip_create_ring() (tids are below pid_max, the default).
 *
 * Requires GCC or Clang (inline asm, __atomic builtins). x86-64 and AArch64
 * capture the address with one instruction; other CPUs with one call.
 */
#ifndef RIP_H
#define RIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#if defined(RIP_GENERIC_PC) /* force the portable capture (tests) */
#include "rip-pc-generic.h"
#elif defined(__x86_64__)
#include "rip-pc-x86_64.h"
#elif defined(__aarch64__)
#include "rip-pc-aarch64.h"
#else
#include "rip-pc-generic.h"
#endif

#ifdef __cplusplus
extern "C" {
#elif !defined(thread_local) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L &&        \
    __STDC_VERSION__ < 202311L
/* What C11's <threads.h> defines; C23 and C++ have the keyword. */
#define thread_local _Thread_local
#elif !defined(thread_local) && (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L)
#define thread_local __thread /* GNU C before C11, as in librip */
#endif

#define RIP_API __attribute__((visibility("default")))

#define RIP_NAME_SIZE 64 /* bytes of a record's name, NUL included */
#define RIP_RING_SIZE 32 /* entries of a record's ring */
#define RIP_RECORD_SIZE 320
#define RIP_CTR_SHIFT 56
#define RIP_ADDR_MASK ((UINT64_C(1) << RIP_CTR_SHIFT) - 1)
#define RIP_EXIT_MARKER UINT64_MAX

/* Entries are little-endian in the file whatever the CPU, as librip's readers
 * expect. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define RIP_LE64(v) __builtin_bswap64(v)
#else
#define RIP_LE64(v) (v)
#endif

/* One record of the file. librip declared rip[] as uintptr_t; the file holds
 * u64 entries, so they are u64 here on every CPU. */
struct rip_ring {
  char name[RIP_NAME_SIZE];
  uint64_t rip[RIP_RING_SIZE];
};
typedef char rip_record_size_check_[sizeof(struct rip_ring) == RIP_RECORD_SIZE ? 1 : -1];

/* Per-thread state and the mapped file: storage defined by the consumer.
 * Exported (default visibility) so that shared libraries of the program that
 * snapshot share them, even when the program builds with -fvisibility=hidden. */
RIP_API extern thread_local pid_t rip_tid;
RIP_API extern thread_local uint8_t rip_idx;
RIP_API extern thread_local uint8_t rip_ctr;
RIP_API extern struct rip_ring *rip_ring;

#define RIP_DEFINE_STORAGE                                                                         \
  thread_local pid_t rip_tid;                                                                      \
  thread_local uint8_t rip_idx;                                                                    \
  thread_local uint8_t rip_ctr;                                                                    \
  struct rip_ring *rip_ring

/* Create (or reuse) file, size it to max_procs records (0: the system's
 * pid_max), map it shared and write "<file>.maps" (the executable mappings of
 * this process). Records of an existing file are kept, as in librip. Returns
 * the mapping, never unmapped (threads may still snap into it), or NULL with
 * errno set; on failure nothing stays open or mapped. Call once, before the
 * threads that snap start. */
static inline struct rip_ring *rip_map_ring(const char *file, uint32_t max_procs);

/* Rewrite "<file>.maps" of the last successful rip_map_ring(): call after
 * dlopen() so snapshots in the new library symbolize. Returns false with errno
 * set on failure (the previous map stays in place). Thread-safe. */
static inline bool rip_update_maps(void);

/* The calling thread's kernel id (gettid), the record rip_init(0, ...) uses. */
static inline pid_t rip_gettid(void);

/* Records in the ring of the last successful rip_map_ring(), 0 before. */
static inline uint64_t rip_record_count(void);

/* The writer's code (header-only: a program links nothing for rip). */
#include "rip-writer.h"

/* librip's rip_create_ring(): rip_map_ring() into the consumer's rip_ring.
 * Returns false with errno set on failure (rip_ring is then left as it was). */
static inline bool rip_create_ring(const char *file, uint32_t max_procs) {
  struct rip_ring *r = rip_map_ring(file, max_procs);
  if (r == NULL)
    return false;
  rip_ring = r;
  return true;
}

/* Claim record id (0: the calling thread's tid) for the calling thread: clear
 * its ring, store name (at most 63 bytes of it, NUL-terminated; NULL keeps it
 * empty) and start numbering at idx and ctr (non-zero values let a coroutine
 * resume its numbering). An id the ring has no record for (librip wrote past
 * the mapping) gets record 0, which no thread owns (no tid is 0): threads
 * beyond the ring's capacity share it as an overflow record, unnamed. */
static inline void rip_init(pid_t id, const char *name, size_t namelen, uint8_t idx, uint8_t ctr) {
  /* Declarations first: the header also builds as C89/gnu89, as librip's. */
  struct rip_ring *r;
  size_t len = namelen < RIP_NAME_SIZE - 1 ? namelen : RIP_NAME_SIZE - 1;
  int i;
  if (id == 0)
    id = rip_gettid();
  if (id < 0 || (uint64_t)id >= rip_record_count()) {
    id = 0;
    name = NULL;
  }
  r = &rip_ring[id];
  for (i = 0; i < RIP_RING_SIZE; i++)
    __atomic_store_n(&r->rip[i], 0, __ATOMIC_RELAXED);
  memset(r->name, 0, sizeof r->name);
  if (name != NULL)
    memcpy(r->name, name, len);
  rip_tid = id;
  rip_idx = idx;
  rip_ctr = ctr;
}

/* Mark the calling thread's record as exited (the reader hides it unless -v).
 * The counter is not advanced, as in librip. */
static inline __attribute__((always_inline)) void rip_exit(void) {
  __atomic_store_n(&rip_ring[rip_tid].rip[rip_idx++ & (RIP_RING_SIZE - 1)], RIP_EXIT_MARKER,
                   __ATOMIC_RELAXED);
}

/* Store (counter << 56) | pc in the calling thread's ring: rip_snap() after
 * the address capture. */
static inline __attribute__((always_inline)) uintptr_t rip_store_(uintptr_t pc) {
  uint64_t entry = ((uint64_t)rip_ctr++ << RIP_CTR_SHIFT) | ((uint64_t)pc & RIP_ADDR_MASK);
  __atomic_store_n(&rip_ring[rip_tid].rip[rip_idx++ & (RIP_RING_SIZE - 1)], RIP_LE64(entry),
                   __ATOMIC_RELAXED);
  return pc;
}

/* Store (counter << 56) | address of this call site in the calling thread's
 * ring and evaluate to the address (uintptr_t). No syscall, no lock, a few
 * instructions. Called as in librip: `rip_snap();` or `pc = rip_snap();`.
 *
 * A macro, where librip has an inline function, for the reader's sake: an
 * inlined function's instructions carry the line of its own body in the debug
 * info, so the capture is expanded in the caller to name the caller's
 * file:line; and the caller's __LINE__ is an operand of the capture, so the
 * optimizer cannot merge the captures of two sites into one address. */
#define rip_snap()                                                                                 \
  __extension__({                                                                                  \
    uintptr_t rip_pc_;                                                                             \
    RIP_CURRENT_PC(rip_pc_, __LINE__);                                                             \
    rip_store_(rip_pc_);                                                                           \
  })

#ifdef __cplusplus
}
#endif

#endif
