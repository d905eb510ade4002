/* findings.h - internal to the report's assembly. Two halves, one direction:
 * report.c calls the finding builders (findings_stuck.c, findings_sched.c,
 * findings_tables.c), and they build with the helpers of findings.c, which
 * calls neither (findings_sched.c also asks findings_stuck.c's likely-idle
 * test, so that both findings judge idleness alike). */
#ifndef CT_ANALYSIS_FINDINGS_H
#define CT_ANALYSIS_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/model.h"
#include "analysis/state.h"

/* The helpers (findings.c). */

/* A new zeroed finding appended to r (kind and sev set), or NULL on ENOMEM.
 * Pointers to r's earlier findings are invalidated. */
struct ct_finding *ct_new_finding(struct ct_report *r, const char *kind, enum ct_sev sev);

/* Adds count to f's cross-reference to findings of kind (relation says how). */
void ct_add_related(struct ct_finding *f, const char *kind, const char *relation, uint64_t count);

/* Per-coroutine evidence: at most this long (cut beyond). */
#define CT_COROEV_MAX 512

/* Gives rc a copy of evidence ev (exactly its length: 10^5 leaked coroutines
 * hold short ones). Returns 0 or -ENOMEM. */
int ct_keep_evidence(struct ct_rcoro *rc, const char *ev);

/* Appends a finding-wide evidence line; beyond CT_EVIDENCE_MAX, dropped. */
void ct_add_evidence(struct ct_finding *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Fills rs->sym from rs->site and rs->pid (rs->symbolized when it worked). */
void ct_symbolize_site(const struct ct_state *st, struct ct_rsite *rs);
/* The same for a destroy's site: inlined destructors skipped too, so the
 * line that destroyed the coroutine (ct_symbolize_event_site). */
void ct_symbolize_destroy_site(const struct ct_state *st, struct ct_rsite *rs);
/* The global or static object holding data address addr of process pid, as
 * "name[+0xoff] (file.c:line)" into buf; 1 when named, 0 (buf untouched)
 * when no module's symbol table has an object there. */
int ct_fmt_data(const struct ct_state *st, uint32_t pid, uint64_t addr, char *buf, size_t n);

/* rs's p50/p99/max from the durations in h (has_dur set). */
void ct_site_durations(struct ct_rsite *rs, const struct ct_hist *h);

/* rs's runnable p50/p99/max from the durations in h (has_runnable set). */
void ct_site_runnable(struct ct_rsite *rs, const struct ct_hist *h);

/* Time since the trace's start, for evidence ("+1.2 s"), in buf; returns buf. */
const char *ct_at(const struct ct_report *r, uint64_t ts, char *buf, size_t n);

/* c's label, or NULL if it has none. */
const char *ct_label_of(const struct ct_state *st, const struct ct_coro *c);

/* How the program ended, as a clause ("the program exited with code 0"). */
void ct_describe_exit(const struct ct_report *r, char *buf, size_t n);

/* Fills f's sites and coroutines from cs[0..n): one site per distinct
 * (pid, site), by creation site if by_create, else by suspension site with
 * suspended-time percentiles at r->end_ts (at their destroy for destroyed ones). cs is reordered so
 * that cs[i] is f->coros[i]; evidence is left empty. Returns 0 or -ENOMEM. */
int ct_group_coros(struct ct_report *r, const struct ct_state *st, struct ct_finding *f,
                   const struct ct_coro **cs, size_t n, int by_create);

/* The function of the text site from which an adapter wakes the stand-in of
 * an operation destroyed without running (include/corotracer/asio.hpp's
 * COROTRACER_DROPPED_FUNCTION, the same text), left suspended. */
#define CT_DROPPED_FUNCTION "operation destroyed without running"

/* A mark (r->marks) for a coroutine accounted for without a finding: an
 * operation dropped at a clean stop while parked like an idle loop. The
 * leak finding leaves it out. */
#define CT_MARK_QUIET 255

/* findings_objs.c: a wait object in the evidence. */
#define CT_IDLE_WAKES 3 /* woken this often in a row at a site: parked there, likely idle */
/* What c waits on: "fd 7", "ptr mailbox (app.c:12)", "ptr 0x...". */
void ct_fmt_obj(const struct ct_state *st, const struct ct_coro *c, char *buf, size_t n);
/* w's waker (w->site symbolized for c's process): "coroutine 7 (label) at
 * SITE" or "a plain thread (tid 101) at SITE". */
void ct_fmt_waker(const struct ct_state *st, const struct ct_coro *c, struct ct_rwake *w, char *buf,
                  size_t n);
/* The coroutine that parked on c's fd number after c did (closed and reused
 * under c; before its destroy, for a destroyed one), or 0. */
uint64_t ct_fd_reused_by(const struct ct_state *st, const struct ct_coro *c);
/* Another waiter on c's object was woken after c parked (before its destroy). */
int ct_waiter_woken_since(const struct ct_state *st, const struct ct_coro *c);
/* c (alive, or a destroyed copy of state.h's ct_dwait) parked where its last
 * CT_IDLE_WAKES woken suspensions were, its fd not reused, no other waiter on
 * its object woken since: may be idle (an accept loop). */
int ct_likely_idle(const struct ct_state *st, const struct ct_coro *c);
/* c parked where its last CT_IDLE_WAKES woken suspensions were, its fd not
 * reused (the likely-idle test without its object's later wakes). */
int ct_parked_idle(const struct ct_state *st, const struct ct_coro *c);
/* c, suspended, was last woken from the CT_DROPPED_FUNCTION text site: its
 * operation was destroyed without running. */
int ct_dropped(const struct ct_state *st, const struct ct_coro *c);
/* The last wake of a waiter on c's fd or ptr into rc_->obj_wake (NULL when
 * none) and said after buf[0..o); the new o, or -1 on ENOMEM. */
long ct_obj_last_wake(const struct ct_report *r, const struct ct_state *st, const struct ct_coro *c,
                      struct ct_rcoro *rc_, char *buf, size_t n, size_t o);

/* The finding builders, in the order ct_report_build (report.c) runs them
 * (after the overview: they need r->end_ts and r->killed). Each returns 0 or
 * -ENOMEM. */

/* findings_stuck.c: lost wakeups, the wake-before-suspend race, deadlocks,
 * lost schedules. Marks each coroutine reported in r->marks. */
int ct_stuck_findings(struct ct_report *r, const struct ct_state *st, uint64_t stuck_ns);

/* The finding kind of a mark (r->marks), NULL for none. */
const char *ct_primary_kind(unsigned reported);

/* c's mark in r->marks (0: no finding reports it as its primary one). */
unsigned ct_mark_of(const struct ct_report *r, const struct ct_coro *c);

/* findings_sched.c: coroutines destroyed while waiting longer than stuck_ns
 * (lost wakeups cancelled at teardown), after ct_stuck_findings; starvation
 * (runnable too long while others held the thread). */
int ct_dwait_finding(struct ct_report *r, const struct ct_state *st, uint64_t stuck_ns);
int ct_starve_finding(struct ct_report *r, const struct ct_state *st);

/* findings_tables.c: state-machine violations, leaks (sets r->alive_at_end),
 * blockers, lost events (sets r->lost_events). */
int ct_violation_findings(struct ct_report *r, const struct ct_state *st);
int ct_leak_finding(struct ct_report *r, const struct ct_state *st);
/* blocks, coros: the blocker table with the runs still going closed
 * (ct_state_blocks_at_end) and its distinct coroutines. */
int ct_blocker_finding(struct ct_report *r, const struct ct_state *st, const struct ct_map *blocks,
                       uint64_t coros);
int ct_lost_finding(struct ct_report *r, const struct ct_state *st);
/* findings_tables.c: the engine found the tracer's shared memory written
 * over (the end record's error, or stations marked corrupt). */
int ct_corrupt_finding(struct ct_report *r, const struct ct_state *st);

#endif
