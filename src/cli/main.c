/* main.c - the corotracer command: dispatches to run, report, rip, export,
 * html, serve, dump, ship and fleet. */
#include <stdio.h>
#include <string.h>

#include "common/commands.h"
#include "corotracer.h" /* COROTRACER_VERSION */

static void usage(FILE *f) {
  fprintf(f,
          "usage: corotracer run [options] -- program [args...]   trace a program\n"
          "       corotracer report TRACE [-o report.md] [--json findings.json] [--fail-on SEV]\n"
          "       corotracer rip -e EXECUTABLE [-r RING_FILE] [-t] [-v]\n"
          "       corotracer export FORMAT TRACE [options]   sqlite, postgres, mysql, csv, "
          "perfetto...\n"
          "       corotracer html TRACE [-o dashboard.html]            offline dashboard\n"
          "       corotracer serve TRACE [--addr [ADDR:]PORT]         live dashboard\n"
          "       corotracer serve --db URL [--since 24h]   the fleet's groups in the dashboard\n"
          "       corotracer dump [--pid ENGINE_PID | RUN_DIR]   a flight recorder's window now\n"
          "       corotracer ship FILE... --to URL   traces and dumps to PostgreSQL, once\n"
          "       corotracer fleet --db URL [--since 24h] [--json]   findings across hosts\n"
          "reference spellings: corotracer -n 256 -cmd \"./app args\" -out trace.jsonl\n"
          "                     corotracer -deepdive -out trace.jsonl\n"
          "                     corotracer -html -out trace.jsonl\n"
          "`corotracer COMMAND --help` tells more.\n");
}

/* The reference engine's single-dash flags we accept (value: takes one). */
static const struct {
  const char *flag, *value;
} ref_flags[] = {{"-n", "N"},         {"-cmd", "\"CMD\""},       {"-out", "FILE"},
                 {"-shm", "PATH"},    {"-sock", "PATH"},         {"-o", "FILE"},
                 {"-deepdive", NULL}, {"-export", "FORMAT ..."}, {"-html", NULL}};
#define NREF_FLAGS (sizeof ref_flags / sizeof ref_flags[0])

/* Index of a single-dash reference flag in ref_flags, -1 if unknown; -2 for
 * what is not one (a value, a --long option, `--`). */
static int ref_flag(const char *a) {
  if (a[0] != '-' || a[1] == '-' || !a[1])
    return -2;
  for (size_t k = 0; k < NREF_FLAGS; k++)
    if (strcmp(a, ref_flags[k].flag) == 0)
      return (int)k;
  return -1;
}

/* An unknown reference flag: one line naming it and the ones that exist. */
static int unknown_ref_flag(const char *a) {
  fprintf(stderr, "corotracer: %s: unknown flag; the reference's flags are", a);
  for (size_t k = 0; k < NREF_FLAGS; k++)
    fprintf(stderr, "%s %s%s%s", k ? "," : "", ref_flags[k].flag, ref_flags[k].value ? " " : "",
            ref_flags[k].value ? ref_flags[k].value : "");
  fputs(" (corotracer --help lists the commands)\n", stderr);
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  ct_cli_argv = argv;
  if (strcmp(cmd, "run") == 0)
    return ct_run_main(argc - 1, argv + 1);
  if (strcmp(cmd, "report") == 0)
    return ct_report_main(argc - 1, argv + 1);
  if (strcmp(cmd, "rip") == 0)
    return ct_rip_main(argc - 1, argv + 1);
  if (strcmp(cmd, "export") == 0)
    return ct_export_main(argc - 1, argv + 1);
  if (strcmp(cmd, "html") == 0)
    return ct_html_main(argc - 1, argv + 1);
  if (strcmp(cmd, "serve") == 0)
    return ct_serve_main(argc - 1, argv + 1);
  if (strcmp(cmd, "dump") == 0)
    return ct_dump_main(argc - 1, argv + 1);
  if (strcmp(cmd, "ship") == 0)
    return ct_db_call(ct_db.ship_main, argc - 1, argv + 1);
  if (strcmp(cmd, "fleet") == 0)
    return ct_db_call(ct_db.fleet_main, argc - 1, argv + 1);
  if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0)
    return puts("corotracer " COROTRACER_VERSION) < 0;
  if (cmd[0] == '-') {
    /* The reference engine's single-dash flags: -deepdive selects the report,
     * -export the export (it parses the reference's export flags itself), -html
     * the dashboard,
     * anything else is trace mode. The subcommands parse the flags themselves. */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
      if (strcmp(argv[i], "-export") == 0 || strcmp(argv[i], "--export") == 0)
        return ct_export_main(argc, argv);
      if (strcmp(argv[i], "-html") == 0 || strcmp(argv[i], "--html") == 0) /* -html -out TRACE */
        return ct_html_main(argc, argv);
    }
    int deepdive = 0;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
      int k = ref_flag(argv[i]);
      if (k == -1 && strcmp(argv[i], "-h") != 0)
        return unknown_ref_flag(argv[i]);
      deepdive |= strcmp(argv[i], "-deepdive") == 0 || strcmp(argv[i], "--deepdive") == 0;
      if (k >= 0 && ref_flags[k].value)
        i++; /* skip its value */
    }
    return deepdive ? ct_report_main(argc, argv) : ct_run_main(argc, argv);
  }
  fprintf(stderr, "corotracer: unknown command '%s'\n", cmd);
  usage(stderr);
  return 2;
}
