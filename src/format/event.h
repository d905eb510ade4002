/* event.h - one event as every reader means it (struct ct_event), whichever SDK wrote
 * it and whichever form of the trace carried it (docs/TRACE_FORMAT.md). */
#ifndef CT_FORMAT_EVENT_H
#define CT_FORMAT_EVENT_H

#include <stdint.h>

#include "common/ctp.h"

/* Event kinds; CT_EV_V1 = no "kind" key (derive from is_active). */
enum ct_ev_kind {
  CT_EV_V1 = 0,
  CT_EV_CREATE,
  CT_EV_SUSPEND,
  CT_EV_RESUME,
  CT_EV_WAKE,
  CT_EV_DESTROY
};

/* One event as the read side means it, whichever SDK wrote it (the
 * reference's v1 lines or ours) and whichever format carried it (JSONL or
 * binary). What a line means is decided once, here (ct_line_event), when the
 * reader parses it; the analysis (state.c), the dashboard's model and the
 * export read this value, never the line's raw keys. */
struct ct_event {
  uint64_t line; /* its line in the trace, from 1, as ct_trace_read* numbers them; 0 unknown */
  uint64_t probe_id, tid, ts, addr, seq, ev;
  uint64_t from;   /* a wake's waker (probe_id), 0 for a plain thread */
  uint64_t parent; /* a create's parent (probe_id), 0 for none */
  /* create/suspend/wake/destroy: where. The "site" key, else addr (the v1
   * rule every line keeps: the site on a suspend, 0 on a resume). */
  uint64_t site;
  uint64_t obj; /* a suspend's wait object (fd, address, awaited probe_id); 0 with none */
  uint8_t kind; /* enum ct_ev_kind: never CT_EV_V1 (a v1 line's from is_active) */
  uint8_t v1;   /* written by a v1 SDK: the line has no "kind" */
  uint8_t wait; /* enum ctp_wait of a suspend (CTP_WAIT_EXIT: it returned); else NONE */
  uint8_t is_active, obj_is_str;
  uint8_t has_tid, has_ev, has_site, has_from, has_parent; /* the line named them */
};

/* The name of what a wait object of kind wait (enum ctp_wait) is: "fd",
 * "ptr", "coroutine"; NULL for none and for an exit (no object). */
static inline const char *ct_wait_obj_name(unsigned wait) {
  return wait == CTP_WAIT_FD          ? "fd"
         : wait == CTP_WAIT_PTR       ? "ptr"
         : wait == CTP_WAIT_COROUTINE ? "coroutine"
                                      : NULL;
}

#endif
