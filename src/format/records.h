/* records.h - the trace format's records, as JSONL lines through a writer
 * (records.c): all but the engine's meta and module (src/engine/records.h). */
#ifndef CT_FORMAT_RECORDS_H
#define CT_FORMAT_RECORDS_H

#include <stdint.h>
#include <sys/types.h>

#include "format/ctrace.h"
#include "format/writer.h"

/* An event, as the harvest copied it (ts already in ns): struct ct_ev_item,
 * format/ctrace.h (the binary decoder gives it back). */
/* A coroutine's static facts: struct ct_coro_item, format/ctrace.h. */
struct ct_station_end {
  uint64_t probe_id, events, harvested, lost;
  uint32_t station, gen; /* gen 0: a v1 station */
  int dead;
  int corrupt; /* its counters held what cannot be true: lost is not known */
};
struct ct_end {
  uint64_t ts, wall_ns;
  int wstatus, exit_code;
  uint64_t events, harvested, lost, stations_used, untraced, torn_retries;
  uint64_t engine_cpu_us, harvest_cpu_us, wake_late_max_us;
  int sched_rt, shm_broken, rings;
  /* v2 (rings only): records dropped in rings (also in lost), threads without
   * a ring, records of a past incarnation, records that failed the checks,
   * records skipped by a ring resynchronisation (all but ring_lost in lost). */
  uint64_t ring_lost, no_ring, stale, bad, gap, sink_stalls;
  uint64_t spilled; /* bytes of capture that went through the spill file */
  uint64_t corrupt; /* values of the shared memory that could not be true (left out) */
};
void ct_rec_process(struct ct_writer *w, pid_t pid, const char *event, uint64_t ts);
/* One text site (sites.c): token site (CTP_SITE_TEXT | offset) of process pid
 * names file:line in function. */
void ct_rec_site(struct ct_writer *w, uint32_t pid, uint64_t site, const char *file, uint32_t line,
                 const char *function);
void ct_rec_coroutine(struct ct_writer *w, const struct ct_coro_item *c);
void ct_rec_event(struct ct_writer *w, const struct ct_ev_item *e);
void ct_rec_station_end(struct ct_writer *w, const struct ct_station_end *e);
void ct_rec_end(struct ct_writer *w, const struct ct_end *e);
/* The marker of a trace cut short by a write error (errno err): the last
 * record of the file, so readers say why it ends there. */
void ct_rec_cut(struct ct_writer *w, int err);
/* A flight dump's window: its first and last event, what was dropped before
 * it (bytes, chunks, the last dropped event's ts), its bytes, the trigger. */
struct ct_window {
  uint64_t start_ts, end_ts, dropped_ts, dropped_bytes, dropped_chunks, bytes;
  uint64_t snapshot, untracked; /* coroutines in its snapshot; alive but not kept there */
  uint64_t ts;                  /* when it was written (CLOCK_MONOTONIC ns, as events' ts) */
  uint64_t lost, dropped_lost;  /* the engine's losses at the dump, and before the window */
  const char *trigger;
};
/* A flight dump's window record, before its window's chunks (docs/TRACE_FORMAT.md
 * "Flight windows"). */
void ct_rec_window(struct ct_writer *w, const struct ct_window *win);

/* A coroutine alive at a flight window's start, as the events dropped
 * before the window left it (flight_snap.c keeps one per coroutine). */
struct ct_snap {
  struct ct_coro_item co;      /* its coroutine line's facts, when has_co */
  struct ct_ev_item cur;       /* its last create, resume or suspend, when has_cur */
  uint64_t last_ev;            /* its last event's ev */
  uint64_t packed;             /* of its events, those from packs (a trace's decoder seeds on it) */
  uint64_t woke_ts, woke_from; /* the first wake since cur (woke_ts 0: none) */
  uint8_t has_co, has_cur, fresh_co;
};
/* Its snapshot line (docs/TRACE_FORMAT.md "Flight windows"). */
void ct_rec_snapshot(struct ct_writer *w, const struct ct_snap *s);

#endif /* CT_FORMAT_RECORDS_H */
