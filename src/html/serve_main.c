/* serve_main.c - `corotracer serve TRACE [--addr [ADDR:]PORT]`: the dashboard
 * of a trace file over HTTP on a loopback address, live while the file grows
 * (another engine writing it), until SIGINT or SIGTERM. `serve --db URL`
 * serves the fleet's groups instead (src/ship/fleet_serve.c). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/defaults.h"
#include "common/args.h"
#include "common/commands.h"
#include "html/live.h"

static void usage(FILE *f) {
  fprintf(f, "usage: corotracer serve TRACE [--addr [ADDR:]PORT] [--stuck-ms MS]\n"
             "                        [--runnable-ms MS] [--blocker-ms MS]\n"
             "       corotracer serve --db URL ... (the fleet's groups: serve --db --help)\n"
             "Serves the dashboard of TRACE at http://ADDR:PORT/?token=... (default\n"
             "127.0.0.1:8080; PORT 0 picks a free one), following the file while it grows.\n"
             "The URL with its token is printed at start; requests without it get 403.\n"
             "Stop with Ctrl-C. See docs/DASHBOARD.md.\n"
             "The findings' thresholds, as `corotracer report`'s:\n" CT_THRESHOLDS_USAGE);
}

enum { O_HELP = 1, O_ADDR };
static const struct ct_opt serve_opts[] = {
    {"-h --help", O_HELP, 0}, {"--addr --serve", O_ADDR, 1}, CT_ARGS_THRESHOLD_OPTS, {NULL, 0, 0}};

/* Returns -1 when parsed, else the exit status (0 for --help). */
static int parse(int argc, char **argv, const char **trace, const char **addr,
                 struct ct_thresholds *th) {
  struct ct_args it;
  const char *val;
  char why[128];
  int id, rc;
  ct_args_init(&it, argc, argv, 0);
  while ((id = ct_args_next(&it, serve_opts, &val)) != CT_ARGS_END) {
    if ((rc = ct_args_threshold(th, id, val, why, sizeof why)) <= 0) {
      if (rc)
        return ct_usage_error("serve", why, NULL);
    } else if (id == O_HELP) {
      usage(stdout);
      return 0;
    } else if (id == O_ADDR) {
      *addr = val;
    } else if (id == CT_ARGS_NO_VALUE) {
      return ct_usage_error("serve", "option needs a value ([ADDR:]PORT)", val);
    } else if (id != CT_ARGS_POSITIONAL) {
      return ct_usage_error("serve", "unknown option", val);
    } else if (*trace) {
      return ct_usage_error("serve", "more than one trace given", val);
    } else {
      *trace = val;
    }
  }
  if (!*trace)
    return ct_usage_error("serve", "no trace given (corotracer serve TRACE [--addr [ADDR:]PORT])",
                          NULL);
  return -1;
}

int ct_serve_main(int argc, char **argv) {
  const char *trace = NULL, *addr = "127.0.0.1:8080";
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
    if (!strcmp(argv[i], "--db") || !strncmp(argv[i], "--db=", 5))
      return ct_db_call(ct_db.fleet_serve_main, argc, argv); /* the fleet's groups (src/ship) */
  struct ct_thresholds th = CT_THRESHOLDS_DEFAULT;
  int status = parse(argc, argv, &trace, &addr, &th);
  if (status >= 0)
    return status;
  struct stat sb;
  if (stat(trace, &sb)) {
    fprintf(stderr, "corotracer: %s: %s\n", trace, strerror(errno));
    return 2;
  }
  /* Blocked before the thread starts, so only sigwait sees them. */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  struct ct_live *l;
  int rc = ct_live_start(addr, trace, 0, &th, &l);
  if (rc == -EINVAL) {
    fprintf(stderr, "corotracer: --addr: %s: expected [ADDR:]PORT with an IPv4 ADDR\n", addr);
    return 2;
  }
  if (rc) {
    fprintf(stderr, "corotracer: --addr %s: %s\n", addr, strerror(-rc));
    return 1;
  }
  fprintf(stderr, "corotracer: dashboard of %s at %s\n", trace, ct_live_url(l));
  int sig;
  sigwait(&set, &sig);
  ct_live_stop(l);
  return 0;
}
