/* flight_ring.h - the flight window's memory: one mapping its chunks fill in
 * the order they join and leave in that order (flight_ring.c). */
#ifndef CT_ENGINE_FLIGHT_RING_H
#define CT_ENGINE_FLIGHT_RING_H

#include <stddef.h>
#include <stdint.h>

/* Blocks of at most max_block bytes, taken at tail and given back at head:
 * [head, tail) is in use, or [head, end) and [0, tail) once it wrapped. */
struct ct_fring {
  uint8_t *base;
  size_t cap, max_block;
  size_t head, tail, end;
  size_t live; /* blocks taken and not given back */
  int wrapped;
};

/* A ring for blocks whose costs (CT_FRING_SIZE of each) total at most
 * bytes, each at most max_block: room for such a block is found whenever the
 * blocks in use and it fit within bytes. Maps bytes + max_block, touched only
 * as blocks use it. 0 or -errno. */
int ct_fring_init(struct ct_fring *r, size_t bytes, size_t max_block);
/* Unmap it (blocks still taken become invalid); r is then empty. */
void ct_fring_free(struct ct_fring *r);
/* What a block of n bytes takes of the ring. */
#define CT_FRING_SIZE(n) (((n) + 15u) & ~(size_t)15u)
/* A block of n bytes (16-aligned), or NULL: n past max_block, or no room. */
void *ct_fring_take(struct ct_fring *r, size_t n);
/* Give back p, of n bytes: the oldest block taken (blocks leave in order). */
void ct_fring_give(struct ct_fring *r, void *p, size_t n);
/* 1 when p is a block of r's. */
int ct_fring_owns(const struct ct_fring *r, const void *p);

#endif
