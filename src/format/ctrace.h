/* ctrace.h - the compact binary trace (docs/TRACE_FORMAT.md "Binary trace"),
 * spelled once for its one encoder (ctrace_enc.c) and its one decoder
 * (ctrace_dec.c): file header, chunk framing, the entry
 * byte, varints and the chunk checksum. */
#ifndef CT_CTRACE_H
#define CT_CTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/ctp.h"

/* An event as the engine writes it (ts in ns): the one struct both formats
 * are written from (records.c for JSONL, ctrace_enc.c for binary) and the
 * binary decoder gives back, so a binary trace converts to the very JSONL
 * bytes a JSONL run writes. */
struct ct_ev_item {
  uint64_t ts, probe_id, tid, addr, seq, obj, ev;
  uint32_t gen;
  uint8_t kind, wait, active, pad;
};

/* A coroutine's static facts, as the engine writes them (records.c's
 * coroutine line, ctrace_enc.c's coroutine entry) and the decoder gives
 * them back. */
struct ct_coro_item {
  uint64_t probe_id, birth_ts, create_site, parent;
  uint32_t station, pid, gen;
  uint8_t has_label, pad[3];
  char label[CTP_LABEL_MAX]; /* NUL-terminated within CTP_LABEL_MAX, or cut there */
};

/* File header: a JSONL trace starts with '{', so the first byte tells. */
#define CTR_MAGIC                                                                                  \
  "\x89"                                                                                           \
  "CTRACE\n"
#define CTR_MAGIC_LEN 8u
/* 2: switch entries (CTR_F_SWITCH); 3: a wake names its waker by slot
 * (CTR_WAKER_*), a wait its object as again (CTR_WAIT_AGAIN), in chunks
 * tagged CTR_CHUNK_TAG; 4: coroutine entries like the last one
 * (ctrace_like.h). Older files read as before. */
#define CTR_VERSION 4u
struct ctr_file_hdr {
  char magic[CTR_MAGIC_LEN];
  uint32_t version; /* CTR_VERSION; a reader refuses a higher one */
  uint32_t flags;   /* 0; a reader ignores bits it does not know */
};
_Static_assert(sizeof(struct ctr_file_hdr) == 16, "file header: 16 bytes");

/* Then chunks, each self-contained (the decoder's state starts afresh), so a
 * reader can stop at the last whole one of a torn file. Little-endian. The
 * tag says how the chunk's wakes name their waker and its waits their
 * object: as a CTR_WAKER_* byte and with CTR_WAIT_AGAIN (CTR_CHUNK_TAG, what
 * the encoder writes), or as varints (the chunks of version 1 and 2 files). */
#define CTR_CHUNK_TAG 0x334b4843u    /* "CHK3" */
#define CTR_CHUNK_TAG_V1 0x314b4843u /* "CHK1" */
/* A chunk of a trace whose writers pack (docs/ROUTE1.md): a CTR_CHUNK_TAG
 * chunk that may hold pack entries (CTR_F_PACK), whose readers keep the
 * stream's state from its first chunk on. */
#define CTR_CHUNK_TAG_PACK 0x344b4843u /* "CHK4" */
/* What the encoder writes since 2026-11-29 where it wrote CTR_CHUNK_TAG_PACK:
 * the same chunk, its check ctr_check_wide (a quarter of ctr_check's time:
 * the check was a fifth of the engine's CPU a switch with packs). */
#define CTR_CHUNK_TAG_PACKW 0x354b4843u /* "CHK5" */
static inline int ctr_chunk_tag_known(uint32_t tag) {
  return tag == CTR_CHUNK_TAG || tag == CTR_CHUNK_TAG_V1 || tag == CTR_CHUNK_TAG_PACK ||
         tag == CTR_CHUNK_TAG_PACKW;
}
/* A chunk of a packing trace (its readers keep the stream's state). */
static inline int ctr_chunk_packs(uint32_t tag) {
  return tag == CTR_CHUNK_TAG_PACK || tag == CTR_CHUNK_TAG_PACKW;
}
struct ctr_chunk_hdr {
  uint32_t tag;   /* CTR_CHUNK_TAG */
  uint32_t len;   /* payload bytes after this header */
  uint32_t count; /* entries in the payload */
  uint32_t check; /* ctr_check(payload, len) */
};
_Static_assert(sizeof(struct ctr_chunk_hdr) == 16, "chunk header: 16 bytes");
_Static_assert(offsetof(struct ctr_chunk_hdr, len) == 4, "chunk len at 4");
_Static_assert(offsetof(struct ctr_chunk_hdr, check) == 12, "chunk check at 12");
/* Largest payload: a JSONL line of up to 64 MiB (the text reader's limit)
 * must fit in one chunk. A larger len is corruption. */
#define CTR_CHUNK_MAX ((64u << 20) + 64u)

/* An entry starts with one byte: its low 3 bits are the op. */
enum ctr_op {
  CTR_OP_V1 = 0,       /* events: the op is the kind (ctp_kind), ... */
  CTR_OP_CREATE = 1,   /* ... */
  CTR_OP_SUSPEND = 2,  /* suspend without a wait object */
  CTR_OP_RESUME = 3,   /* ... */
  CTR_OP_WAKE = 4,     /* ... */
  CTR_OP_DESTROY = 5,  /* ... */
  CTR_OP_LINE = 6,     /* a JSONL line: varint length, the bytes (no '\n'); */
                       /* with bit 3 (CTR_F_CORO): a coroutine entry */
  CTR_OP_SUSPEND_W = 7 /* suspend with a wait byte (1 fd, 2 ptr, 3 exit) */
};
_Static_assert((int)CTR_OP_CREATE == (int)CTP_KIND_CREATE &&
                   (int)CTR_OP_SUSPEND == (int)CTP_KIND_SUSPEND &&
                   (int)CTR_OP_RESUME == (int)CTP_KIND_RESUME &&
                   (int)CTR_OP_WAKE == (int)CTP_KIND_WAKE &&
                   (int)CTR_OP_DESTROY == (int)CTP_KIND_DESTROY &&
                   (int)CTR_OP_LINE == (int)CTP_KIND_MAX_,
               "an event's op is its kind");
/* The event bits of the entry byte: what the event shares with the state. */
enum {
  CTR_F_SAME_CORO = 1u << 3, /* probe_id of the previous event; else a coroutine byte */
  CTR_F_NEXT_EV = 1u << 4,   /* ev = the coroutine's next, seq its standard; else varints */
  CTR_F_SAME_TID = 1u << 5,  /* tid of the previous event; else a varint */
  CTR_F_ACTIVE = 1u << 6,    /* is_active */
  CTR_F_ADDR = 1u << 7       /* addr is the expected one (ctr_addr_expected); else a site ref */
};
/* Op 6 with this bit: a coroutine (its JSONL line's fields, not its text);
 * with bit 7 too, spelled like the chunk's last one (ctrace_like.h). */
#define CTR_F_CORO (1u << 3)
/* Coroutine contexts: a direct-mapped cache on probe_id. The coroutine byte
 * is the slot (< CTR_COROS) when the slot holds the probe_id, else
 * CTR_CORO_NEW and a varint probe_id (which then takes the slot). */
#define CTR_COROS 128u
#define CTR_CORO_NEW 0xffu
static inline uint32_t ctr_coro_slot(uint64_t probe_id) {
  return (uint32_t)((probe_id * 0x9e3779b97f4a7c15ull) >> 57); /* 7 bits */
}
_Static_assert(CTR_COROS == 128u, "ctr_coro_slot yields 7 bits");
/* A wake's waker (its obj) in a CTR_CHUNK_TAG chunk: one byte, a slot (<
 * CTR_COROS) of the coroutine cache that holds the waker as the entry's
 * coroutine byte left it (a scheduler's waker ran just before: 1 byte, not
 * the 10 of its probe_id's varint); CTR_WAKER_NONE for obj 0; or
 * CTR_WAKER_ID and the varint obj. The cache is not changed by it. */
#define CTR_WAKER_NONE 0x80u
#define CTR_WAKER_ID 0xffu
/* An op 7 entry's wait byte with this bit, in a CTR_CHUNK_TAG chunk: no
 * object follows, it is the coroutine's last (struct ctr_coro's wobj: a
 * channel's waiter waits on the same object every time, 1 byte, not the 7
 * of a pointer's varint). */
#define CTR_WAIT_AGAIN 0x80u
/* Op 6 with this bit: a switch entry, the three events of one switch
 * (docs/TRACE_FORMAT.md "Switch entries"): the suspend of `from`, its wake
 * (a yield), the resume of `to`, one ts, one tid, each event its coroutine's
 * next ev with standard seqs. The entry byte:
 *   bit 3 CTR_SW_DETAIL: a detail byte follows (else: the wake, plain);
 *   bit 5 CTR_SW_PRED: `to` is the coroutine that followed `from` the last
 *         time it left (its successor); else a `to` reference;
 *   bits 6-7: the thread slot (< CTR_SW_THREADS): `from` is that thread's
 *         current coroutine (the `to` of its last switch entry) at its next
 *         ev; or CTR_SW_THR_NEW: a varint tid, `from`'s probe_id and ev.
 * Then the ts delta (zigzag varint), the `to` reference unless PRED (a
 * varint: 0, then its probe_id and ev; else 1 + its slot in the switch
 * cache, at its next ev), and unless plain the suspend's site reference,
 * wait byte and obj (as a SUSPEND_W's; none for wait none or exit). */
#define CTR_F_SWITCH (1u << 4)
/* Op 6 with CTR_F_CORO and bit 5, not CTR_F_SWITCH (a coroutine entry has
 * bit 5 clear; a switch entry has bit 4, and uses bit 3 as its detail): a
 * pack (docs/ROUTE1.md), a thread's hot switches as its probe wrote them:
 * varint tid, varint ns0 (CLOCK_MONOTONIC ns of the pack's ts0), varint mult
 * (ns per tick, 32.32), varint n, then n bytes: the struct ctp_pack header
 * and its entries. Expanded by the decoder; nothing else in the chunk
 * refers to it. */
#define CTR_F_PACK (CTR_F_CORO | (1u << 5))
/* The byte of a gap entry (CTR_F_PACK and bit 6; in a CTR_CHUNK_TAG_PACK
 * chunk only): varint probe_id, varint ev, varint ns. The formatter's next
 * ev for that coroutine is ev from here on: events of it were lost (its
 * station's v2_lost grew) though it had no ordinary record to show the gap
 * at (a coroutine that only switches in packs, docs/ROUTE1.md item 4). The
 * decoder applies it at ns among the chunk's open packs; no line of its own. */
#define CTR_B_GAP (CTR_OP_LINE | CTR_F_PACK | (1u << 6))
#define CTR_SW_DETAIL (1u << 3)
#define CTR_SW_PRED (1u << 5)
#define CTR_SW_THR_SHIFT 6
#define CTR_SW_THREADS 3u
#define CTR_SW_THR_NEW 3u
/* The detail byte: the wake follows the suspend; the suspend is plain (wait
 * none, its site the coroutine's last). */
#define CTR_SWD_WAKE 1u
#define CTR_SWD_PLAIN 2u
/* The switch cache: per chunk, direct-mapped on probe_id, each coroutine's
 * next ev, last site and successor, as switch entries left them (only they
 * update it); and the threads' current coroutines. */
#define CTR_SW_COROS 4096u
struct ctr_sw_coro {
  uint64_t probe_id, next_ev, addr, succ;
};
struct ctr_sw {
  uint64_t valid[CTR_SW_COROS / 64]; /* slots filled in this chunk */
  struct {
    uint64_t tid, cur;
  } thr[CTR_SW_THREADS];
  uint32_t nthr; /* thread slots ever taken: a new thread takes nthr % CTR_SW_THREADS */
  struct ctr_sw_coro c[CTR_SW_COROS];
};
static inline uint32_t ctr_sw_slot(uint64_t probe_id) {
  return (uint32_t)((probe_id * 0x9e3779b97f4a7c15ull) >> 52); /* 12 bits */
}
_Static_assert(CTR_SW_COROS == 4096u, "ctr_sw_slot yields 12 bits");
/* A chunk's start: nothing known. */
static inline void ctr_sw_reset(struct ctr_sw *s) {
  memset(s->valid, 0, sizeof s->valid);
  memset(s->thr, 0, sizeof s->thr);
  s->nthr = 0;
}
/* Coroutine probe_id's cache entry, NULL when the cache does not hold it. */
static inline struct ctr_sw_coro *ctr_sw_get(struct ctr_sw *s, uint64_t probe_id) {
  uint32_t k = ctr_sw_slot(probe_id);
  if (!(s->valid[k / 64] >> (k % 64) & 1) || s->c[k].probe_id != probe_id)
    return NULL;
  return &s->c[k];
}
/* The thread slot of tid, or -1. */
static inline int ctr_sw_thread(const struct ctr_sw *s, uint64_t tid) {
  uint32_t n = s->nthr < CTR_SW_THREADS ? s->nthr : CTR_SW_THREADS;
  for (uint32_t k = 0; k < n; k++)
    if (s->thr[k].tid == tid)
      return (int)k;
  return -1;
}
/* Where a CTR_SW_THR_NEW entry puts thread tid. */
static inline uint32_t ctr_sw_new_thread(struct ctr_sw *s, uint64_t tid) {
  int k = ctr_sw_thread(s, tid);
  if (k >= 0)
    return (uint32_t)k;
  return s->nthr++ % CTR_SW_THREADS;
}

/* Sites: a site ref is a varint, 0 for a new site (8 bytes follow, and it
 * joins the table while it has room) or 1 + its index in the table. */
#define CTR_SITES 4096u

struct ctr_coro {
  uint64_t probe_id, next_ev, addr;
  uint64_t wobj; /* the object of its last op 7 entry with one (fd, ptr, coroutine) */
  int used;
  int slot_seq; /* its last seq was a v1 slot's, not 2 x (ev + 1) */
};

/* The seq the F_NEXT_EV bit stands for: a ring event's is 2 x (ev + 1); a
 * v1 slot's follows from its event index ev = (seq / 2 - 1) x 8 + slot. */
static inline uint64_t ctr_std_seq(const struct ctr_coro *c, uint64_t ev) {
  return c->slot_seq ? 2 * (ev / 8 + 1) : 2 * (ev + 1);
}
/* What addr is when the F_ADDR bit is set: 0 on a resume (and on a v1
 * event that is active), else the coroutine's last addr. */
static inline uint64_t ctr_addr_expected(uint8_t op, int active, const struct ctr_coro *c) {
  return op == CTR_OP_RESUME || (op == CTR_OP_V1 && active) ? 0 : c->addr;
}

/* The state a switch entry leaves, the encoder's and the decoder's alike:
 * thread slot thr runs `to`; the switch cache's `from` (at from_ev, with
 * wake its wake too) then `to` (at to_ev); the chunk's coroutine slots of
 * both as the three events would leave them (`to`'s taken over when another
 * holds it, so that the next entry may say F_SAME_CORO). Returns to's slot. */
static inline uint32_t ctr_sw_apply(struct ctr_sw *s, struct ctr_coro *coro, uint32_t thr,
                                    uint64_t tid, uint64_t from, uint64_t from_ev, int wake,
                                    uint64_t site, uint64_t to, uint64_t to_ev) {
  uint32_t k = ctr_sw_slot(from);
  s->valid[k / 64] |= 1ull << (k % 64);
  s->c[k] = (struct ctr_sw_coro){
      .probe_id = from, .next_ev = from_ev + 1 + (wake != 0), .addr = site, .succ = to};
  struct ctr_sw_coro *t = ctr_sw_get(s, to);
  if (t) {
    t->next_ev = to_ev + 1;
  } else {
    k = ctr_sw_slot(to);
    s->valid[k / 64] |= 1ull << (k % 64);
    s->c[k] = (struct ctr_sw_coro){.probe_id = to, .next_ev = to_ev + 1};
  }
  s->thr[thr].tid = tid;
  s->thr[thr].cur = to;
  struct ctr_coro *c = &coro[ctr_coro_slot(from)];
  if (c->used && c->probe_id == from) {
    c->next_ev = from_ev + 1 + (wake != 0);
    c->addr = site;
    c->slot_seq = 0;
  }
  uint32_t slot = ctr_coro_slot(to);
  c = &coro[slot];
  if (c->used && c->probe_id == to)
    c->next_ev = to_ev + 1;
  else
    *c = (struct ctr_coro){.probe_id = to, .next_ev = to_ev + 1, .used = 1};
  c->slot_seq = 0;
  return slot;
}

/* LEB128: 7 bits a byte, low first; at most 10 bytes. */
static inline uint8_t *ctr_put_varint(uint8_t *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}
/* A line entry (CTR_OP_LINE: the n bytes of s, no '\n') at p, which has
 * room for 11 + n bytes; returns its end. */
static inline uint8_t *ctr_put_line(uint8_t *p, const char *s, size_t n) {
  *p++ = CTR_OP_LINE;
  p = ctr_put_varint(p, n);
  memcpy(p, s, n);
  return p + n;
}
/* NULL when the varint runs past e or is longer than 10 bytes. */
static inline const uint8_t *ctr_get_varint(const uint8_t *p, const uint8_t *e, uint64_t *v) {
  if (p < e && *p < 0x80) { /* one byte: most of them (a ts delta, a small ev) */
    *v = *p;
    return p + 1;
  }
  uint64_t x = 0;
  for (unsigned s = 0; p < e && s < 70; s += 7) {
    uint8_t b = *p++;
    x |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) {
      *v = x;
      return p;
    }
  }
  return NULL;
}
static inline uint64_t ctr_zigzag(int64_t v) {
  return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t ctr_unzigzag(uint64_t v) {
  return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* The payload's checksum: catches a flipped or shifted byte, costs ~0.2 ns a
 * byte (a multiply per 8 bytes). Not cryptographic: the trace's writer is
 * trusted, its storage is not. */
static inline uint32_t ctr_check(const void *data, size_t n) {
  const unsigned char *p = data;
  uint64_t h = 0x243f6a8885a308d3ull ^ n;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  memcpy(&w, p, n);
  h = (h ^ w ^ ((uint64_t)n << 56)) * 0x9e3779b97f4a7c15ull;
  return (uint32_t)(h ^ (h >> 29) ^ (h >> 47));
}

/* One lane's step of ctr_check_wide. The empty asm keeps the lane in a
 * general register: gcc -O2 made the four lanes two SSE2 vectors, whose
 * 64-bit multiplies (three pmuludq each) made it slower than ctr_check. */
#define CTR_LANE(h, p)                                                                             \
  do {                                                                                             \
    uint64_t w_;                                                                                   \
    memcpy(&w_, (p), 8);                                                                           \
    (h) = ((h) ^ w_) * 0x9e3779b97f4a7c15ull;                                                      \
    (h) ^= (h) >> 32;                                                                              \
    __asm__("" : "+r"(h));                                                                         \
  } while (0)

/* ctr_check's mix in four lanes, 32 bytes a step (no lane waits on another's
 * multiply), folded into one and ended by ctr_check over the last < 32
 * bytes: a CTR_CHUNK_TAG_PACKW chunk's check. */
static inline uint32_t ctr_check_wide(const void *data, size_t n) {
  const unsigned char *p = data;
  uint64_t h0 = 0x243f6a8885a308d3ull ^ n, h1 = 0x13198a2e03707344ull, h2 = 0xa4093822299f31d0ull,
           h3 = 0x082efa98ec4e6c89ull;
  size_t k = n;
  for (; k >= 32; k -= 32, p += 32) {
    CTR_LANE(h0, p);
    CTR_LANE(h1, p + 8);
    CTR_LANE(h2, p + 16);
    CTR_LANE(h3, p + 24);
  }
  uint64_t f = h0;
  f = ((f ^ h1) * 0x9e3779b97f4a7c15ull) ^ (f >> 32);
  f = ((f ^ h2) * 0x9e3779b97f4a7c15ull) ^ (f >> 32);
  f = ((f ^ h3) * 0x9e3779b97f4a7c15ull) ^ (f >> 32);
  return ctr_check(p, k) ^ (uint32_t)(f ^ (f >> 29) ^ (f >> 47));
}

/* A chunk's check as its tag says. */
static inline uint32_t ctr_chunk_check(uint32_t tag, const void *data, size_t n) {
  return tag == CTR_CHUNK_TAG_PACKW ? ctr_check_wide(data, n) : ctr_check(data, n);
}

#endif /* CT_CTRACE_H */
