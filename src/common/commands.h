/* commands.h - entry points of the corotracer subcommands.
 *
 * Each takes argv as seen by the subcommand: argv[0] is the subcommand name
 * ("run", "report", "rip"), or the program name when the reference engine's
 * single-dash spelling was used (argv[1] is then the first flag). Each returns
 * the process exit status. */
#ifndef CT_COMMON_COMMANDS_H
#define CT_COMMON_COMMANDS_H

int ct_run_main(int argc, char **argv);         /* src/engine */
int ct_report_main(int argc, char **argv);      /* src/analysis */
int ct_rip_main(int argc, char **argv);         /* src/rip */
int ct_export_main(int argc, char **argv);      /* src/export */
int ct_html_main(int argc, char **argv);        /* src/html */
int ct_serve_main(int argc, char **argv);       /* src/html */
int ct_dump_main(int argc, char **argv);        /* src/cli: ask a flight recorder for a dump */
int ct_ship_main(int argc, char **argv);        /* src/ship: traces and dumps to PostgreSQL */
int ct_fleet_main(int argc, char **argv);       /* src/ship: findings grouped across hosts */
int ct_fleet_serve_main(int argc, char **argv); /* src/ship: serve --db, the groups served */

/* Prints "corotracer: CMD: WHAT[: ARG]" on stderr (the convention of
 * docs/CONVENTIONS.md) and returns 2, the exit status of a bad command line.
 * arg may be NULL. */
int ct_usage_error(const char *cmd, const char *what, const char *arg);

#endif
