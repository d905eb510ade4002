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

/* The commands that need a database client (export to SQLite, PostgreSQL or
 * MySQL, ship, fleet, serve --db) are linked into corotracer-db only: the
 * client libraries and their ~25 dependencies cost every start of a binary
 * that links them ~3.4 ms of CPU in the dynamic loader, which `corotracer
 * run` would pay once a traced run (docs/ENGINE.md "Cost"). ct_db holds
 * their entry points: every one set in corotracer-db (src/cli/db_linked.c),
 * every one NULL in corotracer (src/cli/db_none.c), where the caller runs
 * the whole command line again in corotracer-db instead (ct_db_exec). */
struct cx_conn;
struct cx_sink;
typedef int (*ct_db_sink_fn)(const struct cx_conn *c, struct cx_sink **out);
struct ct_db_cmds {
  int (*ship_main)(int argc, char **argv);
  int (*fleet_main)(int argc, char **argv);
  int (*fleet_serve_main)(int argc, char **argv);
  ct_db_sink_fn sqlite_sink, pg_sink, mysql_sink; /* src/export's sinks */
};
extern const struct ct_db_cmds ct_db;

/* main's argv, set once by main before any command runs: what ct_db_exec
 * runs again. */
extern char **ct_cli_argv;

/* Replaces this process with corotracer-db (beside this executable) run
 * with ct_cli_argv, the environment and open fds unchanged. Returns only
 * when that fails: prints one line naming the program it looked for and
 * returns 1. Called before a command opens anything. */
int ct_db_exec(void);

/* fn(argc, argv) when this binary has it (corotracer-db), else ct_db_exec(). */
int ct_db_call(int (*fn)(int argc, char **argv), int argc, char **argv);

/* Prints "corotracer: CMD: WHAT[: ARG]" on stderr (the convention of
 * docs/CONVENTIONS.md) and returns 2, the exit status of a bad command line.
 * arg may be NULL. */
int ct_usage_error(const char *cmd, const char *what, const char *arg);

#endif
