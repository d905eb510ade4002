/* run_main.c - placeholder until the run command lands. */
#include <stdio.h>
#include "cli/commands.h"
int ct_run_main(int argc, char **argv) {
  (void)argc; (void)argv;
  fprintf(stderr, "corotracer: run: not built yet\n");
  return 2;
}
