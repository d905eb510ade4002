/* test-rings-pack.c - the formatter's packs of a pass (src/engine/rings_pack.c): packs
 * handed in segments of several rings, each ring's in time order, are put in time
 * order across rings, ties in the order they were captured, whether the formatter
 * may keep the blocks (the packs then point into them) or not (their bytes copied),
 * and both ways give each pack's bytes as written. A pack whose framing cannot be
 * true is counted bad, the other records of a segment go to the batch. And the time a
 * full ring's pass stops at (rings.c ct_rings_cut, --flight): a pack header's, never
 * a continuation record's entry bytes read as a time. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/harvest.h"
#include "engine/rings_int.h"
#include "lib/check.h"
#include "lib/rnd.h"

#define RINGS 5
#define SEGS 40     /* segments a pass */
#define PER_SEG 12u /* packs a segment at most */

static uint64_t seed = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  return ct_rnd(&seed);
}

/* A segment of a ring: its packs (each 1 + nrec records) and now and then
 * an ordinary record between them; *ts grows (ties now and then). */
static uint32_t make_seg(struct ctp_rec *recs, uint64_t *ts, uint32_t ring, uint32_t *npk) {
  uint32_t n = 0, packs = (uint32_t)(rnd() % PER_SEG) + 1;
  for (uint32_t k = 0; k < packs; k++) {
    if (rnd() % 5 == 0) {
      memset(&recs[n], 0, sizeof recs[n]);
      recs[n].kind = CTP_KIND_WAKE;
      recs[n++].ts = *ts;
    }
    uint32_t nrec = 1 + (uint32_t)(rnd() % (CTP_PACK_RECS - 1));
    struct ctp_pack *pk = (struct ctp_pack *)&recs[n];
    memset(pk, 0, (1 + nrec) * sizeof *recs);
    *ts += rnd() % 4 == 0 ? 0 : rnd() % 1000;
    pk->ts0 = *ts;
    pk->from = ring;
    pk->kind = CTP_KIND_PACK;
    pk->nrec = (uint8_t)nrec;
    pk->nbytes = (uint8_t)(1 + rnd() % (32 * nrec));
    pk->nent = 1 + (uint8_t)(rnd() % 50);
    unsigned char *b = (unsigned char *)(pk + 1);
    for (uint32_t i = 0; i < pk->nbytes; i++)
      b[i] = (unsigned char)rnd();
    n += 1 + nrec;
    (*npk)++;
  }
  return n;
}

/* One pass: the same segments handed with keep, then without; the sorted
 * packs must agree and be in order. */
static void pass(void) {
  static struct ctp_rec segs[SEGS][PER_SEG * (CTP_PACK_RECS + 1)];
  uint32_t nseg[SEGS], ring[SEGS], want = 0;
  uint64_t ts[RINGS];
  for (uint32_t r = 0; r < RINGS; r++)
    ts[r] = 1000 + rnd() % 100;
  for (uint32_t s = 0; s < SEGS; s++) {
    ring[s] = (uint32_t)(rnd() % RINGS);
    nseg[s] = make_seg(segs[s], &ts[ring[s]], ring[s], &want);
  }
  /* A pack whose framing cannot be true (nrec past the segment): bad. */
  struct ctp_rec badseg[2];
  memset(badseg, 0, sizeof badseg);
  ((struct ctp_pack *)badseg)->kind = CTP_KIND_PACK;
  ((struct ctp_pack *)badseg)->nrec = 3;
  ((struct ctp_pack *)badseg)->nent = 1;

  struct ct_harvest h[2];
  for (int keep = 0; keep < 2; keep++) {
    struct ct_harvest *x = &h[keep];
    memset(x, 0, sizeof *x);
    for (uint32_t s = 0; s < SEGS; s++)
      ASSERT_EQ(ct_rings_to_packs(x, segs[s], nseg[s], 100 + ring[s], keep), keep);
    ASSERT_EQ(ct_rings_to_packs(x, badseg, 2, 1, keep), 0);
    ASSERT_UINT64_EQ(x->bad, 1);
    ASSERT_UINT64_EQ(x->npks, want);
    ASSERT_UINT64_GT(x->nbatch, 0);
    ASSERT_EQ(x->pk_held, keep);
    ct_rings_sort_packs(x);
  }
  for (size_t i = 0; i < want; i++) {
    const struct ct_pk *a = &h[0].pks[i], *b = &h[1].pks[i];
    const uint8_t *pa = h[0].pkb + a->off;
    ASSERT_NULL(a->p);
    ASSERT_NOT_NULL(b->p);
    ASSERT_UINT64_EQ(a->ts0, b->ts0);
    ASSERT_UINT64_EQ(a->tid, b->tid);
    ASSERT_UINT64_EQ(a->len, b->len);
    ASSERT_MEM_EQ(pa, b->p, a->len);
    ASSERT_UINT64_EQ(a->events, 2u * pa[offsetof(struct ctp_pack, nent)]); /* pkb: unaligned */
    if (i) { /* time order; a tie keeps capture order (a block's address grows with it) */
      const struct ct_pk *q = &h[1].pks[i - 1];
      ASSERT_UINT64_LE(q->ts0, b->ts0);
      if (q->ts0 == b->ts0)
        ASSERT(q->p < b->p);
    }
  }
  for (int keep = 0; keep < 2; keep++) {
    free(h[keep].pks);
    free(h[keep].pks_tmp);
    free(h[keep].pkb);
    free(h[keep].batch);
  }
}

/* A full ring of CAP records, from t on: packs (1 to 7 continuation
 * records, their last one's first bytes entry bytes then the zeros after the
 * last entry: a small number as a ts) and now and then a record. The cut at
 * t + CAP - 1 is the ts of the header of the record or pack holding it, past
 * the end of the first one (a pass takes something); read as the record
 * there, it was below the ring's first ts whenever that record was a pack's
 * last (test-flight leg 12 under TSan: whole rings neither harvested nor
 * lost). */
#define CAP 64u
static void cut(uint64_t t) {
  struct ctp_rec recs[CAP];
  uint64_t hdr_at[2 * CAP], ts = UINT64_C(1) << 40, first_end = 0;
  unsigned nh = 0;
  memset(recs, 0, sizeof recs);
  for (uint64_t i = t; i < t + CAP;) {
    uint32_t nrec = 1 + (uint32_t)(rnd() % (CTP_PACK_RECS - 1));
    if (rnd() % 6 == 0 || i + 1 + nrec > t + CAP)
      nrec = 0; /* a record */
    struct ctp_pack *pk = (struct ctp_pack *)&recs[i & (CAP - 1)];
    ts += 1 + rnd() % 1000;
    pk->ts0 = ts;
    pk->kind = nrec ? CTP_KIND_PACK : CTP_KIND_WAKE;
    pk->nrec = (uint8_t)nrec;
    pk->nent = 1;
    pk->span = nrec ? 1 + (uint32_t)(rnd() % 500) : 0;
    pk->nbytes = (uint8_t)(nrec ? 32u * (nrec - 1) + 1 + rnd() % 5 : 0);
    for (uint32_t k = 0; k < nrec; k++) {
      uint8_t *b = (uint8_t *)&recs[(i + 1 + k) & (CAP - 1)];
      for (uint32_t j = 0; j < (k + 1 < nrec ? 32u : pk->nbytes - 32u * k); j++)
        b[j] = (uint8_t)(1 + rnd() % 255);
    }
    if (i == t)
      first_end = ts + pk->span;
    hdr_at[nh++] = i;
    ts += pk->span;
    i += 1u + nrec;
  }
  struct ct_harvest h;
  memset(&h, 0, sizeof h);
  h.cap = CAP;
  h.pack = 1;
  uint64_t first, at = t + CAP - 1, want = 0;
  for (unsigned k = 0; k < nh && hdr_at[k] <= at; k++)
    want = recs[hdr_at[k] & (CAP - 1)].ts;
  uint64_t got = ct_rings_cut(&h, recs, t, at, &first);
  ASSERT_UINT64_GT(got, 1u << 20); /* a time, not entry bytes */
  ASSERT_UINT64_EQ(got, want);
  ASSERT_UINT64_EQ(first, first_end);
  ASSERT_UINT64_GT(want, first);
}

int main(void) {
  for (int i = 0; i < 200; i++)
    pass();
  for (uint64_t t = 0; t < 2000; t++)
    cut(t * 7);
  return 0;
}
