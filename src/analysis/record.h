/* record.h - what a trace's records other than events mean (meta, coroutine,
 * snapshot, end), decided once, as ct_line_event decides an event's: the
 * state (the report), the dashboard's model and the export read these, so
 * they agree on a coroutine's label, on when a reused id is a new coroutine,
 * and on which end values are possible (docs/TRACE_FORMAT.md). A
 * station_end's lost count is each reader's own: the report gives it to the
 * id's current incarnation, the export's one row per id sums them all. */
#ifndef CT_ANALYSIS_RECORD_H
#define CT_ANALYSIS_RECORD_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "analysis/trace.h"

/* Whether a line of coroutine id whose current incarnation was destroyed
 * (destroyed != 0) starts a new incarnation: its coroutine record, or its
 * create event (malloc hands a freed coroutine's address, its id, to the
 * next one). Any other line of it belongs to the one that was destroyed. */
static inline int ct_rec_new_incarnation(int destroyed, const struct ct_line *l) {
  return destroyed &&
         (l->type == CT_LINE_COROUTINE || (l->type == CT_LINE_EVENT && l->e.kind == CT_EV_CREATE));
}

/* The same for an event the binary reader handed over without its line. */
static inline int ct_rec_new_incarnation_ev(int destroyed, const struct ct_event *e) {
  return destroyed && e->kind == CT_EV_CREATE;
}

/* A coroutine record's facts (or a flight dump's snapshot record's, which
 * carries the same). Each given fact replaces what the reader knew of the
 * coroutine's current incarnation: the label too, the last one given wins
 * (a coroutine's record written again says what is true now; an earlier
 * incarnation's label goes with it). */
struct ct_rec_coro {
  const struct ct_str *label; /* NULL: none given (an empty one is none) */
  uint64_t pid, station, parent, create_site, birth_ts;
  uint8_t has_pid, has_station, has_parent, has_create_site, has_birth;
};

static inline void ct_rec_coro(const struct ct_line *l, struct ct_rec_coro *o) {
  o->label = CT_HAS(l, CT_K_LABEL) && l->label.n ? &l->label : NULL;
  o->has_pid = CT_HAS(l, CT_K_PID);
  o->pid = l->pid;
  /* A station index of UINT32_MAX or above names none (stations are counted in 32 bits). */
  o->has_station = CT_HAS(l, CT_K_STATION) && l->station < UINT32_MAX;
  o->station = l->station;
  o->has_parent = CT_HAS(l, CT_K_PARENT);
  o->parent = l->parent;
  o->has_create_site = CT_HAS(l, CT_K_CREATE_SITE);
  o->create_site = l->create_site;
  o->has_birth = CT_HAS(l, CT_K_BIRTH_TS);
  o->birth_ts = l->birth_ts;
}

/* A meta record's facts (the run's head): each given one replaces what the
 * reader knew; the clock pair (mono_ns, wall_ns) counts only whole. */
struct ct_rec_meta {
  const struct ct_str *run_id, *host; /* NULL: not given */
  uint64_t mono_ns, wall_ns, target_pid;
  uint8_t has_mono, has_clock, has_target_pid;
};

static inline void ct_rec_meta(const struct ct_line *l, struct ct_rec_meta *o) {
  o->run_id = CT_HAS(l, CT_K_RUN_ID) ? &l->run_id : NULL;
  o->host = CT_HAS(l, CT_K_HOST) ? &l->host : NULL;
  o->has_mono = CT_HAS(l, CT_K_MONO_NS);
  o->mono_ns = l->mono_ns;
  o->has_clock = o->has_mono && CT_HAS(l, CT_K_WALL_NS);
  o->wall_ns = l->wall_ns;
  o->has_target_pid = CT_HAS(l, CT_K_TARGET_PID);
  o->target_pid = l->target_pid;
}

/* An end record's values, once they passed ct_rec_end. */
struct ct_rec_end {
  uint64_t ts, events, harvested, lost, untraced;
  int64_t code, signal;
  uint8_t has_ts, has_code, has_signal, has_counts;
};

/* The highest signal number Linux has (SIGRTMAX). */
#define CT_REC_SIGNAL_MAX 64

/* The values of end record l into *o, 0; or -EINVAL with why (one line,
 * naming the field) when the record cannot be true, which a reader then
 * takes as damage, not as fact: a second end in the same run (had_end; the
 * first one stays), an exit code outside 0-255 or a signal outside
 * 1-CT_REC_SIGNAL_MAX (what waitpid can say), counts that do not add up
 * (harvested + lost == events, docs/TRACE_FORMAT.md), unless the record says
 * its totals are partial ("error": the engine saturated them). */
static inline int ct_rec_end(const struct ct_line *l, int had_end, struct ct_rec_end *o, char *why,
                             size_t whylen) {
  *o = (struct ct_rec_end){.ts = l->ts,
                           .events = l->events,
                           .harvested = l->harvested,
                           .lost = l->lost,
                           .untraced = l->untraced,
                           .code = l->exit_code,
                           .signal = l->exit_signal,
                           .has_ts = CT_HAS(l, CT_K_TS),
                           .has_code = CT_HAS(l, CT_K_CODE),
                           .has_signal = CT_HAS(l, CT_K_SIGNAL),
                           .has_counts = CT_HAS(l, CT_K_EVENTS)};
  if (had_end)
    snprintf(why, whylen, "end: a second end record in one run (the first one is kept)");
  else if (o->has_code && (o->code < 0 || o->code > 255))
    snprintf(why, whylen, "end: exit code %" PRId64 " is not one a process can exit with (0-255)",
             o->code);
  else if (o->has_signal && (o->signal < 1 || o->signal > CT_REC_SIGNAL_MAX))
    snprintf(why, whylen, "end: signal %" PRId64 " is not a signal (1-%d)", o->signal,
             CT_REC_SIGNAL_MAX);
  else if (o->has_counts && !CT_HAS(l, CT_K_ERROR) &&
           (o->harvested > o->events || o->lost != o->events - o->harvested))
    snprintf(why, whylen,
             "end: lost %" PRIu64 " and harvested %" PRIu64 " do not add up to its %" PRIu64
             " events",
             o->lost, o->harvested, o->events);
  else
    return 0;
  return -EINVAL;
}

#endif
