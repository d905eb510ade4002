/* export.h - internal to src/export: the export model (a trace loaded once,
 * with the report's findings and symbolized sites), the tables every format
 * shares (docs/EXPORT.md), and the sink interface the SQL and CSV targets
 * implement. Module code: returns 0 or -errno, never prints. */
#ifndef CT_EXPORT_EXPORT_H
#define CT_EXPORT_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/model.h"
#include "analysis/trace.h"
#include "common/buf.h"

/* Per coroutine of a run (the value of cx_run.co, key probe_id; one row per
 * probe_id; incarnations = creates seen). */
struct cx_coro {
  uint64_t parent, create_site, birth_ts, first_ts, last_ts, last_site;
  uint64_t events, suspends, resumes, wakes, incarnations, lost;
  uint64_t run_ns, suspended_ns;
  uint64_t open_ts; /* while walking: its last resume (running) or suspend (suspended) */
  uint32_t pid;
  uint32_t label; /* offset + 1 into the run's label pool, 0 if none */
  uint32_t destroys;
  uint8_t state; /* enum ct_cstate */
  uint8_t has_parent, has_create_site, has_birth;
  uint8_t woken; /* while walking: a wake came since its last resume or destroy */
};

/* A site of any event (the value of cx_run.sites, key (address, pid)), symbolized. */
struct cx_site {
  struct ct_rsite rs; /* site, pid, sym; count = events at the site */
  uint64_t suspensions;
  uint64_t destroys; /* uses by destroys: when all are, named as the report names a destroyer */
};

/* One run of the trace: from its meta line (or the file's start) to the next
 * run's meta line. `corotracer run --append` writes several into one file. */
struct cx_run {
  char run_id[80], host[128];
  uint64_t last_line;        /* its last line in the file */
  uint64_t nev, skipped;     /* skipped: malformed or torn lines */
  uint64_t mono_ns, wall_ns; /* meta's clock, 0 when absent */
  int has_clock;
  uint64_t hash;       /* FNV-1a of its events, for a run id without meta */
  struct ct_map co;    /* probe_id -> struct cx_coro, by first appearance */
  struct ct_map sites; /* (site, pid) -> struct cx_site */
  struct ct_map tids;  /* tid -> nothing: threads by first appearance */
  /* (probe_id, group) of the wakes never followed by a run of their wakee
   * (group: its resumes + destroys before the wake; Perfetto draws no flow) */
  struct ct_map unflowed;
  struct ct_buf labels; /* label pool: NUL-terminated texts */
  struct ct_state *st;  /* the run's analysis (opaque): rep's symbols and labels live in it */
  struct ct_report rep;
  /* the last run of a binary trace that ends in a corrupt or cut chunk: the
   * reader's reason (the run is loaded up to it); why[0] == 0 in every other run */
  struct ct_read_diag diag;
};

/* The trace read once for the analysis (cx_model_load), and its event lines
 * streamed again on demand (cx_model_events): memory follows the runs,
 * coroutines and sites, never the events. */
struct cx_model {
  const char *path;
  int fd;        /* the trace, seekable (stdin from a pipe: a temporary copy) */
  int64_t start; /* offset of its first byte in fd */
  uint64_t bytes, nev;
  struct cx_run *runs;
  size_t nruns;
  struct ct_read_diag diag; /* a binary trace's corrupt or cut chunk: loaded up to it */
  struct ct_thresholds th;  /* the findings' (export --stuck-ms, ...) */
};

/* Reads the trace at path ('-' = stdin) once: the runs, each with the report's
 * findings, its coroutine summaries and its sites, symbolized. run_id / host
 * override the trace's (NULL: keep; a trace without meta gets a run id hashed
 * from its events and host ""; with several runs, the runs after the first
 * get ID.2, ID.3...). th: the findings' thresholds (NULL: CT_THRESHOLDS_DEFAULT,
 * as `report` judges without options). m is zeroed first; free with
 * cx_model_free, also after a failure. Returns 0, -errno, or -EPROTO when the file holds no trace
 * line
 * (*bad_line: the first offending line). */
int cx_model_load(const char *path, const char *run_id, const char *host,
                  const struct ct_thresholds *th, struct cx_model *m, uint64_t *bad_line);
void cx_model_free(struct cx_model *m);

/* Streams the trace's event lines again, in file order: fn(ctx, run, event)
 * for each, run being the index in m->runs. Stops at fn's first non-zero
 * return and returns it; else 0 or -errno. */
typedef int (*cx_event_fn)(void *ctx, size_t run, const struct ct_event *e);
int cx_model_events(const struct cx_model *m, cx_event_fn fn, void *ctx);

/* Index of a value in its map (entries are dense, in insertion order). */
static inline size_t cx_map_index(const struct ct_map *m, const void *v) {
  return (size_t)((const char *)v - (const char *)ct_map_at(m, 0)) / m->stride;
}
/* The first half of the key of entry i of a map (a coroutine's probe_id, a site's address). */
static inline uint64_t cx_map_key(const struct ct_map *m, size_t i) {
  return *(const uint64_t *)(const void *)(m->ents + i * m->stride);
}
const struct cx_coro *cx_coro_of(const struct cx_run *r, uint64_t probe_id);
const struct cx_site *cx_site_of(const struct cx_run *r, uint32_t pid, uint64_t site);
/* A coroutine's label, NULL if none. */
const char *cx_label(const struct cx_run *r, const struct cx_coro *c);
const char *cx_kind_name(int kind);
/* What every target says of a damaged run (docs/EXPORT.md, "Damaged traces"):
 * the reader's one line (the byte offset and what was wrong) and what the
 * report says of the events lost up to there, into buf; NULL when the run
 * read clean. */
const char *cx_damage(const struct cx_run *r, char *buf, size_t n);
/* Wall-clock ns of a monotonic ts, 0 without the meta clock. */
uint64_t cx_wall_ns(const struct cx_run *r, uint64_t ts);

/* ---- tables ------------------------------------------------------------ */
enum cx_type { CX_INT, CX_TEXT, CX_KEY /* short text in indexes (MySQL: VARCHAR) */ };
struct cx_col {
  const char *name;
  enum cx_type type;
  /* added after the table's first release: a database's older table gets it by
   * ALTER TABLE ... ADD COLUMN (docs/EXPORT.md, "Older databases") */
  int added;
};
enum {
  CX_T_RUNS,
  CX_T_COROUTINES,
  CX_T_EVENTS,
  CX_T_SITES,
  CX_T_FINDINGS,
  CX_T_FINDING_COROS,
  CX_NTABLES
};
struct cx_table {
  const char *name; /* default name */
  const struct cx_col *cols;
  int ncols;
  const char *index[2]; /* columns to index after the load ("a, b"), NULL-terminated */
};
extern const struct cx_table cx_tables[CX_NTABLES];

/* A value: NULL, an integer or a text (s, n: not NUL-terminated). */
struct cx_val {
  int null;
  int64_t i;
  const char *s;
  size_t n;
};
#define CX_MAX_COLS 24

/* Rows of table t, one call of fn per row (vals[ncols], valid during the
 * call). Stops at fn's first non-zero return and returns it. */
typedef int (*cx_row_fn)(void *ctx, int t, const struct cx_val *vals);
int cx_rows(const struct cx_model *m, int t, cx_row_fn fn, void *ctx);
uint64_t cx_row_count(const struct cx_model *m, int t);

/* ---- sinks (SQL databases, CSV) --------------------------------------- */
struct cx_names {
  char *t[CX_NTABLES]; /* table names actually used */
};

/* A target. Every function returns 0 or -errno (-EIO with err filled for a
 * database's own error). The driver calls begin, then for each table
 * table_begin, row..., table_end, then commit; abort on any failure. */
struct cx_sink {
  const char *what; /* "sqlite", ... */
  /* begin also deletes the old rows of each run of m (its run_id, host) in every table */
  int (*begin)(struct cx_sink *s, const struct cx_model *m, const struct cx_names *n);
  int (*table_begin)(struct cx_sink *s, int t);
  int (*row)(struct cx_sink *s, int t, const struct cx_val *v);
  int (*table_end)(struct cx_sink *s, int t);
  int (*commit)(struct cx_sink *s);
  void (*abort)(struct cx_sink *s); /* roll back (nothing of this run is kept), close */
  void (*free)(struct cx_sink *s);  /* after commit or abort; err stays readable until then */
  char err[512];
};

/* A target's struct cx_sink, named what: its functions are the static
 * prefix_begin, prefix_table_begin, prefix_row, prefix_table_end,
 * prefix_commit, prefix_abort and prefix_free of the target's file. */
#define CX_SINK_OPS(what_, prefix)                                                                 \
  ((struct cx_sink){.what = what_,                                                                 \
                    .begin = prefix##_begin,                                                       \
                    .table_begin = prefix##_table_begin,                                           \
                    .row = prefix##_row,                                                           \
                    .table_end = prefix##_table_end,                                               \
                    .commit = prefix##_commit,                                                     \
                    .abort = prefix##_abort,                                                       \
                    .free = prefix##_free})

/* Connection settings from the command line; NULL = library default or environment. */
struct cx_conn {
  const char *out; /* sqlite file, csv directory, jsonl/perfetto output */
  const char *host, *port, *user, *dbname, *socket, *sslmode, *password;
  const char *url; /* PostgreSQL: a connection URI or conninfo, before the options (ship, fleet) */
};

/* Progress: called with rows written so far (the driver throttles nothing). */
typedef void (*cx_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* Runs a sink over every table; counts[t] = rows written. On failure the sink
 * is aborted (nothing committed) and s->err says why. */
int cx_emit(struct cx_sink *s, const struct cx_model *m, const struct cx_names *n,
            uint64_t counts[CX_NTABLES], cx_progress_fn prog, void *pctx);

/* The targets (export_sqlite.c, export_pg.c, export_mysql.c, export_csv.c):
 * 0 with *out (nothing opened yet: begin connects), or -ENOMEM. c (kept, not
 * copied) names the database; sqlite and csv need c->out (the CLI checks). */
int cx_sqlite_sink(const struct cx_conn *c, struct cx_sink **out);
int cx_pg_sink(const struct cx_conn *c, struct cx_sink **out);
int cx_mysql_sink(const struct cx_conn *c, struct cx_sink **out);
int cx_csv_sink(const struct cx_conn *c, struct cx_sink **out);

/* Streams (export_jsonl.c, export_perfetto.c): write to f, return 0 or -errno.
 * rows: lines / packets written. */
int cx_write_jsonl(FILE *f, const struct cx_model *m, uint64_t *rows, cx_progress_fn prog,
                   void *pctx);
int cx_write_perfetto(FILE *f, const struct cx_model *m, uint64_t *rows, cx_progress_fn prog,
                      void *pctx);
/* jsonl-v1: event lines only, reference keys, straight from the trace file
 * (no model). *rows: lines written, *skipped: records and malformed lines.
 * A binary trace's bad or cut chunk ends it, its reason in *diag (the lines
 * before it written); -EPROTO when no line made it a trace (ct_line_is_trace). */
int cx_write_jsonl_v1(int in_fd, FILE *f, uint64_t *rows, uint64_t *skipped,
                      struct ct_read_diag *diag);
/* The trace on in_fd, binary or JSONL, as the JSONL trace format on out_fd
 * (export_ctrace.c): *rows lines. A corrupt or cut binary trace: what comes
 * before it is written, the reason in *diag. 0 or -errno; -EPROTO when no
 * line made it a trace (ct_line_is_trace). */
int cx_write_jsonl_trace(int in_fd, int out_fd, uint64_t *rows, struct ct_read_diag *diag);

/* Hex address as the trace writes it: "0x" + 16 digits, into buf[19]. */
size_t cx_hex(uint64_t v, char *buf);

#endif
