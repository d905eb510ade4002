/* page.h - the dashboard page: the data built from a trace (model + report
 * findings, compressed), and the one self-contained HTML file around it.
 * Module code: returns 0 / -errno, never prints. */
#ifndef CT_HTML_PAGE_H
#define CT_HTML_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/defaults.h"
#include "common/buf.h"

/* Spans kept for coroutines no finding names; the hard cap is 1.4 times
 * that (docs/DASHBOARD.md "Scale"). */
#define CT_DASH_SPAN_BUDGET 1000000u

struct ct_dash_stats {
  uint64_t bytes, lines, events, spans, spans_dropped, blob_bytes;
  int passes;
  int bad_line;       /* 1-based line of the first malformed line, when nothing parsed */
  int not_a_trace;    /* no line was a trace event or record */
  unsigned run, runs; /* the run shown, 1-based, of the trace's runs */
  char why[192];      /* a binary trace's corrupt or cut chunk: where, why (read up to it) */
};

/* Reads the trace on fd (named name) and builds the page's data: the
 * model's blob with the report's findings in it, zlib-compressed into *z.
 * seekable: a second pass may re-read fd from offset 0 to keep every
 * coroutine a finding names when the spans overflow the budget. now_ts: for a
 * live run, the present (0 otherwise). span_budget: 0 for CT_DASH_SPAN_BUDGET
 * (the cap grows with it). run: the run to show, 1-based, 0 = the last (a
 * trace of `corotracer run --append` holds several; runs are never merged).
 * th: the thresholds the findings judge with (the options of `report`'s
 * names; CT_THRESHOLDS_DEFAULT unless given). Returns 0, -ENOMEM, -errno of a read, -ENOENT when
 * there is no such run (stats->runs says how many there are), or -EINVAL when the file is not a
 * trace (stats tells which). */
struct ct_report;
struct ct_model;
/* The report's findings JSON of r into *json (malloc'd, the caller frees). */
int ct_dash_findings_json(const struct ct_report *r, char **json, size_t *len);
/* Marks every coroutine a finding of r names (starvation: with its thread's holders) as kept
 * in full in m. */
int ct_dash_keep_findings(struct ct_model *m, const struct ct_report *r);

struct ct_zdrain;
int ct_dash_build(int fd, const char *name, int seekable, uint64_t now_ts, int live,
                  size_t span_budget, unsigned run, const struct ct_thresholds *th,
                  struct ct_buf *z, const struct ct_zdrain *drain, struct ct_dash_stats *st);

/* Where compressed bytes go as they come, so that neither the blob nor its
 * compressed form is ever whole in memory: fn consumes a prefix of z (all of
 * it when final) and removes it from z; returns 0 or -errno. NULL: z keeps
 * everything. */
struct ct_zdrain {
  int (*fn)(void *ctx, struct ct_buf *z, int final);
  void *ctx;
};

/* A zlib stream (what DecompressionStream("deflate") reads) appended to a
 * buffer as data comes: the blob is never whole in memory. */
struct ct_zw {
  void *s; /* z_stream */
  struct ct_buf *z;
  const struct ct_zdrain *drain;
  uint64_t raw; /* bytes put so far */
  int err;
};
int ct_zw_init(struct ct_zw *w, struct ct_buf *z, const struct ct_zdrain *drain);
void ct_zw_put(struct ct_zw *w, const void *p, size_t n);
void ct_zw_align(struct ct_zw *w, size_t align); /* zeros up to a multiple of align (of raw) */
/* Ends the stream; returns the first error (0, -ENOMEM, -EIO). Frees w's state. */
int ct_zw_finish(struct ct_zw *w);

/* The page: the embedded HTML with its CSS and JS inlined; with z (compressed
 * data, NULL for the live page that fetches it) as base64 in a data block.
 * Appended to out. */
int ct_page_render(const struct ct_buf *z, int live, struct ct_buf *out);

/* The offline page written to fd as the compressed data comes (a
 * ct_zdrain's ctx, with ct_page_drain its fn): the template's head at the
 * first data, the data as base64 blocks, the tail with the final data. */
struct ct_page_stream {
  int fd;
  const char *tail; /* in the template: what follows the data (NULL before the first) */
  size_t blocks;    /* base64 blocks written */
  uint64_t bytes;   /* page bytes written */
  struct ct_buf text;
};
int ct_page_drain(void *ctx, struct ct_buf *z, int final);

#endif
