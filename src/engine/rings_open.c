/* rings_open.c - the harvest's take of an open pack (corotracer run --pack, docs/ROUTE1.md
 * "Latency"): a thread whose coroutine blocks right after a hot switch, or that is killed,
 * holds its last switches in a pack it has not published. The pack is in its ring beyond
 * head already (the probe writes it there, its counts release-stored per entry), so the
 * engine takes the entries it has not taken yet once the pack stayed the same for a whole
 * pass, or the writer is gone, and writes them as a pack of their own; when the pack is
 * published later, only the entries after those go on. Every pack written is self-contained
 * (docs/ROUTE1.md "Entries"), so readers see nothing new. */
#include <string.h>

#include "engine/rings_int.h"
#include "engine/sink.h"
#include "format/pack_entry.h"

/* Entries [k0, nent) of pack pk (its entry bytes at b) as a pack of their
 * own at out (CTP_PACK_RECS records): a header with the time and `from` of
 * entry k0, the entries written again from there (that one with a delta of
 * 0; an obj told from an earlier one's, CTP_PK_ODELTA, told from the new
 * pack's). Returns its records (1 + entry records), 0 when no entry is left,
 * the entries do not decode (a hostile writer's: the formatter would refuse
 * them) or they no longer fit in room bytes (an ODELTA obj spelled from 0:
 * a probe that writes them keeps that room). from_gen is
 * pk's only when k0 is 0 (the probe knows no other). */
static uint32_t pack_rest(const struct ctp_pack *pk, const uint8_t *b, unsigned k0, uint32_t room,
                          struct ctp_rec *out) {
  const uint8_t *p = b, *e = b + pk->nbytes;
  uint8_t *q0 = (uint8_t *)&out[1], *q = q0;
  uint32_t cur = pk->from, qcur = 0, from0 = 0;
  uint64_t ts = pk->ts0, ts_first = 0, pobj = 0, qobj = 0;
  struct ctp_pk_entry en;
  struct ctp_pack h = *pk;
  h.nwake = 0;
  h.nsolo = 0;
  for (unsigned k = 0; k < pk->nent; k++) {
    if (!(p = ctp_pk_get(p, e, cur, pobj, &en)))
      return 0;
    ts += en.dts;
    cur = ctp_pk_cur(&en);
    pobj = ctp_pk_pobj(pobj, &en);
    if (k < k0)
      continue;
    if (k == k0) {
      ts_first = ts;
      en.dts = 0;
      qcur = from0 = en.from;
    }
    uint8_t one[CTP_PK_ENTRY_WIDE];
    size_t n = (size_t)(ctp_pk_put(one, &en, qcur, qobj) - one);
    if ((size_t)(q - q0) + n > room)
      return 0;
    memcpy(q, one, n);
    q += n;
    qcur = ctp_pk_cur(&en);
    qobj = ctp_pk_pobj(qobj, &en);
    h.nwake = (uint8_t)(h.nwake + en.wake);
    h.nsolo = (uint8_t)(h.nsolo + en.solo);
  }
  if (k0 >= pk->nent || p != e)
    return 0;
  h.nbytes = (uint8_t)(q - q0);
  h.nent = (uint8_t)(pk->nent - k0);
  h.span = (uint32_t)(ts - ts_first);
  h.ts0 = ts_first;
  h.from = from0;
  h.from_gen = k0 ? 0 : pk->from_gen;
  h.nrec = (uint8_t)((h.nbytes + 31u) / 32u);
  memset(q, 0, h.nrec * 32u - h.nbytes);
  memcpy(&out[0], &h, sizeof h);
  return 1u + h.nrec;
}

/* Contract: see rings_int.h. */
int ct_rings_open_rest(struct ct_ring_state *rs, uint64_t at, struct ctp_rec *recs) {
  if (!rs->taken_nent || at != rs->taken_at)
    return 1;
  struct ctp_pack pk;
  uint8_t b[CTP_PACK_BYTES];
  memcpy(&pk, recs, sizeof pk);
  unsigned k0 = rs->taken_nent;
  rs->taken_nent = 0;
  if (pk.nrec >= CTP_PACK_RECS || pk.nbytes > pk.nrec * 32u)
    return 1; /* the formatter counts it bad */
  memcpy(b, recs + 1, pk.nbytes);
  struct ctp_rec out[CTP_PACK_RECS];
  uint32_t n = pack_rest(&pk, b, k0, pk.nrec * 32u, out);
  if (!n)
    return 0;
  /* The records the original took, the entries' end zeroed. */
  memset(recs, 0, (1u + pk.nrec) * sizeof *recs);
  memcpy(recs, out, n * sizeof *recs);
  ((struct ctp_pack *)recs)->nrec = pk.nrec;
  return 1;
}

/* Contract: see rings_int.h. */
uint32_t ct_rings_open_take(struct ct_harvest *h, struct ctp_ring *rg, struct ct_ring_state *rs,
                            uint64_t head, uint64_t limit, int gone, struct ctp_rec *out,
                            uint64_t *bound) {
  uint64_t open = atomic_load_explicit(&rg->open, memory_order_acquire);
  if (open != head + 1u) {
    rs->open_seen = 0;
    return 0;
  }
  /* The header's fields the writer stored before open, its counts after
   * each entry: the entries below them are there (acquire). */
  const struct ctp_rec *recs = ctp_ring_recs(rg);
  const struct ctp_pack *src = (const struct ctp_pack *)&recs[head & (h->cap - 1)];
  struct ctp_pack pk;
  pk.counts = __atomic_load_n(&src->counts, __ATOMIC_ACQUIRE);
  memcpy(&pk, src, offsetof(struct ctp_pack, counts));
  unsigned k0 = rs->taken_at == head ? rs->taken_nent : 0;
  uint32_t nrec = (pk.nbytes + 31u) / 32u;
  /* What cannot be an open pack: left alone (the published one, if it
   * ever is, goes through the formatter's checks). Its records are beyond
   * head, within the room the writer has: a ring's capacity past tail. */
  if (pk.kind != CTP_KIND_PACK || pk.nent <= k0 || pk.nbytes > CTP_PACK_BYTES ||
      pk.nsolo > pk.nent || head + 1u + nrec - rs->tail > h->cap)
    return 0;
  /* Taken now when its thread stopped switching (the same counts as the
   * last pass) or is gone, and nothing published waits before it (the
   * final pass takes those too); else what other rings give waits for it:
   * its untaken entries are no older than this. */
  int idle = rs->open_seen == open && rs->open_counts == pk.counts;
  rs->open_seen = open;
  rs->open_counts = pk.counts;
  uint64_t from = k0 ? rs->taken_last : pk.ts0;
  if (!out || !(idle || gone) || (rs->tail != head && !h->final) ||
      (!gone && pk.ts0 + pk.span >= limit)) {
    if (from < *bound)
      *bound = from;
    return 0;
  }
  uint8_t b[CTP_PACK_BYTES];
  for (uint32_t k = 0; k < nrec; k++) {
    uint32_t len = pk.nbytes - k * 32u < 32u ? pk.nbytes - k * 32u : 32u;
    memcpy(b + k * 32u, &recs[(head + 1u + k) & (h->cap - 1)], len);
  }
  uint32_t n = pack_rest(&pk, b, k0, CTP_PACK_BYTES, out);
  if (!n)
    return 0;
  rs->taken_at = head;
  rs->taken_nent = pk.nent;
  rs->taken_last = pk.ts0 + pk.span;
  return n;
}
