/* args.c - the subcommands' option parser (see args.h). */
#include "common/args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ct_args_init(struct ct_args *a, int argc, char **argv, int flags) {
  *a = (struct ct_args){.argc = argc, .i = 1, .flags = flags, .argv = argv};
}

/* Whether the space-separated list names holds the word s (n bytes). */
static int has_name(const char *names, const char *s, size_t n) {
  for (const char *p = names; *p;) {
    size_t len = strcspn(p, " ");
    if (len == n && !memcmp(p, s, n))
      return 1;
    p += len;
    p += strspn(p, " ");
  }
  return 0;
}

static const struct ct_opt *find(const struct ct_opt *opts, const char *s, size_t n) {
  for (; opts->names; opts++)
    if (has_name(opts->names, s, n))
      return opts;
  return NULL;
}

/* The option named arg (whole), its value from the next argument. */
static int whole(struct ct_args *a, const struct ct_opt *o, const char *arg, const char **val) {
  *val = arg;
  if (!o)
    return CT_ARGS_UNKNOWN;
  if (!o->has_value)
    return o->id;
  if (a->i >= a->argc)
    return CT_ARGS_NO_VALUE;
  *val = a->argv[a->i++];
  return o->id;
}

/* The next letter of a cluster (-tv, -efile): a flag, or an option whose value
 * is the rest of the cluster or else the next argument. */
static int next_letter(struct ct_args *a, const struct ct_opt *opts, const char **val) {
  a->letter[0] = '-';
  a->letter[1] = *a->cluster++;
  a->letter[2] = '\0';
  const struct ct_opt *o = find(opts, a->letter, 2);
  *val = a->letter;
  if (!o) {
    a->cluster = NULL;
    return CT_ARGS_UNKNOWN;
  }
  if (!o->has_value) {
    if (!*a->cluster)
      a->cluster = NULL;
    return o->id;
  }
  if (*a->cluster) {
    *val = a->cluster;
    a->cluster = NULL;
    return o->id;
  }
  a->cluster = NULL;
  return whole(a, o, a->letter, val);
}

int ct_args_next(struct ct_args *a, const struct ct_opt *opts, const char **val) {
  int getopt = a->flags & CT_ARGS_GETOPT;
  if (a->cluster)
    return next_letter(a, opts, val);
  if (a->i >= a->argc)
    return CT_ARGS_END;
  const char *arg = a->argv[a->i++];
  if (a->options_done || arg[0] != '-' || !arg[1]) {
    if (getopt)
      a->options_done = 1;
    *val = arg;
    return CT_ARGS_POSITIONAL;
  }
  if (getopt && !strcmp(arg, "--")) {
    a->options_done = 1;
    return ct_args_next(a, opts, val);
  }
  const struct ct_opt *o = find(opts, arg, strlen(arg));
  const char *eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
  if (!o && eq && (o = find(opts, arg, (size_t)(eq - arg))) != NULL) {
    *val = o->has_value ? eq + 1 : arg;
    return o->has_value ? o->id : CT_ARGS_HAS_VALUE;
  }
  if (o || !getopt || arg[1] == '-')
    return whole(a, o, arg, val);
  a->cluster = arg + 1;
  return next_letter(a, opts, val);
}

int ct_args_threshold(struct ct_thresholds *t, int id, const char *val, char *why, size_t whylen) {
  static const char *const names[] = {"--stuck-ms", "--runnable-ms", "--blocker-ms"};
  uint64_t *slot = id == CT_OPT_STUCK_MS      ? &t->stuck_ns
                   : id == CT_OPT_RUNNABLE_MS ? &t->runnable_ns
                   : id == CT_OPT_BLOCKER_MS  ? &t->blocker_ns
                                              : NULL;
  if (!slot)
    return 1;
  char *end;
  errno = 0;
  unsigned long ms = strtoul(val, &end, 10);
  if (val[0] < '0' || val[0] > '9' || *end || errno || !ms || ms > CT_THRESHOLD_MS_MAX) {
    snprintf(why, whylen, "%s wants a number of milliseconds from 1 to %lu, not '%s'",
             names[id - CT_OPT_STUCK_MS], CT_THRESHOLD_MS_MAX, val);
    return -EINVAL;
  }
  *slot = (uint64_t)ms * 1000000u;
  return 0;
}
