/* export_pg.h - the PostgreSQL target's pieces other modules reuse (src/ship:
 * `corotracer ship` and `fleet`): one way to connect, one scrubber of
 * passwords, the sink with more rows in its transaction. Returns 0 or -errno. */
#ifndef CT_EXPORT_PG_H
#define CT_EXPORT_PG_H

#include <libpq-fe.h>

#include "export/export.h"

/* Connects as the export does: c->url first (a postgres:// URI or a conninfo
 * string, expanded by libpq), then the options, then libpq's environment and
 * files (PGHOST, PGPASSWORD, PGPASSFILE, ~/.pgpass, PGSSLMODE...); TLS as
 * libpq negotiates it. 0 with *out, or -EIO with one line in err (no password). */
int cx_pg_connect(const struct cx_conn *c, const char *app, PGconn **out, char *err, size_t n);

/* Replaces in msg each occurrence of the password conn used (PQpass) by
 * "***": a server or libpq message never shows it. conn may be NULL. */
void cx_pg_scrub(const PGconn *conn, char *msg);

/* Called in the export's transaction after the tables' rows, before COMMIT:
 * 0 to commit, or -errno with one line in err (the export then rolls back). */
typedef int (*cx_pg_tx_fn)(void *ctx, PGconn *conn, char *err, size_t n);

/* cx_pg_sink with before_commit (NULL: none) run in its transaction. */
int cx_pg_sink_tx(const struct cx_conn *c, cx_pg_tx_fn before_commit, void *ctx,
                  struct cx_sink **out);

#endif
