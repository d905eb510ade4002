/* flight_snap.c - the flight window's snapshot: each coroutine alive before
 * the window, kept up to date from the chunks the window drops, written at
 * the head of every dump (docs/TRACE_FORMAT.md "Flight windows"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/flight.h"
#include "format/ctrace.h"
#include "format/ctrace_dec.h"
#include "format/records.h"
#include "format/writer.h"

/* One coroutine (id 0: a free slot of the open-addressed table). In
 * t->order, where its cur came from (before()): the pack (t->npk's
 * number; 0: an ordinary event) and the time the merge orders it by (not
 * clamped). */
struct fs_ent {
  uint64_t id;
  uint64_t cpk, craw;
  struct ct_snap s;
};

/* Packs from pk on (up to the next group's) whose events up to lv the
 * decoder's merge has given before the entry at hand (before()). */
struct fs_drain {
  uint64_t pk, lv;
};

struct ct_fsnap {
  struct fs_ent *tab;
  size_t cap, n;       /* cap: a power of two (0: no table yet) */
  uint64_t untracked;  /* coroutines whose coroutine line found the table full */
  struct fs_ent *last; /* the last entry found (a burst is one coroutine's); NULL when moved */
  /* expand: packs go through the decoder's merge, expanded into events in
   * time order (ct_fsnap_expand: the path before ctr_stream_walk, which
   * the tests compare with). order: the chunk at hand is taken in the
   * chunk's order, a pack's switches at once (on_switch), so a coroutine
   * seen on two threads may come out of time order: a fact older than the
   * one it has is not applied (on_event). */
  int expand, order;
  /* In order: the packs walked (npk; this chunk's are past pk0), the event
   * at hand's pack (0: ordinary; its time goes as an argument: stored here
   * for each switch, its load with x_pk's stalled), and the drain levels of
   * this chunk's packs as groups, levels falling from dr[0] (drain()). */
  uint64_t npk, pk0, x_pk;
  struct fs_drain *dr;
  size_t ndr, cdr;
  struct ct_ctr_iter it;
  /* A chunk's events are decoded FS_BATCH at a time, then applied: read back
   * at once, the decoder's narrow stores did not forward to the wide loads
   * of an event's copy (a stall that was three quarters of the apply). */
#define FS_BATCH 128
  struct ct_ev_item evs[FS_BATCH];
  struct ct_writer w; /* a line's text (no file) */
};

int ct_fsnap_new(struct ct_fsnap **out) {
  struct ct_fsnap *t = calloc(1, sizeof *t);
  if (!t || !(t->w.buf = malloc(CT_W_BUF))) {
    free(t);
    return -ENOMEM;
  }
  t->w.fd = -1;
  *out = t;
  return 0;
}

void ct_fsnap_free(struct ct_fsnap *t) {
  if (!t)
    return;
  free(t->tab);
  free(t->dr);
  free(t->w.buf);
  ct_ctr_fini(&t->it);
  free(t);
}

/* The home slot of id. */
static size_t home(const struct ct_fsnap *t, uint64_t id) {
  return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 17) & (t->cap - 1);
}

/* Doubles the table (or makes its first). 0 or -ENOMEM. */
static int grow(struct ct_fsnap *t) {
  size_t ncap = t->cap ? 2 * t->cap : 256;
  struct fs_ent *old = t->tab, *nt = calloc(ncap, sizeof *nt);
  if (!nt)
    return -ENOMEM;
  size_t ocap = t->cap;
  t->tab = nt;
  t->cap = ncap;
  for (size_t i = 0; i < ocap; i++)
    if (old[i].id) {
      size_t j = home(t, old[i].id);
      while (nt[j].id)
        j = (j + 1) & (ncap - 1);
      nt[j] = old[i];
    }
  free(old);
  t->last = NULL;
  return 0;
}

/* id's entry, made (zeroed) when put and it has none; NULL when it has none
 * and is not put, or the table is full. */
static struct fs_ent *find(struct ct_fsnap *t, uint64_t id, int put) {
  if (t->last && t->last->id == id)
    return t->last;
  if (t->cap) {
    for (size_t j = home(t, id);; j = (j + 1) & (t->cap - 1)) {
      if (t->tab[j].id == id)
        return t->last = &t->tab[j];
      if (!t->tab[j].id)
        break;
    }
  }
  if (!put)
    return NULL;
  if (t->n >= CT_FSNAP_MAX || ((t->n + 1) * 2 > t->cap && grow(t)))
    return NULL;
  size_t j = home(t, id);
  while (t->tab[j].id)
    j = (j + 1) & (t->cap - 1);
  memset(&t->tab[j], 0, sizeof t->tab[j]);
  t->tab[j].id = id;
  t->n++;
  return t->last = &t->tab[j];
}

/* Removes e (linear probing: the entries after it move back into the hole). */
static void drop(struct ct_fsnap *t, struct fs_ent *e) {
  size_t i = (size_t)(e - t->tab), mask = t->cap - 1;
  t->last = NULL; /* entries move */
  t->tab[i].id = 0;
  t->n--;
  for (size_t j = (i + 1) & mask; t->tab[j].id; j = (j + 1) & mask) {
    size_t h = home(t, t->tab[j].id);
    /* j's entry may fill the hole at i when its home is not in (i, j]. */
    if (((j - h) & mask) >= ((j - i) & mask)) {
      t->tab[i] = t->tab[j];
      t->tab[j].id = 0;
      i = j;
    }
  }
}

/* The decoder's merge (ctrace_dec.c merged()) takes an open pack's next
 * event before any later entry of the chunk whose time reaches it: an
 * event or gap at its ts, a coroutine line before its birth_ts, a pack
 * before its ns0. drain(t, lv): the entry at hand reaches lv, so every
 * pack walked in this chunk has given its events up to lv before it. The
 * packs' levels only fall from the earliest pack to the latest: a stack of
 * groups of equal level, merged as a level rises over them (amortized
 * O(1)). A new pack starts a group at level 0 (no memory: it joins the
 * group before, its events then taken as given earlier than they were). */
static void drain(struct ct_fsnap *t, uint64_t lv) {
  uint64_t first = 0;
  int merged = 0;
  while (t->ndr && t->dr[t->ndr - 1].lv < lv) {
    first = t->dr[--t->ndr].pk;
    merged = 1;
  }
  if (merged)
    t->dr[t->ndr++] = (struct fs_drain){first, lv};
}

/* A new pack (t->npk) walked in this chunk: its group. */
static void open_drain(struct ct_fsnap *t) {
  if (t->ndr && t->dr[t->ndr - 1].lv == 0)
    return; /* the group of level 0 takes it */
  if (t->ndr == t->cdr) {
    size_t nc = t->cdr ? 2 * t->cdr : 64;
    struct fs_drain *n = realloc(t->dr, nc * sizeof *n);
    if (!n)
      return;
    t->dr = n;
    t->cdr = nc;
  }
  t->dr[t->ndr++] = (struct fs_drain){t->npk, 0};
}

/* Whether a fact from pack pk (0: an ordinary event) at time raw came
 * before the event at hand (t->x_pk, at time x_raw) in the decoder's merge:
 * the entries of the chunk are taken in its order, each pack's events in
 * theirs, so a fact from an ordinary event, an earlier chunk or the same
 * pack came before; one of an earlier pack of this chunk came before when
 * an entry since its pack reached its time (drain), or, the event at hand
 * a pack's, when it is not later (the merge gives the earliest open
 * pack's next event; a tie, the pack opened first). */
static int before(const struct ct_fsnap *t, uint64_t pk, uint64_t raw, uint64_t x_raw) {
  if (pk <= t->pk0 || pk == t->x_pk)
    return 1;
  size_t lo = 0, hi = t->ndr; /* the group of pk: the last one from pk or before */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (t->dr[mid].pk <= pk)
      lo = mid;
    else
      hi = mid;
  }
  if (t->ndr && raw <= t->dr[lo].lv)
    return 1;
  return t->x_pk && raw <= x_raw;
}

/* A fact of e's coroutine at hand (not a destroy): its kind, ts, obj (a
 * wake's waker), ev and raw time (before()'s x_raw). In t->order (the
 * chunk's entries in its order, a pack's switches at once), what the
 * decoder's merge in time makes of it: a fact the merge gives before the
 * coroutine's cur changes none of its state (before()). Nothing else
 * needs the merge's order: a wake the walk takes before a cur the merge
 * gives before it is a pack's, whose suspend, given just before it, the
 * merge gives after that cur too (so that cur is not taken), and an
 * earlier entry's facts, a wake's too, the merge gives before a later
 * entry's; the ev the walk and ctr_stream_post number grow in the walk's
 * order as in the merge's, from the same counts, so the last one taken is
 * the merge's last. Returns 1 when the fact is e's cur from now on: the
 * caller writes it (s->cur). */
static inline int take(struct ct_fsnap *t, struct fs_ent *e, uint8_t kind, uint64_t ts,
                       uint64_t obj, uint64_t ev, uint64_t raw) {
  struct ct_snap *s = &e->s;
  int older = t->order && s->has_cur && !before(t, e->cpk, e->craw, raw), cur = 0;
  if (kind == CTP_KIND_WAKE) {
    if (!older && !s->woke_ts) {
      s->woke_ts = ts;
      s->woke_from = obj;
    }
  } else if (!older) {
    if (kind == CTP_KIND_CREATE && !s->fresh_co)
      s->has_co = 0; /* a new incarnation without a coroutine line of its own */
    s->has_cur = cur = 1;
    e->cpk = t->x_pk;
    e->craw = raw;
    s->woke_ts = s->woke_from = 0;
  }
  s->last_ev = ev;
  s->fresh_co = 0;
  return cur;
}

/* The entry of coroutine id, made unless for a destroy (NULL: none). */
static inline struct fs_ent *ent(struct ct_fsnap *t, uint64_t id, uint8_t kind) {
  /* The last one's, without a call (find's own first look). */
  return t->last && t->last->id == id ? t->last : find(t, id, kind != CTP_KIND_DESTROY);
}

/* One event of a dropped chunk (take's rules; a destroy drops). */
static void on_event(struct ct_fsnap *t, const struct ct_ev_item *ev) {
  struct fs_ent *e = ent(t, ev->probe_id, ev->kind);
  if (!e)
    return;
  if (ev->kind == CTP_KIND_DESTROY)
    drop(t, e);
  else if (take(t, e, ev->kind, ev->ts, ev->obj, ev->ev, ev->ts))
    e->s.cur = *ev;
}

/* An ordinary event of the chunk (not a pack's): in t->order, the entry
 * at hand, reaching its ts (drain). */
static void on_ordinary(struct ct_fsnap *t, const struct ct_ev_item *ev) {
  if (t->order) {
    drain(t, ev->ts);
    t->x_pk = 0;
  }
  on_event(t, ev);
}

/* A pack's switch (ctr_stream_walk): the events the decoder's expansion
 * gives for it (a suspend, its wake, a resume; a standalone wake's one
 * wake), each taken (take) without
 * an event built: its fields written straight into cur (an item built and
 * then copied stalls on the copy's wide loads). */
static void on_switch(void *ctx, const struct ctr_pack_sw *sw) {
  struct ct_fsnap *t = ctx;
  struct fs_ent *e;
  if (sw->id[0] && (e = ent(t, sw->id[0], CTP_KIND_SUSPEND))) {
    if (take(t, e, CTP_KIND_SUSPEND, sw->ts[0], sw->obj, sw->ev[0], sw->raw))
      e->s.cur = (struct ct_ev_item){.ts = sw->ts[0],
                                     .probe_id = sw->id[0],
                                     .tid = sw->tid,
                                     .addr = sw->site,
                                     .seq = 2 * (sw->ev[0] + 1),
                                     .obj = sw->obj,
                                     .ev = sw->ev[0],
                                     .kind = CTP_KIND_SUSPEND,
                                     .wait = sw->wait};
    if (sw->wake)
      (void)take(t, e, CTP_KIND_WAKE, sw->ts[0], 0, sw->ev[0] + 1, sw->raw);
  }
  if (sw->solo) { /* a standalone wake: to's wake, by obj */
    if (sw->id[1] && (e = ent(t, sw->id[1], CTP_KIND_WAKE)))
      (void)take(t, e, CTP_KIND_WAKE, sw->ts[1], sw->obj, sw->ev[1], sw->raw);
    return;
  }
  if (sw->id[1] && (e = ent(t, sw->id[1], CTP_KIND_RESUME)) &&
      take(t, e, CTP_KIND_RESUME, sw->ts[1], 0, sw->ev[1], sw->raw))
    e->s.cur = (struct ct_ev_item){.ts = sw->ts[1],
                                   .probe_id = sw->id[1],
                                   .tid = sw->tid,
                                   .seq = 2 * (sw->ev[1] + 1),
                                   .ev = sw->ev[1],
                                   .kind = CTP_KIND_RESUME,
                                   .active = 1};
}

/* on_event of t->evs[0..n), in order, less the events whose whole effect a
 * later one undoes (a burst of one coroutine is then a few entries, not a
 * copy of every event into the table; the snapshot is the same):
 * within a run of one coroutine's events, an event followed, before any
 * destroy of it, by a later one that sets cur (any kind but a wake or a
 * destroy) leaves nothing of its own: that one's cur, woke and last_ev
 * replace its own, and the entry it would make (or fail to make, the table
 * full) that one makes (or fails to) the same, nothing else touching the
 * table in between. Kept anyway: a run's first event (it clears fresh_co,
 * which a later create reads), creates (they clear has_co, which nothing
 * later restores) and destroys. */
static void apply_batch(struct ct_fsnap *t, size_t n) {
  const struct ct_ev_item *evs = t->evs;
  /* evs[held, held + nheld): not applied yet (a later event of their run
   * may undo them), in order. */
  size_t held = 0, nheld = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t k = evs[i].kind;
    int same = i > 0 && evs[i - 1].probe_id == evs[i].probe_id;
    if (!same || k == CTP_KIND_DESTROY) { /* they stay: applied first */
      for (size_t j = held; j < held + nheld; j++)
        on_ordinary(t, &evs[j]);
      nheld = 0;
    } else if (k != CTP_KIND_WAKE) {
      nheld = 0; /* i undoes them */
    }
    if (same && k != CTP_KIND_CREATE && k != CTP_KIND_DESTROY) {
      held = nheld ? held : i;
      nheld++;
    } else {
      on_ordinary(t, &evs[i]);
    }
  }
  for (size_t j = held; j < held + nheld; j++)
    on_ordinary(t, &evs[j]);
}

void ct_fsnap_expand(struct ct_fsnap *t, int on) {
  t->expand = on;
}

/* Contract: see flight.h. A chunk of packs (t->order): its entries in the
 * chunk's order, each pack walked at once (ctr_stream_walk), on_event's
 * rules giving the merge's snapshot (test-fsnap-order). Unless the chunk
 * has rebinds: the walk takes a pack's station numbers as the decoder
 * means them when the pack comes, and the engine writes a pack before the
 * records not older than its first entry, so a coroutine line after it may
 * name its station's coroutine from a time inside it (a create on another
 * thread, the coroutine's first switches in this thread's pack: the merge
 * gives them to the new coroutine, the walk to none or the old), and a gap
 * entry after it numbers its coroutine's later switches past the gap; and
 * a standalone wake in thread A's pack is a wake of a coroutine whose
 * earlier suspend may sit in thread B's pack written after A's (the walk
 * would clamp the suspend to the wake's time; docs/ROUTE1.md item 11 for
 * why a fold in the walk does not hold). Such a chunk goes through the
 * merge (with creates on the way, the server's shape, or standalone wakes,
 * a channel's, every chunk: the cost before the walk). */
void ct_fsnap_apply(struct ct_fsnap *t, const uint8_t *chunk, size_t n, uint32_t rebinds) {
  struct ctr_chunk_hdr h;
  if (n < sizeof h)
    return;
  memcpy(&h, chunk, sizeof h);
  if ((h.tag != CTR_CHUNK_TAG && !ctr_chunk_packs(h.tag)) || h.len > n - sizeof h)
    return;
  ct_ctr_begin(&t->it, chunk);
  t->order = !t->expand && !rebinds && ctr_chunk_packs(h.tag);
  t->pk0 = t->npk;
  t->ndr = 0;
  struct ct_coro_item co;
  const char *line;
  size_t len, nev = 0;
  for (int k;;) {
    k = t->order ? ct_ctr_entry_packs(&t->it, &t->evs[nev], &co, &line, &len)
                 : ct_ctr_entry(&t->it, &t->evs[nev], &co, &line, &len);
    if (k == 1 && ++nev < FS_BATCH)
      continue;
    /* The events so far, in order, before whatever ends the batch. */
    apply_batch(t, nev);
    nev = 0;
    if (k <= 0)
      break;
    if (k == 3) { /* a coroutine's line comes before its first event */
      if (t->order && co.birth_ts)
        drain(t, co.birth_ts - 1); /* the merge gives it at its birth_ts */
      struct fs_ent *e = find(t, co.probe_id, 1);
      t->untracked += !e;
      if (e) {
        memset(&e->s, 0, sizeof e->s);
        e->s.co = co;
        e->s.has_co = e->s.fresh_co = 1;
      }
    } else if (k == 5) {
      if (t->it.la_pack.ns0)
        drain(t, t->it.la_pack.ns0 - 1); /* the merge opens it at its ns0 */
      t->x_pk = ++t->npk;
      open_drain(t);
      if (ctr_stream_walk(t->it.st, &t->it.la_pack, on_switch, t))
        break; /* a pack shorter than its header: the chunk's fault */
    }
  }
}

int ct_fsnap_emit(struct ct_fsnap *t, int (*put)(void *ctx, const uint8_t *p, size_t n, uint32_t k),
                  void *ctx, uint64_t *count, uint64_t *untracked) {
  enum { ROOM = 64u << 10 };
  uint8_t *buf = malloc(ROOM + 16 + CT_W_BUF);
  size_t len = 0;
  uint32_t k = 0;
  int rc = buf ? 0 : -ENOMEM;
  *count = 0;
  *untracked = t->untracked;
  for (size_t i = 0; i < t->cap && !rc; i++) {
    if (!t->tab[i].id || (!t->tab[i].s.has_cur && !t->tab[i].s.has_co))
      continue;
    t->w.len = 0;
    /* Its pack events so far: a reader of the dump seeds its decoder on it. */
    t->tab[i].s.packed = ct_ctr_packed(&t->it, t->tab[i].id);
    ct_rec_snapshot(&t->w, &t->tab[i].s);
    size_t n = t->w.len - 1; /* without its '\n' */
    if (len + 11 + n > ROOM && k) {
      rc = put(ctx, buf, len, k);
      len = k = 0;
    }
    len = (size_t)(ctr_put_line(buf + len, t->w.buf, n) - buf);
    k++;
    ++*count;
  }
  if (!rc && k)
    rc = put(ctx, buf, len, k);
  free(buf);
  return rc;
}
