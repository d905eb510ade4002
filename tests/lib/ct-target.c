/* ct-target.c - a scriptable target for the engine's shell tests: it writes
 * events, reports where it is through files, then exits, hangs or crashes.
 *
 *   ct-target run N GAP_US DIR   N events GAP_US apart; DIR/ready after the
 *                                first, DIR/done ("done N") when finished
 *   ct-target hold N DIR         N events 2 ms apart, then DIR/ready, then wait for a signal
 *   ct-target crash segv|abort N N events 2 ms apart, then die of that signal
 *   ct-target idle N SECS DIR    create N coroutines, DIR/ready, sleep SECS, exit
 *   ct-target noinit             never touch the SDK; exit 0
 *   ct-target init               corotracer_init, print "init RC enabled E", 3 events
 *   ct-target quick              create and suspend (sites in this program), then
 *                                _exit(0) at once: no chance for a late maps read
 *   ct-target mkshm FILE N       write a cTP v1 file with N stations (no engine)
 *   ct-target touch DIR          create DIR/ran (proves the target ran)
 *
 * DIR/ready holds "pid P", "shm PATH", "sock PATH" lines (CTP_* as received),
 * written to a temporary name and renamed, so a reader never sees half of it. */
#include <corotracer.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/ctp.h"
#include "ctlib.h"

static void write_file(const char *dir, const char *name, const char *text) {
  char tmp[4096], path[4096];
  snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(tmp, "we");
  if (f == NULL)
    ct_die("%s: %s", tmp, strerror(errno));
  fputs(text, f);
  if (fclose(f) != 0 || rename(tmp, path) != 0)
    ct_die("%s: %s", path, strerror(errno));
}

static void ready(const char *dir) {
  const char *shm = getenv(CTP_ENV_SHM), *sock = getenv(CTP_ENV_SOCK);
  char text[8192];
  snprintf(text, sizeof text, "pid %d\nshm %s\nsock %s\n", (int)getpid(), shm ? shm : "-",
           sock ? sock : "-");
  write_file(dir, "ready", text);
}

/* n events on one coroutine: create, then suspend (fd = i) / resume pairs. */
static corotracer_co *events(uint64_t n, unsigned gap_us, const char *ready_dir) {
  corotracer_co *co = corotracer_create(7, "target", NULL);
  if (ready_dir != NULL)
    ready(ready_dir);
  for (uint64_t i = 1; i < n; i++) {
    if (i % 2)
      corotracer_suspend(co, NULL, COROTRACER_WAIT_FD, i);
    else
      corotracer_resume(co);
    if (gap_us > 0) {
      struct timespec ts = {0, (long)gap_us * 1000};
      while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
      }
    }
  }
  return co;
}

static void mkshm(const char *path, uint32_t n) {
  struct ctp_header h;
  memset(&h, 0, sizeof h);
  h.magic = CTP_MAGIC;
  h.version = CTP_VERSION;
  h.max_stations = n;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || write(fd, &h, sizeof h) != (ssize_t)sizeof h ||
      ftruncate(fd, (off_t)CTP_FILE_SIZE(n)) != 0 || close(fd) != 0)
    ct_die("%s: %s", path, strerror(errno));
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "run") == 0 && argc == 5) {
    uint64_t n = strtoull(argv[2], NULL, 10);
    corotracer_destroy(events(n, (unsigned)atoi(argv[3]), argv[4]));
    char text[64];
    snprintf(text, sizeof text, "done %llu\n", (unsigned long long)n + 1);
    write_file(argv[4], "done", text);
  } else if (strcmp(mode, "hold") == 0 && argc == 4) {
    events(strtoull(argv[2], NULL, 10), 2000, NULL);
    /* A shell starts async children with INT ignored; the signal tests need
     * this process to die of whatever reaches its group. */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    ready(argv[3]);
    for (;;)
      pause();
  } else if (strcmp(mode, "crash") == 0 && argc == 4) {
    events(strtoull(argv[3], NULL, 10), 2000, NULL);
    if (strcmp(argv[2], "abort") == 0)
      abort();
    raise(SIGSEGV);
    return 1;
  } else if (strcmp(mode, "idle") == 0 && argc == 5) {
    unsigned long n = strtoul(argv[2], NULL, 10);
    for (unsigned long i = 1; i <= n; i++)
      corotracer_create(i, "idle", NULL);
    ready(argv[4]);
    struct timespec ts = {atoi(argv[3]), 0};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
  } else if (strcmp(mode, "noinit") == 0 && argc == 2) {
    puts("noinit: not using the SDK");
  } else if (strcmp(mode, "init") == 0 && argc == 2) {
    int rc = corotracer_init();
    printf("init %d enabled %d\n", rc, corotracer_enabled());
    corotracer_destroy(events(2, 0, NULL));
  } else if (strcmp(mode, "quick") == 0 && argc == 2) {
    events(2, 0, NULL);
    _exit(0);
  } else if (strcmp(mode, "mkshm") == 0 && argc == 4) {
    mkshm(argv[2], (uint32_t)strtoul(argv[3], NULL, 10));
  } else if (strcmp(mode, "touch") == 0 && argc == 3) {
    write_file(argv[2], "ran", "ran\n");
  } else {
    fprintf(stderr, "usage: see the top of tests/lib/ct-target.c\n");
    return 2;
  }
  return 0;
}
