/* rip_load.h - read a rip ring file (raw, gzip or zlib) into per-thread histories. */
#ifndef CT_RIP_LOAD_H
#define CT_RIP_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rip.h"

/* One used record, its ring in chronological order. */
struct ct_rip_thread {
  uint64_t id;                  /* record index: the tid, or the id given to rip_init */
  uint64_t e[RIP_RING_SIZE];    /* e[0..n): snapshots, oldest first (no exit marker) */
  uint8_t n;                    /* snapshots in e[] */
  bool exited;                  /* the ring holds an exit marker */
  char name[RIP_NAME_SIZE + 1]; /* NUL-terminated even when the file's is not */
};

/* The used records of a file, by increasing id. Owned by the caller. */
struct ct_rip_threads {
  struct ct_rip_thread *v;
  size_t n, cap;
};

/* Read path: sniffs gzip and zlib (otherwise raw), checks that the size is a
 * whole number of records, skips records whose ring is all zero, orders each
 * ring (ct_rip_order). A raw file is read through a shared read-only map with
 * one atomic load per entry, so a writer may still be running; a record that
 * cannot be ordered is read again a few times (a writer may be in rip_init)
 * before it counts as corrupt. Returns 0 or -errno (-EINVAL: the content is
 * not a ring file; -ENOMEM; else the failed call's), with a one-line reason
 * (without the file name) in why. Never prints. *out is filled on success and
 * empty on failure. */
int ct_rip_load(const char *path, struct ct_rip_threads *out, char *why, size_t whylen);

void ct_rip_threads_free(struct ct_rip_threads *t);

/* Order one ring (host-order entries, slot order) into t->e, t->n, t->exited.
 * The counter of an entry is its snapshot number mod 256, and slot = number mod
 * 32 up to a constant shift, so sorting by counter (unwrapped after the largest
 * gap) is chronological, even for a ring read while its writer wrapped it.
 * Returns 0, or -EINVAL with the reason in why when slots and counters
 * disagree. */
int ct_rip_order(const uint64_t ring[RIP_RING_SIZE], struct ct_rip_thread *t, char *why,
                 size_t whylen);

#endif
