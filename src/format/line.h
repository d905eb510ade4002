/* line.h - one trace line parsed (struct ct_line): its type, its keys, and the one
 * place that decides what an event line means (ct_line_event). */
#ifndef CT_FORMAT_LINE_H
#define CT_FORMAT_LINE_H

#include <stddef.h>
#include <stdint.h>

#include "format/event.h"

/* What a line is. */
enum ct_line_type {
  CT_LINE_EVENT = 0,
  CT_LINE_META,
  CT_LINE_PROCESS,
  CT_LINE_MODULE,
  CT_LINE_COROUTINE,
  CT_LINE_STATION_END,
  CT_LINE_END,
  CT_LINE_CUT,      /* the engine cut the trace here after a write error (reason: "ENOSPC") */
  CT_LINE_SITE,     /* a text site: its token (site) names file:line in function */
  CT_LINE_SNAPSHOT, /* a flight dump: a coroutine alive at the window's start, its state then */
  CT_LINE_WINDOW,   /* a flight dump: the window's start, what was dropped before it, why */
  CT_LINE_OTHER,    /* a record of a type we do not know: skipped, not an error */
};

/* Why a line was rejected. */
enum ct_line_err {
  CT_LINE_OK = 0,
  CT_LINE_SYNTAX, /* not one JSON object */
  CT_LINE_SHAPE,  /* JSON, but a known key has a value of the wrong type, or keys are missing */
  CT_LINE_TORN,   /* an event with probe_id 0, ts 0 or an impossible tid: a torn slot copy */
};

/* Keys seen, as bits of ct_line.have. */
enum {
  CT_K_PROBE_ID,
  CT_K_TID,
  CT_K_ADDR,
  CT_K_SEQ,
  CT_K_IS_ACTIVE,
  CT_K_TS,
  CT_K_KIND,
  CT_K_EV,
  CT_K_SITE,
  CT_K_WAIT,
  CT_K_OBJ,
  CT_K_FROM,
  CT_K_PARENT,
  CT_K_TYPE,
  CT_K_PID,
  CT_K_START,
  CT_K_END,
  CT_K_OFFSET,
  CT_K_PATH,
  CT_K_BUILD_ID, /* module: the file's GNU build id, hex */
  CT_K_STATION,
  CT_K_BIRTH_TS,
  CT_K_LABEL,
  CT_K_CREATE_SITE,
  CT_K_EVENTS,
  CT_K_HARVESTED,
  CT_K_LOST,
  CT_K_TORN,
  CT_K_EXIT,
  CT_K_MONO_NS,
  CT_K_WALL_NS,
  CT_K_RUN_ID,
  CT_K_HOST,
  CT_K_TARGET_PID,
  CT_K_FORMAT,
  CT_K_EVENT,
  CT_K_CODE,
  CT_K_SIGNAL,
  CT_K_NAME,
  CT_K_UNTRACED,
  CT_K_ERROR,   /* end: the engine's error, e.g. the target corrupted its memory */
  CT_K_CORRUPT, /* station_end: its counters held what cannot be true */
  CT_K_REASON,
  CT_K_FILE, /* site: the text site's file, line, function */
  CT_K_LINE,
  CT_K_FUNCTION,
  CT_K_STATE, /* snapshot: created, running, suspended, runnable */
  CT_K_WOKE_TS,
  CT_K_START_TS, /* window: its first event, the last dropped one, why */
  CT_K_DROPPED_TS,
  CT_K_TRIGGER,
  CT_K_DROPPED_LOST, /* window: the engine's losses before it (its lost: at the dump) */
  CT_K_COUNT_
};
#define CT_HAS(l, k) (((l)->have >> (k)) & 1u)

/* A string value: a slice of the line, still JSON-escaped when esc != 0. */
struct ct_str {
  const char *p;
  size_t n;
  int esc;
};

/* One parsed line. Only fields whose bit is in `have` are meaningful. */
struct ct_line {
  uint64_t have;
  enum ct_line_type type;
  enum ct_ev_kind kind;
  int is_active;
  int wait;       /* enum ctp_wait as the line names it (readers: e.wait) */
  int obj_is_str; /* obj came as a "0x..." string */
  int corrupt;    /* station_end "corrupt" (CT_K_CORRUPT) */
  /* The keys an event's meaning keeps as they are share e's storage (the
   * parsers write them there: no copy per event); site and obj, which
   * ct_line_event derives, are the line's own. */
  union {
    struct ct_event
        e;   /* an event line's meaning (CT_LINE_EVENT, CT_LINE_OK): what consumers read */
    struct { /* e's first fields, by the keys' names */
      uint64_t e_line_, probe_id, tid, ts, addr, seq, ev, from, parent;
    };
  };
  uint64_t site, obj;
  uint64_t pid, start, end, offset, station, birth_ts, create_site;
  uint64_t events, harvested, lost, torn, untraced, mono_ns, wall_ns, target_pid, line;
  uint64_t woke_ts, start_ts, dropped_ts, dropped_lost; /* snapshot, window */
  int64_t exit_code, exit_signal; /* from exit{code|signal}; CT_K_CODE / CT_K_SIGNAL */
  struct ct_str path, label, run_id, host, format, event, exit_name, error, reason, file, function;
  struct ct_str state, trigger; /* snapshot, window */
  struct ct_str build_id;       /* module */
};
_Static_assert(offsetof(struct ct_line, probe_id) == offsetof(struct ct_line, e.probe_id) &&
                   offsetof(struct ct_line, parent) == offsetof(struct ct_line, e.parent),
               "the event keys of ct_line are e's fields");

/* Completes l->e from the keys of event line l (the keys it keeps as they
 * are are its fields already). The one place that decides what an event
 * means: its kind (a v1 line's from is_active), its site (the "site" key,
 * else addr), its wait kind (CTP_WAIT_*, a suspend's only) and wait object.
 * The binary reader fills the same from a record directly (ctrace_dec.c,
 * read speed); tests/test-read-event.c checks it against this, record kind
 * by record kind. */
static inline void ct_line_event(struct ct_line *l) {
  uint64_t have = l->have;
  /* probe_id, tid, ts, addr, seq, ev, from, parent are e's already. */
  struct ct_event *e = &l->e;
  int v1 = !((have >> CT_K_KIND) & 1) || l->kind == CT_EV_V1;
  int kind = v1 ? (l->is_active ? CT_EV_RESUME : CT_EV_SUSPEND) : (int)l->kind;
  int wait = kind == CT_EV_SUSPEND && l->wait > CTP_WAIT_NONE && l->wait < CTP_WAIT_MAX_
                 ? l->wait
                 : CTP_WAIT_NONE;
  int has_obj = wait != CTP_WAIT_NONE && wait != CTP_WAIT_EXIT;
  int has_site = (have >> CT_K_SITE) & 1;
  e->line = 0;
  e->site = has_site ? l->site : e->addr;
  e->obj = has_obj ? l->obj : 0;
  e->kind = (uint8_t)kind;
  e->v1 = (uint8_t)v1;
  e->wait = (uint8_t)wait;
  e->is_active = (uint8_t)(l->is_active != 0);
  e->obj_is_str = (uint8_t)(has_obj && l->obj_is_str);
  e->has_tid = (uint8_t)((have >> CT_K_TID) & 1);
  e->has_ev = (uint8_t)((have >> CT_K_EV) & 1);
  e->has_site = (uint8_t)(has_site || e->addr != 0);
  e->has_from = (uint8_t)((have >> CT_K_FROM) & 1);
  e->has_parent = (uint8_t)((have >> CT_K_PARENT) & 1);
}

/* 1 when l starts a new run: a meta line after `lines` other lines of the
 * current run (`corotracer run --append` writes several runs into one file).
 * Every reader keeps runs apart: their lines never feed one analysis. */
static inline int ct_line_new_run(uint64_t lines, enum ct_line_err err, const struct ct_line *l) {
  return lines && err == CT_LINE_OK && l->type == CT_LINE_META;
}

#endif
