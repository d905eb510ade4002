/* fleet_serve.c - `corotracer serve --db URL [--since D] [--host H]...
 * [--addr [ADDR:]PORT]`: the fleet's groups (`fleet`'s grouping) as a page of
 * the live view's token-guarded loopback server, each with its dumps; a dump
 * opens in the dashboard of `corotracer serve FILE` (a server of its own for
 * that file) when its file, as shipped, is readable on this host, and
 * otherwise says plainly where the file is (docs/FLEET.md, docs/DASHBOARD.md). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/args.h"
#include "common/commands.h"
#include "html/live.h"
#include "ship/ship.h"

#define OPEN_MAX 8     /* dumps open in a dashboard at once; the oldest closes first */
#define RUNS_SHOWN 100 /* a group's dumps listed on the page */

/* A dump open in a dashboard server of its own. */
struct opened {
  char run[80], host[128];
  struct ct_live *l;
  unsigned long used; /* when it was last asked for (fs->clock) */
};

/* The server's state: read by its thread only, once started. */
struct fleet_serve {
  struct cx_conn c;
  struct ct_fleet_query q;
  char ip[64], me[256]; /* the address served; this host's name */
  struct opened open[OPEN_MAX];
  unsigned long clock;
};

static void usage(FILE *f) {
  fprintf(f, "usage: corotracer serve --db URL [--since DURATION] [--host H]... [--all]\n"
             "                        [--addr [ADDR:]PORT]\n"
             "Serves the findings shipped by `corotracer ship` / `run --ship`, grouped by\n"
             "root cause as `corotracer fleet` groups them, at http://ADDR:PORT/?token=...\n"
             "(default 127.0.0.1:8080; PORT 0 picks a free one); each dump opens in the\n"
             "dashboard when its file is readable on this host. Stop with Ctrl-C.\n"
             "See docs/FLEET.md.\n");
}

/* s as HTML text (also inside a quoted attribute). */
static void html(struct ct_buf *b, const char *s) {
  for (; *s; s++) {
    const char *e = *s == '&'    ? "&amp;"
                    : *s == '<'  ? "&lt;"
                    : *s == '>'  ? "&gt;"
                    : *s == '"'  ? "&quot;"
                    : *s == '\'' ? "&#39;"
                                 : NULL;
    if (e)
      ct_buf_puts(b, e);
    else
      ct_buf_put(b, s, 1);
  }
}

/* s percent-encoded for a query value: unreserved bytes as they are. */
static void url_enc(struct ct_buf *b, const char *s) {
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
        strchr("-._~", ch))
      ct_buf_put(b, s, 1);
    else
      ct_buf_printf(b, "%%%02X", ch);
  }
}

static int hexval(char ch) {
  return ch >= '0' && ch <= '9'   ? ch - '0'
         : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
         : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                  : -1;
}

/* The query parameter name, exactly once, percent-decoded into out[n]:
 * 0, or -EINVAL (missing, repeated, a bad escape, a NUL, too long). */
static int param(const char *q, size_t qn, const char *name, char *out, size_t n) {
  size_t nl = strlen(name);
  int count = 0;
  for (const char *p = q; p && p < q + qn;) {
    const char *amp = memchr(p, '&', (size_t)(q + qn - p)), *e = amp ? amp : q + qn;
    if ((size_t)(e - p) > nl && !memcmp(p, name, nl) && p[nl] == '=') {
      size_t k = 0;
      count++;
      for (const char *v = p + nl + 1; v < e; v++) {
        int ch = (unsigned char)*v;
        if (ch == '%') {
          int hi = v + 2 < e ? hexval(v[1]) : -1, lo = hi >= 0 ? hexval(v[2]) : -1;
          if (lo < 0)
            return -EINVAL;
          ch = hi * 16 + lo;
          v += 2;
        }
        if (!ch || k + 1 >= n)
          return -EINVAL;
        out[k++] = (char)ch;
      }
      out[k] = 0;
    }
    p = amp ? amp + 1 : NULL;
  }
  return count == 1 ? 0 : -EINVAL;
}

/* Row j of runs has group i's signature (NULLs equal). */
static int same_group(PGresult *g, int i, PGresult *runs, int j) {
  for (int c = CT_FG_KIND; c <= CT_FG_EXE; c++)
    if (PQgetisnull(g, i, c) != PQgetisnull(runs, j, c) ||
        strcmp(PQgetvalue(g, i, c), PQgetvalue(runs, j, c)))
      return 0;
  return 1;
}

/* Group i's dumps, newest first, each a link to /run. */
static void group_runs(struct ct_buf *b, const char *token, PGresult *g, int i, PGresult *runs) {
  int shown = 0, more = 0;
  char when[40];
  ct_buf_puts(b, "<tr class=\"dumps\"><td></td><td colspan=\"8\"><ul>\n");
  for (int j = 0; j < PQntuples(runs); j++) {
    if (!same_group(g, i, runs, j))
      continue;
    if (shown++ >= RUNS_SHOWN) {
      more++;
      continue;
    }
    ct_buf_printf(b, "<li><a href=\"/run?token=%s&amp;id=", token);
    url_enc(b, PQgetvalue(runs, j, CT_FR_RUN));
    ct_buf_puts(b, "&amp;host=");
    url_enc(b, PQgetvalue(runs, j, CT_FR_HOST));
    ct_buf_puts(b, "\">");
    html(b, PQgetvalue(runs, j, CT_FR_RUN));
    ct_buf_puts(b, "</a> <span class=\"host\">");
    html(b, PQgetvalue(runs, j, CT_FR_HOST));
    ct_buf_puts(b, "</span>:<span class=\"file\">");
    html(b, PQgetvalue(runs, j, CT_FR_FILE));
    ct_buf_printf(b, "</span> %s</li>\n",
                  ct_fleet_when(PQgetvalue(runs, j, CT_FR_END), when, sizeof when));
  }
  if (more)
    ct_buf_printf(b, "<li>and %d more</li>\n", more);
  ct_buf_puts(b, "</ul></td></tr>\n");
}

/* The page of the groups: one row each (as `fleet` prints them), its dumps
 * under it. */
static void page_groups(struct fleet_serve *fs, const char *token, PGresult *g, PGresult *runs,
                        struct ct_live_reply *r) {
  struct ct_buf *b = &r->body;
  char a[40], z[40];
  ct_buf_printf(
      b,
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>corotracer fleet</title>"
      "<style>body{font:14px sans-serif;margin:1.5em}table{border-collapse:collapse}"
      "td,th{padding:.2em .6em;text-align:left;vertical-align:top}"
      "tr.group{border-top:1px solid #999}ul{margin:0;padding-left:1.2em}"
      ".file{font-family:monospace}</style></head><body>\n"
      "<h1>Fleet: %d finding groups",
      PQntuples(g));
  if (fs->q.since) {
    ct_buf_puts(b, " seen in the last ");
    html(b, fs->q.since);
  }
  ct_buf_puts(b, "</h1>\n<table><tr><th>#</th><th>kind</th><th>site</th><th>executable</th>"
                 "<th>runs</th><th>hosts</th><th>dumps</th><th>first seen</th>"
                 "<th>last seen</th></tr>\n");
  for (int i = 0; i < PQntuples(g); i++) {
    ct_buf_printf(b, "<tr class=\"group\"><td>%d</td><td class=\"kind\">", i + 1);
    html(b, PQgetvalue(g, i, CT_FG_KIND));
    ct_buf_puts(b, "</td><td class=\"site\">");
    html(b, PQgetisnull(g, i, CT_FG_FN) ? "unknown" : PQgetvalue(g, i, CT_FG_FN));
    if (!PQgetisnull(g, i, CT_FG_FILE)) {
      ct_buf_puts(b, " (");
      html(b, PQgetvalue(g, i, CT_FG_FILE));
      ct_buf_printf(b, ":%s)", PQgetvalue(g, i, CT_FG_LINE));
    }
    ct_buf_puts(b, "</td><td class=\"file\">");
    html(b, PQgetvalue(g, i, CT_FG_EXE));
    ct_buf_printf(b,
                  "</td><td class=\"runs\">%s</td><td class=\"hosts\">%s</td>"
                  "<td class=\"dumps\">%s</td><td>%s</td><td>%s</td></tr>\n",
                  PQgetvalue(g, i, CT_FG_RUNS), PQgetvalue(g, i, CT_FG_HOSTS),
                  PQgetvalue(g, i, CT_FG_DUMPS),
                  ct_fleet_when(PQgetvalue(g, i, CT_FG_FIRST), a, sizeof a),
                  ct_fleet_when(PQgetvalue(g, i, CT_FG_LAST), z, sizeof z));
    group_runs(b, token, g, i, runs);
  }
  ct_buf_puts(b, "</table>\n</body></html>\n");
  r->status = "200 OK";
  r->type = "text/html; charset=utf-8";
}

/* The dashboard server of run (on host) at path: one already open, else a
 * new one (the least recently used closed when OPEN_MAX are). NULL on error. */
static struct ct_live *open_run(struct fleet_serve *fs, const char *run, const char *host,
                                const char *path) {
  struct opened *o = &fs->open[0];
  for (int i = 0; i < OPEN_MAX; i++) {
    struct opened *x = &fs->open[i];
    if (x->l && !strcmp(x->run, run) && !strcmp(x->host, host)) {
      x->used = ++fs->clock;
      return x->l;
    }
    if (!x->l || (o->l && x->used < o->used))
      o = x;
  }
  ct_live_stop(o->l);
  o->l = NULL;
  char spec[80];
  snprintf(spec, sizeof spec, "%s:0", fs->ip);
  if (ct_live_start(spec, path, 0, NULL, &o->l))
    return NULL;
  snprintf(o->run, sizeof o->run, "%s", run);
  snprintf(o->host, sizeof o->host, "%s", host);
  o->used = ++fs->clock;
  return o->l;
}

/* /run?id=RUN&host=HOST: a redirect to the dashboard of the dump's file when
 * the file at its shipped path is readable here and is that dump (its hash),
 * else a page saying where the file is. */
static void page_run(struct fleet_serve *fs, PGconn *conn, const char *q, size_t qn,
                     struct ct_live_reply *r) {
  char run[80], host[128], why[512];
  struct ct_ship_facts f = {0};
  struct stat sb;
  PGresult *res = NULL;
  struct ct_live *l;
  if (param(q, qn, "id", run, sizeof run) || param(q, qn, "host", host, sizeof host)) {
    r->status = "400 Bad Request";
    ct_buf_puts(&r->body, "bad request: /run needs one id and one host\n");
    return;
  }
  const char *pv[2] = {run, host};
  res = PQexecParams(conn, "SELECT file, dump_id FROM dumps WHERE run_id = $1 AND host = $2", 2,
                     NULL, pv, NULL, NULL, 0);
  if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
    r->status =
        PQresultStatus(res) == PGRES_TUPLES_OK ? "404 Not Found" : "503 Service Unavailable";
    ct_buf_puts(&r->body, PQresultStatus(res) == PGRES_TUPLES_OK
                              ? "no such shipped run\n"
                              : "the database could not be read (see its log)\n");
    goto out;
  }
  const char *path = PQgetvalue(res, 0, 0), *dump_id = PQgetvalue(res, 0, 1);
  int rc = stat(path, &sb) ? -errno : !S_ISREG(sb.st_mode) ? -EINVAL : 0;
  if (!rc && !(rc = ct_ship_facts_read(path, &f, why, sizeof why)) && strcmp(f.dump_id, dump_id))
    rc = -ESTALE;
  if (!rc && (l = open_run(fs, run, host, path))) {
    r->status = "303 See Other";
    snprintf(r->location, sizeof r->location, "%s", ct_live_url(l));
    ct_buf_puts(&r->body, "the run's dashboard\n");
    goto out;
  }
  r->status = "200 OK";
  r->type = "text/html; charset=utf-8";
  ct_buf_puts(&r->body, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>corotracer "
                        "fleet: a run</title></head><body>\n<p class=\"where\">Run ");
  html(&r->body, run);
  if (strcmp(host, fs->me)) {
    ct_buf_puts(&r->body, ": its file is on another host: <b>");
    html(&r->body, host);
    ct_buf_puts(&r->body, "</b>, at <code>");
    html(&r->body, path);
    ct_buf_puts(&r->body, "</code> (this is ");
    html(&r->body, fs->me);
    ct_buf_puts(&r->body, "). Open it there with <code>corotracer serve FILE</code>.");
  } else {
    ct_buf_puts(&r->body, ": its file <code>");
    html(&r->body, path);
    ct_buf_puts(&r->body, "</code> on this host: ");
    html(&r->body, rc == -ESTALE   ? "another file now (rewritten since it was shipped)"
                   : rc == -EINVAL ? "not a regular file"
                   : rc == -EPROTO ? why
                   : rc            ? strerror(-rc)
                                   : "could not be served (out of memory or ports)");
    ct_buf_puts(&r->body, ".");
  }
  ct_buf_puts(&r->body, "</p>\n</body></html>\n");
out:
  ct_ship_facts_free(&f);
  PQclear(res);
}

/* The server's pages (a ct_live_route_fn): / the groups, /run a dump. Each
 * request has a connection of its own: the database may restart meanwhile. */
static void route(void *ctx, const char *token, const char *path, size_t pn, const char *q,
                  size_t qn, struct ct_live_reply *r) {
  struct fleet_serve *fs = ctx;
  PGconn *conn = NULL;
  PGresult *g = NULL, *runs = NULL;
  char err[1024];
  int root = pn == 1, run = pn == 4 && !memcmp(path, "/run", 4);
  if (!root && !run) {
    ct_buf_puts(&r->body, "not found\n");
    return;
  }
  if (cx_pg_connect(&fs->c, "corotracer serve", &conn, err, sizeof err) ||
      (root && (ct_fleet_groups(conn, &fs->q, 0, &g, err, sizeof err) ||
                ct_fleet_groups(conn, &fs->q, 1, &runs, err, sizeof err)))) {
    r->status = "503 Service Unavailable";
    ct_buf_printf(&r->body, "%s\n", err);
  } else if (root) {
    page_groups(fs, token, g, runs, r);
  } else {
    page_run(fs, conn, q, qn, r);
  }
  PQclear(g);
  PQclear(runs);
  PQfinish(conn);
}

enum { O_HELP = 1, O_ADDR };
static const struct ct_opt serve_opts[] = {
    {"-h --help", O_HELP, 0}, {"--addr --serve", O_ADDR, 1}, CT_FLEET_OPTS, {NULL, 0, 0}};

int ct_fleet_serve_main(int argc, char **argv) {
  struct fleet_serve *fs = calloc(1, sizeof *fs);
  const char *addr = "127.0.0.1:8080", *val;
  int id, status = 2, rc, port;
  struct ct_args it;
  struct ct_live *l = NULL;
  PGconn *conn = NULL;
  char err[1024];
  if (!fs) {
    fprintf(stderr, "corotracer: serve: out of memory\n");
    return 1;
  }
  fs->c.url = getenv("COROTRACER_SHIP_URL");
  ct_args_init(&it, argc, argv, 0);
  while ((id = ct_args_next(&it, serve_opts, &val)) != CT_ARGS_END) {
    if (id == O_HELP) {
      usage(stdout);
      status = 0;
      goto out;
    } else if (id == O_ADDR) {
      addr = val;
    } else if ((status = ct_fleet_opt("serve", id, val, &fs->q, &fs->c))) {
      goto out;
    }
  }
  status = 2;
  if (ct_live_parse_addr(addr, fs->ip, sizeof fs->ip, &port)) {
    fprintf(stderr, "corotracer: --addr: %s: expected [ADDR:]PORT with an IPv4 ADDR\n", addr);
    goto out;
  }
  status = 1;
  /* Said at once when the database cannot be reached, not at the first page. */
  if (cx_pg_connect(&fs->c, "corotracer serve", &conn, err, sizeof err)) {
    fprintf(stderr, "corotracer: serve: %s\n", err);
    goto out;
  }
  if (gethostname(fs->me, sizeof fs->me - 1))
    snprintf(fs->me, sizeof fs->me, "unknown");
  sigset_t set; /* blocked before the threads start, so only sigwait sees them */
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  if ((rc = ct_live_start_routes(addr, route, fs, &l))) {
    fprintf(stderr, "corotracer: --addr %s: %s\n", addr, strerror(-rc));
    goto out;
  }
  fprintf(stderr, "corotracer: the fleet's groups at %s\n", ct_live_url(l));
  int sig;
  sigwait(&set, &sig);
  ct_live_stop(l);
  status = 0;
out:
  for (int i = 0; i < OPEN_MAX; i++)
    ct_live_stop(fs->open[i].l);
  PQfinish(conn);
  ct_buf_free(&fs->q.hosts);
  free(fs);
  return status;
}
