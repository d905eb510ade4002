/* findings_stuck.h - what the stuck findings (findings_stuck.c) share with
 * their coroutines behind others (findings_behind.c): the categories, the
 * stuck table, and the behind helpers. Private to src/analysis. */
#ifndef CT_ANALYSIS_FINDINGS_STUCK_H
#define CT_ANALYSIS_FINDINGS_STUCK_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/findings.h"

/* Why a coroutine is suspended at the end with no wake after its last suspend.
 * The _LOST twins: the same, but events were lost since its last resume or
 * after its last event, so the wake it lacks may be one of them. */
enum cat {
  CAT_RAN_ON,
  CAT_WAKE_BEFORE,
  CAT_RAN_ON_LOST,
  CAT_WAKE_BEFORE_LOST,
  CAT_KILLED,
  CAT_EXIT,
  CAT_WEAK,
  CAT_DEADLOCK,
  /* Its operation destroyed without running (an adapter's stand-in woken
   * from the CT_DROPPED_FUNCTION text site), not parked like an idle loop:
   * a lost completion. */
  CAT_DROPPED,
  /* Woken and never resumed: the program ran on; events lost around; it ended soon after. */
  CAT_SCHED,
  CAT_SCHED_LOST,
  CAT_SCHED_END,
  CAT_N
};

struct stuck {
  const struct ct_coro *c;
  enum cat cat;
  uint64_t waits_for;
  int color; /* cycle search: 0 new, 1 on the current walk, 2 done; 3 reported */
  /* Waits for a stuck coroutine to finish (wait 4, a join), directly or down
   * a chain of such waits: reported in the finding of the chain's end, root
   * (sk index), not on its own. */
  int behind;
  int held; /* behind root because it waits on what coroutines like root hold */
  size_t root;
  size_t cycle; /* deadlock_findings: 1 + the cycle it is in, 0 if none */
};

/* The stuck entry of c (idx: id -> sk index), or NULL. */
const struct stuck *ct_stuck_of(const struct stuck *sk, struct ct_map *idx,
                                const struct ct_coro *c);

/* Marks each coroutine that waits for a stuck one to finish (wait 4),
 * directly or down a chain of joins, as behind the chain's end: the first
 * coroutine on it that waits on something else, or is in a deadlock. */
void ct_stuck_mark_behind(struct stuck *sk, size_t n, struct ct_map *idx);

/* Marks each stuck coroutine parked on a ptr whose waiters only coroutines
 * created at one other site ever woke (released it), some of them stuck too,
 * as held behind one of those: it waits for what they hold (a connection slot
 * the stranded connections keep), one root cause with theirs. Not a
 * coroutine others are behind already, nor behind a root that is itself. */
int ct_stuck_mark_held(const struct ct_state *st, struct stuck *sk, size_t n);

/* Appends to cs[0..m) the coroutines behind one of them (a finding of cat;
 * cs has room for n); returns how many, *nheld of them held (mark_held). */
size_t ct_stuck_add_behind(const struct stuck *sk, size_t n, const struct ct_coro **cs, size_t m,
                           enum cat cat, size_t *nheld);

/* Per-coroutine evidence of one behind another: the chain. */
int ct_stuck_behind_evidence(const struct ct_report *r, const struct ct_state *st,
                             const struct stuck *sk, struct ct_map *idx, const struct stuck *b,
                             struct ct_rcoro *rc_);

/* Appends the nb coroutines behind the finding's to its title: those that
 * wait for them to finish, and the nheld among them that wait on what they
 * hold. */
void ct_stuck_title_behind(struct ct_finding *f, size_t nb, size_t nheld);

/* The finding's line for its nb coroutines behind others: the first chain. */
int ct_stuck_behind_summary(const struct ct_report *r, const struct ct_state *st,
                            const struct stuck *sk, struct ct_map *idx, struct ct_finding *f,
                            size_t nb);

/* Would be a leak (created, never destroyed, the program exited normally). */
static inline int ct_stuck_leak_worthy(const struct ct_report *r, const struct ct_coro *c) {
  return !r->killed && c->has_kind && c->created;
}

#endif
