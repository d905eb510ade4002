/* ctrace_dec.c - the binary trace's decoder (format/ctrace.h): checks a
 * chunk whole (frame, checksum) before any of it is used, then gives back
 * its entries: events as the engine's struct ct_ev_item, lines as the JSONL
 * bytes the engine framed. The streamers (trace_read.c, the live view)
 * turn them into the same struct ct_line a JSONL trace gives. */
#include <stdio.h>
#include <string.h>

#include "common/jsonesc.h"
#include "format/ctrace_dec.h"
#include "format/parse.h"

int ct_ctr_file_header(const void *p, size_t n, char *why, size_t whylen) {
  struct ctr_file_hdr h;
  if (n < sizeof h) {
    snprintf(why, whylen, "offset 0: truncated file header (%zu of %zu bytes)", n, sizeof h);
    return -1;
  }
  memcpy(&h, p, sizeof h);
  if (memcmp(h.magic, CTR_MAGIC, CTR_MAGIC_LEN) != 0) {
    snprintf(why, whylen, "offset 0: not a binary corotracer trace");
    return -1;
  }
  if (h.version == 0 || h.version > CTR_VERSION) {
    snprintf(why, whylen, "offset 8: binary trace version %u, this reader knows %u", h.version,
             CTR_VERSION);
    return -1;
  }
  return (int)sizeof h;
}

int ct_ctr_chunk(const void *p, size_t n, uint64_t off, size_t *len, char *why, size_t whylen) {
  struct ctr_chunk_hdr h;
  if (n < sizeof h)
    return 0;
  memcpy(&h, p, sizeof h);
  if (!ctr_chunk_tag_known(h.tag) || h.len > CTR_CHUNK_MAX || h.count > h.len) {
    snprintf(why, whylen, "offset %llu: corrupt chunk header", (unsigned long long)off);
    return -1;
  }
  if (n - sizeof h < h.len)
    return 0;
  if (ctr_chunk_check(h.tag, (const char *)p + sizeof h, h.len) != h.check) {
    snprintf(why, whylen, "offset %llu: chunk of %u bytes fails its checksum",
             (unsigned long long)off, h.len);
    return -1;
  }
  *len = sizeof h + h.len;
  return 1;
}

void ct_ctr_init(struct ct_ctr_iter *it) {
  it->st = NULL;
  it->la_k = 0;
}

void ct_ctr_fini(struct ct_ctr_iter *it) {
  ctr_stream_free(it->st);
  it->st = NULL;
}

uint64_t ct_ctr_packed(const struct ct_ctr_iter *it, uint64_t probe_id) {
  return it->st ? ctr_stream_packed(it->st, probe_id) : 0;
}

void ct_ctr_begin(struct ct_ctr_iter *it, const void *chunk) {
  struct ctr_chunk_hdr h;
  memcpy(&h, chunk, sizeof h);
  it->p = (const uint8_t *)chunk + sizeof h;
  it->e = it->p + h.len;
  it->left = h.count;
  it->chk3 = h.tag == CTR_CHUNK_TAG || ctr_chunk_packs(h.tag);
  /* A packing trace: the stream's state from its first chunk on (no
   * memory: its first pack entry does not decode). */
  if (ctr_chunk_packs(h.tag) && !it->st)
    it->st = ctr_stream_new();
  it->last_ts = it->last_tid = it->prev = 0;
  it->have_prev = 0;
  it->nsites = 0;
  memset(it->coro, 0, sizeof it->coro);
  ctr_like_reset(&it->like);
  it->npend = it->ipend = 0;
  ctr_sw_reset(&it->sw);
  it->la_k = 0;
  if (it->st)
    ctr_stream_chunk(it->st);
}

/* Next varint into *v, or fail the entry. */
#define VARINT(v)                                                                                  \
  do {                                                                                             \
    if (!(p = ctr_get_varint(p, e, (v))))                                                          \
      return -1;                                                                                   \
  } while (0)

/* A site reference into *addr (the chunk's site table). */
static inline __attribute__((always_inline)) const uint8_t *
get_site(struct ct_ctr_iter *it, const uint8_t *p, const uint8_t *e, uint64_t *addr) {
  uint64_t v;
  if (!(p = ctr_get_varint(p, e, &v)))
    return NULL;
  if (v == 0) {
    if (e - p < 8)
      return NULL;
    memcpy(addr, p, 8);
    if (it->nsites < CTR_SITES)
      it->sites[it->nsites++] = *addr;
    return p + 8;
  }
  if (v - 1 >= it->nsites)
    return NULL;
  *addr = it->sites[v - 1];
  return p;
}

/* A coroutine entry's label (a varint length, the bytes) into c; the end,
 * or NULL. */
static const uint8_t *get_label(const uint8_t *p, const uint8_t *e, struct ct_coro_item *c) {
  uint64_t n;
  if (!(p = ctr_get_varint(p, e, &n)) || n >= sizeof(c->label) || n > (uint64_t)(e - p))
    return NULL;
  memcpy(c->label, p, (size_t)n);
  return p + n;
}

/* A coroutine entry like the chunk's last one (after its byte b; the
 * encoder is ctrace_enc.c's put_like): 3 with *c, or -1. */
static int get_like(struct ct_ctr_iter *it, uint8_t b, struct ct_coro_item *c) {
  const uint8_t *p = it->p + 1, *e = it->e;
  const struct ctr_like *l = &it->like;
  const struct ct_coro_item *last = &l->last;
  uint64_t v;
  if (!l->have || p >= e)
    return -1; /* like nothing: the chunk's first coroutine entry is full */
  uint8_t f = *p++;
  *c = (struct ct_coro_item){.has_label = (b & CTR_F_ACTIVE) != 0};
  VARINT(&v);
  if (f & CTR_LK_NEW_HI) {
    c->probe_id = v;
  } else {
    uint32_t k = f & CTR_LK_HI;
    uint64_t lo = l->lo[k] + (uint64_t)ctr_unzigzag(v);
    if (k >= l->nhi || lo > CTR_LK_LO_MASK)
      return -1;
    c->probe_id = l->hi[k] << CTR_LK_HI_SHIFT | lo;
  }
  VARINT(&v);
  int64_t station = (int64_t)last->station + ctr_unzigzag(v);
  if (station < 0 || station > UINT32_MAX)
    return -1;
  c->station = (uint32_t)station;
  c->gen = last->gen;
  c->pid = last->pid;
  if (!(f & CTR_LK_GEN)) {
    VARINT(&v);
    if (v > UINT32_MAX)
      return -1;
    c->gen = (uint32_t)v;
  }
  if (!(f & CTR_LK_PID)) {
    VARINT(&v);
    if (v > UINT32_MAX)
      return -1;
    c->pid = (uint32_t)v;
  }
  VARINT(&v);
  c->birth_ts = it->last_ts + (uint64_t)ctr_unzigzag(v);
  c->create_site = last->create_site;
  if (!(f & CTR_LK_SITE) && !(p = get_site(it, p, e, &c->create_site)))
    return -1;
  c->parent = last->parent;
  if (!(f & CTR_LK_PARENT))
    VARINT(&c->parent);
  if (f & CTR_LK_LABEL) {
    if (!c->has_label || !last->has_label)
      return -1;
    memcpy(c->label, last->label, sizeof c->label);
  } else if (c->has_label && !(p = get_label(p, e, c))) {
    return -1;
  }
  ctr_like_take_slot(it->coro, c);
  ctr_like_note(&it->like, c);
  it->p = p;
  it->left--;
  return 3;
}

/* A coroutine entry's fields (after its byte b) into *c. */
static int get_coro(struct ct_ctr_iter *it, uint8_t b, struct ct_coro_item *c) {
  const uint8_t *p = it->p + 1, *e = it->e;
  uint64_t v[5];
  *c = (struct ct_coro_item){.has_label = (b & CTR_F_ACTIVE) != 0};
  for (int i = 0; i < 5; i++)
    VARINT(&v[i]);
  if (v[1] > UINT32_MAX || v[2] > UINT32_MAX || v[3] > UINT32_MAX)
    return -1;
  c->probe_id = v[0];
  c->station = (uint32_t)v[1];
  c->gen = (uint32_t)v[2];
  c->pid = (uint32_t)v[3];
  c->birth_ts = it->last_ts + (uint64_t)ctr_unzigzag(v[4]);
  if (!(p = get_site(it, p, e, &c->create_site)))
    return -1;
  VARINT(&c->parent);
  if (c->has_label && !(p = get_label(p, e, c)))
    return -1;
  ctr_like_note(&it->like, c);
  it->p = p;
  it->left--;
  return 3;
}

/* A switch entry (after its byte b): its first event into *ev, the others
 * into it->pend for the next calls (format/ctrace.h CTR_F_SWITCH; the
 * encoder is ctrace_enc.c's ct_ctw_switch, whose choices this mirrors).
 * Returns 1, or -1. */
static int get_switch(struct ct_ctr_iter *it, uint8_t b, struct ct_ev_item *ev) {
  const uint8_t *p = it->p + 1, *e = it->e;
  struct ctr_sw *s = &it->sw;
  uint64_t tid, from, from_ev, to, to_ev, dt, site, obj = 0;
  uint32_t t = b >> CTR_SW_THR_SHIFT;
  if (t == CTR_SW_THR_NEW) {
    VARINT(&tid);
    VARINT(&from);
    VARINT(&from_ev);
    t = ctr_sw_new_thread(s, tid);
  } else {
    const struct ctr_sw_coro *c;
    if (t >= s->nthr || !(c = ctr_sw_get(s, s->thr[t].cur)))
      return -1; /* a thread slot never taken, or its coroutine gone from the cache */
    tid = s->thr[t].tid;
    from = c->probe_id;
    from_ev = c->next_ev;
  }
  const struct ctr_sw_coro *fc = ctr_sw_get(s, from), *tc;
  uint8_t d = CTR_SWD_WAKE | CTR_SWD_PLAIN;
  if (b & CTR_SW_DETAIL) {
    if (p >= e || *p > (CTR_SWD_WAKE | CTR_SWD_PLAIN))
      return -1;
    d = *p++;
  }
  VARINT(&dt);
  if (b & CTR_SW_PRED) {
    if (!fc || !(tc = ctr_sw_get(s, fc->succ)))
      return -1;
    to = tc->probe_id;
    to_ev = tc->next_ev;
  } else {
    VARINT(&to);
    if (to == 0) {
      VARINT(&to);
      VARINT(&to_ev);
    } else {
      uint32_t k = (uint32_t)(to - 1);
      if (to - 1 >= CTR_SW_COROS || !(s->valid[k / 64] >> (k % 64) & 1))
        return -1;
      to = s->c[k].probe_id;
      to_ev = s->c[k].next_ev;
    }
  }
  uint8_t wait = CTP_WAIT_NONE;
  if (d & CTR_SWD_PLAIN) {
    site = fc ? fc->addr : 0;
  } else {
    if (!(p = get_site(it, p, e, &site)) || p >= e || *p >= CTP_WAIT_MAX_)
      return -1;
    wait = *p++;
    if (wait == CTP_WAIT_FD) {
      VARINT(&obj);
      obj = (uint64_t)ctr_unzigzag(obj);
    } else if (wait == CTP_WAIT_PTR || wait == CTP_WAIT_COROUTINE) {
      VARINT(&obj);
    }
  }
  if (from == to)
    return -1; /* the encoder never writes one */
  uint64_t ts = it->last_ts + (uint64_t)ctr_unzigzag(dt);
  int wake = (d & CTR_SWD_WAKE) != 0;
  /* The items the engine's emit_all builds for the three records. */
  *ev = (struct ct_ev_item){.ts = ts,
                            .probe_id = from,
                            .tid = tid,
                            .addr = site,
                            .seq = 2 * (from_ev + 1),
                            .obj = obj,
                            .ev = from_ev,
                            .kind = CTP_KIND_SUSPEND,
                            .wait = wait};
  uint32_t n = 0;
  if (wake)
    it->pend[n++] = (struct ct_ev_item){.ts = ts,
                                        .probe_id = from,
                                        .tid = tid,
                                        .addr = site,
                                        .seq = 2 * (from_ev + 2),
                                        .ev = from_ev + 1,
                                        .kind = CTP_KIND_WAKE};
  it->pend[n++] = (struct ct_ev_item){.ts = ts,
                                      .probe_id = to,
                                      .tid = tid,
                                      .seq = 2 * (to_ev + 1),
                                      .ev = to_ev,
                                      .kind = CTP_KIND_RESUME,
                                      .active = 1};
  it->npend = n;
  it->ipend = 0;
  it->prev = ctr_sw_apply(s, it->coro, t, tid, from, from_ev, wake, site, to, to_ev);
  it->last_ts = ts;
  it->last_tid = tid;
  it->have_prev = 1;
  it->p = p;
  it->left--;
  return 1;
}

/* A pack entry (after its byte): its fields into it->la_pack, the stream
 * state made on the first one. Returns 5, or -1. */
static int get_pack(struct ct_ctr_iter *it) {
  const uint8_t *p = it->p + 1, *e = it->e;
  struct ctr_pack_ref *r = &it->la_pack;
  uint64_t n;
  VARINT(&r->tid);
  VARINT(&r->ns0);
  VARINT(&r->mult);
  VARINT(&n);
  if (n > (uint64_t)(e - p) || n > sizeof(struct ctp_pack) + CTP_PACK_BYTES)
    return -1;
  if (!it->st)
    return -1; /* not in a CTR_CHUNK_TAG_PACK chunk */
  r->p = p;
  r->n = (uint32_t)n;
  it->p = p + n;
  it->left--;
  return 5;
}

/* A gap entry (format/ctrace.h CTR_B_GAP) into ev's probe_id, ev and ts:
 * 7. Only where packs may be (the stream state is there to apply it). */
static int get_gap(struct ct_ctr_iter *it, struct ct_ev_item *ev) {
  const uint8_t *p = it->p + 1, *e = it->e;
  VARINT(&ev->probe_id);
  VARINT(&ev->ev);
  VARINT(&ev->ts);
  if (!it->st)
    return -1;
  it->p = p;
  it->left--;
  return 7;
}

/* check_event's verdict on a decoded event: torn (probe_id 0, ts 0 or
 * impossible, tid 0 or impossible), its keys all there. */
static inline int item_torn(const struct ct_ev_item *e) {
  /* ts in [1, 2^62), tid in [1, 2^32): one unsigned compare each. */
  return e->probe_id == 0 || e->ts - 1 >= (1ull << 62) - 1 || e->tid - 1 >= UINT32_MAX;
}

/* The chunk's next entry as it is in the chunk (entry's contract), 5 for
 * a pack entry (it->la_pack), 7 for a gap entry (in ev). */
static inline __attribute__((always_inline)) int raw_entry(struct ct_ctr_iter *it,
                                                           struct ct_ev_item *ev,
                                                           struct ct_coro_item *co,
                                                           const char **line, size_t *n, int run) {
  const uint8_t *p = it->p, *e = it->e;
  if (it->ipend < it->npend) { /* a switch entry's next event */
    if (run)
      return 4;
    *ev = it->pend[it->ipend++];
    return 1;
  }
  if (it->left == 0)
    return p == e ? 0 : -1; /* bytes the count does not cover */
  if (p >= e)
    return -1;
  uint8_t b = *p++, op = b & 7;
  uint64_t v;
  if (run && (op == CTR_OP_LINE || (run == 2 && !(b & CTR_F_SAME_CORO))))
    return 4;
  if (op == CTR_OP_LINE && (b & CTR_F_SWITCH))
    return get_switch(it, b, ev);
  if (op == CTR_OP_LINE && (b & CTR_F_PACK) == CTR_F_PACK)
    return b == (CTR_OP_LINE | CTR_F_PACK) ? get_pack(it) : b == CTR_B_GAP ? get_gap(it, ev) : -1;
  if (op == CTR_OP_LINE && (b & CTR_F_CORO))
    return b & CTR_F_LIKE ? get_like(it, b, co) : get_coro(it, b, co);
  if (op == CTR_OP_LINE) {
    VARINT(&v);
    if (v > (uint64_t)(e - p))
      return -1;
    if (!ct_line_valid((const char *)p, (size_t)v))
      return -2; /* its bytes would be a reader's line, or an export's lines */
    *line = (const char *)p;
    *n = (size_t)v;
    it->p = p + v;
    it->left--;
    return 2;
  }
  struct ctr_coro *c;
  uint32_t slot;
  if (b & CTR_F_SAME_CORO) {
    if (run != 2 && !it->have_prev) /* a run's next: its first was an event */
      return -1;
    slot = it->prev;
  } else {
    if (p >= e)
      return -1;
    slot = *p++;
    if (slot == CTR_CORO_NEW) {
      VARINT(&v);
      slot = ctr_coro_slot(v);
      it->coro[slot] = (struct ctr_coro){.probe_id = v, .used = 1};
    } else if (slot >= CTR_COROS || !it->coro[slot].used) {
      return -1;
    }
  }
  c = &it->coro[slot];
  int active = (b & CTR_F_ACTIVE) != 0;
  uint8_t base = op == CTR_OP_SUSPEND_W ? CTR_OP_SUSPEND : op;
  *ev = (struct ct_ev_item){.probe_id = c->probe_id, .kind = base, .active = (uint8_t)active};
  VARINT(&v);
  ev->ts = it->last_ts + (uint64_t)ctr_unzigzag(v);
  if (b & CTR_F_NEXT_EV) {
    ev->ev = c->next_ev;
    ev->seq = ctr_std_seq(c, ev->ev);
  } else {
    VARINT(&ev->ev);
    VARINT(&ev->seq);
  }
  if (b & CTR_F_SAME_TID) {
    if (run != 2 && !it->have_prev)
      return -1;
    ev->tid = it->last_tid;
  } else {
    VARINT(&ev->tid);
  }
  if (b & CTR_F_ADDR)
    ev->addr = ctr_addr_expected(base, active, c);
  else if (!(p = get_site(it, p, e, &ev->addr)))
    return -1;
  int wobj = 0; /* the entry's wait object is the coroutine's last from now on */
  if (op == CTR_OP_SUSPEND_W) {
    if (p >= e)
      return -1;
    uint8_t w = *p++;
    int again = it->chk3 && (w & CTR_WAIT_AGAIN);
    w = again ? (uint8_t)(w & ~CTR_WAIT_AGAIN) : w;
    if (w < CTP_WAIT_FD || w >= CTP_WAIT_MAX_)
      return -1;
    ev->wait = w;
    wobj = w == CTP_WAIT_FD || w == CTP_WAIT_PTR || w == CTP_WAIT_COROUTINE;
    if (again && !wobj) {
      return -1; /* (exit has no object) */
    } else if (again) {
      ev->obj = c->wobj;
    } else if (w == CTP_WAIT_FD) {
      VARINT(&v);
      ev->obj = (uint64_t)ctr_unzigzag(v);
    } else if (wobj) {
      VARINT(&ev->obj);
    }
  } else if (op == CTR_OP_WAKE && it->chk3) { /* format/ctrace.h CTR_WAKER_* */
    if (p >= e)
      return -1;
    uint8_t w = *p++;
    if (w < CTR_COROS) {
      if (!it->coro[w].used)
        return -1; /* a slot no entry filled */
      ev->obj = it->coro[w].probe_id;
    } else if (w == CTR_WAKER_ID) {
      VARINT(&ev->obj);
    } else if (w != CTR_WAKER_NONE) {
      return -1;
    }
  } else if (op == CTR_OP_WAKE || op == CTR_OP_CREATE) {
    VARINT(&ev->obj);
  }
  if (run && item_torn(ev))
    return 4;
  if (!(base == CTR_OP_RESUME || (base == CTR_OP_V1 && active)))
    c->addr = ev->addr;
  if (wobj)
    c->wobj = ev->obj;
  c->next_ev = ev->ev + 1;
  c->slot_seq = ev->seq != 2 * (ev->ev + 1);
  it->last_ts = ev->ts;
  it->last_tid = ev->tid;
  it->prev = slot;
  it->have_prev = 1;
  it->p = p;
  it->left--;
  return 1;
}

/* entry with packs open (docs/ROUTE1.md "Merge"): the earliest of the
 * open packs' next event and the chunk's next entry, read ahead (an event
 * by its ts, a pack first on a tie; a coroutine at its birth_ts; a text
 * line at once; a pack entry opened when no open pack's next event is
 * before its first). At the chunk's end, the open packs' rest. */
static __attribute__((noinline)) int merged(struct ct_ctr_iter *it, struct ct_ev_item *ev,
                                            struct ct_coro_item *co, const char **line, size_t *n) {
  struct ctr_stream *s = it->st;
  for (;;) {
    if (!it->la_k) {
      int k = raw_entry(it, &it->la_ev, &it->la_co, &it->la_line, &it->la_n, 0);
      if (k < 0)
        return k;
      it->la_k = k ? k : 6;
    }
    uint64_t pts = 0;
    int open = ctr_stream_peek(s, &pts);
    if (open < 0)
      return -1;
    int k = it->la_k;
    if (k == 5 && (!open || it->la_pack.ns0 <= pts)) {
      if (ctr_stream_add(s, &it->la_pack))
        return -1;
      it->la_k = 0;
      continue;
    }
    if (open && ((k >= 5 && k != 7) || ((k == 1 || k == 7) && pts <= it->la_ev.ts) ||
                 (k == 3 && pts < it->la_co.birth_ts))) {
      if (ctr_stream_take(s, ev))
        return 1;
      continue; /* a refused event: the next one */
    }
    it->la_k = 0;
    if (k == 6)
      return 0;
    if (k == 7) { /* after the open packs' events before it */
      ctr_stream_gap(s, &it->la_ev);
      continue;
    }
    if (k == 1)
      *ev = it->la_ev;
    else if (k == 3)
      *co = it->la_co;
    else if (k == 2)
      *line = it->la_line, *n = it->la_n;
    if (k == 2)
      ctr_stream_line(s, line, n);
    else
      ctr_stream_post(s, k, ev, co);
    return k;
  }
}

/* ct_ctr_entry, inlined into ct_ctr_next and ct_ctr_run too (read speed:
 * the event stays in registers on its way to the line). run: 0 any entry;
 * 1 the first event of a run (ct_ctr_run's), 2 its next, of the same
 * coroutine: any other entry, and a torn event, are left undecoded (4), the
 * iterator as it was but for a site it added (ct_ctr_run undoes that), for
 * ct_ctr_next to give them as the lines they are. Packs: merged. */
static inline __attribute__((always_inline)) int entry(struct ct_ctr_iter *it,
                                                       struct ct_ev_item *ev,
                                                       struct ct_coro_item *co, const char **line,
                                                       size_t *n, int run, int keep) {
again:
  if (__builtin_expect(it->st != NULL, 0) && (it->la_k || ctr_stream_open(it->st)))
    return run ? 4 : merged(it, ev, co, line, n);
  int k = raw_entry(it, ev, co, line, n, run);
  if (__builtin_expect(it->st != NULL, 0)) {
    if (k == 5 && keep)
      return 5; /* ct_ctr_entry_packs: it->la_pack, never opened */
    if (k == 5) {
      it->la_k = 5;
      return run ? 4 : merged(it, ev, co, line, n);
    }
    if (k == 7) { /* no open pack: at once, the entry after it next */
      ctr_stream_gap(it->st, ev);
      goto again;
    }
    if (k == 1 || k == 3)
      ctr_stream_post(it->st, k, ev, co);
    else if (k == 2)
      ctr_stream_line(it->st, line, n);
  }
  return k;
}

int ct_ctr_entry(struct ct_ctr_iter *it, struct ct_ev_item *ev, struct ct_coro_item *co,
                 const char **line, size_t *n) {
  return entry(it, ev, co, line, n, 0, 0);
}

int ct_ctr_entry_packs(struct ct_ctr_iter *it, struct ct_ev_item *ev, struct ct_coro_item *co,
                       const char **line, size_t *n) {
  return entry(it, ev, co, line, n, 0, 1);
}

_Static_assert(CT_EV_RESUME == CT_EV_SUSPEND + 1, "event_of: a v1 event's kind from active");

/* What ct_line_event would make of the line an event stands for (e's
 * fields: the normalized event), filled directly from what the line was made
 * of (read speed; tests/test-read-event.c checks the two agree on every kind
 * of record): a site is always addr (the site key is addr when there is one),
 * the kind is a v1 record's from active, tid and ev are always named. Its
 * line is 0 (the reader numbers it). wait and obj: as line_from_event
 * derives them. */
static inline __attribute__((always_inline)) void
event_of(const struct ct_ev_item *e, unsigned wait, uint64_t obj, struct ct_event *v) {
  unsigned k = e->kind;
  int known = k >= CT_EV_CREATE && k <= CT_EV_DESTROY, sited = known && k != CT_EV_RESUME;
  v->line = 0;
  v->probe_id = e->probe_id;
  v->tid = e->tid;
  v->ts = e->ts;
  v->addr = e->addr;
  v->seq = e->seq;
  v->ev = e->ev;
  v->from = k == CT_EV_WAKE ? e->obj : 0;
  v->parent = k == CT_EV_CREATE ? e->obj : 0;
  v->site = e->addr;
  v->obj = obj;
  v->kind = (uint8_t)(known ? k : CT_EV_SUSPEND + (e->active != 0)); /* a v1 resume if active */
  v->v1 = (uint8_t)!known;
  v->wait = (uint8_t)wait;
  v->is_active = e->active != 0;
  v->obj_is_str = wait == CTP_WAIT_PTR;
  v->has_tid = v->has_ev = 1;
  v->has_site = sited || e->addr != 0;
  v->has_from = k == CT_EV_WAKE;
  v->has_parent = k == CT_EV_CREATE;
}

/* A suspend's wait kind as its line names it (CTP_WAIT_NONE otherwise). */
static inline unsigned item_wait(const struct ct_ev_item *e) {
  return e->kind == CT_EV_SUSPEND && e->wait > CTP_WAIT_NONE && e->wait < CTP_WAIT_MAX_
             ? e->wait
             : CTP_WAIT_NONE;
}

/* The wait object as the line carries it: none without one; -2^63 has no
 * positive twin, the JSONL reader takes "-9223372036854775808" as 0. */
static inline uint64_t item_obj(const struct ct_ev_item *e, unsigned wait) {
  int has_obj = wait != CTP_WAIT_NONE && wait != CTP_WAIT_EXIT;
  return !has_obj || (wait == CTP_WAIT_FD && e->obj == 1ull << 63) ? 0 : e->obj;
}

/* ct_line_from_event, inlined into ct_ctr_next too. */
static inline enum ct_line_err line_from_event(const struct ct_ev_item *e, struct ct_line *out) {
  /* Every field an event line can set, set (read speed: no memset of the
   * record fields, which only record lines fill and only their readers read),
   * as records.c writes the line: kind and site for a known kind (no site on
   * a resume), the wait object of a suspend, from of a wake, parent of a
   * create. The keys e keeps as they are are e's (event_of's). */
  unsigned k = e->kind;
  int known = k >= CT_EV_CREATE && k <= CT_EV_DESTROY, sited = known && k != CT_EV_RESUME;
  unsigned wait = item_wait(e);
  int has_obj = wait != CTP_WAIT_NONE && wait != CTP_WAIT_EXIT;
  uint64_t obj = item_obj(e, wait);
  event_of(e, wait, obj, &out->e);
  out->type = CT_LINE_EVENT;
  out->is_active = e->active != 0;
  out->kind = known ? (enum ct_ev_kind)k : CT_EV_V1;
  out->site = sited ? e->addr : 0;
  out->wait = (int)wait;
  out->obj = obj;
  out->obj_is_str = wait == CTP_WAIT_PTR;
  out->have = 1ull << CT_K_PROBE_ID | 1ull << CT_K_TID | 1ull << CT_K_ADDR | 1ull << CT_K_SEQ |
              1ull << CT_K_IS_ACTIVE | 1ull << CT_K_TS | 1ull << CT_K_EV |
              (uint64_t)known << CT_K_KIND | (uint64_t)sited << CT_K_SITE |
              (uint64_t)(wait != CTP_WAIT_NONE) << CT_K_WAIT | (uint64_t)has_obj << CT_K_OBJ |
              (uint64_t)(k == CT_EV_WAKE) << CT_K_FROM |
              (uint64_t)(k == CT_EV_CREATE) << CT_K_PARENT;
  return item_torn(e) ? CT_LINE_TORN : CT_LINE_OK;
}

enum ct_line_err ct_line_from_event(const struct ct_ev_item *e, struct ct_line *out) {
  return line_from_event(e, out);
}

int ct_ctr_next(struct ct_ctr_iter *it, struct ct_line *l, enum ct_line_err *err, char *label) {
  struct ct_ev_item ev = {0}; /* (set by entry when it returns 1; the compiler cannot tell) */
  struct ct_coro_item co;
  const char *s = NULL;
  size_t n = 0;
  int k = entry(it, &ev, &co, &s, &n, 0, 0);
  if (k == 1)
    *err = line_from_event(&ev, l);
  else if (k == 2)
    *err = ct_parse_line(s, n, l);
  else if (k == 3)
    *err = ct_line_from_coro(&co, l, label);
  return k;
}

/* A run's event (run: 1 its first, 2 its next) into *v, numbered line: 1,
 * or 0 when the next entry is no such event (left as it was). */
static inline __attribute__((always_inline)) int
run_event(struct ct_ctr_iter *it, struct ct_event *v, uint64_t line, int run) {
  struct ct_ev_item item = {0}; /* (set by entry when it returns 1) */
  uint32_t nsites = it->nsites;
  if (entry(it, &item, NULL, NULL, NULL, run, 0) != 1) {
    it->nsites = nsites; /* left for ct_ctr_next, which adds its site again */
    return 0;
  }
  unsigned wait = item_wait(&item);
  event_of(&item, wait, item_obj(&item, wait), v);
  v->line = line;
  return 1;
}

unsigned ct_ctr_run(struct ct_ctr_iter *it, struct ct_event *restrict ev, unsigned max,
                    uint64_t line) {
  if (!max || !run_event(it, &ev[0], line, 1))
    return 0;
  unsigned n = 1;
  while (n < max && run_event(it, &ev[n], line + n, 2))
    n++;
  return n;
}

enum ct_line_err ct_line_from_coro(const struct ct_coro_item *c, struct ct_line *out, char *label) {
  /* As records.c writes the line (key for key) and ct_parse_line reads it;
   * the label as the line's escaped text, made by the writer's own escaping. */
  memset(out, 0, offsetof(struct ct_line, exit_code));
  out->type = CT_LINE_COROUTINE;
  out->probe_id = c->probe_id;
  out->station = c->station;
  out->pid = c->pid;
  out->birth_ts = c->birth_ts;
  out->create_site = c->create_site;
  out->parent = c->parent;
  out->have = 1ull << CT_K_TYPE | 1ull << CT_K_PROBE_ID | 1ull << CT_K_STATION | 1ull << CT_K_PID |
              1ull << CT_K_BIRTH_TS | 1ull << CT_K_CREATE_SITE | 1ull << CT_K_PARENT;
  if (c->has_label) {
    size_t n = ct_json_escape(label, c->label, strnlen(c->label, sizeof(c->label) - 1));
    out->label = (struct ct_str){label, n, memchr(label, '\\', n) != NULL};
    out->have |= 1ull << CT_K_LABEL;
  }
  return CT_LINE_OK;
}
