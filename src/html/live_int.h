/* live_int.h - what the live view's server (live.c) and its reading of the
 * trace or flight window (live_trace.c) share: the view's state. Private to
 * src/html/live*.c. */
#ifndef CT_HTML_LIVE_INT_H
#define CT_HTML_LIVE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "analysis/model.h"
#include "common/buf.h"
#include "common/ticks.h"
#include "html/live.h"
#include "html/model.h"

#define MAX_CLIENTS 32
#define TAIL_MAX (64u << 20) /* read per tick at most */
#define SLICE_NS 50000000ull /* ... and for this long: requests wait no longer */
/* The first data of a trace not yet read: its first FIRST_BYTES, read for at
 * most FIRST_NS, the rest read in SLICE_NS slices between requests. */
#define FIRST_BYTES (8u << 20)
#define FIRST_NS 100000000ull
#define LINE_MAX_LIVE (1u << 20)

struct snap;
struct ct_live_detailq;
struct client;
/* A stretch of the trace file by time (docs/DASHBOARD.md "Detail on
 * request"): a binary chunk, or about BLK_LINES bytes of whole lines; the
 * events' smallest and largest ts (t0 > t1: none); the target_pid of the
 * run its first line belongs to (0: none yet), which a detail window read
 * from the middle of the file gives its coroutines (their run's meta line is
 * in no block it reads). */
struct ct_live_blk {
  uint64_t off, len, t0, t1, pid;
};
#define BLK_LINES (1u << 20)
struct ct_live {
  pthread_t th;
  int lfd, wake[2], tfd, running;
  char ip[64], token[33], url[200], host1[96], host2[96];
  int port;
  char *path;
  atomic_int stop;
  /* The aggregate, fed by what is appended to the trace (never re-read):
   * the dashboard's model and the report's analysis of the lines so far. */
  struct ct_model m;
  struct ct_state *st;
  struct ct_thresholds judge; /* st's and the findings' (serve --stuck-ms, ...) */
  uint64_t lineno;
  unsigned runs; /* runs seen in the trace (run --append): the view shows the last */
  char *lb;
  size_t lbn, lbcap;
  int binary, skip_hdr, bad; /* a binary trace; its header not yet read; a corrupt chunk seen */
  int behind;                /* the last read stopped on its budget, not at the file's end */
  struct ct_ctr_iter *it;    /* its decoder */
  /* The file's index by time, built as it is read: the blocks so far, and
   * the one being read (blk_off: where it starts, blk_t0/t1 its ts). */
  struct ct_live_blk *blk;
  size_t nblk, capblk;
  uint64_t blk_off, blk_t0, blk_t1, blk_pid;
  uint64_t bytes, last_growth, snap_bytes, last_build, build_ns, seq;
  struct snap *cur;
  uint64_t version;
  int fetches_of_last; /* complete /data replies of the current version */
  struct client *c[MAX_CLIENTS];
  struct ct_buf page;
  /* A flight window instead of a file (ct_live_start_window): where the
   * aggregate has read it to, and what it has taken since it last started
   * over (at the window's SIZE, it starts over from the window). */
  int windowed, begin;
  struct ct_live_source src;
  struct ct_live_cursor at;
  uint8_t *cb;
  size_t cbcap;
  uint64_t gen_bytes;
  struct ct_live_window win;
  struct ct_live_dump dumps[CT_LIVE_DUMPS];
  size_t ndumps;
  ct_live_route_fn route; /* the caller's pages instead of a trace (ct_live_start_routes) */
  void *route_ctx;
  struct ct_live_detailq *dq; /* the detail worker (live_detail.c), from the first request */
  uint64_t nconn;             /* connections accepted: each one's id */
};

/* Reads what was appended to the trace (at most about max_bytes, for at
 * most max_ns), or a flight window's new chunks (at most about TAIL_MAX
 * bytes), into the aggregate and the file's index; returns the bytes taken.
 * Sets l->behind when a budget, not the file's end, stopped it. */
size_t ct_live_tail(struct ct_live *l, size_t max_bytes, uint64_t max_ns);
/* GET /detail?QUERY (q, qn bytes) of connection client (live_detail.c): the
 * exact spans and wake edges of a window of a file's run for a set of
 * coroutines. Answered at once into body with its status and type (one line
 * saying what is wrong, the worker busy, or the last answer again): 1; or
 * queued for the worker, its window's stretches of the file named from the
 * index now: 0, the answer later from ct_live_detail_done. */
int ct_live_detail(struct ct_live *l, uint64_t client, const char *q, size_t qn,
                   struct ct_buf *body, const char **status, const char **type);
/* An answer the worker finished (it wrote to l->wake[1]): 1 with the
 * connection it is for, its status, type and body (the caller's); 0 none. */
int ct_live_detail_done(struct ct_live *l, uint64_t *client, struct ct_buf *body,
                        const char **status, const char **type);
/* Ends the worker and frees its queue (before the trace's fd is closed). */
void ct_live_detail_stop(struct ct_live *l);
/* A flight window's facts and dumps as tick fields, now the present. */
void ct_live_window_json(const struct ct_live *l, struct ct_buf *b, uint64_t now);

#endif
