/* export_ctrace.c - `export jsonl`: a trace as the JSONL trace format
 * (docs/TRACE_FORMAT.md). A binary trace's events and coroutines are written
 * by records.c, the one writer of their JSONL lines, from the very struct
 * ct_ev_item / ct_coro_item the engine encoded, and its framed lines as they are: the bytes are
 * those a `corotracer run -o x.jsonl` writes for the same events. */
#include "export/export.h"

#include <errno.h>
#include <stdlib.h>

#include "format/ctrace.h"
#include "format/records.h"
#include "format/writer.h"

struct conv {
  struct ct_writer w;
  uint64_t rows;
  int traced; /* a line of the input made it a trace (ct_line_is_trace) */
};

static int on_entry(void *ctx, const struct ct_ev_item *ev, const struct ct_coro_item *co,
                    const char *line, size_t n) {
  struct conv *c = ctx;
  if (!c->traced && (ev || line)) { /* (a coroutine alone is no trace) */
    struct ct_line l;
    enum ct_line_err err = ev ? ct_line_from_event(ev, &l) : ct_parse_line(line, n, &l);
    c->traced = ct_line_is_trace(err, &l);
  }
  if (ev) {
    ct_rec_event(&c->w, ev);
  } else if (co) {
    ct_rec_coroutine(&c->w, co);
  } else {
    ct_w_raw(&c->w, line, n);
    ct_w_raw(&c->w, "\n", 1);
  }
  c->rows++;
  return c->w.err ? -c->w.err : 0;
}

int cx_write_jsonl_trace(int in_fd, int out_fd, uint64_t *rows, struct ct_read_diag *diag) {
  struct conv c = {.w = {.fd = out_fd, .buf = malloc(CT_W_BUF)}};
  uint64_t bytes = 0;
  if (!c.w.buf)
    return -ENOMEM;
  int rc = ct_trace_read_entries(in_fd, 1u << 20, on_entry, &c, &bytes, diag);
  int frc = ct_writer_flush(&c.w);
  free(c.w.buf);
  *rows = c.rows;
  if (!rc && !frc && !c.traced)
    return -EPROTO; /* lines, none of them a trace's (before any damage) */
  return rc ? rc : frc;
}
