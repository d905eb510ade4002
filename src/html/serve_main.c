/* serve_main.c - `corotracer serve TRACE [--addr [ADDR:]PORT]`: the dashboard
 * of a trace file over HTTP on a loopback address, live while the file grows
 * (another engine writing it), until SIGINT or SIGTERM. `serve --db URL`
 * serves the fleet's groups instead (src/ship/fleet_serve.c). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/commands.h"
#include "html/live.h"

static void usage(FILE *f) {
  fprintf(f, "usage: corotracer serve TRACE [--addr [ADDR:]PORT]\n"
             "       corotracer serve --db URL ... (the fleet's groups: serve --db --help)\n"
             "Serves the dashboard of TRACE at http://ADDR:PORT/?token=... (default\n"
             "127.0.0.1:8080; PORT 0 picks a free one), following the file while it grows.\n"
             "The URL with its token is printed at start; requests without it get 403.\n"
             "Stop with Ctrl-C. See docs/DASHBOARD.md.\n");
}

int ct_serve_main(int argc, char **argv) {
  const char *trace = NULL, *addr = "127.0.0.1:8080";
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
    if (!strcmp(argv[i], "--db") || !strncmp(argv[i], "--db=", 5))
      return ct_fleet_serve_main(argc, argv); /* the fleet's groups (src/ship) */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(a, "--addr") || !strcmp(a, "--serve")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "corotracer: %s: needs a value ([ADDR:]PORT)\n", a);
        return 2;
      }
      addr = argv[++i];
    } else if (a[0] == '-') {
      fprintf(stderr, "corotracer: serve: unknown option: %s\n", a);
      return 2;
    } else if (trace) {
      fprintf(stderr, "corotracer: serve: more than one trace given: %s\n", a);
      return 2;
    } else {
      trace = a;
    }
  }
  if (!trace) {
    fprintf(stderr,
            "corotracer: serve: no trace given (corotracer serve TRACE [--addr [ADDR:]PORT])\n");
    return 2;
  }
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
  int rc = ct_live_start(addr, trace, 0, &l);
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
