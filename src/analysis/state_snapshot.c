/* state_snapshot.c - a flight dump's snapshot and window records (docs/
 * TRACE_FORMAT.md "Flight windows"): each coroutine alive at the window's
 * start enters the state as its last events before the window left it. */
#include <string.h>

#include "analysis/state.h"

/* Copies key k (and its have bit) from l to o. */
#define TAKE(o, l, k, f)                                                                           \
  do {                                                                                             \
    if (CT_HAS(l, k)) {                                                                            \
      (o)->f = (l)->f;                                                                             \
      (o)->have |= 1ull << (k);                                                                    \
    }                                                                                              \
  } while (0)

/* The coroutine line a snapshot line carries. */
static void coro_line(const struct ct_line *l, struct ct_line *o) {
  memset(o, 0, sizeof *o);
  o->type = CT_LINE_COROUTINE;
  o->have = 1ull << CT_K_TYPE;
  TAKE(o, l, CT_K_PROBE_ID, probe_id);
  TAKE(o, l, CT_K_STATION, station);
  TAKE(o, l, CT_K_PID, pid);
  TAKE(o, l, CT_K_BIRTH_TS, birth_ts);
  TAKE(o, l, CT_K_CREATE_SITE, create_site);
  TAKE(o, l, CT_K_PARENT, parent);
  TAKE(o, l, CT_K_LABEL, label);
}

/* The event that put the coroutine in its snapshot state (0: none known). */
static enum ct_ev_kind state_kind(const struct ct_line *l) {
  static const char *const names[] = {"created", "running", "suspended", "runnable"};
  static const enum ct_ev_kind kinds[] = {CT_EV_CREATE, CT_EV_RESUME, CT_EV_SUSPEND, CT_EV_SUSPEND};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (l->state.n == strlen(names[i]) && !memcmp(l->state.p, names[i], l->state.n))
      return kinds[i];
  return CT_EV_V1;
}

/* An event line of l's coroutine at ts, of kind k (no ev: no gap judged). */
static void event_line(const struct ct_line *l, enum ct_ev_kind k, uint64_t ts, struct ct_line *o) {
  memset(o, 0, sizeof *o);
  o->type = CT_LINE_EVENT;
  o->have = 1ull << CT_K_PROBE_ID | 1ull << CT_K_TS | 1ull << CT_K_KIND | 1ull << CT_K_IS_ACTIVE;
  o->probe_id = l->probe_id;
  o->ts = ts;
  o->kind = k;
  o->is_active = k == CT_EV_RESUME;
  TAKE(o, l, CT_K_TID, tid);
  if (k == CT_EV_SUSPEND) {
    TAKE(o, l, CT_K_SITE, site);
    TAKE(o, l, CT_K_WAIT, wait);
    TAKE(o, l, CT_K_OBJ, obj);
    o->obj_is_str = l->obj_is_str;
  } else if (k == CT_EV_CREATE) {
    TAKE(o, l, CT_K_PARENT, parent);
    if (CT_HAS(l, CT_K_CREATE_SITE)) {
      o->site = l->create_site;
      o->have |= 1ull << CT_K_SITE;
    }
  } else if (k == CT_EV_WAKE) {
    TAKE(o, l, CT_K_FROM, from);
  }
  ct_line_event(o); /* its meaning, as the parsers give every event line */
}

/* Feeds o through ct_state_line as a line of the snapshot: not a line of
 * the trace, and its ts, before the window, joins no activity bucket (the
 * report's timeline is the window's). */
static int replay(struct ct_state *s, uint64_t lineno, const struct ct_line *o) {
  struct ct_bucket *b = o->type == CT_LINE_EVENT ? ct_map_get(&s->buckets, o->ts >> 34, 0) : NULL;
  struct ct_bucket saved = b ? *b : (struct ct_bucket){0};
  int rc = ct_state_line(s, lineno, CT_LINE_OK, o);
  s->lines--;
  if (o->type == CT_LINE_EVENT && (b = ct_map_get(&s->buckets, o->ts >> 34, 0)) != NULL)
    *b = saved; /* n 0 (a bucket it made): left out */
  return rc;
}

/* state.h: the coroutine's line, then its state's event (and its wake),
 * through ct_state_line; what counts the window's events is put back. A
 * line without tid had no event before the window (its coroutine line only):
 * its first event is the window's, ev 0. */
int ct_state_snapshot(struct ct_state *s, uint64_t lineno, const struct ct_line *l) {
  struct ct_line o;
  uint64_t events = s->events, first = s->first_ts, last = s->last_ts, resumes = s->resumes;
  uint64_t returned = s->returned;
  enum ct_ev_kind k = state_kind(l);
  coro_line(l, &o);
  int rc = replay(s, lineno, &o);
  if (!rc && k) {
    event_line(l, k, l->ts, &o);
    rc = replay(s, lineno, &o);
  }
  if (!rc && k && CT_HAS(l, CT_K_WOKE_TS) && l->woke_ts) {
    event_line(l, CT_EV_WAKE, l->woke_ts, &o);
    rc = replay(s, lineno, &o);
  }
  s->events = events;
  s->first_ts = first;
  s->last_ts = last;
  s->resumes = resumes;
  s->returned = returned;
  struct ct_coro *c = ct_map_get(&s->coros, l->probe_id, 0);
  if (c && CT_HAS(l, CT_K_TID)) { /* the window's first event of it follows this one */
    c->next_ev = l->ev + 1;
    s->any_ev = 1;
  }
  s->snapshot_coros++;
  return rc;
}

/* state.h: what the window record says. */
void ct_state_window(struct ct_state *s, const struct ct_line *l) {
  s->has_window = 1;
  s->window_start_ts = CT_HAS(l, CT_K_START_TS) ? l->start_ts : 0;
  s->window_dropped_ts = CT_HAS(l, CT_K_DROPPED_TS) ? l->dropped_ts : 0;
  /* When it was written, kept whatever follows: the record comes before the
   * window's chunks (after them in older dumps), so whether an end record
   * comes is known at the trace's end only; ct_report_build takes it as the
   * present when none came (a dump of a program still running, judged as
   * the live view judges a trace). */
  if (CT_HAS(l, CT_K_TS) && l->ts > s->window_ts && l->ts < (1ull << 62))
    s->window_ts = l->ts;
  s->window_has_lost =
      CT_HAS(l, CT_K_LOST) && CT_HAS(l, CT_K_DROPPED_LOST) && l->dropped_lost <= l->lost;
  s->window_lost = s->window_has_lost ? l->lost : 0;
  s->window_dropped_lost = s->window_has_lost ? l->dropped_lost : 0;
  memset(s->window_trigger, 0, sizeof s->window_trigger);
  if (CT_HAS(l, CT_K_TRIGGER))
    ct_str_copy(&l->trigger, s->window_trigger, sizeof s->window_trigger);
}
