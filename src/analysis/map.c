/* map.c - open addressing with linear probing over an index table; values
 * (and a copy of their keys) live densely in insertion order, so memory
 * follows the entries, not the table's capacity, and a filter compacts them in
 * place. No deletion except by filter. */
#include "analysis/map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ct_map_init(struct ct_map *m, size_t vsize) {
  *m = (struct ct_map){.vsize = vsize, .min_cap = 64};
}

void ct_map_free(struct ct_map *m) {
  free(m->keys);
  free(m->slot);
  free(m->vals);
  free(m->dkeys);
  size_t min_cap = m->min_cap;
  ct_map_init(m, m->vsize);
  m->min_cap = min_cap;
}

static size_t slot_of(uint64_t a, uint64_t b, size_t cap) {
  uint64_t h = (a ^ (b * 0xC2B2AE3D27D4EB4Full)) * 0x9E3779B97F4A7C15ull;
  return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

void *ct_map_get(const struct ct_map *m, uint64_t a, uint64_t b) {
  if (!m->cap)
    return NULL;
  for (size_t i = slot_of(a, b, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (!m->slot[i])
      return NULL;
    if (m->keys[2 * i] == a && m->keys[2 * i + 1] == b)
      return ct_map_at(m, m->slot[i] - 1);
  }
}

/* A new index table of ncap slots over the dense entries. */
static int reindex(struct ct_map *m, size_t ncap) {
  uint64_t *keys = malloc(ncap * 2 * sizeof *keys);
  uint32_t *slot = calloc(ncap, sizeof *slot);
  if (!keys || !slot) {
    free(keys);
    free(slot);
    return -ENOMEM;
  }
  for (size_t k = 0; k < m->n; k++) {
    uint64_t a = m->dkeys[2 * k], b = m->dkeys[2 * k + 1];
    size_t j = slot_of(a, b, ncap);
    while (slot[j])
      j = (j + 1) & (ncap - 1);
    slot[j] = (uint32_t)k + 1;
    keys[2 * j] = a;
    keys[2 * j + 1] = b;
  }
  free(m->keys);
  free(m->slot);
  m->keys = keys;
  m->slot = slot;
  m->cap = ncap;
  return 0;
}

/* Room for vcap dense entries. */
static int resize_dense(struct ct_map *m, size_t vcap) {
  char *vals = realloc(m->vals, vcap * m->vsize);
  if (!vals)
    return -ENOMEM;
  m->vals = vals;
  uint64_t *dkeys = realloc(m->dkeys, vcap * 2 * sizeof *dkeys);
  if (!dkeys)
    return -ENOMEM; /* vals is larger than needed: harmless */
  m->dkeys = dkeys;
  m->vcap = vcap;
  return 0;
}

void *ct_map_put(struct ct_map *m, uint64_t a, uint64_t b, int *fresh) {
  *fresh = 0;
  void *v = ct_map_get(m, a, b);
  if (v)
    return v;
  if (m->n >= UINT32_MAX - 1)
    return NULL;
  if ((m->n + 1) * 4 > m->cap * 3 && reindex(m, m->cap ? m->cap * 2 : m->min_cap))
    return NULL;
  if (m->n == m->vcap && resize_dense(m, m->vcap ? m->vcap * 2 : 16))
    return NULL;
  size_t i = slot_of(a, b, m->cap);
  while (m->slot[i])
    i = (i + 1) & (m->cap - 1);
  m->slot[i] = (uint32_t)m->n + 1;
  m->keys[2 * i] = a;
  m->keys[2 * i + 1] = b;
  m->dkeys[2 * m->n] = a;
  m->dkeys[2 * m->n + 1] = b;
  v = ct_map_at(m, m->n++);
  *fresh = 1;
  memset(v, 0, m->vsize);
  return v;
}

int ct_map_filter(struct ct_map *m, int (*keep)(void *ctx, const void *val), void *ctx) {
  if (!m->cap)
    return 0;
  size_t kept = 0;
  for (size_t k = 0; k < m->n; k++)
    kept += (size_t)(keep(ctx, ct_map_at(m, k)) != 0);
  size_t cap = m->min_cap; /* shrink: memory follows what is kept, not what was */
  while (kept * 2 > cap)
    cap *= 2;
  /* The new index first: on failure the map is unchanged. */
  uint64_t *keys = malloc(cap * 2 * sizeof *keys);
  uint32_t *slot = calloc(cap, sizeof *slot);
  if (!keys || !slot) {
    free(keys);
    free(slot);
    return -ENOMEM;
  }
  size_t j = 0;
  for (size_t k = 0; k < m->n; k++) { /* compact in place, in order */
    if (!keep(ctx, ct_map_at(m, k)))
      continue;
    if (j != k) {
      memcpy(ct_map_at(m, j), ct_map_at(m, k), m->vsize);
      m->dkeys[2 * j] = m->dkeys[2 * k];
      m->dkeys[2 * j + 1] = m->dkeys[2 * k + 1];
    }
    uint64_t a = m->dkeys[2 * j], b = m->dkeys[2 * j + 1];
    size_t i = slot_of(a, b, cap);
    while (slot[i])
      i = (i + 1) & (cap - 1);
    slot[i] = (uint32_t)j + 1;
    keys[2 * i] = a;
    keys[2 * i + 1] = b;
    j++;
  }
  free(m->keys);
  free(m->slot);
  m->keys = keys;
  m->slot = slot;
  m->cap = cap;
  m->n = j;
  if (m->vcap > 64 && m->n * 4 < m->vcap)
    resize_dense(m, m->vcap / 2); /* on failure: kept as is */
  return 0;
}
