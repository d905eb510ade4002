/* defaults.h - the read side's thresholds, defined once: the report, the
 * dashboard (static and live), the export and run's --dump-on judge a trace
 * alike, each default overridden by the option of the same name
 * (src/common/args.h, CT_ARGS_THRESHOLD_OPTS). */
#ifndef CT_ANALYSIS_DEFAULTS_H
#define CT_ANALYSIS_DEFAULTS_H

#include "common/args.h"

/* Left suspended this long, unwoken, by a program that ran on: never woken
 * (lost wakeups, destroyed while waiting) (--stuck-ms). */
#define CT_STUCK_MS 1000
/* Runnable this long while others ran on its thread: starved (--runnable-ms). */
#define CT_RUNNABLE_MS 100
/* A run (resume to suspend) this long: it blocks its thread (--blocker-ms). */
#define CT_BLOCKER_MS 100

#define CT_STUCK_NS (CT_STUCK_MS * 1000000ull)
#define CT_RUNNABLE_NS (CT_RUNNABLE_MS * 1000000ull)
#define CT_BLOCKER_NS (CT_BLOCKER_MS * 1000000ull)
#define CT_THRESHOLDS_DEFAULT ((struct ct_thresholds){CT_STUCK_NS, CT_RUNNABLE_NS, CT_BLOCKER_NS})

#define CT_DEFAULTS_STR_(x) #x
#define CT_DEFAULTS_STR(x) CT_DEFAULTS_STR_(x)
/* The options' usage lines, the same in every subcommand that takes them. */
#define CT_THRESHOLDS_USAGE                                                                        \
  "--stuck-ms MS: suspended longer than this, unwoken, then destroyed or left behind\n"            \
  "  while the program ran on, is never woken (" CT_DEFAULTS_STR(                                  \
      CT_STUCK_MS) ").\n"                                                                          \
                   "--runnable-ms MS: runnable longer than this while others ran on its thread "   \
                   "is\n"                                                                          \
                   "  starvation (" CT_DEFAULTS_STR(                                               \
                       CT_RUNNABLE_MS) ").\n"                                                      \
                                       "--blocker-ms MS: a run longer than this without "          \
                                       "suspending is a blocker (" CT_DEFAULTS_STR(                \
                                           CT_BLOCKER_MS) ").\n"

#endif
