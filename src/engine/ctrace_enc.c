/* ctrace_enc.c - the binary trace's encoder (src/common/ctrace.h): events
 * become a few bytes each against the chunk's state (the coroutine's next ev,
 * its last site, the previous ts and tid); the rare records stay JSONL lines,
 * framed as entries, so records.c remains their one writer. Runs on the
 * formatter thread; the file itself is the caller's ct_writer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/ctrace.h"
#include "engine/engine.h"

/* A chunk is closed once its payload reaches this: a few ms of a busy run,
 * one write(2). */
#define CHUNK_TARGET (64u * 1024u)
/* Longest event entry: op, coroutine byte and varint, 4 varints, a site (varint
 * and 8 bytes), wait byte, obj. */
#define EVENT_MAX 96u
/* The site table's hash: twice the table, open addressing. */
#define SITE_HASH (2 * CTR_SITES)
/* A longer line cannot be framed (CTR_CHUNK_MAX): dropped, as the JSONL
 * reader drops one past its 64 MiB limit. */
#define LINE_MAX_BYTES (64u << 20)

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
  } hash[SITE_HASH];
  uint64_t first_ts;   /* the chunk's first event's, when have_prev */
  struct ct_ctw_to to; /* chunks and lines elsewhere (to.chunk set), or to out */
  /* A JSONL line whose '\n' has not come yet. */
  char *pend;
  size_t npend, cappend;
  int pend_dropped;
};

int ct_ctw_open(struct ct_ctw **out, struct ct_writer *w) {
  struct ct_ctw *e = calloc(1, sizeof *e);
  if (!e)
    return -ENOMEM;
  e->cap = sizeof(struct ctr_chunk_hdr) + CHUNK_TARGET + EVENT_MAX;
  if (!(e->buf = malloc(e->cap))) {
    free(e);
    return -ENOMEM;
  }
  memset(e->buf, 0, e->cap); /* first-touch faults now, not under load */
  e->out = w;
  e->len = sizeof(struct ctr_chunk_hdr);
  e->gen = 1;
  *out = e;
  return 0;
}

void ct_ctw_free(struct ct_ctw *e) {
  if (!e)
    return;
  free(e->buf);
  free(e->pend);
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
  struct ctr_chunk_hdr h = {.tag = CTR_CHUNK_TAG,
                            .len = (uint32_t)n,
                            .count = e->count,
                            .check = ctr_check(e->buf + sizeof h, n)};
  memcpy(e->buf, &h, sizeof h);
  int rc = 0;
  if (e->to.chunk)
    e->to.chunk(e->to.ctx, e->buf, e->len, e->have_prev ? e->first_ts : 0,
                e->have_prev ? e->last_ts : 0);
  else
    rc = ct_writer_put(e->out, e->buf, e->len);
  /* The next chunk starts from nothing: a reader may begin at any chunk. */
  e->len = sizeof h;
  e->count = 0;
  e->have_prev = 0;
  e->last_ts = e->last_tid = 0;
  memset(e->coro, 0, sizeof e->coro);
  e->nsites = 0;
  e->gen++;
  return rc;
}

/* Room for need more payload bytes: the chunk is closed first when it is
 * full, and grown for a long line. 0 or -ENOMEM. */
static int room(struct ct_ctw *e, size_t need) {
  if (e->len + need > sizeof(struct ctr_chunk_hdr) + CHUNK_TARGET && e->count)
    ct_ctw_flush(e);
  if (e->len + need <= e->cap)
    return 0;
  uint8_t *nb = realloc(e->buf, e->len + need);
  if (!nb)
    return -ENOMEM;
  e->buf = nb;
  e->cap = e->len + need;
  return 0;
}

/* The site reference of addr: its index + 1, or 0 and the 8 bytes. */
static uint8_t *put_site(struct ct_ctw *e, uint8_t *p, uint64_t addr) {
  uint32_t i = (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> 51) & (SITE_HASH - 1);
  for (; e->hash[i].gen == e->gen; i = (i + 1) & (SITE_HASH - 1))
    if (e->hash[i].site == addr)
      return ctr_put_varint(p, (uint64_t)e->hash[i].idx + 1);
  *p++ = 0;
  memcpy(p, &addr, 8);
  if (e->nsites < CTR_SITES) {
    e->hash[i].site = addr;
    e->hash[i].idx = e->nsites++;
    e->hash[i].gen = e->gen;
  }
  return p + 8;
}

/* One event entry from its fields (ct_ctw_event and ct_ctw_v2 inline it:
 * the v2 one, with seq and active known, loses the tests they decide). */
static inline __attribute__((always_inline)) void
encode(struct ct_ctw *e, uint64_t ts, uint64_t probe, uint64_t tid, uint64_t addr, uint64_t evn,
       uint64_t seq, uint64_t obj, uint8_t kind, uint8_t wait, int active) {
  /* The common case, a chunk with room, without a call; and the state read
   * into locals once: the stores through p (bytes) may alias any field of
   * e, so the compiler would reload each one after every byte written. */
  if (e->len + EVENT_MAX > sizeof(struct ctr_chunk_hdr) + CHUNK_TARGET && room(e, EVENT_MAX))
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
    p = put_site(e, p, addr);
  if (op == CTR_OP_SUSPEND_W) {
    *p++ = wait;
    if (wait == CTP_WAIT_FD)
      p = ctr_put_varint(p, ctr_zigzag((int64_t)obj));
    else if (wait == CTP_WAIT_PTR || wait == CTP_WAIT_COROUTINE)
      p = ctr_put_varint(p, obj);
  } else if (op == CTR_OP_WAKE || op == CTR_OP_CREATE) {
    p = ctr_put_varint(p, obj);
  }
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

void ct_ctw_event(struct ct_ctw *e, const struct ct_ev_item *ev) {
  encode(e, ev->ts, ev->probe_id, ev->tid, ev->addr, ev->ev, ev->seq, ev->obj, ev->kind, ev->wait,
         ev->active != 0);
}

void ct_ctw_v2(struct ct_ctw *e, uint64_t ts, uint64_t probe, uint64_t tid, uint8_t kind,
               uint8_t wait, uint64_t site, uint64_t obj, uint64_t evn) {
  int resume = kind == CTP_KIND_RESUME;
  encode(e, ts, probe, tid, resume ? 0 : site, evn, 2 * (evn + 1), obj, kind, wait, resume);
}

void ct_ctw_coro(struct ct_ctw *e, const struct ct_coro_item *c) {
  size_t n = c->has_label ? strnlen(c->label, sizeof(c->label) - 1) : 0;
  if (room(e, EVENT_MAX + n))
    return;
  uint8_t *p = e->buf + e->len;
  *p++ = CTR_OP_LINE | CTR_F_CORO | (c->has_label ? CTR_F_ACTIVE : 0);
  p = ctr_put_varint(p, c->probe_id);
  p = ctr_put_varint(p, c->station);
  p = ctr_put_varint(p, c->gen);
  p = ctr_put_varint(p, c->pid);
  p = ctr_put_varint(p, ctr_zigzag((int64_t)(c->birth_ts - e->last_ts)));
  p = put_site(e, p, c->create_site);
  p = ctr_put_varint(p, c->parent);
  if (c->has_label) {
    p = ctr_put_varint(p, n);
    memcpy(p, c->label, n);
    p += n;
  }
  e->len = (size_t)(p - e->buf);
  e->count++;
}

/* One whole JSONL line (without its '\n') as an entry. */
static void put_line(struct ct_ctw *e, const char *s, size_t n) {
  if (room(e, 1 + 10 + n))
    return;
  if (e->to.line)
    e->to.line(e->to.ctx, s, n);
  uint8_t *p = e->buf + e->len;
  *p++ = CTR_OP_LINE;
  p = ctr_put_varint(p, n);
  memcpy(p, s, n);
  e->len = (size_t)(p + n - e->buf);
  e->count++;
}

/* Keep the start of a line until its '\n' comes. */
static void pend(struct ct_ctw *e, const char *s, size_t n) {
  if (e->pend_dropped || e->npend + n > LINE_MAX_BYTES) {
    e->pend_dropped = 1;
    return;
  }
  if (e->npend + n > e->cappend) {
    size_t nc = e->cappend ? e->cappend : 4096;
    while (nc < e->npend + n)
      nc *= 2;
    char *np = realloc(e->pend, nc);
    if (!np) {
      e->pend_dropped = 1;
      return;
    }
    e->pend = np;
    e->cappend = nc;
  }
  memcpy(e->pend + e->npend, s, n);
  e->npend += n;
}

void ct_ctw_text(struct ct_ctw *e, const char *s, size_t n) {
  while (n) {
    const char *nl = memchr(s, '\n', n);
    if (!nl) {
      pend(e, s, n);
      return;
    }
    size_t k = (size_t)(nl - s);
    if (e->npend || e->pend_dropped) {
      pend(e, s, k);
      if (!e->pend_dropped)
        put_line(e, e->pend, e->npend);
      e->npend = 0;
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
  uint8_t *p = out + sizeof(struct ctr_chunk_hdr), *q = p;
  *q++ = CTR_OP_LINE;
  q = ctr_put_varint(q, n);
  memcpy(q, s, n);
  q += n;
  struct ctr_chunk_hdr h = {.tag = CTR_CHUNK_TAG,
                            .len = (uint32_t)(q - p),
                            .count = 1,
                            .check = ctr_check(p, (size_t)(q - p))};
  memcpy(out, &h, sizeof h);
  return (size_t)(q - out);
}
