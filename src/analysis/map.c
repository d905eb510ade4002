/* map.c - open addressing with linear probing over an index of 8-byte slots
 * (a hash tag and the entry's number); entries (key, then value) live densely
 * in insertion order, so memory follows the entries, not the index's capacity,
 * a filter compacts them in place, and a lookup reads one slot and then the
 * entry whose value the caller wants anyway. No deletion except by filter. */
#include "analysis/map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define KEY_BYTES (2 * sizeof(uint64_t))

void ct_map_init(struct ct_map *m, size_t vsize) {
  *m = (struct ct_map){
      .vsize = vsize, .stride = (KEY_BYTES + vsize + 7) & ~(size_t)7, .min_cap = 64};
}

void ct_map_free(struct ct_map *m) {
  free(m->slot);
  free(m->ents);
  size_t min_cap = m->min_cap;
  ct_map_init(m, m->vsize);
  m->min_cap = min_cap;
}

static uint64_t hash_of(uint64_t a, uint64_t b) {
  uint64_t h = (a ^ (b * 0xC2B2AE3D27D4EB4Full)) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 32);
}

/* The key of entry k. */
static uint64_t *key_at(const struct ct_map *m, size_t k) {
  return (uint64_t *)(void *)(m->ents + k * m->stride);
}

/* An index slot: h's upper half as the tag, entry k. */
static uint64_t slot_val(uint64_t h, size_t k) {
  return (h & 0xFFFFFFFF00000000ull) | (uint64_t)(k + 1);
}

void *ct_map_get(const struct ct_map *m, uint64_t a, uint64_t b) {
  if (!m->cap)
    return NULL;
  uint64_t h = hash_of(a, b), tag = h >> 32;
  for (size_t i = (size_t)h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    uint64_t s = m->slot[i];
    if (!s)
      return NULL;
    if (s >> 32 != tag)
      continue;
    size_t k = (uint32_t)s - 1;
    const uint64_t *key = key_at(m, k);
    if (key[0] == a && key[1] == b)
      return ct_map_at(m, k);
  }
}

void ct_map_prefetch(const struct ct_map *m, uint64_t a, uint64_t b) {
  if (m->cap)
    __builtin_prefetch(&m->slot[(size_t)hash_of(a, b) & (m->cap - 1)]);
}

void ct_map_prefetch_entry(const struct ct_map *m, uint64_t a, uint64_t b) {
  if (!m->cap)
    return;
  uint64_t h = hash_of(a, b), tag = h >> 32;
  for (size_t i = (size_t)h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    uint64_t s = m->slot[i];
    if (!s)
      return;
    if (s >> 32 == tag) { /* most likely its entry: no key compare, that is the miss */
      const char *e = (const char *)key_at(m, (uint32_t)s - 1);
      for (size_t off = 0; off < m->stride && off < 192; off += 64)
        __builtin_prefetch(e + off);
      return;
    }
  }
}

/* Slot index for a key of hash h, in an index of ncap slots. */
static size_t free_slot(const uint64_t *slot, size_t ncap, uint64_t h) {
  size_t j = (size_t)h & (ncap - 1);
  while (slot[j])
    j = (j + 1) & (ncap - 1);
  return j;
}

/* A new index of ncap slots over the dense entries. */
static int reindex(struct ct_map *m, size_t ncap) {
  uint64_t *slot = calloc(ncap, sizeof *slot);
  if (!slot)
    return -ENOMEM;
  for (size_t k = 0; k < m->n; k++) {
    const uint64_t *key = key_at(m, k);
    uint64_t h = hash_of(key[0], key[1]);
    slot[free_slot(slot, ncap, h)] = slot_val(h, k);
  }
  free(m->slot);
  m->slot = slot;
  m->cap = ncap;
  return 0;
}

/* Room for vcap dense entries. */
static int resize_dense(struct ct_map *m, size_t vcap) {
  char *ents = realloc(m->ents, vcap * m->stride);
  if (!ents)
    return -ENOMEM;
  m->ents = ents;
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
  uint64_t h = hash_of(a, b);
  m->slot[free_slot(m->slot, m->cap, h)] = slot_val(h, m->n);
  uint64_t *key = key_at(m, m->n);
  key[0] = a;
  key[1] = b;
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
  uint64_t *slot = calloc(cap, sizeof *slot);
  if (!slot)
    return -ENOMEM;
  size_t j = 0;
  for (size_t k = 0; k < m->n; k++) { /* compact in place, in order */
    if (!keep(ctx, ct_map_at(m, k)))
      continue;
    if (j != k)
      memcpy(key_at(m, j), key_at(m, k), m->stride);
    const uint64_t *key = key_at(m, j);
    uint64_t h = hash_of(key[0], key[1]);
    slot[free_slot(slot, cap, h)] = slot_val(h, j);
    j++;
  }
  free(m->slot);
  m->slot = slot;
  m->cap = cap;
  m->n = j;
  /* The entries shrink too, but keep room for what an index of min_cap slots
   * holds: filtered again and again, the map would otherwise give back and
   * fault in again the same pages each time. */
  if (m->vcap > 64 && m->n * 4 < m->vcap && m->vcap / 2 >= m->min_cap / 4 * 3)
    resize_dense(m, m->vcap / 2); /* on failure: kept as is */
  return 0;
}
