/* rings_pack.c - the formatter's packs (docs/ROUTE1.md): a pass's pack records, pointed
 * to in the capture blocks the sink lets it keep (else copied out as they are), put in
 * time order, and each written as one trace entry. No entry of a pack is read here: its
 * expansion, numbering and place among the other threads' events are the decoder's
 * (src/format/ctrace_pack.c). */
#include <stdlib.h>
#include <string.h>

#include "common/runsort.h"
#include "engine/rings_int.h"
#include "engine/sink.h"
#include "format/ctw.h"

/* Records asked for ahead of the one read: the segment's lines come from
 * the harvest thread's copy, likely in another core's cache; each pack's
 * header read waited on its line (perf: nine tenths of this loop), and the
 * whole pack is read again when it is written (ct_ctw_pack). Two records a
 * line. */
#define PACK_AHEAD 32u

/* Contract: see rings_int.h. The framing a pack needs is checked here (the
 * harvest looked at its header only). */
int ct_rings_to_packs(struct ct_harvest *h, const struct ctp_rec *recs, uint32_t n, uint32_t tid,
                      int keep) {
  int kept = 0;
  uint32_t pf = 0; /* records below pf asked for (PACK_AHEAD) */
  for (uint32_t k = 0; k < n;) {
    const struct ctp_pack *pk = (const struct ctp_pack *)&recs[k];
    for (; pf < n && pf < k + PACK_AHEAD; pf += 2)
      prefetch(&recs[pf]);
    if (recs[k].kind != CTP_KIND_PACK) {
      ct_rings_to_batch(h, &recs[k++], 1, tid);
      continue;
    }
    uint32_t nrec = pk->nrec, len = (uint32_t)sizeof *pk + pk->nbytes;
    if (nrec >= CTP_PACK_RECS || nrec >= n - k || pk->nbytes > nrec * sizeof *recs ||
        pk->nent == 0 ||
        ct_grow((void **)&h->pks, &h->cappks, h->npks + 1, sizeof(*h->pks), CT_GROW_FIRST) ||
        (!keep && ct_grow((void **)&h->pkb, &h->cappkb, h->npkb + len, 1, CT_GROW_FIRST * 32))) {
      h->bad++;
      k++;
      continue;
    }
    struct ct_pk *e = &h->pks[h->npks];
    *e =
        (struct ct_pk){.ts0 = pk->ts0, .len = len, .tid = tid, .events = 2u * pk->nent + pk->nwake};
    if (keep) { /* the block stays ours until the pass is written */
      e->p = (const uint8_t *)pk;
      kept = 1;
    } else { /* the entries follow the header in the block */
      memcpy(h->pkb + h->npkb, pk, len);
      e->off = (uint32_t)h->npkb;
      h->npkb += len;
    }
    if (h->npks && e->ts0 < e[-1].ts0)
      h->pk_runs = 1;
    h->npks++;
    k += 1 + nrec;
  }
  h->pk_held |= kept;
  return kept;
}

CT_RUNSORT_DEFINE(sort_packs, struct ct_pk, ts0)

/* Contract: see rings_int.h. A pass's packs are a few runs (one a ring's
 * segment), each in time order (runsort.h). ENOMEM: left as they are, as
 * the batch's records (rings_format.c sort_pass): the decoder merges a
 * chunk's entries by time. */
void ct_rings_sort_packs(struct ct_harvest *h) {
  size_t n = h->npks;
  if (!h->pk_runs ||
      ct_grow((void **)&h->pks_tmp, &h->cappks_tmp, n, sizeof(*h->pks), CT_GROW_FIRST))
    return;
  h->pk_runs = 0;
  sort_packs(&h->pks, &h->cappks, &h->pks_tmp, &h->cappks_tmp, n);
}

/* Contract: see rings_int.h. */
void ct_rings_write_pack(struct ct_harvest *h, const struct ct_pk *pk) {
  const struct ct_clock *ck = &h->cclock;
  ct_ctw_pack(h->sink->enc, pk->tid, ct_clock_ns(ck, pk->ts0),
              ck->kind == CTP_CLOCK_MONO ? UINT64_C(1) << 32 : ck->mult,
              pk->p ? pk->p : h->pkb + pk->off, pk->len);
  h->v2_harvested += pk->events;
}
