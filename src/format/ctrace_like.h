/* ctrace_like.h - a coroutine entry like the chunk's last one (binary trace
 * version 4, docs/TRACE_FORMAT.md "Entries"): its bits and the state its
 * writer (ctrace_enc.c put_like) and its reader (ctrace_dec.c get_like)
 * keep alike, spelled once.
 *
 * A server that makes a coroutine a request writes a coroutine entry a
 * request, and the full entry (probe_id, station, gen, pid, birth, site,
 * parent, label: ~22 bytes) was a third of its trace, the create that
 * follows (its probe_id again: ~10 bytes) a sixth. Consecutive coroutines
 * share most of it: the same pid, label, create site and parent, a station
 * next to the last, a probe_id one past the last one of its thread (the
 * probe's ids are a thread's index above bit 40 and its count below). */
#ifndef CT_CTRACE_LIKE_H
#define CT_CTRACE_LIKE_H

#include "format/ctrace.h"

/* The entry byte: op 6 with CTR_F_CORO and this bit (bit 6 still says a
 * label; bits 4 and 5 clear). A reader of version 3 took the byte for a
 * full entry, hence the version. */
#define CTR_F_LIKE (1u << 7)
/* Then a flags byte: */
enum {
  CTR_LK_HI = 3u,          /* bits 0-1: the slot of the probe_id's high part */
  CTR_LK_NEW_HI = 1u << 2, /* a varint probe_id follows; its high part takes a slot */
  CTR_LK_PID = 1u << 3,    /* pid: the last one's; else a varint */
  CTR_LK_GEN = 1u << 4,    /* gen: the last one's; else a varint */
  CTR_LK_SITE = 1u << 5,   /* create site: the last one's; else a site reference */
  CTR_LK_PARENT = 1u << 6, /* parent: the last one's; else a varint */
  CTR_LK_LABEL = 1u << 7   /* label: the last one's (both have one); else as the full entry's */
};
/* Then, unless NEW_HI, the zigzag varint of the probe_id's low part less its
 * slot's last; the station's zigzag varint less the last one's; gen, pid; the
 * birth as the full entry's (a zigzag varint against the chunk's last ts);
 * the site, parent and label the flags leave. */
#define CTR_LK_HI_SHIFT 40
#define CTR_LK_HIS 4u
#define CTR_LK_LO_MASK ((1ull << CTR_LK_HI_SHIFT) - 1)

/* The chunk's state for it, the encoder's and the decoder's alike: the
 * last coroutine entry (full or like), and the last probe_id of each of the
 * last few high parts. A chunk starts with none (ctr_like_reset). */
struct ctr_like {
  struct ct_coro_item last;
  uint64_t hi[CTR_LK_HIS], lo[CTR_LK_HIS];
  uint32_t nhi; /* high parts ever taken: the next takes nhi % CTR_LK_HIS */
  int have;     /* last holds an entry */
};

static inline void ctr_like_reset(struct ctr_like *l) {
  l->have = 0;
  l->nhi = 0;
}

/* The slot of probe_id's high part, or -1. */
static inline int ctr_like_slot(const struct ctr_like *l, uint64_t probe_id) {
  uint32_t n = l->nhi < CTR_LK_HIS ? l->nhi : CTR_LK_HIS;
  for (uint32_t k = 0; k < n; k++)
    if (l->hi[k] == probe_id >> CTR_LK_HI_SHIFT)
      return (int)k;
  return -1;
}

/* After any coroutine entry c (full or like): the state the next one is
 * spelled against. */
static inline void ctr_like_note(struct ctr_like *l, const struct ct_coro_item *c) {
  int k = ctr_like_slot(l, c->probe_id);
  if (k < 0) {
    k = (int)(l->nhi++ % CTR_LK_HIS);
    l->hi[k] = c->probe_id >> CTR_LK_HI_SHIFT;
  }
  l->lo[k] = c->probe_id & CTR_LK_LO_MASK;
  l->last = *c;
  l->have = 1;
}

/* A like entry's effect on the chunk's coroutine cache: its coroutine takes
 * its slot, at ev 0 with its create site as its addr, so that its create
 * (the event that follows it) says its coroutine in one byte and its site
 * by CTR_F_ADDR. */
static inline void ctr_like_take_slot(struct ctr_coro *coro, const struct ct_coro_item *c) {
  coro[ctr_coro_slot(c->probe_id)] =
      (struct ctr_coro){.probe_id = c->probe_id, .addr = c->create_site, .used = 1};
}

static inline int ctr_like_same_label(const struct ct_coro_item *a, const struct ct_coro_item *b) {
  return a->has_label && b->has_label && !strncmp(a->label, b->label, sizeof a->label);
}

#endif
