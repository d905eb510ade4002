/* trace.h - the trace's read entry points (docs/TRACE_FORMAT.md): a JSONL or
 * binary trace streamed from an fd, line by line, with look-ahead hints, as
 * runs of one coroutine's events, or entry by entry. What a line is and means,
 * its parser and the binary decoder are the format layer's (src/format/),
 * included here for the readers. Module code: never prints, returns 0 or -errno. */
#ifndef CT_ANALYSIS_TRACE_H
#define CT_ANALYSIS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "format/ctrace.h"
#include "format/ctrace_dec.h"
#include "format/event.h"
#include "format/line.h"
#include "format/parse.h"

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

#endif
