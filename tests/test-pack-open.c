/* test-pack-open.c - the harvest's take of an open pack (src/engine/rings_open.c,
 * docs/ROUTE1.md "Latency"), on a ring made here as the probe would write it: a pack
 * open at head is taken only once it stayed the same for a pass (or its writer is
 * gone), a pack that grew after a take gives only its new entries, the published pack
 * gives what was not taken (or nothing), and every pack written is self-contained: its
 * entries, read from its own header, are the switches the probe wrote, each once. What
 * cannot be an open pack (a scribbled open word, counts past the room) is left alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rings_int.h"
#include "format/pack_entry.h"

static int failures;
#define CHECK(c, ...)                                                                              \
  do {                                                                                             \
    if (!(c)) {                                                                                    \
      fprintf(stderr, "test-pack-open:%d: ", __LINE__);                                            \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

#define CAP 64u
#define HEAD 125u /* the header 3 records before the ring's end: its 2 entry records end it */
#define TS0 1000000u

static _Alignas(64) unsigned char mem[sizeof(struct ctp_ring) + CAP * sizeof(struct ctp_rec)];
static struct ctp_ring *rg = (struct ctp_ring *)mem;

/* The probe's side: entry k is a switch from station 10 + k to 11 + k, k ticks
 * after the one before (entry 3 a standalone wake of 14 by 13, at its own
 * site: CTP_PK_SOLO; entry 6 at its own site too); the entries of the open
 * pack at HEAD written up to n, its counts stored. Entry bytes go in the
 * records after the header (the probe's two continuation records, the
 * ring's last). */
static struct ctp_pack pk;
static uint8_t bytes[CTP_PACK_BYTES];
static uint64_t pobj; /* the probe's obj state (ctp_pk_pobj) */

/* Entry k's obj: a small one (CTP_PK_OBJ), a pointer (CTP_PK_ODELTA, from
 * 0), none, and a pointer told from entry 5's, which a split at 6 writes
 * again from 0 (its pack cannot refer to one before it). All 8 entries
 * still fit the one continuation record. */
static uint64_t obj_of(unsigned k) {
  return k == 2 ? 0x42u : k == 5 ? 0x7f00deadb000u : k == 7 ? 0x7f00deadb070u : 0;
}

/* Entry k's site, from the pack's. */
static int64_t dsite_of(unsigned k) {
  return k == 3 ? 0x30 : k == 6 ? -0x10 : 0;
}

/* Entry k's wake: every odd one's but the standalone wake's (no wake bit). */
static uint8_t wake_of(unsigned k) {
  return (k & 1) && k != 3;
}

static void probe_write(unsigned n) {
  struct ctp_rec *recs = ctp_ring_recs(rg);
  if (pk.nent == 0)
    pobj = 0;
  if (pk.nent == 0)
    pk = (struct ctp_pack){
        .ts0 = TS0, .from = 10, .from_gen = 7, .kind = CTP_KIND_PACK, .site = 0x4242};
  uint8_t *p = bytes + pk.nbytes;
  for (unsigned k = pk.nent; k < n; k++) {
    struct ctp_pk_entry en = {.dts = k,
                              .obj = obj_of(k),
                              .dsite = dsite_of(k),
                              .from = 10 + k,
                              .to = 11 + k,
                              .wake = wake_of(k),
                              .solo = k == 3};
    /* The running station: the last `to`, or after the wake its waker. */
    p = ctp_pk_put(p, &en, k == 4 ? 13 : 10 + k, pobj);
    pobj = ctp_pk_pobj(pobj, &en);
    pk.nent++;
    pk.nwake = (uint8_t)(pk.nwake + en.wake);
    pk.nsolo = (uint8_t)(pk.nsolo + en.solo);
    pk.span += k;
  }
  pk.nbytes = (uint8_t)(p - bytes);
  memcpy(&recs[HEAD % CAP], &pk, sizeof pk);
  for (unsigned r = 0; r * 32u < pk.nbytes; r++)
    memcpy(&recs[(HEAD + 1u + r) % CAP], bytes + r * 32u, 32);
  atomic_store(&rg->open, HEAD + 1u);
}

/* Read the pack at out (n records) back: its entries [first, first + nent)
 * of the probe's, each once, from its own header. */
static void expect(const struct ctp_rec *out, uint32_t n, unsigned first, unsigned nent) {
  struct ctp_pack h;
  memcpy(&h, out, sizeof h);
  /* Its records: as many as its bytes take, or (a rest written in place)
   * the original's. */
  CHECK(n == 1u + h.nrec && h.nbytes <= 32u * h.nrec && h.nrec <= (h.nbytes + 31u) / 32u + 1u,
        "records %u (nrec %u) for %u bytes", n, h.nrec, h.nbytes);
  CHECK(h.kind == CTP_KIND_PACK && h.nent == nent, "entries %u, want %u", h.nent, nent);
  uint64_t ts0 = TS0;
  for (unsigned k = 1; k <= first; k++)
    ts0 += k;
  CHECK(h.ts0 == ts0 && h.from == 10 + first, "header ts0 %llu from %u, want %llu %u",
        (unsigned long long)h.ts0, h.from, (unsigned long long)ts0, 10 + first);
  CHECK(h.from_gen == (first ? 0 : 7), "from_gen %u", h.from_gen);
  const uint8_t *p = (const uint8_t *)&out[1], *e = p + h.nbytes;
  uint32_t cur = h.from;
  uint64_t hobj = 0;
  unsigned wakes = 0, solos = 0;
  for (unsigned k = 0; k < h.nent; k++) {
    struct ctp_pk_entry en;
    p = ctp_pk_get(p, e, cur, hobj, &en);
    CHECK(p != NULL, "entry %u does not decode", k);
    if (!p)
      return;
    unsigned want = first + k;
    CHECK(en.from == 10 + want && en.to == 11 + want && en.wake == wake_of(want) &&
              en.dts == (k ? want : 0) && en.obj == obj_of(want) && en.solo == (want == 3) &&
              en.dsite == dsite_of(want),
          "entry %u: from %u to %u wake %u dts %llu obj %llx solo %u site %lld", want, en.from,
          en.to, en.wake, (unsigned long long)en.dts, (unsigned long long)en.obj, en.solo,
          (long long)en.dsite);
    wakes += en.wake;
    solos += en.solo;
    cur = ctp_pk_cur(&en);
    hobj = ctp_pk_pobj(hobj, &en);
  }
  CHECK(p == e && h.nwake == wakes && h.nsolo == solos,
        "bytes left over, or nwake %u nsolo %u against %u %u", h.nwake, h.nsolo, wakes, solos);
}

int main(void) {
  struct ct_harvest h = {.cap = CAP};
  struct ct_ring_state rs = {.tail = HEAD};
  struct ctp_rec out[CTP_PACK_RECS];
  uint64_t limit = UINT64_MAX - 1;
  atomic_store(&rg->head, HEAD);

  /* Open with 3 entries: seen first (the pass takes nothing from its ts0
   * on), taken when the next pass finds it the same. */
  uint64_t bound = limit;
  probe_write(3);
  CHECK(ct_rings_open_take(&h, rg, &rs, HEAD, limit, 0, out, &bound) == 0, "taken at first sight");
  CHECK(bound == TS0, "bound %llu, want its ts0", (unsigned long long)bound);
  /* Records published before it, not taken yet: it waits for them. */
  rs.tail = HEAD - 1;
  bound = limit;
  CHECK(ct_rings_open_take(&h, rg, &rs, HEAD, limit, 0, out, &bound) == 0 && bound == TS0,
        "taken before the records published ahead of it");
  rs.tail = HEAD;
  bound = limit;
  uint32_t n = ct_rings_open_take(&h, rg, &rs, HEAD, limit, 0, out, &bound);
  CHECK(n > 0 && bound == limit, "not taken after a pass unchanged, or bound %llu",
        (unsigned long long)bound);
  expect(out, n, 0, 3);
  CHECK(ct_rings_open_take(&h, rg, &rs, HEAD, limit, 0, out, &bound) == 0 && bound == limit,
        "taken twice, or bounds the pass with nothing new");

  /* It grows: not while it grows (the pass stops at its last taken entry),
   * then only the new entries. */
  probe_write(5);
  CHECK(ct_rings_open_take(&h, rg, &rs, HEAD, limit, 0, out, &bound) == 0, "taken while growing");
  CHECK(bound == TS0 + 3, "bound %llu, want the last taken entry's", (unsigned long long)bound);
  bound = limit;
  n = ct_rings_open_take(&h, rg, &rs, HEAD, limit, 0, out, &bound);
  expect(out, n, 3, 2);

  /* Its writer is gone: taken at once. */
  probe_write(6);
  n = ct_rings_open_take(&h, rg, &rs, HEAD, limit, 1, out, &bound);
  expect(out, n, 5, 1);

  /* Published with two more: the rest only, in place (its records kept). */
  probe_write(8);
  struct ctp_rec copy[CTP_PACK_RECS];
  struct ctp_rec *recs = ctp_ring_recs(rg);
  pk.nrec = (uint8_t)((pk.nbytes + 31u) / 32u);
  memcpy(copy, &pk, sizeof pk);
  memcpy(&copy[1], &recs[(HEAD + 1u) % CAP], pk.nrec * sizeof *recs);
  CHECK(ct_rings_open_rest(&rs, HEAD, copy) == 1, "the rest refused");
  expect(copy, 1u + ((const struct ctp_pack *)copy)->nrec, 6, 2);
  /* The same pack again (another at another index): as it is. */
  memcpy(copy, &pk, sizeof pk);
  CHECK(ct_rings_open_rest(&rs, HEAD, copy) == 1 && memcmp(copy, &pk, sizeof pk) == 0,
        "a pack with nothing taken was changed");

  /* Taken whole while open, then published as it was: nothing left. */
  memset(&pk, 0, sizeof pk);
  rs = (struct ct_ring_state){.tail = HEAD};
  probe_write(4);
  CHECK(ct_rings_open_take(&h, rg, &rs, HEAD, limit, 1, out, &bound) > 0, "not taken, writer gone");
  pk.nrec = (uint8_t)((pk.nbytes + 31u) / 32u);
  memcpy(copy, &pk, sizeof pk);
  memcpy(&copy[1], &recs[(HEAD + 1u) % CAP], pk.nrec * sizeof *recs);
  CHECK(ct_rings_open_rest(&rs, HEAD, copy) == 0, "a pack taken whole is given again");

  /* What cannot be an open pack: left alone (nothing taken, the pass not
   * held back by it). */
  rs = (struct ct_ring_state){.tail = HEAD};
  bound = limit;
  atomic_store(&rg->open, HEAD + 5u); /* not at head */
  CHECK(ct_rings_open_take(&h, rg, &rs, HEAD, limit, 1, out, &bound) == 0 && bound == limit,
        "an open word not at head");
  atomic_store(&rg->open, HEAD + 1u);
  struct ctp_pack bad = pk;
  bad.nbytes = CTP_PACK_BYTES + 1u; /* more than a pack holds */
  memcpy(&recs[HEAD % CAP], &bad, sizeof bad);
  CHECK(ct_rings_open_take(&h, rg, &rs, HEAD, limit, 1, out, &bound) == 0 && bound == limit,
        "nbytes past a pack's");
  bad = pk;
  bad.kind = CTP_KIND_SWITCH;
  memcpy(&recs[HEAD % CAP], &bad, sizeof bad);
  CHECK(ct_rings_open_take(&h, rg, &rs, HEAD, limit, 1, out, &bound) == 0 && bound == limit,
        "not a pack's kind");
  memcpy(&recs[HEAD % CAP], &pk, sizeof pk);
  rs.tail = HEAD - CAP + 1u; /* its records past the ring's room */
  CHECK(ct_rings_open_take(&h, rg, &rs, HEAD, limit, 1, out, &bound) == 0 && bound == limit,
        "records past the room");
  rs.tail = HEAD;
  recs[(HEAD + 1u) % CAP].ts = ~0ull; /* entries that do not decode */
  CHECK(ct_rings_open_take(&h, rg, &rs, HEAD, limit, 1, out, &bound) == 0 && bound == limit,
        "garbage entries taken");

  if (failures)
    return 1;
  printf("test-pack-open: ok\n");
  return 0;
}
