/* model.h - the analysis' API (state.h stays private to src/analysis) and the
 * report as data: overview and findings (docs/FINDINGS.md), built once from the
 * streamed state and rendered by the Markdown and JSON writers, the dashboard
 * and the export. Module code: returns 0 or -errno, never prints to stderr. */
#ifndef CT_ANALYSIS_MODEL_H
#define CT_ANALYSIS_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/defaults.h"
#include "analysis/map.h"
#include "analysis/trace.h"
#include "symbolize/symbolize.h"

/* ---- the analysis, from outside src/analysis ---------------------------------
 * What the report remembers while it streams a trace (struct ct_state) is
 * private to src/analysis (state.h): the dashboard, the live view, the export
 * and the CLI feed it lines and get a report (ct_report_build), a value. */
struct ct_state;

/* Fresh state; blocker_ns is the blocker threshold. *out owned by the caller. */
int ct_state_new(uint64_t blocker_ns, struct ct_state **out);
void ct_state_free(struct ct_state *s);

/* Fresh state judging with t (ct_state_new's has CT_THRESHOLDS_DEFAULT's but
 * blocker_ns): blocker, starvation, and never woken (a coroutine destroyed
 * while waiting longer than stuck_ns is judged, a shorter one only counted).
 * Pass the same stuck_ns to ct_report_build. */
int ct_state_new_judging(const struct ct_thresholds *t, struct ct_state **out);

/* Feeds one line as returned by ct_parse_line (err != CT_LINE_OK counts it as
 * malformed). Returns 0 or -ENOMEM. */
int ct_state_line(struct ct_state *s, uint64_t lineno, enum ct_line_err err,
                  const struct ct_line *l);

/* Feeds n event lines that parsed, of one coroutine in a row, by their
 * meaning (a ct_run_fn's run: ev[i] the event of line ev[i].line): what
 * ct_state_line does with each, in order. Returns 0 or -ENOMEM. */
int ct_state_run(struct ct_state *s, const struct ct_event *ev, size_t n);

/* The symbolizer that names the state's sites (owned by the state). */
ct_symbolizer *ct_state_symbolizer(const struct ct_state *s);

/* Lines fed so far (ct_line_new_run's count). */
uint64_t ct_state_lines(const struct ct_state *s);

/* The first record whose values could not be true, "line N: why" (taken as
 * a malformed line, not as fact: analysis/record.h); NULL when none. */
const char *ct_state_record_damage(const struct ct_state *s);

/* A hint that l comes soon (a ct_peek_fn for ct_trace_read_ahead, which
 * shows each line CT_TRACE_AHEAD lines early): starts bringing its
 * coroutine's index slot into the cache, and the entry of the coroutine of
 * the line peeked at CT_PREFETCH_LAG lines ago, whose slot is in the cache
 * by now. Changes nothing the analysis sees. */
void ct_state_prefetch(struct ct_state *s, const struct ct_line *l);

/* ---- the report --------------------------------------------------------------- */

enum ct_sev { CT_SEV_INFO = 0, CT_SEV_WARNING, CT_SEV_ERROR };

/* A coroutine's state, as the analysis and the export's summaries name it. */
enum ct_cstate {
  CT_CS_UNKNOWN = 0,
  CT_CS_CREATED,
  CT_CS_RUNNING,
  CT_CS_SUSPENDED,
  CT_CS_DESTROYED
};

/* State-machine violations: counted, first few kept as examples. */
#define CT_VIOL_EXAMPLES 64
enum { CT_V_RESUME_RUNNING, CT_V_RESUME_NO_WAKE, CT_V_AFTER_DESTROY, CT_V_AFTER_EXIT, CT_V_KINDS_ };
struct ct_viol {
  uint64_t count;
  uint64_t coros;      /* distinct coroutines (incarnations) among them */
  uint64_t not_judged; /* would-be violations right after lost events: not counted */
  size_t n;
  struct {
    uint64_t id, ts, line, other_ts;
    uint32_t tid, other_tid, incarnation;
    uint8_t kind; /* the offending event's kind */
  } ex[CT_VIOL_EXAMPLES];
};

#define CT_BAD_LINES_KEPT 10

/* What the trace said about itself and how it read: the report's copy of the
 * analysis' counts and of the meta and end records. */
struct ct_rtrace {
  uint64_t lines, events, bad[4], bad_lines[CT_BAD_LINES_KEPT], nbad_kept, other_records;
  uint64_t resumes, migrations, modules, reused_ids, returned, sites_dropped, stations;
  uint64_t target_pid, end_ts;
  int any_ev, sites_not_code, sym_err;
  int has_meta, has_end, has_end_counts, exit_has_code, exit_has_signal;
  int64_t exit_code, exit_signal;
  char exit_name[32], run_id[80], host[128], cut_reason[32];
  struct ct_viol viol[CT_V_KINDS_];
  /* A flight dump: its window record's trigger, and the coroutines its
   * snapshot brought in (alive at the window's start). */
  int has_window;
  uint64_t snapshot_coros;
  /* Destroyed while waiting for no longer than stuck_ns (state.h): not
   * judged; their count, shortest and longest wait, and the threshold. */
  uint64_t dwait_short, dwait_short_min, dwait_short_max, stuck_ns;
  /* Still suspended at the end for no longer than stuck_ns in a trace with
   * no wakes (v1): not judged (findings_stuck.c); count, shortest, longest. */
  uint64_t left_short, left_short_min, left_short_max;
  char window_trigger[64];
  /* The engine's losses at the dump and before its window (state.h). */
  int window_has_lost;
  uint64_t window_lost, window_dropped_lost;
};

/* A site with its symbol and, when known, percentiles of the durations it
 * counts: time suspended (suspend -> resume, or to the end for a stuck
 * coroutine) at a suspension site; run time (resume -> suspend, destroy or end)
 * at the site a blocker finding's long runs resumed from. */
struct ct_rsite {
  uint64_t site;
  uint32_t pid;
  int symbolized; /* sym.module != NULL */
  struct ct_sym sym;
  uint64_t count;
  int has_dur;
  uint64_t p50, p99, max; /* ns, from a struct ct_hist: about 6%, max exact */
  int has_runnable;       /* suspension sites: time runnable (wake -> resume), as above */
  uint64_t r_p50, r_p99, r_max;
  int has_fd;
  uint64_t fd_min, fd_max;
};

/* A wake or a run's end as evidence: who, when, where. */
struct ct_rwake {
  uint64_t from, ts; /* from: the waker's probe_id, 0 for a plain thread */
  uint32_t tid;
  int absorbed;                 /* came while it was already runnable after a yield */
  uint64_t yield_ts, resume_ts; /* absorbed: the yield and the resume that absorbed it */
  struct ct_rsite site;
};

/* starvation: a coroutine resumed on the victim's thread while it waited. */
struct ct_rholder {
  uint64_t probe_id, resumes;
  uint32_t incarnation;
  const char *label; /* NULL if none; owned by the state */
};

struct ct_rcoro {
  uint64_t probe_id;
  uint32_t incarnation; /* 0: the first coroutine with this id */
  const char *label;    /* NULL if none; owned by the state */
  int wait;
  uint64_t obj;
  /* A ptr wait object named: a global or static by its symbol and where it
   * is defined ("mailbox (app.c:12)"), else where a coroutine first waited
   * on it ("heap, first waited on at f (app.c:40)"); NULL when neither is
   * known. Owned by the report. */
  char *obj_name;
  int site_index; /* -1 if none */
  int has_susp;
  uint64_t suspended_ns;
  uint64_t waits_for;  /* deadlock: the coroutine it waits on, else 0 */
  int likely_idle;     /* lost_wakeup: parked where it was woken many times before */
  int never_destroyed; /* stuck findings: also a leak, not repeated as one */
  int returned;        /* leak: it returned (final suspend) and was never freed */
  /* The early wake (wake_before_suspend) or the one never honoured
   * (lost_schedule); NULL for others. Owned by the report. */
  struct ct_rwake *wake;
  /* lost_wakeup of a coroutine destroyed while waiting: the destroy (from 0;
   * tid, ts, site); NULL for others. Owned by the report. */
  struct ct_rwake *destroyed;
  /* lost_wakeup and wake_before_suspend on an fd or ptr: the last wake of a
   * coroutine parked on that object (its root cause's last trace); NULL
   * when none was ever woken, and for others. Owned by the report. */
  struct ct_rwake *obj_wake;
  /* starvation: how long it stayed runnable, on which thread (the one it last
   * ran on), and who held that thread meanwhile (owned by the report). */
  uint64_t runnable_ns, others;
  uint32_t tid;
  struct ct_rholder *held_by;
  size_t nheld;
  const char *run_end;       /* blocker: "suspend", "exit", "destroy", or "end" (still running) */
  struct ct_rsite *end_site; /* blocker: where that run ended; owned by the report */
  char *evidence;            /* owned by the report (ct_keep_evidence) */
};

#define CT_EVIDENCE_MAX 6
struct ct_finding {
  const char *kind;
  enum ct_sev sev;
  uint64_t count;
  char title[200];
  struct ct_rsite *sites;
  size_t nsites;
  struct ct_rcoro *coros;
  size_t ncoros;
  char evidence[CT_EVIDENCE_MAX][320];
  size_t nevidence;
  /* Cross-references: count coroutines of this finding are also in a
   * finding of kind (relation: "also never destroyed"). */
#define CT_RELATED_MAX 6
  struct {
    const char *kind, *relation;
    uint64_t count;
  } related[CT_RELATED_MAX];
  size_t nrelated;
};

#define CT_GAPS_MAX 8
/* The report: a value, built once from a state it leaves unchanged
 * (ct_report_build), read by the Markdown and JSON writers, the dashboard, the
 * live view and the export. Its symbols' and labels' text lives in the state's
 * symbolizer and label table: it must not outlive the state. */
struct ct_report {
  struct ct_rtrace t;
  ct_symbolizer *sym; /* the state's, that named its sites (the dashboard names more with it) */
  /* Coroutines a finding reports as their primary one (key: probe_id,
   * incarnation; value: uint8_t, ct_primary_kind's): the leak finding leaves
   * them out. */
  struct ct_map marks;
  const char *path;
  uint64_t bytes;
  /* Set by the caller after ct_report_build, of the trace's last run: the
   * reader's one line ("offset N: ...", not owned) when the bytes ended in a
   * corrupt or truncated chunk, NULL when they read clean; binary: a binary
   * trace (its lines are records). */
  const char *damage;
  int binary;
  uint64_t live_ts; /* a trace still being written: its present; 0 otherwise */
  uint64_t start_ts, end_ts, duration_ns, active_ns;
  struct {
    uint64_t from, to;
  } gaps[CT_GAPS_MAX]; /* idle stretches > 60 s, longest first */
  size_t ngaps, gaps_total;
  uint64_t lost_events, coroutines, threads, alive_at_end;
  uint64_t absurd_ts; /* events left out of the timeline: ts a day away from all others */
  int killed;         /* ended by a signal, or cut short (no end line) */
  struct ct_finding *f;
  size_t nf;
  struct ct_rsite *sites; /* every suspension site, most used first */
  size_t nsites;
  unsigned run, runs; /* its run, 1-based, of the trace's runs (set by the caller; 0 = one run) */
};

/* Builds the report from the state after the last line, or at any point of
 * a trace still being read (the live view: live_ts its present, else 0); st
 * is left as it was (runs still going are judged as if closed at the end).
 * Coroutines destroyed while waiting are judged with st's stuck threshold as
 * kept (state.h) and stuck_ns. r owns its arrays; free with ct_report_free,
 * also after a failure (it is then partly built), and on a zeroed report.
 * stuck_ns: how long a suspended coroutine must have been left behind by a
 * program that ran on for it to be "never woken" rather than caught by the
 * exit. */
int ct_report_build(const struct ct_state *st, const char *path, uint64_t bytes, uint64_t stuck_ns,
                    uint64_t live_ts, struct ct_report *r);
void ct_report_free(struct ct_report *r);

/* Finding kinds of the state-machine violations, by CT_V_*. */
extern const char *const ct_viol_kinds[CT_V_KINDS_];

/* Fills rs->sym from rs->site and rs->pid with r's symbolizer (rs->symbolized
 * when it worked): the export's sites named as the report's, a destroy's site
 * (destroy non-zero) as its findings name the destroyer. */
void ct_report_symbolize(const struct ct_report *r, struct ct_rsite *rs, int destroy);

/* Highest severity among the findings, or -1 with none. */
int ct_report_max_severity(const struct ct_report *r);
const char *ct_sev_name(enum ct_sev s);

/* "conn_read (resp_server.c:212)", "app+0x1234", "0x... (unsymbolized)", or
 * "an unknown site" for site 0, into buf; returns buf. */
const char *ct_fmt_site(const struct ct_rsite *rs, char *buf, size_t n);

/* "3.2 s", "250 ms", "12 us", "40 ns" into buf; returns buf. */
const char *ct_fmt_ns(uint64_t ns, char *buf, size_t n);

/* Renderers: return 0 or -errno (a write error on f). */
int ct_write_markdown(FILE *f, const struct ct_report *r);
int ct_write_json(FILE *f, const struct ct_report *r);

#endif
