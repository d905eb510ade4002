/* ctrace_enc.h - the binary trace encoder's state and its per-event entry,
 * inline for the formatter's hot path (rings.c's emit); the rest of the
 * encoder is ctrace_enc.c (its interface in ctw.h). The engine's formatter and the tests use it. */
#ifndef CT_CTRACE_ENC_H
#define CT_CTRACE_ENC_H

#include "common/buf.h"
#include "common/coverage.h"
#include "format/ctrace.h"
#include "format/ctrace_like.h"
#include "format/ctw.h"
#include "format/writer.h"

/* A chunk is closed once its payload reaches this: a few ms of a busy run,
 * one write(2). */
#define CT_CTW_CHUNK (64u * 1024u)
/* Longest event entry: op, coroutine byte and varint, 4 varints, a site (varint
 * and 8 bytes), wait byte or waker byte, obj. */
#define CT_CTW_EVENT_MAX 96u
/* The site table's hash: twice the table, open addressing. */
#define CT_CTW_SITE_HASH (2 * CTR_SITES)

struct ct_ctw {
  struct ct_writer *out;
  uint8_t *buf; /* chunk header, then the payload */
  size_t cap, len;
  uint32_t count;
  /* The chunk's state, mirrored by the decoder. */
  uint64_t last_ts, last_tid, prev_probe;
  int have_prev;
  struct ctr_coro coro[CTR_COROS];
  uint32_t nsites, gen; /* gen: the chunk, so the hash needs no clearing */
  struct {
    uint64_t site;
    uint32_t idx, gen;
  } hash[CT_CTW_SITE_HASH];
  uint64_t first_ts; /* the chunk's first event's, when have_prev */
  /* The chunk's packs' first and last entries' ts (pk_last 0: none): its ts
   * bounds (the flight window's) cover them, the events' delta state not. */
  uint64_t pk_first, pk_last;
  uint32_t rebinds;     /* coroutine lines, gaps, standalone wakes (struct ct_ctw_chunk) */
  struct ctr_sw sw;     /* switch entries' state (format/ctrace.h) */
  struct ctr_like like; /* coroutine entries' (format/ctrace_like.h) */
  struct ct_ctw_to to;  /* chunks and lines elsewhere (to.chunk set), or to out */
  /* A JSONL line whose '\n' has not come yet. */
  struct ct_buf pend;
  int pend_dropped;
  int hold;     /* ct_ctw_hold */
  uint32_t tag; /* of the chunks it writes: CTR_CHUNK_TAG, or CTR_CHUNK_TAG_PACK (ct_ctw_packs) */
};

/* Room for need more payload bytes: the chunk is closed first when it is
 * full, and grown for a long line. 0 or -ENOMEM. */
int ct_ctw_room(struct ct_ctw *e, size_t need);
/* The site reference of addr at p (its index + 1, or 0 and the 8 bytes);
 * returns the end. */
uint8_t *ct_ctw_put_site(struct ct_ctw *e, uint8_t *p, uint64_t addr);
/* ct_ctw_put_site's reference: addr's index + 1 in the chunk's site table,
 * or 0 for the 8 bytes (a site new to the chunk, which then takes the next
 * index while the table has room). An index, once had, stays the site's for
 * the rest of the chunk. */
uint32_t ct_ctw_site_ref(struct ct_ctw *e, uint64_t addr);

/* An event entry's last part, after its site: the wait byte and object of
 * a suspend with a wait (CTR_WAIT_AGAIN when the object is *wobj, the
 * coroutine's last, which it then becomes; wobj NULL: a switch entry's,
 * never again), the waker of a wake (by its slot in e's coroutine cache when
 * the slot holds it: format/ctrace.h CTR_WAKER_*), the parent of a create.
 * The cache is as the entry's coroutine byte left it (the decoder reads the
 * waker there). Returns the end. */
static inline __attribute__((always_inline)) uint8_t *ct_ctw_put_obj(const struct ct_ctw *e,
                                                                     uint8_t *p, uint8_t op,
                                                                     uint8_t wait, uint64_t obj,
                                                                     uint64_t *wobj) {
  if (op == CTR_OP_SUSPEND_W) {
    const int has = wait == CTP_WAIT_FD || wait == CTP_WAIT_PTR || wait == CTP_WAIT_COROUTINE;
    if (wobj && has && *wobj == obj) {
      *p++ = (uint8_t)(wait | CTR_WAIT_AGAIN);
      return p;
    }
    *p++ = wait;
    if (wait == CTP_WAIT_FD)
      p = ctr_put_varint(p, ctr_zigzag((int64_t)obj));
    else if (has)
      p = ctr_put_varint(p, obj);
    if (wobj && has)
      *wobj = obj;
  } else if (op == CTR_OP_WAKE) {
    const uint32_t k = ctr_coro_slot(obj);
    const struct ctr_coro *c = &e->coro[k];
    if (obj && c->used && c->probe_id == obj) {
      *p++ = (uint8_t)k;
    } else if (!obj) {
      *p++ = CTR_WAKER_NONE;
    } else {
      *p++ = CTR_WAKER_ID;
      p = ctr_put_varint(p, obj);
    }
  } else if (op == CTR_OP_CREATE) {
    p = ctr_put_varint(p, obj);
  }
  return p;
}

/* One event entry from its fields (ct_ctw_event and ct_ctw_v2 inline it:
 * the v2 one, with seq and active known, loses the tests they decide). */
static inline __attribute__((always_inline)) void
ct_ctw_encode(struct ct_ctw *e, uint64_t ts, uint64_t probe, uint64_t tid, uint64_t addr,
              uint64_t evn, uint64_t seq, uint64_t obj, uint8_t kind, uint8_t wait, int active) {
  /* The common case, a chunk with room, without a call; and the state read
   * into locals once: the stores through p (bytes) may alias any field of
   * e, so the compiler would reload each one after every byte written. */
  if (e->len + CT_CTW_EVENT_MAX > sizeof(struct ctr_chunk_hdr) + CT_CTW_CHUNK &&
      ct_ctw_room(e, CT_CTW_EVENT_MAX))
    return;
  const int have_prev = e->have_prev;
  /* What the JSONL line shows is all that is kept: an unknown kind is a v1
   * event there, a wait outside fd/ptr/exit none, is_active a boolean. */
  uint8_t op = kind < CTP_KIND_MAX_ ? kind : CTR_OP_V1;
  if (op == CTR_OP_SUSPEND && wait >= CTP_WAIT_FD && wait < CTP_WAIT_MAX_)
    op = CTR_OP_SUSPEND_W;
  uint8_t *p0 = e->buf + e->len, *p = p0 + 1;
  uint8_t b = op | (active ? CTR_F_ACTIVE : 0);
  uint32_t slot = ctr_coro_slot(probe);
  struct ctr_coro *c = &e->coro[slot];
  struct ctr_coro cc = {.next_ev = c->next_ev, .addr = c->addr, .slot_seq = c->slot_seq};
  if (have_prev && e->prev_probe == probe) {
    b |= CTR_F_SAME_CORO;
  } else if (c->used && c->probe_id == probe) {
    *p++ = (uint8_t)slot;
  } else {
    *p++ = CTR_CORO_NEW;
    p = ctr_put_varint(p, probe);
    *c = (struct ctr_coro){.probe_id = probe, .used = 1};
    cc = *c;
  }
  uint64_t last_tid = e->last_tid;
  p = ctr_put_varint(p, ctr_zigzag((int64_t)(ts - e->last_ts)));
  if (evn == cc.next_ev && seq == ctr_std_seq(&cc, evn)) {
    b |= CTR_F_NEXT_EV;
  } else {
    p = ctr_put_varint(p, evn);
    p = ctr_put_varint(p, seq);
  }
  if (have_prev && tid == last_tid)
    b |= CTR_F_SAME_TID;
  else
    p = ctr_put_varint(p, tid);
  uint8_t base = op == CTR_OP_SUSPEND_W ? CTR_OP_SUSPEND : op;
  if (addr == ctr_addr_expected(base, active, &cc))
    b |= CTR_F_ADDR;
  else
    p = ct_ctw_put_site(e, p, addr);
  p = ct_ctw_put_obj(e, p, op, wait, obj, &c->wobj);
  *p0 = b;
  e->len += (size_t)(p - p0);
  e->count++;
  if (!have_prev)
    e->first_ts = ts;
  /* The state the decoder will have after this entry. */
  if (!(base == CTR_OP_RESUME || (base == CTR_OP_V1 && active)))
    c->addr = addr;
  c->next_ev = evn + 1;
  c->slot_seq = seq != 2 * (evn + 1);
  e->last_ts = ts;
  e->last_tid = tid;
  e->prev_probe = probe;
  e->have_prev = 1;
}

/* One v2 record's event, from its fields (no item built): the bytes
 * ct_ctw_event writes for the item rings.c's emit builds for JSONL (seq
 * 2 * (evn + 1), active on a resume, no site on a resume). Inline into
 * emit: a call per event, with its nine arguments, was a tenth of the
 * formatter's instructions. kind and wait are in range (emit checked). */
static inline __attribute__((always_inline)) void
ct_ctw_v2(struct ct_ctw *e, uint64_t ts, uint64_t probe, uint64_t tid, uint8_t kind, uint8_t wait,
          uint64_t site, uint64_t obj, uint64_t evn) {
  int resume = kind == CTP_KIND_RESUME;
  ct_ctw_encode(e, ts, probe, tid, resume ? 0 : site, evn, 2 * (evn + 1), obj, kind, wait, resume);
}

/* One switch as one switch entry (format/ctrace.h CTR_F_SWITCH): the
 * suspend of coroutine from (its ev from_ev; wait, site, obj), with wake its
 * wake (ev from_ev + 1, same site, waker none), the resume of to (its ev
 * to_ev), all at ts on tid, standard seqs: the events ct_ctw_v2 would write
 * one by one, in 3 to 5 bytes when the cache knows both coroutines. The
 * caller made sure from != to (probe_ids) and that ts does not go back for
 * either. */
void ct_ctw_switch(struct ct_ctw *e, uint64_t ts, uint64_t tid, uint64_t from, uint64_t from_ev,
                   int wake, uint8_t wait, uint64_t site, uint64_t obj, uint64_t to,
                   uint64_t to_ev);

/* ctr_put_varint's bytes, without a branch on the length below 2^14 (a
 * burst's ts deltas are 1 or 2 bytes, in no order a predictor learns): two
 * bytes stored, one or both kept. Needs a byte of room past the varint. */
static inline __attribute__((always_inline)) uint8_t *ct_ctw_put_varint14(uint8_t *p, uint64_t v) {
  if (v >= 1u << 14)
    return ctr_put_varint(p, v);
  unsigned two = v >= 0x80;
  p[0] = (uint8_t)(v | (two << 7));
  p[1] = (uint8_t)(v >> 7);
  return p + 1 + two;
}

/* ct_ctw_v2's entry in its common case, the coroutines of a scheduler
 * taking turns, with its tests few and its state in registers: the chunk
 * has room, an entry came before in it, the coroutine's slot holds it with
 * standard seqs or is taken over (a new coroutine byte; not when the last
 * entry was this coroutine's), and kind is a suspend, resume or wake with
 * wait below CTP_WAIT_MAX_. Then it writes the bytes ct_ctw_v2 would and
 * returns 1; else it writes nothing and returns 0 (the caller takes
 * ct_ctw_v2). */
static inline __attribute__((always_inline)) int
ct_ctw_v2_hit(struct ct_ctw *e, uint64_t ts, uint64_t probe, uint64_t tid, uint8_t kind,
              uint8_t wait, uint64_t site, uint64_t obj, uint64_t evn) {
  const uint32_t slot = ctr_coro_slot(probe);
  struct ctr_coro *c = &e->coro[slot];
  const size_t len = e->len;
  if (len + CT_CTW_EVENT_MAX > sizeof(struct ctr_chunk_hdr) + CT_CTW_CHUNK || !e->have_prev)
    return 0;
  const int held = c->used && c->probe_id == probe, same = e->prev_probe == probe;
  if (held ? c->slot_seq : same)
    return 0;
  const uint64_t last_ts = e->last_ts, last_tid = e->last_tid;
  const uint64_t next = held ? c->next_ev : 0, addr = held ? c->addr : 0;
  uint8_t op = kind;
  if (op == CTR_OP_SUSPEND && wait >= CTP_WAIT_FD)
    op = CTR_OP_SUSPEND_W;
  uint8_t *p0 = e->buf + len, *p = p0 + 1;
  uint8_t b = op;
  if (same) {
    b |= CTR_F_SAME_CORO;
  } else if (held) {
    *p++ = (uint8_t)slot;
  } else { /* the slot's state as ct_ctw_encode resets it */
    *p++ = CTR_CORO_NEW;
    p = ctr_put_varint(p, probe);
    *c = (struct ctr_coro){.probe_id = probe, .used = 1};
  }
  p = ct_ctw_put_varint14(p, ctr_zigzag((int64_t)(ts - last_ts)));
  if (evn == next) {
    b |= CTR_F_NEXT_EV;
  } else {
    p = ctr_put_varint(p, evn);
    p = ctr_put_varint(p, 2 * (evn + 1));
  }
  if (tid == last_tid)
    b |= CTR_F_SAME_TID;
  else
    p = ctr_put_varint(p, tid);
  if (op == CTR_OP_RESUME) {
    b |= CTR_F_ACTIVE | CTR_F_ADDR; /* addr 0, the expected one */
  } else {
    if (site == addr)
      b |= CTR_F_ADDR;
    else
      p = ct_ctw_put_site(e, p, site);
    c->addr = site;
  }
  p = ct_ctw_put_obj(e, p, op, wait, obj, &c->wobj);
  *p0 = b;
  c->next_ev = evn + 1;
  e->len = (size_t)(p - e->buf);
  e->count++;
  e->last_ts = ts;
  e->last_tid = tid;
  e->prev_probe = probe;
  return 1;
}

/* A stretch of v2 events that continue the last entry written: the same
 * coroutine and tid, each event the coroutine's next ev, none a create or
 * destroy (the formatter's burst of one coroutine). Each entry is the bytes
 * ct_ctw_v2 would write (F_SAME_CORO, F_NEXT_EV, F_SAME_TID always set),
 * from state kept here in locals across the stretch: through p, a byte
 * pointer, every store may alias e's fields. ct_ctw_run_begin says whether
 * the encoder's state allows it; ct_ctw_run_end stores the state back. */
struct ct_ctw_run {
  uint8_t *p;       /* the next entry's first byte */
  uint8_t *end;     /* an entry may start at or below it (the chunk has room) */
  uint64_t last_ts; /* the previous entry's ts */
  uint64_t addr;    /* the coroutine's last addr (ctr_addr_expected) */
  uint64_t wobj;    /* its last wait object (struct ctr_coro's) */
};

/* 1 when the next entry of coroutine probe (on thread tid, its ev evn) can
 * be written by ct_ctw_run_v2: the last entry was that coroutine's on tid,
 * at ts last_ts (the caller's ts of its previous event: s->last_ts serves
 * both), evn is its next ev with standard seqs. Then s is set up. Else 0. */
static inline __attribute__((always_inline)) int ct_ctw_run_begin(struct ct_ctw *e,
                                                                  struct ct_ctw_run *s,
                                                                  uint64_t probe, uint64_t tid,
                                                                  uint64_t evn, uint64_t last_ts) {
  const struct ctr_coro *c = &e->coro[ctr_coro_slot(probe)];
  if (!e->have_prev || e->prev_probe != probe || e->last_tid != tid || e->last_ts != last_ts ||
      !c->used || c->probe_id != probe || c->next_ev != evn || c->slot_seq)
    return 0;
  s->p = e->buf + e->len;
  /* ct_ctw_encode's test for a chunk with room, as a pointer. */
  s->end = e->buf + sizeof(struct ctr_chunk_hdr) + CT_CTW_CHUNK - CT_CTW_EVENT_MAX;
  s->last_ts = e->last_ts;
  s->addr = c->addr;
  s->wobj = c->wobj;
  return 1;
}

/* The stretch's next entry (s->p <= s->end: the caller checks): kind is a
 * suspend, resume or wake, wait below CTP_WAIT_MAX_; site as a record's
 * (a resume's is not written: its addr is 0). */
static inline __attribute__((always_inline)) void ct_ctw_run_v2(struct ct_ctw *e,
                                                                struct ct_ctw_run *s, uint64_t ts,
                                                                uint8_t kind, uint8_t wait,
                                                                uint64_t site, uint64_t obj) {
  uint8_t op = kind;
  if (op == CTR_OP_SUSPEND && wait >= CTP_WAIT_FD)
    op = CTR_OP_SUSPEND_W;
  uint8_t *p0 = s->p, *p = p0 + 1;
  uint8_t b = op | CTR_F_SAME_CORO | CTR_F_NEXT_EV | CTR_F_SAME_TID;
  p = ct_ctw_put_varint14(p, ctr_zigzag((int64_t)(ts - s->last_ts)));
  if (op == CTR_OP_RESUME) {
    b |= CTR_F_ACTIVE | CTR_F_ADDR; /* addr 0, the expected one */
  } else {
    if (site == s->addr)
      b |= CTR_F_ADDR;
    else
      p = ct_ctw_put_site(e, p, site);
    s->addr = site;
  }
  p = ct_ctw_put_obj(e, p, op, wait, obj, &s->wobj);
  *p0 = b;
  s->p = p;
  s->last_ts = ts;
}

/* The stretch's state back into e: n entries were written, evn is the
 * coroutine's next ev. */
static inline __attribute__((always_inline)) void ct_ctw_run_end(struct ct_ctw *e,
                                                                 const struct ct_ctw_run *s,
                                                                 uint64_t probe, uint64_t evn,
                                                                 size_t n) {
  struct ctr_coro *c = &e->coro[ctr_coro_slot(probe)];
  c->addr = s->addr;
  c->wobj = s->wobj;
  c->next_ev = evn;
  e->len = (size_t)(s->p - e->buf);
  e->count += (uint32_t)n;
  e->last_ts = s->last_ts;
}

/* A stretch of v2 events of two coroutines taking turns on one tid (a
 * thread's two fibers handing it back and forth: wake, suspend, resume, the
 * coroutine changing nearly every entry), each event its coroutine's next ev
 * with standard seqs, none a create or destroy. Each entry is the bytes
 * ct_ctw_v2 would write (F_NEXT_EV and F_SAME_TID always set; the coroutine
 * byte, or F_SAME_CORO when the entry before was the same coroutine's), from
 * the two coroutines' state kept here: through p, a byte pointer, every store
 * may alias e's fields. ct_ctw_pair_begin says whether the encoder's state
 * allows it; ct_ctw_pair_end stores the state back. */
struct ct_ctw_pair {
  uint8_t *p, *end; /* as struct ct_ctw_run's */
  uint64_t last_ts; /* the previous entry's ts */
  uint64_t probe[2], next_ev[2], addr[2], wobj[2];
  uint8_t slot[2];
  unsigned cur; /* whose was the previous entry */
  uint32_t n;   /* entries written */
  /* The last two sites found in the chunk's table and their references
   * (ct_ctw_site_ref): the two coroutines' sites alternate (a wake's line,
   * a wait's), each a table look-up otherwise. */
  uint64_t site[2];
  uint32_t ref[2];
  unsigned older; /* the entry a new one replaces */
};

/* 1 when coroutines probe[0] (its next ev ev[0]) and probe[1] (ev[1]) can
 * go on as a pair on thread tid: the last entry was probe[1]'s on tid, each
 * holds its slot (two slots) with standard seqs and ev is its next ev. Then
 * s is set up. Else 0. */
static inline __attribute__((always_inline)) int
ct_ctw_pair_begin(struct ct_ctw *e, struct ct_ctw_pair *s, const uint64_t probe[2],
                  const uint64_t ev[2], uint64_t tid) {
  if (!e->have_prev || e->prev_probe != probe[1] || e->last_tid != tid || probe[0] == probe[1])
    return 0;
  for (unsigned k = 0; k < 2; k++) {
    const uint32_t slot = ctr_coro_slot(probe[k]);
    const struct ctr_coro *c = &e->coro[slot];
    if (!c->used || c->probe_id != probe[k] || c->next_ev != ev[k] || c->slot_seq)
      return 0;
    s->probe[k] = probe[k];
    s->next_ev[k] = ev[k];
    s->addr[k] = c->addr;
    s->wobj[k] = c->wobj;
    s->slot[k] = (uint8_t)slot;
  }
  s->p = e->buf + e->len;
  s->end = e->buf + sizeof(struct ctr_chunk_hdr) + CT_CTW_CHUNK - CT_CTW_EVENT_MAX;
  s->last_ts = e->last_ts;
  s->cur = 1;
  s->n = 0;
  s->ref[0] = s->ref[1] = 0; /* none: ref 0 is never kept */
  s->site[0] = s->site[1] = 0;
  s->older = 0;
  return 1;
}

/* The site reference of site at p, as ct_ctw_put_site writes it, from the
 * stretch's two last found when it is one of them. Returns the end. */
static inline __attribute__((always_inline)) uint8_t *
ct_ctw_pair_site(struct ct_ctw *e, struct ct_ctw_pair *s, uint8_t *p, uint64_t site) {
  uint32_t ref;
  if (s->ref[0] && s->site[0] == site) {
    ref = s->ref[0];
  } else if (s->ref[1] && s->site[1] == site) {
    ref = s->ref[1];
  } else {
    ref = ct_ctw_site_ref(e, site);
    if (!ref) {
      *p++ = 0;
      memcpy(p, &site, 8);
      return p + 8;
    }
    s->site[s->older] = site;
    s->ref[s->older] = ref;
    s->older ^= 1;
  }
  return ctr_put_varint(p, ref);
}

/* The stretch's next entry, coroutine k's (s->p <= s->end: the caller
 * checks); kind and wait as ct_ctw_run_v2's. */
static inline __attribute__((always_inline)) void
ct_ctw_pair_v2(struct ct_ctw *e, struct ct_ctw_pair *s, unsigned k, uint64_t ts, uint8_t kind,
               uint8_t wait, uint64_t site, uint64_t obj) {
  uint8_t op = kind;
  if (op == CTR_OP_SUSPEND && wait >= CTP_WAIT_FD)
    op = CTR_OP_SUSPEND_W;
  uint8_t *p0 = s->p, *p = p0 + 1;
  uint8_t b = op | CTR_F_NEXT_EV | CTR_F_SAME_TID;
  if (k == s->cur)
    b |= CTR_F_SAME_CORO;
  else
    *p++ = s->slot[k];
  p = ct_ctw_put_varint14(p, ctr_zigzag((int64_t)(ts - s->last_ts)));
  if (op == CTR_OP_RESUME) {
    b |= CTR_F_ACTIVE | CTR_F_ADDR; /* addr 0, the expected one */
  } else {
    if (site == s->addr[k])
      b |= CTR_F_ADDR;
    else
      p = ct_ctw_pair_site(e, s, p, site);
    s->addr[k] = site;
  }
  p = ct_ctw_put_obj(e, p, op, wait, obj, &s->wobj[k]);
  *p0 = b;
  s->p = p;
  s->last_ts = ts;
  s->next_ev[k]++;
  s->cur = k;
  s->n++;
}

/* The stretch's state back into e. */
static inline __attribute__((always_inline)) void ct_ctw_pair_end(struct ct_ctw *e,
                                                                  const struct ct_ctw_pair *s) {
  for (unsigned k = 0; k < 2; k++) {
    struct ctr_coro *c = &e->coro[s->slot[k]];
    c->addr = s->addr[k];
    c->wobj = s->wobj[k];
    c->next_ev = s->next_ev[k];
  }
  e->len = (size_t)(s->p - e->buf);
  e->count += s->n;
  e->last_ts = s->last_ts;
  e->prev_probe = s->probe[s->cur];
}

#endif /* CT_CTRACE_ENC_H */
