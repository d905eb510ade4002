/* live.h - the live dashboard: an HTTP server thread on a loopback address
 * that tails a trace file as it is written, keeps the dashboard's aggregate,
 * pushes counters over Server-Sent Events every 500 ms and rebuilds the
 * page's data (model + findings) every few seconds (docs/DASHBOARD.md "Live").
 * Used by `corotracer serve` and `corotracer run --serve`. Module code:
 * returns 0 / -errno, never prints. */
#ifndef CT_HTML_LIVE_H
#define CT_HTML_LIVE_H

#include <stddef.h>

struct ct_live;

/* Parses "[ADDR:]PORT" (ADDR: an IPv4 address or "localhost"; default
 * 127.0.0.1; PORT 0 picks a free one). 0 or -EINVAL. */
int ct_live_parse_addr(const char *spec, char *ip, size_t ipn, int *port);

/* Binds spec and starts the thread tailing trace_path (which must exist).
 * running: the trace is being written by this process's engine (its present
 * is "now"); else a finished or foreign trace. On success *out owns the
 * thread; its URL (with the token) is ct_live_url(*out). Returns 0, -EINVAL
 * (bad spec), or -errno (bind, thread). */
int ct_live_start(const char *spec, const char *trace_path, int running, struct ct_live **out);
const char *ct_live_url(const struct ct_live *l);

/* The trace is complete: a last read and snapshot, pushed to the connected
 * pages (each gets up to 3 s to fetch it), then the thread ends and l is
 * freed. NULL is a no-op. */
void ct_live_stop(struct ct_live *l);

#endif
