/* main.c - the corotracer command: dispatches to run, report and rip. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: corotracer run [options] -- program [args...]   trace a program\n"
          "       corotracer report TRACE [-o report.md] [--json findings.json] [--fail-on SEV]\n"
          "       corotracer rip -e EXECUTABLE [-r RING_FILE] [-t] [-v]\n"
          "       corotracer html TRACE [-o dashboard.html]            offline dashboard\n"
          "       corotracer serve TRACE [--addr [ADDR:]PORT]         live dashboard\n"
          "reference spellings: corotracer -n 256 -cmd \"./app args\" -out trace.jsonl\n"
          "                     corotracer -deepdive -out trace.jsonl\n"
          "                     corotracer -html -out trace.jsonl\n"
          "`corotracer COMMAND --help` tells more.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "run") == 0) return ct_run_main(argc - 1, argv + 1);
  if (strcmp(cmd, "report") == 0) return ct_report_main(argc - 1, argv + 1);
  if (strcmp(cmd, "rip") == 0) return ct_rip_main(argc - 1, argv + 1);
  if (strcmp(cmd, "html") == 0) return ct_html_main(argc - 1, argv + 1);
  if (strcmp(cmd, "serve") == 0) return ct_serve_main(argc - 1, argv + 1);
  if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (cmd[0] == '-') {
    /* The reference engine's single-dash flags: -deepdive selects the report,
     * anything else is trace mode. The subcommands parse the flags themselves. */
    for (int i = 1; i < argc; i++)
      if (strcmp(argv[i], "-deepdive") == 0 || strcmp(argv[i], "--deepdive") == 0)
        return ct_report_main(argc, argv);
    for (int i = 1; i < argc; i++) /* -html -out TRACE: the dashboard */
      if (strcmp(argv[i], "-html") == 0 || strcmp(argv[i], "--html") == 0) return ct_html_main(argc, argv);
    return ct_run_main(argc, argv);
  }
  fprintf(stderr, "corotracer: unknown command '%s'\n", cmd);
  usage(stderr);
  return 2;
}
