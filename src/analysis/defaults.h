/* defaults.h - the read side's thresholds, defined once: the report, the
 * dashboard (static and live) and the export judge a trace alike. */
#ifndef CT_ANALYSIS_DEFAULTS_H
#define CT_ANALYSIS_DEFAULTS_H

/* Left suspended this long, unwoken, by a program that ran on: never woken
 * (lost wakeups, destroyed while waiting). */
#define CT_STUCK_NS 1000000000ull
/* Runnable this long while others ran on its thread: starved (--runnable-ms). */
#define CT_RUNNABLE_NS 100000000ull
/* A run (resume to suspend) this long: it blocks its thread (--blocker-ms). */
#define CT_BLOCKER_NS 100000000ull

#endif
