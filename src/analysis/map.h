/* map.h - open-addressing hash map from a 128-bit key to a fixed-size value,
 * the one container of the report's bounded state (coroutines, sites, fds...).
 * Module code: never prints; returns NULL / -errno on allocation failure. */
#ifndef CT_ANALYSIS_MAP_H
#define CT_ANALYSIS_MAP_H

#include <stddef.h>
#include <stdint.h>

struct ct_map {
  uint64_t *slot;             /* per slot: 0 empty, else hash tag << 32 | (dense index + 1) */
  char *ents;                 /* entries, dense, in insertion order: key (2 x u64), value */
  size_t cap, n, vsize, vcap; /* slots, entries, value size, room for entries */
  size_t stride;              /* bytes per entry: 16 + vsize, rounded up to 8 */
  size_t min_cap;             /* ct_map_filter shrinks no further (a power of two; 64 by default) */
};

/* An empty map of values of vsize bytes (no allocation until the first put). */
void ct_map_init(struct ct_map *m, size_t vsize);
void ct_map_free(struct ct_map *m);

/* The value of (a, b), or NULL when absent. */
void *ct_map_get(const struct ct_map *m, uint64_t a, uint64_t b);

/* The value of (a, b), inserted zero-filled when absent (*fresh = 1 then).
 * NULL when memory runs out. Pointers into the map are invalidated by the
 * next insertion or filter. */
void *ct_map_put(struct ct_map *m, uint64_t a, uint64_t b, int *fresh);

/* Hints for a ct_map_get or ct_map_put of (a, b) a little later, when the
 * table is larger than the cache (a trace's next lines name coroutines spread
 * over all of it): ct_map_prefetch starts bringing its index slot into the
 * cache; some lines later, ct_map_prefetch_entry reads that slot and starts
 * bringing the entry (its key and first bytes). Neither changes the map. */
void ct_map_prefetch(const struct ct_map *m, uint64_t a, uint64_t b);
void ct_map_prefetch_entry(const struct ct_map *m, uint64_t a, uint64_t b);

/* Keeps only the entries for which keep(ctx, value) is true, in a table sized
 * for them (but no smaller than min_cap: a map that is filtered again and again
 * would otherwise grow back through every size each time); returns 0 or
 * -ENOMEM (the map is then unchanged). */
int ct_map_filter(struct ct_map *m, int (*keep)(void *ctx, const void *val), void *ctx);

/* Iteration: for (size_t i = 0; i < m->n; i++) ct_map_at(m, i). */
static inline void *ct_map_at(const struct ct_map *m, size_t i) {
  return m->ents + i * m->stride + 2 * sizeof(uint64_t);
}

#endif
