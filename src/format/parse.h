/* parse.h - the JSONL trace's line parser and the one UTF-8 rule of every reader and
 * writer (parse.c; the UTF-8 rule: text.c).
 * A hand-written scanner for the flat JSON objects of the format (nested only
 * in meta's clock/command and end's exit): no allocation per line, strings
 * are slices of the line. Never prints. */
#ifndef CT_FORMAT_PARSE_H
#define CT_FORMAT_PARSE_H

#include <stddef.h>

#include "format/ctrace.h"
#include "format/line.h"

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

#endif
