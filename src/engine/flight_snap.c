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

/* One coroutine (id 0: a free slot of the open-addressed table). */
struct fs_ent {
  uint64_t id;
  struct ct_snap s;
};

struct ct_fsnap {
  struct fs_ent *tab;
  size_t cap, n;       /* cap: a power of two (0: no table yet) */
  uint64_t untracked;  /* coroutines whose coroutine line found the table full */
  struct fs_ent *last; /* the last entry found (a burst is one coroutine's); NULL when moved */
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

/* One event of a dropped chunk. */
static void on_event(struct ct_fsnap *t, const struct ct_ev_item *ev) {
  /* The last one's, without a call (find's own first look). */
  struct fs_ent *e = t->last && t->last->id == ev->probe_id
                         ? t->last
                         : find(t, ev->probe_id, ev->kind != CTP_KIND_DESTROY);
  if (!e)
    return;
  struct ct_snap *s = &e->s;
  switch (ev->kind) {
  case CTP_KIND_DESTROY:
    drop(t, e);
    return;
  case CTP_KIND_WAKE:
    if (!s->woke_ts) {
      s->woke_ts = ev->ts;
      s->woke_from = ev->obj;
    }
    break;
  case CTP_KIND_CREATE:
    if (!s->fresh_co) /* a new incarnation without a coroutine line of its own */
      s->has_co = 0;
    /* fall through */
  default:
    s->cur = *ev;
    s->has_cur = 1;
    s->woke_ts = s->woke_from = 0;
    break;
  }
  s->last_ev = ev->ev;
  s->fresh_co = 0;
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
        on_event(t, &evs[j]);
      nheld = 0;
    } else if (k != CTP_KIND_WAKE) {
      nheld = 0; /* i undoes them */
    }
    if (same && k != CTP_KIND_CREATE && k != CTP_KIND_DESTROY) {
      held = nheld ? held : i;
      nheld++;
    } else {
      on_event(t, &evs[i]);
    }
  }
  for (size_t j = held; j < held + nheld; j++)
    on_event(t, &evs[j]);
}

void ct_fsnap_apply(struct ct_fsnap *t, const uint8_t *chunk, size_t n) {
  struct ctr_chunk_hdr h;
  if (n < sizeof h)
    return;
  memcpy(&h, chunk, sizeof h);
  if ((h.tag != CTR_CHUNK_TAG && !ctr_chunk_packs(h.tag)) || h.len > n - sizeof h)
    return;
  ct_ctr_begin(&t->it, chunk);
  struct ct_coro_item co;
  const char *line;
  size_t len, nev = 0;
  for (int k;;) {
    k = ct_ctr_entry(&t->it, &t->evs[nev], &co, &line, &len);
    if (k == 1 && ++nev < FS_BATCH)
      continue;
    /* The events so far, in order, before whatever ends the batch. */
    apply_batch(t, nev);
    nev = 0;
    if (k <= 0)
      break;
    if (k == 3) { /* a coroutine's line comes before its first event */
      struct fs_ent *e = find(t, co.probe_id, 1);
      t->untracked += !e;
      if (e) {
        memset(&e->s, 0, sizeof e->s);
        e->s.co = co;
        e->s.has_co = e->s.fresh_co = 1;
      }
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
