/* test-pack-decode.c - the decoder's pack entries (docs/ROUTE1.md) as a reader meets them:
 * a CHK4 chunk with two coroutine entries and a pack of two switches expands to the six
 * events a formatter would have written (kinds, coroutines, ev, seq, ts, the wake); then
 * 200,000 chunks whose pack bytes (header, entries, framing varints) are mutated at random,
 * each framed with a valid checksum so the decoder itself must judge them: every one ends
 * in the chunk's end or "does not decode", never a crash or a read outside the chunk
 * (the ASan build runs it), and every event it gives names one of the chunk's coroutines.
 * The header's from_gen (docs/ROUTE1.md "Remaining" 6): a pack whose first `from` is
 * another incarnation of its station than the coroutine line's is refused whole, and the
 * end line counts it (bad_records) and its events (lost); 0 is not checked. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "format/ctrace_dec.h"
#include "format/pack_entry.h"
#include "lib/check.h"
#include "lib/rnd.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

/* A coroutine entry (format/ctrace.h CTR_F_CORO) of probe_id on station st
 * at p; returns the end. */
static uint8_t *coro(uint8_t *p, uint64_t probe_id, uint32_t st) {
  *p++ = CTR_OP_LINE | CTR_F_CORO;
  p = ctr_put_varint(p, probe_id);
  p = ctr_put_varint(p, st);
  p = ctr_put_varint(p, 1); /* gen */
  p = ctr_put_varint(p, 7); /* pid */
  p = ctr_put_varint(p, 0); /* birth_ts - last ts, zigzag */
  p = ctr_put_varint(p, 0); /* a new site: 8 bytes */
  memset(p, 0x11, 8);
  p += 8;
  return ctr_put_varint(p, 0); /* parent */
}

/* The chunk: header (tag, len, count, check) and the payload's n bytes,
 * count entries, into out. Returns its size. The tag: CHK5 (what the
 * encoder writes, its check the wide one) and CHK4 (older traces) in turn. */
static size_t frame(uint8_t *out, const uint8_t *pay, size_t n, uint32_t count) {
  static unsigned framed;
  uint32_t tag = framed++ % 2 ? CTR_CHUNK_TAG_PACK : CTR_CHUNK_TAG_PACKW;
  struct ctr_chunk_hdr h = {
      .tag = tag, .len = (uint32_t)n, .count = count, .check = ctr_chunk_check(tag, pay, n)};
  memcpy(out, &h, sizeof h);
  memcpy(out + sizeof h, pay, n);
  return sizeof h + n;
}

/* A payload: coroutines 100 (station 0) and 200 (station 1), gen 1 each,
 * then a pack of two switches 0 -> 1 (yield, 1000 ticks after ts0) and
 * 1 -> 0 (a ptr wait on 0x1234, no wake, 500 ticks later), ts0 at 5000 ns,
 * 1 ns a tick, its header's from_gen from_gen. With wide, the second
 * waits on the pointer WIDE_OBJ instead and a third switch 0 -> 1 follows
 * (100 ticks later) on WIDE_OBJ - 16: both objs told from the pack's last
 * (CTP_PK_ODELTA), the first from 0; then (50 ticks later) a standalone
 * wake of station 0 by station 1, the running one (CTP_PK_SOLO), at the
 * pack's site + 0x40 (CTP_PK_SITE). */
#define WIDE_OBJ UINT64_C(0x7f00deadb040)
static size_t payload(uint8_t *pay, size_t *pack_at, uint16_t from_gen, int wide) {
  uint8_t *p = coro(pay, 100, 0);
  p = coro(p, 200, 1);
  *pack_at = (size_t)(p - pay);
  /* The first a plain entry (bit 0; bit 1 its wake; 1000 << 2 | 3 is the
   * varint a3 1f), the second flags shifted by one (bit 0 clear) and its
   * delta; `to` as a zigzag distance from `from`: +1 is 2, -1 is 1. */
  uint8_t ent[40] = {0xa3, 0x1f, 2, (CTP_WAIT_PTR | CTP_PK_OBJ) << 1, 0xf4, 0x03, 1, 0xb4, 0x24};
  size_t nent = 9;
  if (wide) {
    struct ctp_pk_entry e2 = {
        .dts = 500, .obj = WIDE_OBJ, .from = 1, .to = 0, .wait = CTP_WAIT_PTR};
    struct ctp_pk_entry e3 = {
        .dts = 100, .obj = WIDE_OBJ - 16, .from = 0, .to = 1, .wait = CTP_WAIT_PTR};
    uint8_t *q = ctp_pk_put(ent + 3, &e2, 1, 0);
    ASSERT_EQ(ent[3], CTP_PK_SHORT_PTR << 1); /* one byte, where the long spelling takes 2 */
    q = ctp_pk_put(q, &e3, 0, WIDE_OBJ);
    ASSERT_EQ(q[-1], 31); /* zigzag(-16) */
    struct ctp_pk_entry e4 = {.dts = 50, .dsite = 0x40, .from = 1, .to = 0, .solo = 1};
    uint8_t *q4 = q;
    q = ctp_pk_put(q, &e4, 1, WIDE_OBJ - 16);
    ASSERT_EQ(q - q4, 5); /* flags 1 (CTP_PK_SHORT_SOLO), delta 1, `to` 1, site 2 */
    nent = (size_t)(q - ent);
  }
  struct ctp_pack h = {.ts0 = 9000,
                       .from = 0,
                       .from_gen = from_gen,
                       .kind = CTP_KIND_PACK,
                       .nrec = 1,
                       .site = 0xabc,
                       .span = wide ? 1650 : 1500,
                       .nbytes = (uint8_t)nent,
                       .nent = wide ? 4 : 2,
                       .nwake = 1,
                       .nsolo = wide ? 1 : 0};
  *p++ = CTR_OP_LINE | CTR_F_PACK;
  p = ctr_put_varint(p, 42);                /* tid */
  p = ctr_put_varint(p, 5000);              /* ns0 */
  p = ctr_put_varint(p, UINT64_C(1) << 32); /* mult: 1 ns a tick */
  p = ctr_put_varint(p, sizeof h + nent);
  memcpy(p, &h, sizeof h);
  memcpy(p + sizeof h, ent, nent);
  return (size_t)(p + sizeof h + nent - pay);
}

/* The last text line decode() met (NUL-terminated, cut to its size). */
static char last_line[256];

/* Decode the chunks at c (n bytes, one after the other) with a fresh
 * iterator into ev (up to max); returns the events, *end the last
 * ct_ctr_entry result. */
static unsigned decode(const uint8_t *c, size_t n, struct ct_ev_item *ev, unsigned max, int *end) {
  struct ct_ctr_iter it;
  char why[160];
  size_t len;
  unsigned k = 0;
  struct ct_ev_item e;
  struct ct_coro_item co;
  const char *line;
  size_t ln;
  int r = 0;
  last_line[0] = 0;
  ct_ctr_init(&it);
  for (size_t off = 0; off < n && r == 0; off += len) {
    ASSERT(ct_ctr_chunk(c + off, n - off, off, &len, why, sizeof why) == 1 && len <= n - off);
    ct_ctr_begin(&it, c + off);
    while ((r = ct_ctr_entry(&it, &e, &co, &line, &ln)) > 0) {
      if (r == 1 && k < max)
        ev[k++] = e;
      if (r == 2)
        snprintf(last_line, sizeof last_line, "%.*s", (int)ln, line);
    }
  }
  ct_ctr_fini(&it);
  *end = r;
  return k;
}

/* The wide check (a CHK5 chunk's) sees every flipped bit and a swap of
 * two 8-byte words, at every length up to 3 lanes' steps and a tail. */
static void wide_check(void) {
  uint8_t b[100];
  for (size_t i = 0; i < sizeof b; i++)
    b[i] = (uint8_t)(i * 37 + 11);
  for (size_t n = 0; n <= sizeof b; n++) {
    uint32_t c = ctr_check_wide(b, n);
    for (size_t i = 0; i < n * 8; i++) {
      b[i / 8] ^= (uint8_t)(1u << (i % 8));
      ASSERT(ctr_check_wide(b, n) != c);
      b[i / 8] ^= (uint8_t)(1u << (i % 8));
    }
    if (n >= 32) { /* words in two lanes swapped */
      uint8_t w[8];
      memcpy(w, b, 8);
      memcpy(b, b + 8, 8);
      memcpy(b + 8, w, 8);
      ASSERT(ctr_check_wide(b, n) != c);
      memcpy(b + 8, b, 8);
      memcpy(b, w, 8);
    }
    ASSERT(n < 8 || ctr_check_wide(b, n) != ctr_check_wide(b, n - 1));
  }
}

/* Standalone wakes and entry sites (CTP_PK_SOLO, CTP_PK_SITE): the wide
 * pack's last entry is coroutine 100's wake by 200, at its own site and
 * time; a standalone wake with a wait, obj or wake, a site 0 away or past
 * CTP_PK_SITE_NEAR does not decode; a header that counts more standalone
 * wakes than entries is refused whole, counted (bad_records, its events
 * lost). */
static void solo_check(uint8_t *chunk, uint8_t *pay, const struct ct_ev_item *ev) {
  ASSERT_EQ(ev[7].kind, CTP_KIND_WAKE);
  ASSERT_UINT64_EQ(ev[7].probe_id, 100);
  ASSERT_UINT64_EQ(ev[7].obj, 200);
  ASSERT_UINT64_EQ(ev[7].addr, 0xabc + 0x40);
  ASSERT_EQ(ev[7].ts, 6650);
  ASSERT_EQ(ev[7].ev, 4); /* 100: suspend, wake, resume, suspend, then this */
  ASSERT_EQ(ev[7].active, 0);
  struct ctp_pk_entry en;
  /* Flags (SOLO | SITE: the long spelling, a 2-byte varint, as older
   * writers wrote it), delta 1, `to` -1, site +0x40. */
  uint8_t ok[] = {0x80, 0x06, 1, 1, 0x80, 0x01};
  ASSERT(ctp_pk_get(ok, ok + sizeof ok, 1, 0, &en) == ok + sizeof ok);
  ASSERT(en.solo && en.from == 1 && en.to == 0 && en.dsite == 0x40 && !en.wake);
  ASSERT_EQ(ctp_pk_cur(&en), 1);
  ASSERT_EQ(ctp_pk_from_events(&en), 0);
  /* The same in the short spelling: one flag byte, its OBJ bit the site's. */
  uint8_t one[] = {(CTP_PK_SHORT_SOLO | CTP_PK_OBJ) << 1, 1, 1, 0x80, 0x01};
  ASSERT(ctp_pk_get(one, one + sizeof one, 1, 0, &en) == one + sizeof one);
  ASSERT(en.solo && en.from == 1 && en.to == 0 && en.dsite == 0x40 && !en.wake && !en.obj);
  one[0] |= CTP_PK_WAKE << 1; /* a standalone wake has no wake bit */
  ASSERT(ctp_pk_get(one, one + sizeof one, 1, 0, &en) == NULL);
  /* A short kind in two bytes (a bit past the byte set) or wait 7: refused. */
  uint8_t two[] = {0x80 | CTP_PK_SHORT_PTR << 1, 0x01, 1, 2, 2};
  ASSERT(ctp_pk_get(two, two + sizeof two, 0, WIDE_OBJ, &en) == NULL);
  two[0] = CTP_PK_SHORT_PTR << 1, two[1] = 1, two[2] = 2; /* delta 1, `to` +1, obj +1 */
  ASSERT(ctp_pk_get(two, two + 4, 0, WIDE_OBJ, &en) == two + 4);
  ASSERT(en.wait == CTP_WAIT_PTR && en.obj == WIDE_OBJ + 1 && en.to == 1 && !en.dsite);
  two[0] = 7 << 1;
  ASSERT(ctp_pk_get(two, two + 4, 0, WIDE_OBJ, &en) == NULL);
  static const uint8_t extra[] = {CTP_WAIT_PTR << 1, CTP_PK_WAKE << 1, CTP_PK_OBJ << 1};
  for (unsigned i = 0; i < sizeof extra; i++) {
    uint8_t bad[] = {(uint8_t)(0x80 | extra[i]), 0x06, 1, 1, 0x80, 0x01, 5};
    ASSERT(ctp_pk_get(bad, bad + sizeof bad, 1, 0, &en) == NULL);
  }
  uint8_t site0[] = {0x80, 0x06, 1, 1, 0x00};
  ASSERT(ctp_pk_get(site0, site0 + sizeof site0, 1, 0, &en) == NULL);
  uint8_t far[] = {0x80, 0x06, 1, 1, 0xff, 0xff, 0x07}; /* zigzag 2 x 0xffff + 1 */
  ASSERT(ctp_pk_get(far, far + sizeof far, 1, 0, &en) == NULL);
  far[4] = 0xfe; /* zigzag 2 x 0xffff: +0xffff */
  ASSERT(ctp_pk_get(far, far + sizeof far, 1, 0, &en) == far + sizeof far);
  ASSERT(en.dsite == 0xffff);
  /* nsolo past nent: refused whole; the formatter's claim (ctp_pack_events:
   * nsolo counted as nent, 2 x 4 + 1 - 4) lost, one bad record. */
  static const char end_line[] = "{\"type\":\"end\",\"events\":0,\"harvested\":5,\"lost\":0,"
                                 "\"bad_records\":0}";
  size_t at, n = payload(pay, &at, 0, 1), h = at;
  static const uint64_t ts0 = 9000;
  while (memcmp(pay + h, &ts0, sizeof ts0)) /* the header, after the entry's varints */
    h++;
  pay[h + offsetof(struct ctp_pack, nsolo)] = 5;
  size_t cn = frame(chunk, pay, n, 3);
  uint8_t *p = pay;
  *p++ = CTR_OP_LINE;
  p = ctr_put_varint(p, sizeof end_line - 1);
  memcpy(p, end_line, sizeof end_line - 1);
  cn += frame(chunk + cn, pay, (size_t)(p + sizeof end_line - 1 - pay), 1);
  int end;
  struct ct_ev_item got[16];
  ASSERT_EQ(decode(chunk, cn, got, 16, &end), 0);
  ASSERT_EQ(end, 0);
  ASSERT(strstr(last_line, "\"events\":5,\"harvested\":0,\"lost\":5,\"bad_records\":1"));
}

/* Pointer objs (CTP_PK_ODELTA): the wide pack reads back its objs, each
 * told from the last; an entry with both obj flags, an ODELTA obj of 0 or
 * of one CTP_PK_OBJ spells, or its varint cut short, does not decode. */
static void odelta_check(uint8_t *chunk, uint8_t *pay, struct ct_ev_item *ev) {
  size_t at, n = payload(pay, &at, 0, 1);
  int end;
  unsigned k = decode(chunk, frame(chunk, pay, n, 3), ev, 64, &end);
  ASSERT_EQ(end, 0);
  ASSERT_EQ(k, 8);
  solo_check(chunk, pay, ev);
  n = payload(pay, &at, 0, 1);
  ASSERT_EQ(ev[3].kind, CTP_KIND_SUSPEND);
  ASSERT_EQ(ev[3].wait, CTP_WAIT_PTR);
  ASSERT_UINT64_EQ(ev[3].obj, WIDE_OBJ);
  ASSERT_EQ(ev[5].kind, CTP_KIND_SUSPEND);
  ASSERT_UINT64_EQ(ev[5].obj, WIDE_OBJ - 16);
  ASSERT_EQ(ev[5].ts, 6600);
  struct ctp_pk_entry en;
  /* Flags (a 2-byte varint), delta 1, `to` +1, then the obj's varint. */
  uint8_t fl = (CTP_WAIT_PTR | CTP_PK_ODELTA) << 1 & 0x7f;
  uint8_t both[] = {(uint8_t)(fl | CTP_PK_OBJ << 1 | 0x80), 1, 1, 2, 4};
  ASSERT(ctp_pk_get(both, both + sizeof both, 0, 0, &en) == NULL);
  uint8_t d16[] = {(uint8_t)(fl | 0x80), 1, 1, 2, 0x20};             /* obj = the last + 16 */
  ASSERT(ctp_pk_get(d16, d16 + sizeof d16, 0, 0, &en) == NULL);      /* 16: CTP_PK_OBJ's */
  ASSERT(ctp_pk_get(d16, d16 + sizeof d16, 0, 0xffe0, &en) == NULL); /* 0xfff0 too */
  ASSERT(ctp_pk_get(d16, d16 + sizeof d16, 0, UINT64_MAX - 15, &en) == NULL); /* 0 */
  ASSERT(ctp_pk_get(d16, d16 + sizeof d16, 0, 0xfff0, &en) == d16 + sizeof d16);
  ASSERT_UINT64_EQ(en.obj, 0x10000);
  ASSERT(ctp_pk_get(d16, d16 + sizeof d16, 0, WIDE_OBJ, &en) == d16 + sizeof d16);
  ASSERT_UINT64_EQ(en.obj, WIDE_OBJ + 16);
  ASSERT_EQ(en.wait, CTP_WAIT_PTR);
  uint8_t cut[] = {(uint8_t)(fl | 0x80), 1, 1, 2, 0x80, 0x80};
  ASSERT(ctp_pk_get(cut, cut + sizeof cut, 0, WIDE_OBJ, &en) == NULL);
}

int main(void) {
  static uint8_t pay[4096], chunk[2 * (4096 + 16)];
  wide_check();
  struct ct_ev_item ev[64];
  size_t at, n = payload(pay, &at, 0, 0);
  int end;
  unsigned k = decode(chunk, frame(chunk, pay, n, 3), ev, 64, &end);
  /* suspend 100, wake 100, resume 200 at 5000 + 0; suspend 200 (ptr),
   * resume 100 at 5000 + 500 ... numbered per coroutine. */
  ASSERT_EQ(end, 0);
  ASSERT_EQ(k, 5);
  static const uint64_t probe[5] = {100, 100, 200, 200, 100}, evn[5] = {0, 1, 0, 1, 2};
  static const uint8_t kind[5] = {CTP_KIND_SUSPEND, CTP_KIND_WAKE, CTP_KIND_RESUME,
                                  CTP_KIND_SUSPEND, CTP_KIND_RESUME};
  for (unsigned i = 0; i < 5; i++) {
    ASSERT_EQ(ev[i].probe_id, probe[i]);
    ASSERT_EQ(ev[i].ev, evn[i]);
    ASSERT_EQ(ev[i].seq, 2 * (evn[i] + 1));
    ASSERT_EQ(ev[i].kind, kind[i]);
    ASSERT_EQ(ev[i].tid, 42);
    ASSERT_EQ(ev[i].ts, i < 3 ? 6000 : 6500);
    ASSERT_EQ(ev[i].addr, kind[i] == CTP_KIND_RESUME ? 0 : 0xabc);
  }
  ASSERT_EQ(ev[3].wait, CTP_WAIT_PTR);
  ASSERT_EQ(ev[3].obj, 0x1234);
  ASSERT_EQ(ev[4].active, 1);

  /* from_gen: the coroutine line's gen (1) reads as 0 (unchecked) does;
   * another (2, or 1 + 2^16: low 16 bits compared) refuses the pack. An
   * end line in the next chunk (harvested as the formatter counts a pack:
   * from its header): its lost and bad_records count the refusal. */
  static const char end_line[] = "{\"type\":\"end\",\"events\":0,\"harvested\":5,\"lost\":0,"
                                 "\"bad_records\":0}";
  static const uint16_t gens[3] = {1, 2, 0x0101};
  for (unsigned g = 0; g < 3; g++) {
    size_t gn = payload(pay, &at, gens[g], 0), cn = frame(chunk, pay, gn, 3);
    uint8_t *p = pay;
    *p++ = CTR_OP_LINE;
    p = ctr_put_varint(p, sizeof end_line - 1);
    memcpy(p, end_line, sizeof end_line - 1);
    cn += frame(chunk + cn, pay, (size_t)(p + sizeof end_line - 1 - pay), 1);
    k = decode(chunk, cn, ev, 64, &end);
    ASSERT_EQ(end, 0);
    ASSERT_EQ(k, g == 0 ? 5 : 0);
    ASSERT(strstr(last_line, g == 0 ? "\"events\":5,\"harvested\":5,\"lost\":0,\"bad_records\":0"
                                    : "\"events\":5,\"harvested\":0,\"lost\":5,\"bad_records\":1"));
  }
  odelta_check(chunk, pay, ev);

  /* Mutations of the pack's bytes (its framing varints, header, entries):
   * the decoder alone judges them; half the rounds on the wide pack. */
  unsigned bad = 0, good = 0;
  static uint8_t mut[4096];
  for (int round = 0; round < 200000; round++) {
    n = payload(pay, &at, 0, round & 1);
    memcpy(mut, pay, n);
    size_t m = n;
    int flips = 1 + (int)(ct_rnd(&rng) % 4);
    for (int f = 0; f < flips; f++) {
      size_t i = at + ct_rnd(&rng) % (n - at);
      mut[i] =
          (uint8_t)(ct_rnd(&rng) % 3 == 0 ? ct_rnd(&rng) : mut[i] ^ (1u << (ct_rnd(&rng) % 8)));
    }
    if (ct_rnd(&rng) % 8 == 0) /* cut, or longer than its framing says */
      m = at + ct_rnd(&rng) % (n - at + 16);
    k = decode(chunk, frame(chunk, mut, m, 3), ev, 64, &end);
    for (unsigned i = 0; i < k; i++)
      ASSERT(ev[i].probe_id == 100 || ev[i].probe_id == 200);
    end < 0 ? bad++ : good++;
  }
  ASSERT_GT(bad, 0);
  ASSERT_GT(good, 0);
  printf("test-pack-decode: ok (%u mutated chunks refused, %u read)\n", bad, good);
  return 0;
}
