/* rip_main.c - placeholder until the rip command lands. */
#include <stdio.h>
#include "cli/commands.h"
int ct_rip_main(int argc, char **argv) {
  (void)argc; (void)argv;
  fprintf(stderr, "corotracer: rip: not built yet\n");
  return 2;
}
