/* report_main.c - placeholder until the report command lands. */
#include <stdio.h>
#include "cli/commands.h"
int ct_report_main(int argc, char **argv) {
  (void)argc; (void)argv;
  fprintf(stderr, "corotracer: report: not built yet\n");
  return 2;
}
