/* trace.h - streaming reader of corotracer JSONL traces (docs/TRACE_FORMAT.md).
 *
 * A hand-written scanner for the flat JSON objects of the format (nested only
 * in meta's clock/command and end's exit): no allocation per line, strings
 * are slices of the line. Module code: never prints, returns 0 or -errno. */
#ifndef CT_ANALYSIS_TRACE_H
#define CT_ANALYSIS_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* What a line is. */
enum ct_line_type {
  CT_LINE_EVENT = 0,
  CT_LINE_META,
  CT_LINE_PROCESS,
  CT_LINE_MODULE,
  CT_LINE_COROUTINE,
  CT_LINE_STATION_END,
  CT_LINE_END,
  CT_LINE_OTHER, /* a record of a type we do not know: skipped, not an error */
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
  int wait;       /* 0 none, 1 fd, 2 ptr, 3 exit (returned) */
  int obj_is_str; /* obj came as a "0x..." string */
  int corrupt;    /* station_end "corrupt" (CT_K_CORRUPT) */
  uint64_t probe_id, tid, addr, seq, ts, ev, site, obj, from, parent;
  uint64_t pid, start, end, offset, station, birth_ts, create_site;
  uint64_t events, harvested, lost, torn, untraced, mono_ns, wall_ns, target_pid;
  int64_t exit_code, exit_signal; /* from exit{code|signal}; CT_K_CODE / CT_K_SIGNAL */
  struct ct_str path, label, run_id, host, format, event, exit_name, error;
};

/* Parses one line (without its '\n') into *out. Returns CT_LINE_OK or the
 * reason it was rejected; *out is then partly filled and must not be used. */
enum ct_line_err ct_parse_line(const char *line, size_t len, struct ct_line *out);

/* The same without the fast path for event lines as the engines write them:
 * the general scanner alone, which ct_parse_line must agree with (tests). */
enum ct_line_err ct_parse_line_general(const char *line, size_t len, struct ct_line *out);

/* Copies s into buf (size cap, NUL-terminated), decoding JSON escapes (\u
 * escapes above 0x7f become '?'). Returns the length written. */
size_t ct_str_copy(const struct ct_str *s, char *buf, size_t cap);

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
 * yet to see, as have the lines before it. */
typedef void (*ct_peek_fn)(void *ctx, const struct ct_line *line);

/* ct_trace_read, with up to CT_TRACE_AHEAD lines parsed ahead of fn and shown
 * to peek as they are parsed (within one buffer's worth of lines). */
#define CT_TRACE_AHEAD 16
int ct_trace_read_ahead(int fd, size_t bufsize, ct_line_fn fn, ct_peek_fn peek, void *ctx,
                        uint64_t *bytes);

#endif
