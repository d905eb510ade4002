/* args.h - the one command-line option parser of the corotracer subcommands.
 *
 * Table-driven, so each subcommand lists its spellings (ours and the reference
 * engine's single-dash ones) in one place and prints its own errors: the parser
 * never prints, it says what it found and the caller decides the message. */
#ifndef CT_COMMON_ARGS_H
#define CT_COMMON_ARGS_H

#include <stddef.h>
#include <stdint.h>

/* One option: every spelling it has, space-separated ("-o --output"), the id
 * ct_args_next returns for it (> 0), and whether it takes a value (the next
 * argument, whatever it looks like: `-o -` is stdout). */
struct ct_opt {
  const char *names;
  int id;
  int has_value;
};

enum {
  CT_ARGS_END = 0,         /* no argument left */
  CT_ARGS_POSITIONAL = -1, /* *val: an argument that is not an option ("-" is one) */
  CT_ARGS_UNKNOWN = -2,    /* *val: the option not in the table */
  CT_ARGS_NO_VALUE = -3,   /* *val: the option whose value is missing */
  CT_ARGS_HAS_VALUE = -4,  /* *val: "--flag=x", a value given to an option that takes none */
};

/* getopt's conventions on top of exact spellings: one-letter flags cluster
 * (-tv), a one-letter option's value may be attached (-efile), "--" ends the
 * options, and the first positional argument ends them too (getopt's '+').
 * In every mode a two-dash spelling takes its value attached too (--out=FILE). */
#define CT_ARGS_GETOPT 1

/* Iteration state over argv[1..argc-1]; the caller owns argv, which is not
 * reordered, and every *val points into it. */
struct ct_args {
  int argc, i, flags, options_done;
  char **argv;
  const char *cluster; /* the letters of a -tv cluster not yet returned */
  char letter[3];      /* "-x": a cluster's letter, for *val */
};

void ct_args_init(struct ct_args *a, int argc, char **argv, int flags);

/* The next option's id (its value, if it takes one, in *val), or one of the
 * CT_ARGS_* codes above. After CT_ARGS_POSITIONAL, a->i - 1 is its index. */
int ct_args_next(struct ct_args *a, const struct ct_opt *opts, const char **val);

/* The read side's thresholds, in ns, as every subcommand that judges a trace
 * takes them (run, report, html, serve, export): their defaults are
 * src/analysis/defaults.h's CT_THRESHOLDS_DEFAULT, their spellings these. */
struct ct_thresholds {
  uint64_t stuck_ns, runnable_ns, blocker_ns;
};
enum { CT_OPT_STUCK_MS = 1000, CT_OPT_RUNNABLE_MS, CT_OPT_BLOCKER_MS };
#define CT_ARGS_THRESHOLD_OPTS                                                                     \
  {"--stuck-ms", CT_OPT_STUCK_MS, 1}, {"--runnable-ms", CT_OPT_RUNNABLE_MS, 1}, {                  \
    "--blocker-ms", CT_OPT_BLOCKER_MS, 1                                                           \
  }
#define CT_THRESHOLD_MS_MAX 86400000ul /* a day */

/* Option id's threshold in *t from val, milliseconds in [1, CT_THRESHOLD_MS_MAX]:
 * 0; 1 when id is no threshold's (t untouched); -EINVAL for a bad value, with
 * why ("--stuck-ms wants ..., not 12x") naming the option and the value. */
int ct_args_threshold(struct ct_thresholds *t, int id, const char *val, char *why, size_t whylen);

#endif
