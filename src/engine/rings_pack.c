/* rings_pack.c - the formatter's packs (corotracer run --pack, docs/ROUTE1.md): a pass's
 * pack records copied out of the capture blocks as they are, put in time order, and each
 * written as one trace entry. No entry of a pack is read here: its expansion, numbering and
 * place among the other threads' events are the decoder's (src/format/ctrace_pack.c). */
#include <stdlib.h>
#include <string.h>

#include "engine/rings_int.h"
#include "engine/sink.h"
#include "format/ctw.h"

/* Contract: see rings_int.h. The framing a pack needs is checked here (the
 * harvest looked at its header only). */
void ct_rings_to_packs(struct ct_harvest *h, const struct ctp_rec *recs, uint32_t n, uint32_t tid) {
  for (uint32_t k = 0; k < n;) {
    const struct ctp_pack *pk = (const struct ctp_pack *)&recs[k];
    if (recs[k].kind != CTP_KIND_PACK) {
      ct_rings_to_batch(h, &recs[k++], 1, tid);
      continue;
    }
    uint32_t nrec = pk->nrec, len = (uint32_t)sizeof *pk + pk->nbytes;
    if (nrec >= CTP_PACK_RECS || nrec >= n - k || pk->nbytes > nrec * sizeof *recs ||
        pk->nent == 0 ||
        ct_grow((void **)&h->pks, &h->cappks, h->npks + 1, sizeof(*h->pks), CT_GROW_FIRST) ||
        ct_grow((void **)&h->pkb, &h->cappkb, h->npkb + len, 1, CT_GROW_FIRST * 32)) {
      h->bad++;
      k++;
      continue;
    }
    memcpy(h->pkb + h->npkb, pk, len); /* the entries follow the header in the block */
    h->pks[h->npks++] = (struct ct_pk){.ts0 = pk->ts0,
                                       .off = (uint32_t)h->npkb,
                                       .len = len,
                                       .tid = tid,
                                       .events = 2u * pk->nent + pk->nwake};
    h->npkb += len;
    k += 1 + nrec;
  }
}

/* Packs by ts0, ties in capture order (off grows with it). */
static int pack_cmp(const void *a, const void *b) {
  const struct ct_pk *x = a, *y = b;
  return x->ts0 != y->ts0 ? (x->ts0 > y->ts0) - (x->ts0 < y->ts0)
                          : (x->off > y->off) - (x->off < y->off);
}

/* Contract: see rings_int.h. A pass's packs are a few runs (one a ring),
 * each in order, but an insertion sort moved each ring's packs past all of
 * another's (perf: most of the formatter's time). */
void ct_rings_sort_packs(struct ct_harvest *h) {
  qsort(h->pks, h->npks, sizeof *h->pks, pack_cmp);
}

/* Contract: see rings_int.h. */
void ct_rings_write_pack(struct ct_harvest *h, const struct ct_pk *pk) {
  const struct ct_clock *ck = &h->cclock;
  ct_ctw_pack(h->sink->enc, pk->tid, ct_clock_ns(ck, pk->ts0),
              ck->kind == CTP_CLOCK_MONO ? UINT64_C(1) << 32 : ck->mult, h->pkb + pk->off, pk->len);
  h->v2_harvested += pk->events;
}
