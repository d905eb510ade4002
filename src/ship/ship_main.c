/* ship_main.c - `corotracer ship FILE... --to URL` and `ship --spool DIR`:
 * each trace or flight dump exported into PostgreSQL with its run facts
 * (docs/FLEET.md), once (a file already shipped is recognised by its run id,
 * host and hash); the spool drained oldest first, each entry removed only
 * after its export committed, retried while the database is away. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/args.h"
#include "common/commands.h"
#include "export/export_sql.h"
#include "ship/ship.h"

#define SPOOL_MAX_DEFAULT 64u

struct opts {
  struct cx_conn conn;
  const char *spool, *add;
  unsigned spool_max;
  double wait_s;
  int quiet, detach;
};

static void usage(FILE *f) {
  fprintf(f, "usage: corotracer ship FILE... [--to URL] [--spool DIR]\n"
             "       corotracer ship --spool DIR [--to URL] [--wait SECONDS]\n"
             "Exports each trace or flight dump into PostgreSQL with its findings, sites,\n"
             "coroutines and run facts, once: a file already shipped adds nothing.\n"
             "  --to URL        postgres://... or a conninfo (else $COROTRACER_SHIP_URL, else\n"
             "                  libpq's environment: PGHOST, PGPASSFILE, ~/.pgpass...)\n"
             "  --spool DIR     a file the database cannot take now waits there (0700);\n"
             "                  without FILEs: ship what it holds, oldest first\n"
             "  --spool-max N   entries the spool holds at most (64; beyond: counted, dropped)\n"
             "  --wait SECONDS  retry an unreachable database that long (0: once)\n"
             "  --add FILE      queue FILE in the spool first  --detach  in the background\n"
             "  -q              no line per file\n"
             "Passwords: the URL, PGPASSFILE or libpq's environment; never printed.\n"
             "See docs/FLEET.md.\n");
}

enum { O_HELP = 1, O_QUIET, O_DETACH, O_TO, O_SPOOL, O_SPOOL_MAX, O_WAIT, O_ADD };
static const struct ct_opt ship_opts[] = {
    {"-h --help", O_HELP, 0}, {"-q --quiet", O_QUIET, 0}, {"--detach", O_DETACH, 0},
    {"--to", O_TO, 1},        {"--spool", O_SPOOL, 1},    {"--spool-max", O_SPOOL_MAX, 1},
    {"--wait", O_WAIT, 1},    {"--add", O_ADD, 1},        {NULL, 0, 0}};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

/* Exports one file: 0 shipped, 1 shipped before, -EIO the database failed
 * (worth a retry), another -errno the file itself (bad input: why). path:
 * the bytes; shown: the path the dumps row records. */
static int ship_one(const struct opts *o, const char *path, const char *shown, char *why,
                    size_t n) {
  struct ct_ship_facts f;
  struct cx_model m;
  struct cx_names names = {0};
  struct cx_sink *sink = NULL;
  PGconn *conn = NULL;
  uint64_t counts[CX_NTABLES], bad_line = 0;
  char abs[PATH_MAX];
  memset(&m, 0, sizeof m);
  memset(&f, 0, sizeof f);
  /* the database first: while it is away, the file is not even read */
  int rc = cx_pg_connect(&o->conn, "corotracer ship", &conn, why, n);
  if (rc || (rc = ct_ship_facts_read(path, &f, why, n)))
    goto out;
  f.file = realpath(shown, abs) ? abs : shown;
  if ((rc = ct_ship_shipped(conn, &f, why, n)))
    goto out; /* 1: shipped before */
  PQfinish(conn);
  conn = NULL;
  if ((rc = cx_model_load(path, NULL, NULL, NULL, &m, &bad_line))) {
    snprintf(why, n, "%s", m.diag.why[0] ? m.diag.why : strerror(-rc));
    rc = rc == -EIO ? -EINVAL : rc; /* a file's error: not the database's */
    goto out;
  }
  for (size_t i = 0; i < m.nruns; i++)
    ct_ship_run_id(f.trace_run_id, f.dump_id, i, m.runs[i].run_id);
  struct ct_ship_tx tx = {.f = &f, .m = &m};
  if ((rc = cx_names_init(&names, NULL, NULL)) ||
      (rc = cx_pg_sink_tx(&o->conn, ct_ship_tx, &tx, &sink)))
    goto out;
  if ((rc = cx_emit(sink, &m, &names, counts, NULL, NULL)))
    snprintf(why, n, "%s", sink->err[0] ? sink->err : strerror(-rc));
  else if (!o->quiet)
    fprintf(stderr, "corotracer: ship: %s: shipped as run %s (host %s, %zu findings)\n", shown,
            m.runs[0].run_id, m.runs[0].host, m.nruns ? m.runs[0].rep.nf : 0);
out:
  if (rc == -ENOMEM)
    snprintf(why, n, "out of memory");
  else if (rc < 0 && rc != -EIO && !why[0])
    snprintf(why, n, "%s", strerror(-rc));
  if (sink)
    sink->free(sink);
  PQfinish(conn);
  cx_names_free(&names);
  cx_model_free(&m);
  ct_ship_facts_free(&f);
  return rc;
}

/* The spool's default, ${XDG_STATE_HOME:-~/.local/state}/corotracer/spool
 * (its parents made 0700 as needed), into buf. */
static const char *default_spool(char *buf, size_t n) {
  const char *st = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
  if (st && *st)
    snprintf(buf, n, "%s/corotracer/spool", st);
  else
    snprintf(buf, n, "%s/.local/state/corotracer/spool", home ? home : ".");
  for (char *p = buf + 1; (p = strchr(p, '/')); p++) {
    *p = 0;
    mkdir(buf, 0700);
    *p = '/';
  }
  return buf;
}

/* Ships what the spool holds, oldest first, one shipper at a time (a lock
 * file: a second waits, then finds what the first left). An unreachable
 * database is retried for o->wait_s; a file the export refuses is set aside
 * (renamed .bad-NAME). Returns the exit status: 0 when the spool is empty. */
static int drain(const struct opts *o, const char *dir, int dirfd) {
  int lock = openat(dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600), status = 0, said = 0;
  double deadline = now_s() + o->wait_s, nap = 0.2;
  char why[1024], path[PATH_MAX], shown[PATH_MAX];
  while (lock >= 0 && flock(lock, LOCK_EX) < 0 && errno == EINTR) {
  }
  for (int progress = 1; progress;) {
    char **names;
    size_t k, i;
    int rc = ct_spool_list(dirfd, &names, &k);
    if (rc || !k) {
      status = rc ? 1 : 0;
      if (rc)
        fprintf(stderr, "corotracer: ship: %s: %s\n", dir, strerror(-rc));
      ct_spool_list_free(names, k);
      break;
    }
    for (i = 0, rc = 0, progress = 0; i < k && rc != -EIO; i++) {
      snprintf(path, sizeof path, "%s/%s", dir, names[i]);
      char side[PATH_MAX + 8];
      snprintf(side, sizeof side, "%s.path", path);
      FILE *sf = fopen(side, "re");
      if (!sf || !fgets(shown, sizeof shown, sf))
        snprintf(shown, sizeof shown, "%s", path);
      shown[strcspn(shown, "\n")] = 0;
      if (sf)
        fclose(sf);
      why[0] = 0;
      rc = ship_one(o, path, shown, why, sizeof why);
      if (rc != -EIO) {
        progress = 1;
        if (rc < 0) { /* the file's fault: kept aside, never retried */
          char bad[300];
          snprintf(bad, sizeof bad, ".bad-%s", names[i]);
          fprintf(stderr, "corotracer: ship: %s: %s (set aside as %s/%s)\n", shown, why, dir, bad);
          renameat(dirfd, names[i], dirfd, bad);
        } else {
          unlinkat(dirfd, names[i], 0);
        }
        snprintf(side, sizeof side, "%s.path", names[i]);
        unlinkat(dirfd, side, 0);
      }
    }
    ct_spool_list_free(names, k);
    if (rc != -EIO)
      continue; /* look again: more may have come meanwhile (none: done) */
    progress = 1;
    if (!said++ || now_s() >= deadline)
      fprintf(stderr, "corotracer: ship: %s; %zu dumps wait in %s%s\n", why, k - i + 1, dir,
              now_s() < deadline ? ", retrying" : "");
    if (now_s() >= deadline) {
      status = 1;
      break;
    }
    sleep_s(nap);
    nap = nap < 5 ? nap * 2 : 5;
  }
  if (lock >= 0)
    close(lock);
  return status;
}

/* Queues path in the spool with its path beside it (NAME.path). */
static int spool_add(const struct opts *o, const char *dir, int dirfd, const char *path) {
  int rc = ct_spool_add(dirfd, path, o->spool_max);
  if (rc == -ENOSPC)
    fprintf(stderr,
            "corotracer: ship: %s: spool %s full (%u entries): not queued (%" PRIu64
            " dropped so far)\n",
            path, dir, o->spool_max, ct_spool_dropped(dirfd));
  else if (rc)
    fprintf(stderr, "corotracer: ship: %s: cannot queue in %s: %s\n", path, dir, strerror(-rc));
  return rc;
}

/* The detached shipper's output: its lines to DIR/log, nothing on the
 * engine's stdout and stderr, which it would otherwise hold open for as long
 * as it retries (a `$(corotracer run ...)` or a pipe would wait for it). */
static void detach_output(int dirfd) {
  int log = openat(dirfd, "log", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(log >= 0 ? log : null, STDERR_FILENO);
    close(null);
  }
  if (log >= 0)
    close(log);
}

/* Returns -1 when parsed, else the exit status; files[] gets the FILEs. */
static int parse(int argc, char **argv, struct opts *o, const char **files, int *nfiles) {
  struct ct_args it;
  const char *val;
  char *end;
  int id;
  ct_args_init(&it, argc, argv, 0);
  while ((id = ct_args_next(&it, ship_opts, &val)) != CT_ARGS_END) {
    if (id == O_HELP) {
      usage(stdout);
      return 0;
    } else if (id == O_QUIET) {
      o->quiet = 1;
    } else if (id == O_DETACH) {
      o->detach = 1;
    } else if (id == O_TO) {
      o->conn.url = val;
    } else if (id == O_SPOOL) {
      o->spool = val;
    } else if (id == O_ADD) {
      o->add = val;
    } else if (id == O_SPOOL_MAX) {
      unsigned long v = strtoul(val, &end, 10);
      if (*end || !v || v > 1000000)
        return ct_usage_error("ship", "--spool-max: not a count (1..1000000)", val);
      o->spool_max = (unsigned)v;
    } else if (id == O_WAIT) {
      o->wait_s = strtod(val, &end);
      if (*end || !(o->wait_s >= 0) || o->wait_s > 1e7)
        return ct_usage_error("ship", "--wait: not a number of seconds", val);
    } else if (id == CT_ARGS_POSITIONAL) {
      files[(*nfiles)++] = val;
    } else {
      return ct_usage_error("ship",
                            id == CT_ARGS_NO_VALUE ? "option needs a value"
                                                   : "unknown option (see corotracer ship --help)",
                            val);
    }
  }
  if (!*nfiles && !o->spool && !o->add)
    return ct_usage_error("ship", "nothing to ship (FILE... or --spool DIR)", NULL);
  return -1;
}

int ct_ship_main(int argc, char **argv) {
  struct opts o = {.spool_max = SPOOL_MAX_DEFAULT};
  const char **files = calloc((size_t)argc + 1, sizeof *files);
  char spool[PATH_MAX], why[1024];
  int nfiles = 0, status, dirfd = -1, rc;
  if (!files) {
    fprintf(stderr, "corotracer: ship: out of memory\n");
    return 1;
  }
  if ((status = parse(argc, argv, &o, files, &nfiles)) >= 0)
    goto out;
  if (!o.conn.url && getenv("COROTRACER_SHIP_URL"))
    o.conn.url = getenv("COROTRACER_SHIP_URL");
  if (o.detach) { /* the engine's shipper: its own session, the engine goes on */
    pid_t pid = fork();
    if (pid != 0) {
      status = pid < 0 ? 1 : 0;
      goto out;
    }
    setsid();
    setpriority(PRIO_PROCESS, 0, 19); /* the program and the engine come first */
  }
  status = 0;
  if (o.spool || o.add) {
    const char *dir = o.spool ? o.spool : default_spool(spool, sizeof spool);
    if ((rc = ct_spool_open(dir, &dirfd))) {
      fprintf(stderr, "corotracer: ship: %s: %s\n", dir,
              rc == -EPERM ? "not a private spool (must be ours, mode 0700)" : strerror(-rc));
      status = 1;
      goto out;
    }
    o.spool = dir;
  }
  if (o.detach && dirfd >= 0)
    detach_output(dirfd);
  if (o.add && spool_add(&o, o.spool, dirfd, o.add))
    status = 1;
  for (int i = 0; i < nfiles; i++) {
    why[0] = 0;
    rc = ship_one(&o, files[i], files[i], why, sizeof why);
    if (rc == -EIO && dirfd >= 0 && !spool_add(&o, o.spool, dirfd, files[i])) {
      fprintf(stderr, "corotracer: ship: %s: %s; queued in %s\n", files[i], why, o.spool);
    } else if (rc < 0) {
      fprintf(stderr, "corotracer: ship: %s: %s\n", files[i], why);
      status = status ? status : rc == -EIO ? 1 : 2;
    } else if (rc == 1 && !o.quiet) {
      fprintf(stderr, "corotracer: ship: %s: shipped before: nothing added\n", files[i]);
    }
  }
  if (!nfiles && dirfd >= 0 && drain(&o, o.spool, dirfd))
    status = 1;
out:
  if (dirfd >= 0)
    close(dirfd);
  free(files);
  return status;
}
