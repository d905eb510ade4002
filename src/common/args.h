/* args.h - the one command-line option parser of the corotracer subcommands.
 *
 * Table-driven, so each subcommand lists its spellings (ours and the reference
 * engine's single-dash ones) in one place and prints its own errors: the parser
 * never prints, it says what it found and the caller decides the message. */
#ifndef CT_COMMON_ARGS_H
#define CT_COMMON_ARGS_H

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

#endif
