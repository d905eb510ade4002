/* live.h - the live dashboard: an HTTP server thread on a loopback address
 * that tails a trace file as it is written, keeps the dashboard's aggregate,
 * pushes counters over Server-Sent Events every 500 ms and rebuilds the
 * page's data (model + findings) every few seconds (docs/DASHBOARD.md "Live").
 * Used by `corotracer serve` and `corotracer run --serve`. Module code:
 * returns 0 / -errno, never prints. */
#ifndef CT_HTML_LIVE_H
#define CT_HTML_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "common/args.h"
#include "common/buf.h"

struct ct_live;

/* Parses "[ADDR:]PORT" (ADDR: an IPv4 address or "localhost"; default
 * 127.0.0.1; PORT 0 picks a free one). 0 or -EINVAL. */
int ct_live_parse_addr(const char *spec, char *ip, size_t ipn, int *port);

/* Binds spec and starts the thread tailing trace_path (which must exist).
 * running: the trace is being written by this process's engine (its present
 * is "now"); else a finished or foreign trace. th: the findings' thresholds
 * (NULL: CT_THRESHOLDS_DEFAULT, `report`'s without options). On success *out owns the
 * thread; its URL (with the token) is ct_live_url(*out). Returns 0, -EINVAL
 * (bad spec), or -errno (bind, thread). */
int ct_live_start(const char *spec, const char *trace_path, int running,
                  const struct ct_thresholds *th, struct ct_live **out);
const char *ct_live_url(const struct ct_live *l);

/* A flight recorder's window (run --flight --serve): what the live view
 * follows instead of a file. Its functions run on the live view's thread. */
struct ct_live_window {
  uint64_t start_ts, end_ts;                          /* its first and last event (0: none yet) */
  uint64_t dropped_ts, dropped_bytes, dropped_chunks; /* before it */
  uint64_t bytes, size;                               /* its trace bytes; its SIZE */
  uint64_t dumps;                                     /* dumps asked for so far (written or not) */
};
/* A dump: when (CLOCK_MONOTONIC ns, as events' ts), why, where, and the
 * window it wrote; err: 0 or the errno of a dump not written. */
struct ct_live_dump {
  uint64_t ts, start_ts, end_ts;
  char trigger[64], path[256];
  int err;
};
#define CT_LIVE_DUMPS 16 /* the newest dumps the view shows */
/* A place in the window: the next chunk's number and, as a hint, the
 * chunk before it (the source's). */
struct ct_live_cursor {
  uint64_t seq;
  const void *prev;
};
struct ct_live_source {
  void *ctx;
  /* Starts over at the window's first chunk: the chunks that come before it
   * (the lines a dump repeats, the snapshot of the coroutines alive at its
   * start), whole, into *buf (malloc'd, the caller's), *n bytes; *cur set on
   * the first chunk. 0 or -ENOMEM. */
  int (*begin)(void *ctx, struct ct_live_cursor *cur, uint8_t **buf, size_t *n);
  /* The chunk at *cur copied into *buf (realloc'd to fit, *cap its room),
   * *n bytes, *cur moved past it: 1; 0 when there is none yet; -ESTALE when
   * it has left the window (begin again); -ENOMEM. */
  int (*next)(void *ctx, struct ct_live_cursor *cur, uint8_t **buf, size_t *cap, size_t *n);
  /* The window's facts, and its newest dumps (at most CT_LIVE_DUMPS, oldest
   * first): returns how many. */
  size_t (*facts)(void *ctx, struct ct_live_window *w, struct ct_live_dump *d);
};
/* ct_live_start for a running engine's flight window (src, copied; name:
 * what the view calls the trace, the dumps' OUT). The view's aggregate
 * covers the window's start to now, started over (from the window) when it
 * has taken SIZE since: bounded by twice the window. */
int ct_live_start_window(const char *spec, const char *name, const struct ct_live_source *src,
                         const struct ct_thresholds *th, struct ct_live **out);

/* A server of the caller's own pages (`serve --db`), with the live view's
 * guards: a GET that passed the Host and token checks goes to route, on the
 * server's thread, with its path (pn bytes), its query (qn bytes, the token
 * among its parameters) and the token (for the links it writes). route fills
 * r: status ("200 OK"), type, body; location: a 303's target, or empty. */
struct ct_live_reply {
  const char *status, *type;
  char location[200];
  struct ct_buf body;
};
typedef void (*ct_live_route_fn)(void *ctx, const char *token, const char *path, size_t pn,
                                 const char *query, size_t qn, struct ct_live_reply *r);
/* ct_live_start with route answering every request instead of a trace. */
int ct_live_start_routes(const char *spec, ct_live_route_fn route, void *ctx, struct ct_live **out);

/* The trace is complete: a last read and snapshot, pushed to the connected
 * pages (each gets up to 3 s to fetch it), then the thread ends and l is
 * freed. NULL is a no-op. */
void ct_live_stop(struct ct_live *l);

#endif
