/* trace.h - streaming reader of corotracer JSONL traces (docs/TRACE_FORMAT.md).
 *
 * A hand-written scanner for the flat JSON objects of the format (nested only
 * in meta's clock/command and end's exit): no allocation per line, strings
 * are slices of the line. Module code: never prints, returns 0 or -errno. */
#ifndef CT_ANALYSIS_TRACE_H
#define CT_ANALYSIS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "common/ctp.h"
#include "common/ctrace.h"

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

/* Event kinds; CT_EV_V1 = no "kind" key (derive from is_active). */
enum ct_ev_kind {
  CT_EV_V1 = 0,
  CT_EV_CREATE,
  CT_EV_SUSPEND,
  CT_EV_RESUME,
  CT_EV_WAKE,
  CT_EV_DESTROY
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

/* The name of what a wait object of kind wait (enum ctp_wait) is: "fd",
 * "ptr", "coroutine"; NULL for none and for an exit (no object). */
static inline const char *ct_wait_obj_name(unsigned wait) {
  return wait == CTP_WAIT_FD          ? "fd"
         : wait == CTP_WAIT_PTR       ? "ptr"
         : wait == CTP_WAIT_COROUTINE ? "coroutine"
                                      : NULL;
}

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

/* Parses one line (without its '\n') into *out. Returns CT_LINE_OK or the
 * reason it was rejected; *out is then partly filled and must not be used. */
enum ct_line_err ct_parse_line(const char *line, size_t len, struct ct_line *out);

/* The same without the fast path for event lines as the engines write them:
 * the general scanner alone, which ct_parse_line must agree with (tests). */
enum ct_line_err ct_parse_line_general(const char *line, size_t len, struct ct_line *out);

/* 1 when a parsed line (ct_parse_line's err and *l) makes its file a trace:
 * an event or a meta, module, station_end or end record. A file without one
 * is not a trace, whatever else it holds (docs/TRACE_FORMAT.md, "Bad input"). */
int ct_line_is_trace(enum ct_line_err err, const struct ct_line *l);

/* 1 when line (len bytes) is one JSON object and nothing else, in valid
 * UTF-8, without a newline: a binary trace's line entry must be, before any
 * reader parses it or an export copies it (its bytes become a JSONL line). */
int ct_line_valid(const char *line, size_t len);

/* The line a binary trace's event stands for: *out as ct_parse_line fills
 * it from the JSONL line records.c writes for e (tests/test-ctrace.c checks
 * the two agree), and its verdict (CT_LINE_TORN or CT_LINE_OK). */
enum ct_line_err ct_line_from_event(const struct ct_ev_item *e, struct ct_line *out);

/* Copies s into buf (size cap, NUL-terminated) as valid UTF-8: JSON escapes
 * (when s->esc; a string without them is copied as it is) decoded (\u escapes, surrogate pairs
 * included, to UTF-8), except \u0000, kept as those six characters (a NUL would cut the text); a
 * lone surrogate and invalid bytes become U+FFFD (ct_utf8_clean's rule). Stops before a character
 * that does not fit. Returns the length written. */
size_t ct_str_copy(const struct ct_str *s, char *buf, size_t cap);

/* The one UTF-8 rule of every reader and writer: the length (1..4) of the
 * valid UTF-8 sequence at s (n bytes), or 0 when s[0] starts none (a stray
 * continuation byte, an overlong form, a surrogate, a code point above
 * U+10FFFF, a sequence cut short). */
size_t ct_utf8_len(const char *s, size_t n);

/* Copies s (n bytes) into buf (size cap, NUL-terminated), each byte that
 * starts no valid sequence (ct_utf8_len) replaced by U+FFFD (EF BF BD), so
 * 3 * n + 1 bytes always suffice. Stops before a character that does not fit.
 * Returns the length written. */
size_t ct_utf8_clean(const char *s, size_t n, char *buf, size_t cap);

/* Called for each line: lineno counts from 1; err is the parse result (the
 * line is only meaningful when CT_LINE_OK). Return 0 to go on, non-zero to stop
 * (ct_trace_read then returns that value). */
typedef int (*ct_line_fn)(void *ctx, uint64_t lineno, enum ct_line_err err,
                          const struct ct_line *line);

/* Streams fd line by line through fn, in a buffer of about bufsize bytes
 * (grown for longer lines, up to 64 MiB; a longer line is reported as
 * CT_LINE_SYNTAX). A last line without '\n' is parsed like any other. Adds the
 * bytes read to *bytes. Returns 0, fn's non-zero value, or -errno. */
int ct_trace_read(int fd, size_t bufsize, ct_line_fn fn, void *ctx, uint64_t *bytes);

/* Called with each line that parsed (CT_LINE_OK) some lines before fn gets
 * it, for hints only (prefetches): it must not act on the line, which fn has
 * yet to see, as have the lines before it. An event line of the coroutine
 * (probe_id) of the last event line shown is not shown: its hint was given. */
typedef void (*ct_peek_fn)(void *ctx, const struct ct_line *line);

/* ct_trace_read, with up to CT_TRACE_AHEAD lines parsed ahead of fn and shown
 * to peek as they are parsed (within one buffer's worth of lines). */
#define CT_TRACE_AHEAD 16
int ct_trace_read_ahead(int fd, size_t bufsize, ct_line_fn fn, ct_peek_fn peek, void *ctx,
                        uint64_t *bytes);

/* What went wrong with a trace's bytes, when not a line: a binary trace's
 * corrupt or truncated chunk. Everything before offset was handed to fn. */
struct ct_read_diag {
  uint64_t offset; /* first byte not read as a whole, valid record */
  char why[192];   /* one line ("offset N: ...", "empty file, not a trace"), empty when the
                    * trace read clean */
  int binary;      /* the trace is binary (ctrace) */
};

/* ct_trace_read_ahead, telling a binary trace by its magic (the first
 * bytes): its entries reach fn as the lines they stand for, numbered from 1;
 * a corrupt or truncated chunk ends the reading with a one-line reason in
 * *diag (when not NULL) and a return of 0, everything before it delivered. */
int ct_trace_read_diag(int fd, size_t bufsize, ct_line_fn fn, ct_peek_fn peek, void *ctx,
                       uint64_t *bytes, struct ct_read_diag *diag);

/* Called instead of fn with n (>= 1) events in a row of one coroutine, each
 * an event line that parsed (CT_LINE_OK) whose meaning is ev[i] (its line
 * number: ev[i].line): a binary trace's runs (ct_ctr_run). Whatever fn does
 * with such a line, it must do with each, in order (tests/test-report-runs.c
 * holds the report to that). Non-zero stops the reading (returned). */
typedef int (*ct_run_fn)(void *ctx, const struct ct_event *ev, size_t n);

/* ct_trace_read_diag, a binary trace's runs of events through run (NULL:
 * none, every line through fn), each after the lines before it. A JSONL
 * trace's lines all go through fn. peek sees the lines fn gets, not the
 * runs' events (a run is one coroutine's: one hint would do, and it comes
 * too late to help). */
int ct_trace_read_runs(int fd, size_t bufsize, ct_line_fn fn, ct_run_fn run, ct_peek_fn peek,
                       void *ctx, uint64_t *bytes, struct ct_read_diag *diag);

/* Called with each entry of a trace as it is: an event (ev) or a coroutine
 * (co) of a binary trace, or a line (both NULL; line, n: its bytes without
 * '\n', unparsed). Non-zero stops the reading (returned). */
typedef int (*ct_entry_fn)(void *ctx, const struct ct_ev_item *ev, const struct ct_coro_item *co,
                           const char *line, size_t n);
/* ct_trace_read_diag, entry by entry (a converter's view: nothing parsed). */
int ct_trace_read_entries(int fd, size_t bufsize, ct_entry_fn fn, void *ctx, uint64_t *bytes,
                          struct ct_read_diag *diag);

/* ---- the binary trace's decoder (ctrace_dec.c) ------------------------------ */
/* The file header at p (n bytes): its size, or -1 with the reason in why. */
int ct_ctr_file_header(const void *p, size_t n, char *why, size_t whylen);
/* The chunk at p (n bytes there, at file offset off): 1 when it is whole and
 * its checksum holds (*len: its size), 0 when more bytes are needed, -1 when
 * it is corrupt (the reason, with the offset, in why). */
int ct_ctr_chunk(const void *p, size_t n, uint64_t off, size_t *len, char *why, size_t whylen);
/* The entries of a chunk ct_ctr_chunk accepted, in order. */
struct ct_ctr_iter {
  const uint8_t *p, *e;
  uint32_t left, prev, nsites;
  int have_prev;
  uint64_t last_ts, last_tid;
  struct ctr_coro coro[CTR_COROS];
  uint64_t sites[CTR_SITES];
  /* A switch entry's events after its first, given by the next calls. */
  struct ct_ev_item pend[2];
  uint32_t npend, ipend;
  struct ctr_sw sw;
};
void ct_ctr_begin(struct ct_ctr_iter *it, const void *chunk);
/* The next entry: 1 an event (*ev), 2 a JSONL line (*line, *n: in the
 * chunk, without '\n'; ct_line_valid holds), 3 a coroutine (*co), 0 the
 * chunk's end, -1 an entry that does not decode, -2 a line that is not one
 * JSON object of valid UTF-8 (ct_line_valid). */
int ct_ctr_entry(struct ct_ctr_iter *it, struct ct_ev_item *ev, struct ct_coro_item *co,
                 const char **line, size_t *n);
/* The events in a row of one coroutine that start at the next entry (up to
 * max), into ev as the normalized events of the lines ct_ctr_next would give,
 * numbered from line: each an event that decodes and is not torn, the ones
 * after the first marked as of the same coroutine. 0 when the next entry is
 * no such event: ct_ctr_next takes it. */
unsigned ct_ctr_run(struct ct_ctr_iter *it, struct ct_event *restrict ev, unsigned max,
                    uint64_t line);
/* Room for a coroutine's label as ct_line_from_coro writes it. */
#define CT_CTR_LABEL_MAX (6 * CTP_LABEL_MAX)
/* The same as a parsed line (*l, *err as ct_parse_line gives them); a
 * coroutine's label is written to label (CT_CTR_LABEL_MAX bytes), which
 * must live as long as *l. */
int ct_ctr_next(struct ct_ctr_iter *it, struct ct_line *l, enum ct_line_err *err, char *label);
/* The line a binary trace's coroutine stands for: *out as ct_parse_line
 * fills it from records.c's line for c (tests/test-ctrace.c checks), its
 * label escaped into label (CT_CTR_LABEL_MAX bytes). */
enum ct_line_err ct_line_from_coro(const struct ct_coro_item *c, struct ct_line *out, char *label);

#endif
