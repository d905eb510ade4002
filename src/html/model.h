/* model.h - the dashboard's data model: what the page draws, aggregated from
 * a trace line by line (state spans per coroutine, wake edges, counters over
 * time, coroutine and site tables) and serialized into one binary blob that
 * the page reads (docs/DASHBOARD.md "Data blob"). Memory is bounded by the
 * span budget, not by the trace's length. Module code: returns 0 / -errno,
 * never prints. */
#ifndef CT_HTML_MODEL_H
#define CT_HTML_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/map.h"
#include "analysis/trace.h"
#include "symbolize/symbolize.h"

/* Span states, as the page knows them. */
enum { CT_SP_RUNNING = 0, CT_SP_RUNNABLE, CT_SP_SUSPENDED, CT_SP_CREATED };

/* A span's byte in the page's sp_flags: its state (bits 0-1), its wait kind
 * (enum ctp_wait, bits 2-4) and whether it is still open at the end. The
 * page reads the layout and the wait kinds' names from the data's header
 * ("sp_flags", "waits"), never from numbers of its own. */
#define CT_SPF_STATE 3u
#define CT_SPF_WAIT_SHIFT 2
#define CT_SPF_WAIT 7u
#define CT_SPF_OPEN 32u
_Static_assert(CTP_WAIT_MAX_ - 1 <= CT_SPF_WAIT && CT_SP_CREATED <= CT_SPF_STATE &&
                   (CT_SPF_WAIT << CT_SPF_WAIT_SHIFT) < CT_SPF_OPEN && CT_SPF_OPEN <= 0x80,
               "sp_flags: every wait kind and state fits its bits, apart from the open bit");

/* One stretch of one coroutine in one state. arg: the thread index when
 * running, the site index when suspended, the waker (coroutine index + 1, 0 =
 * a plain thread) when runnable after a wake. */
struct ct_span {
  uint64_t t0, t1, obj;
  uint32_t coro, arg;
  uint8_t state, wait, open; /* open: still in this state at the end */
};

struct ct_wake {
  uint64_t ts;
  uint32_t from, to; /* from: coroutine index + 1, 0 = a plain thread (tid) */
  uint32_t tid;
};

/* One coroutine: its current state and its row in the page's table. */
struct ct_mcoro {
  uint64_t id, since, obj, first_ts, last_ts, state_ts;
  uint32_t label, tid, site, create_site, destroy_site, pid, waker;
  uint32_t runs, suspends, wakes, lost;
  uint32_t nsp;      /* its spans kept */
  uint32_t sum_last; /* its lane's newest summary entry (index + 1, 0: none) */
  uint64_t next_ev;
  uint8_t state, wait, alive, destroyed, keep;
};

/* Which events named a site: one that only destroys named is named as the
 * report names a destroyer (ct_symbolize_event_site). */
enum { CT_SITE_DESTROY = 1, CT_SITE_OTHER = 2 };

/* A row of the site table: uses, CT_SITE_* of the events that named it. */
struct ct_msite {
  uint64_t site;
  uint32_t pid;
  uint8_t uses;
};

/* Counters over time: per bucket, changes of the levels and counts of events. */
#define CT_NBUCKETS 2048
enum { CT_CT_RUNNING, CT_CT_RUNNABLE, CT_CT_SUSPENDED, CT_CT_LIVE, CT_CT_LEVELS_ };
struct ct_cbucket {
  int32_t d[CT_CT_LEVELS_];
  uint32_t events, lost, wakes;
};

/* Level of detail (model_lod.c): one lane's time in one bucket of 2^shift
 * ns (bucket = ts >> shift): ns running, ns runnable (created included),
 * wakes of the lane's coroutine. A lane is a coroutine row, or
 * CT_LOD_THREAD | thread index. Suspended is the rest of a coroutine's life. */
#define CT_LOD_THREAD 0x80000000u
#define CT_LOD_NONE UINT32_MAX
#define CT_LOD_CAP (1u << 21)     /* entries: 48 MB at most, ~10 B each in the blob */
#define CT_LOD_RUN_BUCKETS 65536u /* the finest: 4096 buckets over the run, refined x16 */
struct ct_sum {
  uint32_t lane, wakes;
  uint64_t bucket;
  float run, rdy;
};
struct ct_lod {
  struct ct_sum *s;
  size_t n, cap;
  int shift;        /* bucket width: 2^shift ns, doubled when the table is full */
  uint64_t dropped; /* spans not summarized (the widest buckets full) */
};

struct ct_model {
  /* limits */
  size_t span_budget; /* spans kept for coroutines not marked keep */
  size_t span_cap;    /* hard cap, keep ones included */
  int prune;          /* rows of finished coroutines without spans may go (ct_model_prune) */
  size_t prune_at;    /* rows that trigger the next pruning */
  /* tables */
  struct ct_map ids; /* probe_id -> uint32 coroutine index */
#define CT_RECENT_BITS 12
  uint32_t recent[1u << CT_RECENT_BITS]; /* hash of a probe_id -> its index, maybe stale */
  struct ct_mcoro *coros;
  size_t ncoros, capcoros, last_ix;
  struct ct_span *spans;
  size_t nspans, capspans, nspans_other;
  struct ct_wake *wakes;
  size_t nwakes, capwakes;
  struct ct_map sitemap; /* (site, pid) -> uint32 index */
  struct ct_msite *sites;
  size_t nsites, capsites;
  struct ct_map tidmap; /* tid -> uint32 index */
  uint32_t *tids;
  size_t ntids, captids;
  /* site_index's and tid_index's last answers (index + 1, 0: none): events
   * in a row mostly name the site and thread the one before named. */
  uint64_t last_site, last_tid;
  uint32_t last_site_pid, last_site_ix1, last_tid_ix1;
  char **labels; /* index 0 = none */
  size_t nlabels, caplabels;
  struct ct_map labelmap; /* hash -> index */
  /* counters */
  struct ct_cbucket bk[CT_NBUCKETS];
  int bshift;  /* bucket = ts >> bshift */
  int64_t blo; /* bucket index of bk[0]; -1 before the first event */
  /* totals */
  uint64_t lines, events, bad, start_ts, last_ts, end_ts, lost, wake_count;
  uint64_t spans_dropped, wakes_dropped, coros_pruned; /* pruned: rows dropped */
  uint64_t detail_until; /* the earliest start of a dropped span (UINT64_MAX: none) */
  uint64_t detail_from;  /* the latest end of a dropped span (0: none) */
  /* The newest spans past the budget's first half, a ring (exact spans at
   * the run's end as well as at its start): tail_n used, tail_at the next
   * to overwrite once full. */
  struct ct_span *tail;
  size_t tail_n, tail_cap, tail_at;
  /* level of detail: every span summarized, the lanes' newest entries */
  struct ct_lod lod;
  size_t lod_cap;   /* its entries at most; 0: no summary kept */
  uint32_t *th_sum; /* a thread lane's newest entry (index + 1), by thread index */
  size_t capth_sum;
  uint64_t target_pid;
  int has_end;
  char run_id[80], host[128];
};

/* The level of detail's table (model_lod.c): cap entries, reserved, not
 * touched. 0 or -ENOMEM. */
int ct_lod_init(struct ct_lod *l, size_t cap);
void ct_lod_free(struct ct_lod *l);
/* Adds [t0, t1) running (rdy 0) or runnable to lane, and wakes to its first
 * bucket, into *last's entry when that is the bucket (last: NULL, or the
 * lane's newest entry index + 1, updated). 0 or -ENOSPC (full: counted). */
int ct_lod_add(struct ct_lod *l, uint32_t lane, uint32_t *last, uint64_t t0, uint64_t t1, int rdy,
               uint32_t wakes);
/* Sorts s[0..*n) by lane then bucket and merges the entries of one bucket. */
void ct_lod_compact(struct ct_sum *s, size_t *n);
/* The model's summary of coroutine coro's time [t0, t1) in state (running
 * or runnable: on thread tid, CT_LOD_NONE for none, when running) plus
 * wakes, the buckets widened when the table is full. 0 or -ENOMEM. */
int ct_lod_model(struct ct_model *m, uint32_t coro, uint32_t tid, uint64_t t0, uint64_t t1,
                 int state, uint32_t wakes);
/* After the rows moved (ct_model's pruning; remap: old row -> new, or
 * CT_LOD_NONE when pruned): the entries follow, a pruned row's go. Then
 * ct_lod_relink sets the lanes' newest entries again. */
void ct_lod_remap(struct ct_model *m, const uint32_t *remap);
void ct_lod_relink(struct ct_model *m);

/* Initializes m (caller's storage). span_budget: spans kept for coroutines
 * not marked keep; span_cap: the hard cap. Returns 0 or -ENOMEM. */
int ct_model_init(struct ct_model *m, size_t span_budget, size_t span_cap);
void ct_model_free(struct ct_model *m);

/* Lets the model drop, once the span budget is spent, the rows of
 * coroutines that are finished (destroyed), have no span kept and are not
 * marked keep, so that its memory does not grow with the trace: they are
 * counted in coros_pruned, and the wake edges to or from them are dropped.
 * Only for a model whose findings' coroutines are marked keep, or that is
 * rebuilt with them marked when it summarized (build.c's second pass). */
void ct_model_prune(struct ct_model *m);

/* Marks coroutine probe_id as kept in full (findings name it): its spans do
 * not count against the budget. Call before feeding lines. */
int ct_model_keep(struct ct_model *m, uint64_t probe_id);

/* Feeds one parsed line (err != CT_LINE_OK: counted as malformed). */
int ct_model_line(struct ct_model *m, enum ct_line_err err, const struct ct_line *l);

/* Feeds n events of a binary trace's run (a ct_run_fn's, trace.h): the same
 * model as each one's event line through ct_model_line, in order. */
int ct_model_run(struct ct_model *m, const struct ct_event *ev, size_t n);

/* The end of the model's time: the end line's ts, else the newest event;
 * now_ts (0 = none) extends it for a live run still going. */
uint64_t ct_model_end(const struct ct_model *m, uint64_t now_ts);

/* Live counts at time now: coroutines alive, running, runnable, suspended, and
 * stuck (suspended for at least stuck_ns, no wake since). O(coroutines). */
struct ct_model_counts {
  uint64_t alive, running, runnable, suspended, stuck;
};
void ct_model_counts(const struct ct_model *m, uint64_t now, uint64_t stuck_ns,
                     struct ct_model_counts *out);

/* What the page's blob carries beside the model: findings_json, the
 * report's findings JSON (docs/FINDINGS.md), embedded as is; sym, the
 * analysis' symbolizer, which names every site of the tables (create and
 * destroy sites too, which the report's sites do not list), or NULL; source, the trace's
 * name; now_ts, see ct_model_end; live, the page is fed by a live run. */
struct ct_model_page {
  const char *findings_json;
  size_t findings_len;
  ct_symbolizer *sym;
  const char *source;
  uint64_t now_ts;
  int live;
};

/* Serializes the model and pg as the page's blob, zlib-compressed, appended
 * to z (*raw_len: the uncompressed size), or passed to drain (page.h) as it
 * comes. 0 or -ENOMEM. */
struct ct_buf;
struct ct_zdrain;
int ct_model_serialize(const struct ct_model *m, const struct ct_model_page *pg, struct ct_buf *z,
                       const struct ct_zdrain *drain, uint64_t *raw_len);

#endif
