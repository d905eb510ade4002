/* test-args.c - unit test of the subcommands' option parser (src/common/args.c):
 * exact spellings with one or two dashes, values taken whatever they look like,
 * positional arguments ("-" among them), unknown options and missing values
 * named, and getopt's conventions when asked (clusters, attached values, "--",
 * the first positional argument ending the options); the thresholds' values. */
#include "common/args.h"
#include "lib/check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { A = 1, B, V };
static const struct ct_opt opts[] = {
    {"-a --all", A, 0}, {"-b", B, 0}, {"-v --value -value", V, 1}, {NULL, 0, 0}};

/* The ids ct_args_next returns over argv (NULL-terminated), with flags, as a
 * string of letters (a, b, v=VALUE, p=POSITIONAL, ?=UNKNOWN, !=NO_VALUE). */
static const char *walk(int flags, char **argv) {
  static char out[256];
  struct ct_args it;
  const char *val;
  int argc = 0, id;
  size_t n = 0;
  while (argv[argc])
    argc++;
  ct_args_init(&it, argc, argv, flags);
  while ((id = ct_args_next(&it, opts, &val)) != CT_ARGS_END) {
    const char *tag = id == A                    ? "a"
                      : id == B                  ? "b"
                      : id == V                  ? "v="
                      : id == CT_ARGS_POSITIONAL ? "p="
                      : id == CT_ARGS_UNKNOWN    ? "?="
                      : id == CT_ARGS_HAS_VALUE  ? "+="
                                                 : "!=";
    ASSERT_LT(n + 64, sizeof out);
    n += (size_t)snprintf(out + n, sizeof out - n, "%s%s ", tag, id == A || id == B ? "" : val);
  }
  out[n] = '\0';
  return out;
}

/* The thresholds every judging subcommand takes: milliseconds in ns, a bad
 * value refused with a line naming the option, other ids left alone. */
static void thresholds(void) {
  struct ct_thresholds t = {1, 2, 3};
  char why[128] = "";
  ASSERT_EQ(ct_args_threshold(&t, CT_OPT_STUCK_MS, "200", why, sizeof why), 0);
  ASSERT_EQ(ct_args_threshold(&t, CT_OPT_RUNNABLE_MS, "1", why, sizeof why), 0);
  ASSERT_EQ(ct_args_threshold(&t, CT_OPT_BLOCKER_MS, "86400000", why, sizeof why), 0);
  ASSERT_UINT64_EQ(t.stuck_ns, 200000000u);
  ASSERT_UINT64_EQ(t.runnable_ns, 1000000u);
  ASSERT_UINT64_EQ(t.blocker_ns, 86400000000000u);
  ASSERT_EQ(ct_args_threshold(&t, V, "5", why, sizeof why), 1);
  static const char *const bad[] = {"0", "-5", "12x", "", " 5", "86400001", "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ASSERT_EQ(ct_args_threshold(&t, CT_OPT_STUCK_MS, bad[i], why, sizeof why), -EINVAL);
    ASSERT(!strncmp(why, "--stuck-ms wants a number of milliseconds", 41));
  }
  ASSERT_UINT64_EQ(t.stuck_ns, 200000000u); /* untouched by a bad value */
}

#define ARGV(...) ((char *[]){"cmd", __VA_ARGS__, NULL})

int main(void) {
  /* Exact spellings: every one listed, no other. */
  ASSERT_STR_EQ(walk(0, ARGV("-a", "--all", "-b", "-v", "x", "-value", "-", "--value", "y")),
                "a a b v=x v=- v=y ");
  ASSERT_STR_EQ(walk(0, ARGV("file", "-", "--bogus", "-ab")), "p=file p=- ?=--bogus ?=-ab ");
  ASSERT_STR_EQ(walk(0, ARGV("x", "-v")), "p=x !=-v ");
  ASSERT_STR_EQ(walk(0, ARGV("--", "-a", "x")), "?=-- a p=x "); /* "--" is no option here */
  ASSERT_STR_EQ(walk(0, ARGV("-vx")), "?=-vx ");
  /* getopt's conventions. */
  ASSERT_STR_EQ(walk(CT_ARGS_GETOPT, ARGV("-ab", "-vx", "-bvy", "-v", "-a")),
                "a b v=x b v=y v=-a ");
  ASSERT_STR_EQ(walk(CT_ARGS_GETOPT, ARGV("-abx", "-a")), "a b ?=-x a ");
  ASSERT_STR_EQ(walk(CT_ARGS_GETOPT, ARGV("-b", "-av")), "b a !=-v ");
  ASSERT_STR_EQ(walk(CT_ARGS_GETOPT, ARGV("-a", "--", "-b", "x")), "a p=-b p=x ");
  ASSERT_STR_EQ(walk(CT_ARGS_GETOPT, ARGV("x", "-a")), "p=x p=-a ");
  ASSERT_STR_EQ(walk(CT_ARGS_GETOPT, ARGV("--all", "--bogus", "--value", "z")), "a ?=--bogus v=z ");
  ASSERT_STR_EQ(walk(0, ARGV("")), "p= ");
  /* --name=value: the value attached to a two-dash spelling, in both modes. */
  ASSERT_STR_EQ(walk(0, ARGV("--value=a=b", "--value=", "-value=x", "--all=1", "--bogus=2")),
                "v=a=b v= ?=-value=x +=--all=1 ?=--bogus=2 ");
  ASSERT_STR_EQ(walk(CT_ARGS_GETOPT, ARGV("--value=z", "x")), "v=z p=x ");
  thresholds();
  return 0;
}
