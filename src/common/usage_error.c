/* usage_error.c - the one line a subcommand prints for a bad command line. */
#include <stdio.h>

#include "common/commands.h"

int ct_usage_error(const char *cmd, const char *what, const char *arg) {
  fprintf(stderr, "corotracer: %s: %s%s%s\n", cmd, what, arg ? ": " : "", arg ? arg : "");
  return 2;
}
