/* watch.h - the report's findings, incrementally: feed a binary trace's
 * chunks as they are made, ask which finding kinds the trace shows by now
 * (the flight recorder's --dump-on). Module code: no prints, no globals. */
#ifndef CT_ANALYSIS_WATCH_H
#define CT_ANALYSIS_WATCH_H

#include <stddef.h>
#include <stdint.h>

/* The finding kinds a watch tells apart (bits). */
enum {
  CT_WATCH_LOST_WAKEUP = 1u << 0,
  CT_WATCH_DEADLOCK = 1u << 1,
  CT_WATCH_BLOCKER = 1u << 2,
  CT_WATCH_STARVATION = 1u << 3,
  CT_WATCH_ALL = (1u << 4) - 1
};
#define CT_WATCH_KINDS 4

/* The finding kind of bit i (0..CT_WATCH_KINDS-1): "lost_wakeup", "deadlock",
 * "blocker", "starvation", as the report names them. */
const char *ct_watch_kind(unsigned i);

struct ct_watch;

/* An empty watch with the report's thresholds (ns): left suspended stuck_ns
 * unwoken, runnable runnable_ns while others ran, a run over blocker_ns.
 * 0 or -ENOMEM. */
int ct_watch_new(uint64_t stuck_ns, uint64_t runnable_ns, uint64_t blocker_ns,
                 struct ct_watch **out);
void ct_watch_free(struct ct_watch *w);

/* One chunk of a binary trace (header and payload, n bytes), its entries
 * fed in order. Bytes that are no whole chunk, or an entry that does not
 * decode, end the chunk's feeding (the watch is a best effort: a chunk it
 * misses costs it findings, never memory). 0 or -ENOMEM. */
int ct_watch_chunk(struct ct_watch *w, const void *chunk, size_t n);

/* Chunks were missed here (the feeder fell behind): the watch forgets what
 * it was fed so far and judges only what comes after the gap (a coroutine
 * whose wake was in the gap is not called lost). 0 or -ENOMEM (the watch
 * then goes on as before). */
int ct_watch_gap(struct ct_watch *w);

/* The kinds (CT_WATCH_* bits) the report would find, as errors (lost
 * wakeups, deadlocks) or warnings (blockers, starvation), if the trace ended at now_ts (ns, the
 * events' clock; the program still running), and for each kind i its count[i] (the finding's count:
 * coroutines or runs). 0 when nothing is found (or memory ran out). */
unsigned ct_watch_kinds(struct ct_watch *w, uint64_t now_ts, uint64_t count[CT_WATCH_KINDS]);

#endif
