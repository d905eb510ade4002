/* map.c - open addressing with linear probing; no deletion except by rebuild. */
#include "analysis/map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ct_map_init(struct ct_map *m, size_t vsize) { *m = (struct ct_map){.vsize = vsize, .min_cap = 64}; }

void ct_map_free(struct ct_map *m) {
  free(m->keys);
  free(m->used);
  free(m->vals);
  size_t min_cap = m->min_cap;
  ct_map_init(m, m->vsize);
  m->min_cap = min_cap;
}

static size_t slot_of(uint64_t a, uint64_t b, size_t cap) {
  uint64_t h = (a ^ (b * 0xC2B2AE3D27D4EB4Full)) * 0x9E3779B97F4A7C15ull;
  return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

void *ct_map_get(const struct ct_map *m, uint64_t a, uint64_t b) {
  if (!m->cap) return NULL;
  for (size_t i = slot_of(a, b, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (!m->used[i]) return NULL;
    if (m->keys[2 * i] == a && m->keys[2 * i + 1] == b) return ct_map_at(m, i);
  }
}

/* Moves every entry of m accepted by keep into a table of ncap slots. */
static int rebuild(struct ct_map *m, size_t ncap, int (*keep)(void *, const void *), void *ctx) {
  struct ct_map t = {.vsize = m->vsize, .cap = ncap, .min_cap = m->min_cap};
  t.keys = malloc(ncap * 2 * sizeof *t.keys);
  t.used = calloc(ncap, 1);
  t.vals = malloc(ncap * m->vsize);
  if (!t.keys || !t.used || !t.vals) {
    ct_map_free(&t);
    return -ENOMEM;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->used[i] || (keep && !keep(ctx, ct_map_at(m, i)))) continue;
    size_t j = slot_of(m->keys[2 * i], m->keys[2 * i + 1], ncap);
    while (t.used[j]) j = (j + 1) & (ncap - 1);
    t.used[j] = 1;
    t.keys[2 * j] = m->keys[2 * i];
    t.keys[2 * j + 1] = m->keys[2 * i + 1];
    memcpy(ct_map_at(&t, j), ct_map_at(m, i), m->vsize);
    t.n++;
  }
  ct_map_free(m);
  *m = t;
  return 0;
}

void *ct_map_put(struct ct_map *m, uint64_t a, uint64_t b, int *fresh) {
  *fresh = 0;
  void *v = ct_map_get(m, a, b);
  if (v) return v;
  if ((m->n + 1) * 4 > m->cap * 3 && rebuild(m, m->cap ? m->cap * 2 : 64, NULL, NULL)) return NULL;
  size_t i = slot_of(a, b, m->cap);
  while (m->used[i]) i = (i + 1) & (m->cap - 1);
  m->used[i] = 1;
  m->keys[2 * i] = a;
  m->keys[2 * i + 1] = b;
  m->n++;
  *fresh = 1;
  v = ct_map_at(m, i);
  memset(v, 0, m->vsize);
  return v;
}

int ct_map_filter(struct ct_map *m, int (*keep)(void *ctx, const void *val), void *ctx) {
  if (!m->cap) return 0;
  size_t kept = 0;
  for (size_t i = 0; i < m->cap; i++) kept += m->used[i] && keep(ctx, ct_map_at(m, i));
  size_t cap = m->min_cap; /* shrink: memory follows what is kept, not what was */
  while (kept * 2 > cap) cap *= 2;
  return rebuild(m, cap, keep, ctx);
}
