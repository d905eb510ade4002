/* flight_ring.c - the flight window's memory (flight_ring.h). The window's
 * chunks came from malloc, each of its own size, the live findings' copies
 * between them: as the window turned, the holes they left grew the
 * formatter's heap by ~0.3 MB a minute in the soak, free bytes never used
 * again in whole (issue #34 item 13). A ring the chunks fill in order and
 * leave in order has no holes: its memory is the window's, touched once. */
#include "engine/flight_ring.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

int ct_fring_init(struct ct_fring *r, size_t bytes, size_t max_block) {
  memset(r, 0, sizeof *r);
  max_block = CT_FRING_SIZE(max_block);
  size_t cap = CT_FRING_SIZE(bytes) + max_block;
  if (cap < max_block)
    return -EOVERFLOW;
  /* Pages are faulted in as the first lap reaches them, not reserved. */
  void *p =
      mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return -errno;
  /* Not in the program's fork (best effort): nothing of it is the child's.
   * Not in huge pages: tried, a 3 s seedclaim run's window cleared in 2 MiB
   * pages took the engine twice its CPU (in a VM a fresh huge page's
   * clearing costs far more than its 512 small pages', as sink.c found). */
  (void)madvise(p, cap, MADV_DONTFORK);
  r->base = p;
  r->cap = cap;
  r->max_block = max_block;
  return 0;
}

void ct_fring_free(struct ct_fring *r) {
  if (r->base)
    munmap(r->base, r->cap);
  memset(r, 0, sizeof *r);
}

/* Why room is always found (flight_ring.h): with u bytes in use, w wasted
 * at the end before a wrap (w < max_block: a block that did not fit there)
 * and u + n <= bytes, the free bytes cap - u - w exceed n + max_block - w,
 * so n: unwrapped, at the end or else at the start (the end's free bytes
 * are then under n); wrapped, between tail and head. */
void *ct_fring_take(struct ct_fring *r, size_t n) {
  n = CT_FRING_SIZE(n);
  if (!r->base || n > r->max_block)
    return NULL;
  if (!r->live)
    r->head = r->tail = 0, r->wrapped = 0;
  size_t at;
  if (!r->wrapped && r->cap - r->tail >= n) {
    at = r->tail;
  } else if (!r->wrapped && r->head > n) { /* strictly: tail == head means empty */
    r->end = r->tail;
    r->wrapped = 1;
    at = 0;
  } else if (r->wrapped && r->head - r->tail > n) {
    at = r->tail;
  } else {
    return NULL;
  }
  r->tail = at + n;
  r->live++;
  return r->base + at;
}

void ct_fring_give(struct ct_fring *r, void *p, size_t n) {
  if (!r->live || (uint8_t *)p != r->base + r->head)
    return; /* not the oldest: a caller's bug, the ring left as it is */
  r->head += CT_FRING_SIZE(n);
  r->live--;
  if (r->wrapped && r->head >= r->end) {
    r->head = 0;
    r->wrapped = 0;
  }
}

int ct_fring_owns(const struct ct_fring *r, const void *p) {
  const uint8_t *q = p;
  return r->base && q >= r->base && q < r->base + r->cap;
}
