/* state.h - what the report remembers while it streams a trace: one entry per
 * coroutine alive (plus recently destroyed ones), per site, per fd and wait
 * object, per thread; never per event. Module code: no prints, no globals. */
#ifndef CT_ANALYSIS_STATE_H
#define CT_ANALYSIS_STATE_H

#include <errno.h>
#include <stdint.h>

#include "analysis/defaults.h"
#include "analysis/hist.h"
#include "analysis/map.h"
#include "analysis/model.h"
#include "analysis/trace.h"
#include "symbolize/symbolize.h"

/* One coroutine (map key: probe_id, 0): its current incarnation. A create
 * after a destroy of the same id (malloc hands a freed coroutine's address,
 * its id, to the next one) starts a new incarnation in the same entry. */
struct ct_coro {
  uint64_t id;
  uint32_t incarnation; /* 0 = the first coroutine with this id (that the report remembers) */
  uint32_t station;     /* its coroutine line's station + 1, 0 if unknown */
  uint8_t state;
  uint8_t returned;   /* its last suspend was an exit (returned, finished): not waiting */
  uint8_t viol_seen;  /* bit per CT_V_* already counted for it */
  uint8_t long_run;   /* it had a run over the blocker threshold */
  uint8_t susp_wakes; /* wakes since its last suspend (saturating) */
  uint8_t has_kind;   /* wrote at least one event with "kind" (our SDK) */
  uint8_t created;    /* its create event or coroutine line was seen */
  uint8_t saw_wake;   /* its trace shows wakes at all */
  uint8_t woken;      /* a wake reached it since its last suspend */
  uint8_t wait;       /* enum ctp_wait of the last suspend (NONE after an exit) */
  /* Events lost since its last resume / its destroy: the wake (or suspend)
   * whose absence a finding rests on may be one of them. */
  uint8_t gap_since_resume, gap_since_destroy;
  /* Its history has a gap (a jump in ev). The engine reads a station's drop
   * count when it writes the station's next record, later than the drops
   * when it lags, so a gap shows where a loss was found, at or before where
   * it happened: from it on, no transition of this incarnation is judged. */
  uint8_t gapped;
  uint8_t pend_absorbed,
      has_cand;    /* see pending_wake_ts; an absorbable wake came while suspended */
  uint8_t starved; /* counted among the starved (struct ct_starve) */
  /* Fields in the order the line handlers touch them: every event reads
   * the first 64 bytes; suspends, resumes and wakes the next; findings the
   * rest (a 10^5-coroutine table does not fit in the cache). */
  uint32_t pid, last_resume_tid;
  uint64_t next_ev, last_ts;
  uint64_t susp_ts, susp_site; /* last suspend */
  uint64_t obj;
  uint64_t wake_before_ts; /* see pending_wake_ts */
  /* What only a running coroutine needs and what only a suspended one needs
   * share their memory: the table holds every coroutine alive. */
  union {
    struct {                          /* CT_CS_RUNNING */
      uint64_t run_ts, run_from_site; /* last resume; site it resumed from */
      /* An early wake: one that came while it ran, or one from another
       * coroutine absorbed while it was already runnable after a yield (a
       * suspend with no wait object): moved to wake_before_ts by its next
       * suspend. Its details are in the state's early map (rare: kept out of
       * this hot entry). */
      uint64_t pending_wake_ts;
      uint32_t run_tid;
    };
    struct { /* CT_CS_SUSPENDED: its first wake since (woken and never resumed names it) */
      uint64_t woke_ts, woke_from, woke_site;
      uint32_t woke_tid;
      uint32_t woke_runs; /* resumes on its last thread then (struct ct_thread) */
    };
  };
  /* Its last woken suspensions (suspend, wake, resume) were woken_here in a
   * row at woken_site: parked there again, it is more likely idle (an accept
   * loop) than lost. */
  uint64_t woken_site, woken_here;
  uint32_t label;
  uint64_t lost, create_site, birth_ts, destroy_ts;
  uint64_t station_lost; /* from its station_end line */
};

/* Details of a coroutine's early wakes (key: probe_id, 0), for the few
 * coroutines that have one; dropped with the tombstones. */
struct ct_wake_info {
  uint64_t ts, from, site, yield_ts, resume_ts; /* yield/resume: of an absorbed wake */
  uint8_t absorbed;
};
struct ct_early {
  uint64_t id;
  struct ct_wake_info pend, before, cand; /* this run's; the last suspend's; absorbable */
};

/* A suspension site (key: address, pid). */
struct ct_site {
  uint64_t site;
  uint32_t pid;
  uint64_t suspensions;
  /* Completed suspensions, lazily allocated: hist the wait (suspend -> wake,
   * or -> resume when no wake came), runnable the queueing (wake -> resume). */
  struct ct_hist *hist, *runnable;
};

/* Blockers grouped by the site the run resumed from (key: site, pid). */
#define CT_BLOCK_WORST 5
struct ct_block {
  uint64_t site;
  uint32_t pid;
  struct ct_hist *hist; /* the long runs' times (and count); made with the entry */
  struct {
    uint64_t id, ns, ts;
    uint64_t end_site; /* where the run ended: its suspend, exit or destroy; 0 at the end */
    uint32_t tid, incarnation, label;
    uint8_t at_end, end_kind; /* end_kind: CT_EV_SUSPEND, CT_EV_DESTROY, or 0 at the end */
    uint8_t end_exit;         /* the suspend was an exit */
  } worst[CT_BLOCK_WORST];
};

/* Last coroutine to suspend on an fd (key: fd, pid). */
struct ct_fduse {
  uint64_t ts, id;
};

/* Who woke the waiters of a wait object (key: obj, wait kind). */
#define CT_WAKERS 4
struct ct_wakers {
  uint64_t id[CT_WAKERS], times[CT_WAKERS];
  uint64_t last_ts;              /* the latest wake of a coroutine parked on this object */
  uint64_t last_from, last_site; /* that wake's waker (0: a plain thread) and site */
  uint64_t first_site;           /* a ptr's: where a coroutine first parked on it */
  uint32_t first_pid, last_tid;
  /* The create site of the coroutines that woke its waiters, while they all
   * share one (waker_mixed: they do not, or one is unknown): the kind of
   * coroutine that releases what its waiters wait for. */
  uint64_t waker_site;
  uint8_t waker_mixed;
  uint8_t n, overflow, by_thread;
};

/* A thread's last resumes, consecutive ones of one coroutine merged (key:
 * tid, 0): who held the thread while a coroutine queued for it waited. */
#define CT_HOLD_RING 64
struct ct_hold {
  uint64_t id;
  uint32_t incarnation, n;
};
struct ct_thread {
  uint32_t resumes; /* so far, mod 2^32 */
  uint32_t head;    /* ring[head % CT_HOLD_RING]: the newest */
  struct ct_hold ring[CT_HOLD_RING];
};

/* Starvation: runnable (woken, not yet resumed) longer than runnable_ns
 * while another coroutine was resumed at least CT_PASSED_OVER times on the
 * thread it last ran on. Kept: each victim's longest span, the longest
 * CT_STARVE_KEPT victims. */
#define CT_PASSED_OVER 3
#define CT_STARVE_HOLDERS 3
#define CT_STARVE_KEPT 64
struct ct_starved {
  uint64_t id, obj, susp_site, woke_ts, woke_from, woke_site, resume_ts;
  uint64_t others; /* resumes on the thread meanwhile, beyond the holders listed */
  uint32_t incarnation, label, pid, tid, woke_tid, resume_tid;
  uint8_t wait, nheld;
  struct ct_hold held[CT_STARVE_HOLDERS]; /* most resumed first */
};
struct ct_starve {
  uint64_t spans, coros; /* all of them; distinct coroutines */
  size_t n;
  struct ct_starved ex[CT_STARVE_KEPT];
};

/* A coroutine destroyed while suspended on a wait object with no wake since,
 * after waiting longer than stuck_ns: its entry as it was, destroy_ts and
 * state set, and where it was destroyed. The first CT_DWAIT_MAX are kept. */
#define CT_DWAIT_MAX 16384
struct ct_dwait {
  struct ct_coro c;
  uint64_t site;
  uint32_t tid;
};

/* Activity in ~17 s buckets (key: ts >> 34, 0), to find idle gaps. */
struct ct_bucket {
  uint64_t lo, hi, n;
};

struct ct_state {
  uint64_t blocker_ns;
  uint64_t stuck_ns, runnable_ns; /* CT_STUCK_NS, CT_RUNNABLE_NS unless set before the first line */
  struct ct_map coros, early, sites, blocks, fds, objs, tids, buckets, threads;
  /* Destroyed coroutines kept (tombstones) before purging them from coros:
   * CT_TOMBSTONES, unless ct_state_keep_tombstones said fewer. */
  size_t tombstones;
  struct ct_viol viol[CT_V_KINDS_];
  ct_symbolizer *sym;
  int sym_err; /* first error adding a module (e.g. -ENOMEM), 0 if none */

  /* counts */
  uint64_t lines, events, bad[4], bad_lines[CT_BAD_LINES_KEPT], nbad_kept, other_records;
  uint64_t coroutines; /* distinct coroutines seen (entries created) */
  uint64_t resumes, migrations, modules, destroyed_alive; /* tombstones in coros */
  uint64_t gap_lost;                                      /* events missing from ev sequences */
  uint64_t gap_coros;   /* incarnations whose ev sequence has a gap (struct ct_coro's gapped) */
  uint64_t reused_ids;  /* creates of an id after its destroy: new incarnations */
  uint64_t returned;    /* exits (returned coroutines) seen */
  uint64_t block_coros; /* distinct coroutines with a run over the blocker threshold */
  /* Suspend addresses that are not code (a reference SDK's frame or future
   * addresses: no module map, about one per coroutine): the site table is
   * dropped and no longer kept, so memory stays bounded by real sites. */
  int sites_not_code;
  uint64_t sites_dropped;
  int any_kind, any_wake, any_ev;
  uint64_t first_ts, last_ts; /* over valid events */
  struct ct_starve starve;
  struct ct_dwait *dwait;
  size_t ndwait, capdwait;
  uint64_t dwait_over; /* beyond CT_DWAIT_MAX: counted only */
  /* Destroyed while waiting, unwoken, for stuck_ns or less: not judged, but
   * counted (with their shortest and longest wait) so the report can say so. */
  uint64_t dwait_short, dwait_short_min, dwait_short_max;

  /* meta / end */
  int has_meta, has_end, exit_has_code, exit_has_signal;
  int64_t exit_code, exit_signal;
  char exit_name[32], run_id[80], host[128];
  char cut_reason[32]; /* the engine's cut marker: why the trace ends early ("ENOSPC") */
  uint64_t meta_mono_ns, target_pid, end_ts, end_events, end_lost, end_harvested;
  uint64_t untraced, station_lost, stations;
  int has_end_counts;
  /* The end record's error (the engine's words), and the stations whose
   * station_end says their counters were written over. */
  char end_error[128];
  uint64_t corrupt_stations;

  /* A flight dump (state_snapshot.c): coroutines its snapshot brought in;
   * its window record (start, the last event dropped before it, why). */
  uint64_t snapshot_coros;
  int has_window;
  uint64_t window_start_ts, window_dropped_ts;
  uint64_t window_ts; /* when it was written (the report's present when no end record came) */
  char window_trigger[64];
  /* The engine's losses when the dump was written, and before the window
   * (window_has_lost: the record says; older dumps do not). */
  int window_has_lost;
  uint64_t window_lost, window_dropped_lost;

  /* Interned coroutine labels, one copy per distinct text (index 0 = none),
   * as many as the run has: a flight dump's snapshot brings one per coroutine;
   * labelmap: a label's hash -> its index. */
  char **labels;
  uint32_t nlabels;
  size_t caplabels;
  struct ct_map labelmap;
  /* The first record whose values could not be true (record.h), as one
   * line "line N: why"; the record is taken as a malformed line. */
  char record_damage[200];

  /* Caches of note_activity: threads already in tids (by tid % size; 0 is
   * no thread id); the last event's bucket (NULL if none; only note_activity
   * adds buckets, and it resets this pointer whenever it does). */
#define CT_RECENT_TIDS 64
  uint64_t recent_tids[CT_RECENT_TIDS];
  struct ct_bucket *last_bucket;
  uint64_t last_bucket_key;
  /* Cache of state_sched.c: the entry of a tid in threads by tid % size
   * (NULL: none); cleared whenever threads grows. */
  uint64_t thread_tids[CT_RECENT_TIDS];
  struct ct_thread *thread_at[CT_RECENT_TIDS];

  /* ct_state_prefetch: the coroutines of the last lines peeked at. */
#define CT_PREFETCH_LAG 8
  uint64_t peeked[CT_PREFETCH_LAG];
  unsigned npeeked;

  /* coro_of's cache: the last coroutine looked up (NULL if none; only
   * coro_of adds to or filters coros, and it resets this whenever it does,
   * as the entries may move). Lines in a row mostly share a coroutine. */
  struct ct_coro *last_coro;
  uint64_t last_coro_id;
  /* site_of's cache, the same way: the last suspension site (NULL if none;
   * only on_suspend adds sites, and drop_sites empties them). */
  struct ct_site *last_site;
};

/* ct_state_new, ct_state_free, ct_state_line, ct_state_prefetch: model.h
 * (the analysis' API outside src/analysis). */

/* The report keeps CT_TOMBSTONES destroyed coroutines (to tell an event after
 * a destroy, and a reused id's incarnations), 3.3 MB of entries: a watch
 * that runs for days wants fewer (its findings are about coroutines alive).
 * n: a power of two; before the first line. */
#define CT_TOMBSTONES 16384
void ct_state_keep_tombstones(struct ct_state *s, size_t n);

/* A record line that parsed, not an event (state_record.c, called by
 * ct_state_line). Returns 0 or -ENOMEM. */
int ct_state_record(struct ct_state *s, uint64_t lineno, const struct ct_line *l);
/* For state_record.c: coroutine id's entry (NULL: no memory); a new
 * incarnation of c (its id reused after its destroy, record.h); a line not
 * judged (err), counted and its number kept. */
struct ct_coro *ct_state_coro(struct ct_state *s, uint64_t id);
void ct_state_new_incarnation(struct ct_state *s, struct ct_coro *c);
void ct_state_bad_line(struct ct_state *s, uint64_t lineno, enum ct_line_err err);

/* A flight dump's snapshot line (state_snapshot.c): the coroutine enters
 * the state as it was at the window's start, through ct_state_line (its
 * coroutine line, the event of its state, its wake), the window's counts
 * untouched; its next event index is the line's ev + 1 (no gap). Returns 0
 * or -ENOMEM. */
int ct_state_snapshot(struct ct_state *s, uint64_t lineno, const struct ct_line *l);
/* A flight dump's window record, kept in s, wherever it comes (before the
 * window's chunks, or after them in the older layout); a dump of a program
 * still running (no end record in the whole trace) is judged at its ts
 * (s->window_ts, which ct_report_build takes as the present). */
void ct_state_window(struct ct_state *s, const struct ct_line *l);

/* Scheduling (state_sched.c), called by ct_state_line for our traces'
 * events before they change c: a wake of suspended c (the first since its
 * suspend); a resume of c on thread tid at ts (ct_sched_resume, below); a
 * destroy of c at ts on tid at site (0 or -ENOMEM). */
void ct_sched_wake(struct ct_state *s, struct ct_coro *c);
int ct_sched_destroy(struct ct_state *s, const struct ct_coro *c, uint64_t ts, uint32_t tid,
                     uint64_t site);
/* Thread tid's entry from the map, made when absent if make (NULL: absent,
 * or out of memory), into ct_sched_thread's cache. */
struct ct_thread *ct_sched_thread_lookup(struct ct_state *s, uint32_t tid, int make);
/* c, woken at c->woke_ts and resumed at ts on tid, waited longer than the
 * runnable threshold: a starved span if others held its thread meanwhile. */
void ct_sched_starved(struct ct_state *s, struct ct_coro *c, uint64_t ts, uint32_t tid);

/* Thread tid's entry, made when absent if make (NULL: absent, or out of memory). */
static inline struct ct_thread *ct_sched_thread(struct ct_state *s, uint32_t tid, int make) {
  unsigned k = tid % CT_RECENT_TIDS;
  if (s->thread_at[k] && s->thread_tids[k] == tid)
    return s->thread_at[k];
  return ct_sched_thread_lookup(s, tid, make);
}

/* A resume of c on tid at ts, before on_resume changes c: its thread's
 * holders, a starved span. Inline (read speed: one per resume). Returns 0 or
 * -ENOMEM. */
static inline int ct_sched_resume(struct ct_state *s, struct ct_coro *c, uint64_t ts,
                                  uint32_t tid) {
  if (c->state == CT_CS_SUSPENDED && c->woken && !c->returned && c->last_resume_tid &&
      ts > c->woke_ts && ts - c->woke_ts > s->runnable_ns)
    ct_sched_starved(s, c, ts, tid);
  struct ct_thread *t = ct_sched_thread(s, tid, 1);
  if (!t)
    return -ENOMEM;
  struct ct_hold *h = &t->ring[t->head % CT_HOLD_RING];
  if (!h->n || h->id != c->id || h->incarnation != c->incarnation)
    *(h = &t->ring[++t->head % CT_HOLD_RING]) = (struct ct_hold){c->id, c->incarnation, 0};
  h->n++;
  t->resumes++;
  return 0;
}

/* The blocker table as it would be with the runs still going at the end of
 * the trace closed there (blockers still running): a copy into *blocks (an
 * initialized, empty map the caller frees with ct_state_blocks_free), with
 * *coros its distinct coroutines. s is unchanged. Returns 0 or -ENOMEM. */
int ct_state_blocks_at_end(const struct ct_state *s, struct ct_map *blocks, uint64_t *coros);
void ct_state_blocks_free(struct ct_map *blocks);

/* End of the trace: the end line's ts (the engine saw the exit then), else
 * the newest event. */
uint64_t ct_state_end_ts(const struct ct_state *s);

#endif
