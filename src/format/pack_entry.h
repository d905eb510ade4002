/* pack_entry.h - one entry of a pack (docs/ROUTE1.md "Entries", struct ctp_pack in
 * common/ctp.h), written and read in one place: the probe encodes with it, the engine
 * splits an open pack with it, the decoder and the probe's drop path read with it. Inline:
 * the probe's hot switch calls ctp_pk_put. */
#ifndef CT_FORMAT_PACK_ENTRY_H
#define CT_FORMAT_PACK_ENTRY_H

#include <stdint.h>

#include "common/ctp.h"
#include "format/ctrace.h" /* ctr_put_varint, ctr_get_varint, ctr_zigzag */

/* The longest entry: the flags (2 bytes), a delta below 2^31 (5 bytes), the
 * distance of two stations below 2^21 (4), a `from` (3), an obj <= 0xffff
 * (3), a site within CTP_PK_SITE_NEAR (3). */
#define CTP_PK_ENTRY_MAX 20u
/* The longest entry of any obj (CTP_PK_ODELTA: a 64-bit zigzag, 10 bytes) and
 * stations below 2^32 (5 bytes each); flags 2 bytes, a delta 5, a site 3. */
#define CTP_PK_ENTRY_WIDE 30u
/* What the engine's split of an open pack (rings_open.c pack_rest) may add
 * to its rest: one ODELTA obj told from 0 instead of an earlier entry's (10
 * bytes for 1). A writer of ODELTA objs keeps this room free. */
#define CTP_PK_RESPELL 9u

/* The one-byte spellings of a runtime's two common kinds (docs/ROUTE1.md
 * "Entries"): waits 5 and 6 of the flag byte, free there (CTP_WAIT_MAX_),
 * stand for a standalone wake (CTP_PK_SOLO) and a ptr wait with an ODELTA
 * obj (a channel's handoff); the flag byte's CTP_PK_OBJ bit, which neither
 * kind uses, stands for CTP_PK_SITE, its CTP_PK_FROM and CTP_PK_WAKE bits are
 * their own. Where the long spelling takes 2 bytes (bit 6, 7 or 8 set).
 * Readers take both spellings (older writers wrote the long one). */
#define CTP_PK_SHORT_SOLO 5u
#define CTP_PK_SHORT_PTR 6u

/* An entry's facts: ticks since the previous entry, the wait and obj of
 * from's suspend, its wake, and the two stations; dsite its site's distance
 * from the pack's (0: the pack's). solo: a standalone wake (CTP_PK_SOLO),
 * `to` woken by `from`, no wait, obj or wake. */
struct ctp_pk_entry {
  uint64_t dts, obj;
  int64_t dsite;
  uint32_t from, to;
  uint8_t wait, wake, solo;
};

/* The obj state after entry en, pobj the one before it (0 before a pack's
 * first entry): the last obj an entry of the pack gave, which
 * CTP_PK_ODELTA's obj is told from. */
static inline uint64_t ctp_pk_pobj(uint64_t pobj, const struct ctp_pk_entry *en) {
  return en->obj ? en->obj : pobj;
}

/* The running station after entry en (the next entry's `from` unless it
 * spells one): `to` after a switch; the waker, which runs on, after a
 * standalone wake. */
static inline uint32_t ctp_pk_cur(const struct ctp_pk_entry *en) {
  return en->solo ? en->from : en->to;
}

/* Events of entry en for its `from` station (its suspend and wake; none for
 * a standalone wake, whose waker only names it) and for its `to` (a resume,
 * or the wake): 1 each way but from's wake. */
static inline unsigned ctp_pk_from_events(const struct ctp_pk_entry *en) {
  return en->solo ? 0u : 1u + en->wake;
}

/* Write entry en at p (room for CTP_PK_ENTRY_MAX bytes, CTP_PK_ENTRY_WIDE for
 * an obj past 0xffff), cur the running station before it (ctp_pk_cur of the
 * previous entry, the header's `from` for the first), pobj the obj state
 * before it (ctp_pk_pobj). Returns the end. A
 * plain entry (wait none, no obj, `from` cur, the pack's site: a yield) is
 * one varint of its delta and wake, tagged by its low bit; any other has
 * its flags first (a standalone wake's and a ptr wait's with an ODELTA obj
 * in one byte: CTP_PK_SHORT_SOLO, CTP_PK_SHORT_PTR). An
 * obj up to 0xffff is written as it is (CTP_PK_OBJ, as before the delta
 * existed), a larger one as its distance from pobj (CTP_PK_ODELTA): a
 * runtime's waits are on pointers near each other, a channel's over and
 * over. en->dsite is within CTP_PK_SITE_NEAR (the caller's test). Always
 * inlined: the compiler kept it out of line in ring.c (two callers), ~5% of
 * bench-fiber --channel's traced program in perf, a call per entry. */
static inline __attribute__((always_inline)) uint8_t *
ctp_pk_put(uint8_t *p, const struct ctp_pk_entry *en, uint32_t cur, uint64_t pobj) {
  uint64_t ob = !en->obj ? 0u : en->obj <= CTP_SW_OBJ_MAX ? CTP_PK_OBJ : CTP_PK_ODELTA;
  uint64_t b = en->wait | (en->from != cur ? CTP_PK_FROM : 0u) | ob |
               (en->dsite ? CTP_PK_SITE : 0u) | (en->solo ? CTP_PK_SOLO : 0u);
  uint64_t k = b & ~(uint64_t)(CTP_PK_FROM | CTP_PK_SITE);
  if (k == CTP_PK_SOLO || k == (CTP_WAIT_PTR | CTP_PK_ODELTA))
    k = (k == CTP_PK_SOLO ? CTP_PK_SHORT_SOLO : CTP_PK_SHORT_PTR) | (b & CTP_PK_FROM) |
        (b & CTP_PK_SITE ? CTP_PK_OBJ : 0u);
  else
    k = b;
  if (b)
    p = ctr_put_varint(ctr_put_varint(p, (k | (en->wake ? CTP_PK_WAKE : 0u)) << 1), en->dts);
  else
    p = ctr_put_varint(p, en->dts << 2 | (en->wake ? 2u : 0u) | CTP_PK_PLAIN);
  /* `to` as its distance from `from`: a scheduler's coroutines sit near each
   * other in the station table, so one byte where the index takes two. */
  p = ctr_put_varint(p, ctr_zigzag((int64_t)en->to - (int64_t)en->from));
  if (b & CTP_PK_FROM)
    p = ctr_put_varint(p, en->from);
  if (ob == CTP_PK_OBJ)
    p = ctr_put_varint(p, en->obj);
  else if (ob)
    p = ctr_put_varint(p, ctr_zigzag((int64_t)(en->obj - pobj)));
  if (en->dsite)
    p = ctr_put_varint(p, ctr_zigzag(en->dsite));
  return p;
}

/* Read the entry at p (below e) into *en, cur and pobj as ctp_pk_put's.
 * Returns the byte after it, or NULL when it is not one ctp_pk_put writes
 * (cut short, unknown flags or wait, a delta or station past 32 bits, a
 * plain entry spelled out, a short kind in more than one byte or with a
 * wake where it has none, both obj flags, an ODELTA obj of 0 or up to
 * 0xffff, a site of 0 distance or past CTP_PK_SITE_NEAR, a standalone wake
 * with a wait, obj or wake). Every byte is checked: a pack may come from a hostile target or
 * a damaged file. */
static inline const uint8_t *ctp_pk_get(const uint8_t *p, const uint8_t *e, uint32_t cur,
                                        uint64_t pobj, struct ctp_pk_entry *en) {
  uint64_t b, dts, dto, from = cur, obj = 0;
  if (!(p = ctr_get_varint(p, e, &b)))
    return NULL;
  if (b & CTP_PK_PLAIN) {
    dts = b >> 2;
    b = b & 2 ? CTP_PK_WAKE : 0;
  } else if (!(p = ctr_get_varint(p, e, &dts))) {
    return NULL;
  } else {
    b >>= 1;
    if (!(b & ~(uint64_t)CTP_PK_WAKE))
      return NULL; /* a plain entry spelled out: not what the probe writes */
    unsigned w = (unsigned)(b & CTP_PK_WAIT);
    if (w == CTP_PK_SHORT_SOLO || w == CTP_PK_SHORT_PTR) { /* one byte (0x3f: 0x7e once shifted) */
      if (b > 0x3fu)
        return NULL;
      b = (b & (CTP_PK_WAKE | CTP_PK_FROM)) | (b & CTP_PK_OBJ ? CTP_PK_SITE : 0u) |
          (w == CTP_PK_SHORT_SOLO ? CTP_PK_SOLO : CTP_WAIT_PTR | CTP_PK_ODELTA);
    }
  }
  if ((b & ~(uint64_t)(CTP_PK_WAIT | CTP_PK_WAKE | CTP_PK_OBJ | CTP_PK_FROM | CTP_PK_ODELTA |
                       CTP_PK_SITE | CTP_PK_SOLO)) ||
      (b & (CTP_PK_OBJ | CTP_PK_ODELTA)) == (CTP_PK_OBJ | CTP_PK_ODELTA) ||
      ((b & CTP_PK_SOLO) && (b & (CTP_PK_WAIT | CTP_PK_WAKE | CTP_PK_OBJ | CTP_PK_ODELTA))) ||
      (b & CTP_PK_WAIT) >= CTP_WAIT_MAX_ || dts > UINT32_MAX || !(p = ctr_get_varint(p, e, &dto)))
    return NULL;
  if ((b & CTP_PK_FROM) && (!(p = ctr_get_varint(p, e, &from)) || from > UINT32_MAX))
    return NULL;
  if ((b & CTP_PK_OBJ) && (!(p = ctr_get_varint(p, e, &obj)) || obj > UINT32_MAX))
    return NULL;
  if (b & CTP_PK_ODELTA) {
    if (!(p = ctr_get_varint(p, e, &obj)))
      return NULL;
    obj = pobj + (uint64_t)ctr_unzigzag(obj);
    if (obj <= CTP_SW_OBJ_MAX)
      return NULL; /* 0 or one CTP_PK_OBJ spells: not what the probe writes */
  }
  uint64_t zs = 0;
  if ((b & CTP_PK_SITE) &&
      (!(p = ctr_get_varint(p, e, &zs)) || zs == 0 || zs > 2u * CTP_PK_SITE_NEAR))
    return NULL; /* 0: not what a writer writes (no bit then); far: not one loop's */
  int64_t to = (int64_t)from + ctr_unzigzag(dto);
  if (to < 0 || to > (int64_t)UINT32_MAX)
    return NULL;
  *en = (struct ctp_pk_entry){.dts = dts,
                              .obj = obj,
                              .dsite = ctr_unzigzag(zs),
                              .from = (uint32_t)from,
                              .to = (uint32_t)to,
                              .wait = (uint8_t)(b & CTP_PK_WAIT),
                              .wake = (b & CTP_PK_WAKE) != 0,
                              .solo = (b & CTP_PK_SOLO) != 0};
  return p;
}

#endif
