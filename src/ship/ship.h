/* ship.h - internal to src/ship: shipping traces and flight dumps into
 * PostgreSQL through the export (docs/FLEET.md), the local spool that keeps
 * them while the database is away, and the fleet's tables. Module code:
 * returns 0 or -errno, never prints. */
#ifndef CT_SHIP_SHIP_H
#define CT_SHIP_SHIP_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "export/export.h"
#include "export/export_pg.h"

/* What a shipped file adds to the export's tables: the `dumps` row. */
struct ct_ship_facts {
  char trace_run_id[80], host[128]; /* the trace's meta (its first run) */
  char dump_id[17];                 /* FNV-1a 64 of the file's bytes, hex */
  char *command;                    /* meta's command, its JSON array as written; NULL if none */
  char *executable;                 /* the first module line's path; NULL if none */
  const char *file;                 /* the path shipped (absolute) */
  uint64_t file_bytes;
};

/* The file's facts: hash, size, and from its first lines the meta and first
 * module. 0, -errno, or -EPROTO (no meta line: not our engine's trace; why
 * says so). Free with ct_ship_facts_free. */
int ct_ship_facts_read(const char *path, struct ct_ship_facts *f, char *why, size_t n);
void ct_ship_facts_free(struct ct_ship_facts *f);

/* The run id every table gets for run i of a shipped file: the trace's run id
 * "/" its dump id (a flight recorder's dumps share the trace's run id), into
 * buf[80]. */
void ct_ship_run_id(const char *trace_run_id, const char *dump_id, size_t i, char *buf);

/* 1 when (trace_run_id, host, dump_id) is in `dumps`, 0 when not (or no
 * table yet), -EIO with err. */
int ct_ship_shipped(PGconn *conn, const struct ct_ship_facts *f, char *err, size_t n);

/* What ct_ship_tx needs: the dump's facts and the model exported. */
struct ct_ship_tx {
  const struct ct_ship_facts *f;
  const struct cx_model *m;
};
/* A cx_pg_tx_fn (ctx: struct ct_ship_tx): brings the fleet's tables to the
 * current version (migrations), replaces the `dumps` and `fleet_findings`
 * rows of each run of m, in the export's transaction. */
int ct_ship_tx(void *ctx, PGconn *conn, char *err, size_t n);

/* ---- the spool (spool.c) -------------------------------------------------- */
/* Opens (creates, 0700) the spool directory: refused (-EPERM) when it is not
 * ours or others can enter it. 0 with *dirfd. */
int ct_spool_open(const char *dir, int *dirfd);
/* Queues the file at path (a hard link, a copy across file systems) under a
 * name that sorts by when it came. -ENOSPC when the spool holds max entries
 * already (the dump is not queued; ct_spool_dropped counts it). */
int ct_spool_add(int dirfd, const char *path, unsigned max);
/* Dumps refused by a full spool so far. */
uint64_t ct_spool_dropped(int dirfd);
/* The entries, oldest first: a malloc'd array of malloc'd names (*n). */
int ct_spool_list(int dirfd, char ***names, size_t *n);
void ct_spool_list_free(char **names, size_t n);

/* ---- the fleet's grouping (fleet_main.c): `fleet` and `serve --db` ------- */
/* Which findings: seen since (wall ns, 0: all; since: as given, NULL: all),
 * on these hosts (newline-separated, NUL-terminated; empty: all), info too. */
struct ct_fleet_query {
  uint64_t since_ns;
  const char *since;
  struct ct_buf hosts;
  int all;
};
/* The options `fleet` and `serve --db` share, for their ct_opt tables. */
enum { CT_FO_ALL = 100, CT_FO_DB, CT_FO_SINCE, CT_FO_HOST };
#define CT_FLEET_OPTS                                                                              \
  {"--all", CT_FO_ALL, 0}, {"--db --to", CT_FO_DB, 1}, {"--since", CT_FO_SINCE, 1}, {              \
    "--host", CT_FO_HOST, 1                                                                        \
  }
/* Takes what ct_args_next gave (id, val) for cmd: --all, --db (into c),
 * --since, --host (into q; free q->hosts when done); 0, or any other id (an
 * error, or an option not of these) said in one line: 2 (usage), 1 (out of
 * memory). */
int ct_fleet_opt(const char *cmd, int id, const char *val, struct ct_fleet_query *q,
                 struct cx_conn *c);
/* The columns of a group: its signature, then its counts and worst example. */
enum {
  CT_FG_KIND,
  CT_FG_FN,
  CT_FG_FILE,
  CT_FG_LINE,
  CT_FG_EXE,
  CT_FG_RUNS,
  CT_FG_HOSTS,
  CT_FG_DUMPS,
  CT_FG_FIRST,
  CT_FG_LAST,
  CT_FG_WORST_RUN,
  CT_FG_WORST_DUMP,
  CT_FG_WORST_NS,
  CT_FG_HOST_JSON,
  CT_FG_SEV
};
/* ... and of a group's dump (runs), after its signature (CT_FG_KIND..EXE). */
enum { CT_FR_RUN = CT_FG_EXE + 1, CT_FR_HOST, CT_FR_FILE, CT_FR_END };
/* runs 0: the groups of q's findings, one row per signature, most hosts
 * first; runs 1: their dumps, one row per (signature, dump), newest first.
 * No fleet table yet: no row. 0 with *out (PQclear it), or -EIO with one
 * line in err (the password masked). */
int ct_fleet_groups(PGconn *conn, const struct ct_fleet_query *q, int runs, PGresult **out,
                    char *err, size_t n);
/* A wall-clock ns (as text; empty: unknown) as "2026-11-27 21:03:04Z" in buf. */
const char *ct_fleet_when(const char *ns, char *buf, size_t n);

#endif
