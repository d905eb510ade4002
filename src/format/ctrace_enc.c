/* ctrace_enc.c - the binary trace's encoder (ctrace.h): events
 * become a few bytes each against the chunk's state (the coroutine's next ev,
 * its last site, the previous ts and tid); the rare records stay JSONL lines,
 * framed as entries, so records.c remains their one writer. Runs on the
 * formatter thread; the file itself is the caller's ct_writer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "format/ctrace_enc.h"

/* A longer line cannot be framed (CTR_CHUNK_MAX): dropped, as the JSONL
 * reader drops one past its 64 MiB limit. */
#define LINE_MAX_BYTES (64u << 20)

int ct_ctw_open(struct ct_ctw **out, struct ct_writer *w) {
  struct ct_ctw *e = calloc(1, sizeof *e);
  if (!e)
    return -ENOMEM;
  e->cap = sizeof(struct ctr_chunk_hdr) + CT_CTW_CHUNK + CT_CTW_EVENT_MAX;
  if (!(e->buf = malloc(e->cap))) {
    free(e);
    return -ENOMEM;
  }
  memset(e->buf, 0, e->cap); /* first-touch faults now, not under load */
  e->out = w;
  e->len = sizeof(struct ctr_chunk_hdr);
  e->gen = 1;
  e->tag = CTR_CHUNK_TAG;
  *out = e;
  return 0;
}

void ct_ctw_free(struct ct_ctw *e) {
  if (!e)
    return;
  free(e->buf);
  ct_buf_free(&e->pend);
  free(e);
}

int ct_ctw_header(struct ct_ctw *e) {
  struct ctr_file_hdr h = {.version = CTR_VERSION};
  memcpy(h.magic, CTR_MAGIC, CTR_MAGIC_LEN);
  return ct_writer_put(e->out, &h, sizeof h);
}

int ct_ctw_flush(struct ct_ctw *e) {
  if (e->count == 0)
    return e->out->err ? -e->out->err : 0;
  size_t n = e->len - sizeof(struct ctr_chunk_hdr);
  struct ctr_chunk_hdr h = {.tag = e->tag,
                            .len = (uint32_t)n,
                            .count = e->count,
                            .check = ctr_chunk_check(e->tag, e->buf + sizeof h, n)};
  memcpy(e->buf, &h, sizeof h);
  int rc = 0;
  struct ct_ctw_chunk c = {.ts0 = e->have_prev ? e->first_ts : 0,
                           .ts1 = e->have_prev ? e->last_ts : 0,
                           .rebinds = e->rebinds};
  if (e->pk_last) { /* a chunk of packs only has their times all the same */
    c.ts0 = c.ts0 && c.ts0 < e->pk_first ? c.ts0 : e->pk_first;
    c.ts1 = c.ts1 > e->pk_last ? c.ts1 : e->pk_last;
  }
  if (e->to.chunk)
    e->to.chunk(e->to.ctx, e->buf, e->len, &c);
  else
    rc = ct_writer_put(e->out, e->buf, e->len);
  /* The next chunk starts from nothing: a reader may begin at any chunk. */
  e->len = sizeof h;
  e->count = 0;
  e->have_prev = 0;
  e->last_ts = e->last_tid = 0;
  e->pk_first = e->pk_last = 0;
  e->rebinds = 0;
  memset(e->coro, 0, sizeof e->coro);
  ctr_like_reset(&e->like);
  ctr_sw_reset(&e->sw);
  e->nsites = 0;
  e->gen++;
  return rc;
}

/* Contract: see ctrace_enc.h. Every choice below is made from state the
 * decoder has too (the switch cache, the coroutine slots), so that it
 * infers what was left out. */
void ct_ctw_switch(struct ct_ctw *e, uint64_t ts, uint64_t tid, uint64_t from, uint64_t from_ev,
                   int wake, uint8_t wait, uint64_t site, uint64_t obj, uint64_t to,
                   uint64_t to_ev) {
  if (e->len + CT_CTW_EVENT_MAX > sizeof(struct ctr_chunk_hdr) + CT_CTW_CHUNK &&
      ct_ctw_room(e, CT_CTW_EVENT_MAX))
    return;
  struct ctr_sw *s = &e->sw;
  uint8_t *p0 = e->buf + e->len, *p = p0 + 1;
  uint8_t b = CTR_OP_LINE | CTR_F_SWITCH;
  const struct ctr_sw_coro *fc = ctr_sw_get(s, from);
  int thr = ctr_sw_thread(s, tid);
  uint32_t t;
  if (thr >= 0 && s->thr[thr].cur == from && fc && fc->next_ev == from_ev) {
    t = (uint32_t)thr;
    b |= (uint8_t)(t << CTR_SW_THR_SHIFT);
    CT_COVER(CT_COV_SW_THR_CUR);
  } else {
    t = ctr_sw_new_thread(s, tid);
    b |= CTR_SW_THR_NEW << CTR_SW_THR_SHIFT;
    p = ctr_put_varint(p, tid);
    p = ctr_put_varint(p, from);
    p = ctr_put_varint(p, from_ev);
    CT_COVER(CT_COV_SW_THR_NEW);
  }
  int plain = wait == CTP_WAIT_NONE && site == (fc ? fc->addr : 0);
  if (!(wake && plain)) {
    b |= CTR_SW_DETAIL;
    *p++ = (uint8_t)((wake ? CTR_SWD_WAKE : 0) | (plain ? CTR_SWD_PLAIN : 0));
    CT_COVER(CT_COV_SW_DETAIL);
  }
  p = ctr_put_varint(p, ctr_zigzag((int64_t)(ts - e->last_ts)));
  const struct ctr_sw_coro *tc = ctr_sw_get(s, to);
  if (tc && tc->next_ev == to_ev && fc && fc->succ == to) {
    b |= CTR_SW_PRED;
    CT_COVER(CT_COV_SW_PRED);
  } else if (tc && tc->next_ev == to_ev) {
    p = ctr_put_varint(p, 1 + (uint64_t)ctr_sw_slot(to));
    CT_COVER(CT_COV_SW_TO_SLOT);
  } else {
    *p++ = 0;
    p = ctr_put_varint(p, to);
    p = ctr_put_varint(p, to_ev);
    CT_COVER(CT_COV_SW_TO_NEW);
  }
  if (!plain) { /* the site, then the wait byte and obj as a SUSPEND_W's */
    p = ct_ctw_put_site(e, p, site);
    p = ct_ctw_put_obj(e, p, CTR_OP_SUSPEND_W, wait, obj, NULL);
  }
  *p0 = b;
  e->len = (size_t)(p - e->buf);
  e->count++;
  if (!e->have_prev)
    e->first_ts = ts;
  ctr_sw_apply(s, e->coro, t, tid, from, from_ev, wake, site, to, to_ev);
  e->last_ts = ts;
  e->last_tid = tid;
  e->prev_probe = to;
  e->have_prev = 1;
}

/* Contract: see ctw.h. Copied as it is: the engine reads nothing of it. */
void ct_ctw_pack(struct ct_ctw *e, uint64_t tid, uint64_t ns0, uint64_t mult, const void *p,
                 size_t n) {
  if (ct_ctw_room(e, 1 + 4 * 10 + n))
    return;
  uint8_t *q = e->buf + e->len;
  *q++ = CTR_OP_LINE | CTR_F_PACK;
  q = ctr_put_varint(q, tid);
  q = ctr_put_varint(q, ns0);
  q = ctr_put_varint(q, mult);
  q = ctr_put_varint(q, n);
  memcpy(q, p, n);
  e->len = (size_t)(q + n - e->buf);
  e->count++;
  /* Its last entry's time, from the header's span (ticks) as the decoder
   * converts it. */
  struct ctp_pack h = {.span = 0};
  if (n >= sizeof h)
    memcpy(&h, p, sizeof h);
  uint64_t last = ns0 + (uint64_t)(((unsigned __int128)h.span * mult) >> 32);
  if (!e->pk_last || ns0 < e->pk_first)
    e->pk_first = ns0;
  if (last > e->pk_last)
    e->pk_last = last;
  /* A standalone wake in it: the walk would number it before the wakee's
   * suspend in another thread's pack written later (struct ct_ctw_chunk). */
  e->rebinds += n >= sizeof h ? h.nsolo : 0;
}

/* Contract: see ctw.h. */
void ct_ctw_gap(struct ct_ctw *e, uint64_t probe_id, uint64_t ev, uint64_t ns) {
  if (ct_ctw_room(e, 1 + 3 * 10))
    return;
  uint8_t *q = e->buf + e->len;
  *q++ = CTR_B_GAP;
  q = ctr_put_varint(q, probe_id);
  q = ctr_put_varint(q, ev);
  q = ctr_put_varint(q, ns);
  e->len = (size_t)(q - e->buf);
  e->count++;
  e->rebinds++;
}

/* Contract: see ctw.h. */
void ct_ctw_packs(struct ct_ctw *e) {
  e->tag = CTR_CHUNK_TAG_PACKW;
}

/* Contract: see ctw.h. */
void ct_ctw_hold(struct ct_ctw *e, int hold) {
  e->hold = hold;
  if (!hold && e->len > sizeof(struct ctr_chunk_hdr) + CT_CTW_CHUNK)
    ct_ctw_flush(e);
}

/* Contract: see ctrace_enc.h. */
int ct_ctw_room(struct ct_ctw *e, size_t need) {
  if (e->len + need > sizeof(struct ctr_chunk_hdr) + CT_CTW_CHUNK && e->count && !e->hold)
    ct_ctw_flush(e);
  if (e->len + need <= e->cap)
    return 0;
  /* Twice the room: a held chunk grows by events (ct_ctw_hold). */
  size_t cap = e->len + need > 2 * e->cap ? e->len + need : 2 * e->cap;
  uint8_t *nb = realloc(e->buf, cap);
  if (!nb)
    return -ENOMEM;
  e->buf = nb;
  e->cap = cap;
  return 0;
}

/* Contract: see ctrace_enc.h. */
uint32_t ct_ctw_site_ref(struct ct_ctw *e, uint64_t addr) {
  uint32_t i = (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> 51) & (CT_CTW_SITE_HASH - 1);
  for (; e->hash[i].gen == e->gen; i = (i + 1) & (CT_CTW_SITE_HASH - 1))
    if (e->hash[i].site == addr)
      return e->hash[i].idx + 1;
  if (e->nsites < CTR_SITES) {
    e->hash[i].site = addr;
    e->hash[i].idx = e->nsites++;
    e->hash[i].gen = e->gen;
  }
  return 0;
}

/* Contract: see ctrace_enc.h. */
uint8_t *ct_ctw_put_site(struct ct_ctw *e, uint8_t *p, uint64_t addr) {
  uint32_t ref = ct_ctw_site_ref(e, addr);
  if (ref)
    return ctr_put_varint(p, ref);
  *p++ = 0;
  memcpy(p, &addr, 8);
  return p + 8;
}

void ct_ctw_event(struct ct_ctw *e, const struct ct_ev_item *ev) {
  ct_ctw_encode(e, ev->ts, ev->probe_id, ev->tid, ev->addr, ev->ev, ev->seq, ev->obj, ev->kind,
                ev->wait, ev->active != 0);
}

/* A coroutine entry's label, c's first n bytes, at p (ctrace_dec.c's
 * get_label reads it); returns the end. */
static uint8_t *put_label(uint8_t *p, const struct ct_coro_item *c, size_t n) {
  p = ctr_put_varint(p, n);
  memcpy(p, c->label, n);
  return p + n;
}

/* A coroutine entry like the chunk's last one (ctrace_like.h) at p, c's
 * label n bytes; returns the end. Takes c's coroutine slot as the decoder
 * will. */
static uint8_t *put_like(struct ct_ctw *e, uint8_t *p, const struct ct_coro_item *c, size_t n) {
  const struct ctr_like *l = &e->like;
  const struct ct_coro_item *last = &l->last;
  *p++ = CTR_OP_LINE | CTR_F_CORO | CTR_F_LIKE | (c->has_label ? CTR_F_ACTIVE : 0);
  uint8_t *flags = p++;
  int k = ctr_like_slot(l, c->probe_id);
  uint8_t f = k < 0 ? CTR_LK_NEW_HI : (uint8_t)k;
  f |= c->pid == last->pid ? CTR_LK_PID : 0;
  f |= c->gen == last->gen ? CTR_LK_GEN : 0;
  f |= c->create_site == last->create_site ? CTR_LK_SITE : 0;
  f |= c->parent == last->parent ? CTR_LK_PARENT : 0;
  f |= ctr_like_same_label(c, last) ? CTR_LK_LABEL : 0;
  *flags = f;
  if (k < 0)
    p = ctr_put_varint(p, c->probe_id);
  else
    p = ctr_put_varint(p, ctr_zigzag((int64_t)((c->probe_id & CTR_LK_LO_MASK) - l->lo[k])));
  p = ctr_put_varint(p, ctr_zigzag((int64_t)c->station - (int64_t)last->station));
  if (!(f & CTR_LK_GEN))
    p = ctr_put_varint(p, c->gen);
  if (!(f & CTR_LK_PID))
    p = ctr_put_varint(p, c->pid);
  p = ctr_put_varint(p, ctr_zigzag((int64_t)(c->birth_ts - e->last_ts)));
  if (!(f & CTR_LK_SITE))
    p = ct_ctw_put_site(e, p, c->create_site);
  if (!(f & CTR_LK_PARENT))
    p = ctr_put_varint(p, c->parent);
  if (c->has_label && !(f & CTR_LK_LABEL))
    p = put_label(p, c, n);
  ctr_like_take_slot(e->coro, c);
  /* The decoder's F_SAME_CORO names a slot: the previous event's, now c's. */
  if (ctr_coro_slot(e->prev_probe) == ctr_coro_slot(c->probe_id))
    e->prev_probe = c->probe_id;
  return p;
}

void ct_ctw_coro(struct ct_ctw *e, const struct ct_coro_item *c) {
  size_t n = c->has_label ? strnlen(c->label, sizeof(c->label) - 1) : 0;
  if (ct_ctw_room(e, CT_CTW_EVENT_MAX + n))
    return;
  uint8_t *p = e->buf + e->len;
  if (e->like.have) {
    p = put_like(e, p, c, n);
  } else {
    *p++ = CTR_OP_LINE | CTR_F_CORO | (c->has_label ? CTR_F_ACTIVE : 0);
    p = ctr_put_varint(p, c->probe_id);
    p = ctr_put_varint(p, c->station);
    p = ctr_put_varint(p, c->gen);
    p = ctr_put_varint(p, c->pid);
    p = ctr_put_varint(p, ctr_zigzag((int64_t)(c->birth_ts - e->last_ts)));
    p = ct_ctw_put_site(e, p, c->create_site);
    p = ctr_put_varint(p, c->parent);
    if (c->has_label)
      p = put_label(p, c, n);
  }
  ctr_like_note(&e->like, c);
  e->len = (size_t)(p - e->buf);
  e->count++;
  e->rebinds++;
}

/* One whole JSONL line (without its '\n') as an entry. */
static void put_line(struct ct_ctw *e, const char *s, size_t n) {
  if (ct_ctw_room(e, 1 + 10 + n))
    return;
  if (e->to.line)
    e->to.line(e->to.ctx, s, n);
  e->len = (size_t)(ctr_put_line(e->buf + e->len, s, n) - e->buf);
  e->count++;
}

/* Keep the start of a line until its '\n' comes. */
static void pend(struct ct_ctw *e, const char *s, size_t n) {
  if (e->pend_dropped || e->pend.n + n > LINE_MAX_BYTES || ct_buf_put(&e->pend, s, n))
    e->pend_dropped = 1;
}

void ct_ctw_text(struct ct_ctw *e, const char *s, size_t n) {
  while (n) {
    const char *nl = memchr(s, '\n', n);
    if (!nl) {
      pend(e, s, n);
      return;
    }
    size_t k = (size_t)(nl - s);
    if (e->pend.n || e->pend_dropped) {
      pend(e, s, k);
      if (!e->pend_dropped)
        put_line(e, e->pend.p, e->pend.n);
      e->pend.n = 0;
      if (e->pend.err) /* a line dropped for want of memory: the next may fit */
        ct_buf_free(&e->pend);
      e->pend_dropped = 0;
    } else {
      put_line(e, s, k);
    }
    s += k + 1;
    n -= k + 1;
  }
}

void ct_ctw_redirect(struct ct_ctw *e, const struct ct_ctw_to *to) {
  e->to = *to;
}

size_t ct_ctw_pending(const struct ct_ctw *e) {
  return e->count;
}

size_t ct_ctw_frame_line(const char *s, size_t n, uint8_t *out) {
  uint8_t *p = out + sizeof(struct ctr_chunk_hdr), *q = ctr_put_line(p, s, n);
  struct ctr_chunk_hdr h = {.tag = CTR_CHUNK_TAG,
                            .len = (uint32_t)(q - p),
                            .count = 1,
                            .check = ctr_check(p, (size_t)(q - p))};
  memcpy(out, &h, sizeof h);
  return (size_t)(q - out);
}
