/* dump_main.c - `corotracer dump`: ask a flight recorder (`run --flight`) for
 * a dump, by its pid or its runtime directory; the engine writes the dump and
 * prints its line (docs/FLIGHT.md). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/args.h"
#include "common/commands.h"

enum { O_PID = 1, O_HELP };
static const struct ct_opt dump_opts[] = {
    {"-p --pid", O_PID, 1}, {"-h --help", O_HELP, 0}, {NULL, 0, 0}};

static void usage(FILE *f) {
  fprintf(f, "usage: corotracer dump [--pid ENGINE_PID | RUN_DIR]\n"
             "Asks a flight recorder (corotracer run --flight) to write its window now, as\n"
             "SIGUSR1 to the engine does. ENGINE_PID: the engine's pid; RUN_DIR: its runtime\n"
             "directory (the one holding its socket), or the --sock path it was given.\n"
             "Without either: the one flight recorder of this user running this binary.\n");
}

/* 1 when pid runs this very binary as `run ... --flight ...`. */
static int is_flight_engine(long pid) {
  char path[64], buf[8192];
  struct stat a, b;
  snprintf(path, sizeof path, "/proc/%ld/exe", pid);
  if (stat(path, &a) || stat("/proc/self/exe", &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
    return 0;
  snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n;
  do
    n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  while (n < 0 && errno == EINTR);
  if (fd >= 0)
    close(fd);
  if (n <= 0)
    return 0;
  buf[n] = 0;
  /* Its options come before "--" or the program: look there only. */
  for (char *p = buf; p < buf + n; p += strlen(p) + 1) {
    if (!strcmp(p, "--"))
      break;
    if (!strcmp(p, "--flight") || !strncmp(p, "--flight=", 9))
      return 1;
  }
  return 0;
}

/* The inode of the listening unix socket bound at path (/proc/net/unix), 0
 * when none. */
static unsigned long socket_inode(const char *path) {
  FILE *f = fopen("/proc/net/unix", "re");
  char line[4352];
  unsigned long ino = 0;
  if (!f)
    return 0;
  while (!ino && fgets(line, sizeof line, f)) {
    unsigned long i;
    int at = 0;
    line[strcspn(line, "\n")] = 0;
    if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %n", &i, &at) == 1 && at &&
        !strcmp(line + at, path))
      ino = i;
  }
  fclose(f);
  return ino;
}

/* The process holding socket inode ino (0: any flight engine of this binary);
 * -1 when none, -2 when more than one. */
static long find_engine(unsigned long ino) {
  DIR *d = opendir("/proc");
  struct dirent *e;
  long found = -1;
  char want[64];
  snprintf(want, sizeof want, "socket:[%lu]", ino);
  while (d && (e = readdir(d)) != NULL) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0 || pid == (long)getpid() || !is_flight_engine(pid))
      continue;
    int hit = ino == 0;
    char fdpath[64], link[64];
    snprintf(fdpath, sizeof fdpath, "/proc/%ld/fd", pid);
    DIR *fds = hit ? NULL : opendir(fdpath);
    struct dirent *fe;
    while (fds && !hit && (fe = readdir(fds)) != NULL) {
      char p[320];
      snprintf(p, sizeof p, "%s/%s", fdpath, fe->d_name);
      ssize_t k = readlink(p, link, sizeof link - 1);
      if (k > 0) {
        link[k] = 0;
        hit = !strcmp(link, want);
      }
    }
    if (fds)
      closedir(fds);
    if (hit)
      found = found == -1 ? pid : -2;
  }
  if (d)
    closedir(d);
  return found;
}

/* The engine behind RUN_DIR (a directory holding `sock`, or the socket). */
static long engine_of(const char *where) {
  char path[PATH_MAX + 8], real[PATH_MAX];
  struct stat st;
  snprintf(path, sizeof path, "%s", where);
  if (!stat(where, &st) && S_ISDIR(st.st_mode))
    snprintf(path, sizeof path, "%s/sock", where);
  unsigned long ino = socket_inode(path);
  if (!ino && realpath(path, real))
    ino = socket_inode(real);
  return ino ? find_engine(ino) : -1;
}

int ct_dump_main(int argc, char **argv) {
  struct ct_args it;
  const char *val, *pid_s = NULL, *dir = NULL;
  int id;
  ct_args_init(&it, argc, argv, CT_ARGS_GETOPT);
  while ((id = ct_args_next(&it, dump_opts, &val)) != CT_ARGS_END) {
    if (id == O_HELP) {
      usage(stdout);
      return 0;
    }
    if (id == O_PID)
      pid_s = val;
    else if (id == CT_ARGS_POSITIONAL && !dir)
      dir = val;
    else
      return ct_usage_error("dump",
                            id == CT_ARGS_POSITIONAL ? "one RUN_DIR at most"
                            : id == CT_ARGS_NO_VALUE ? "option needs a value"
                                                     : "unknown option",
                            val);
  }
  if (pid_s && dir)
    return ct_usage_error("dump", "give --pid or RUN_DIR, not both", NULL);
  long pid;
  if (pid_s) {
    char *end;
    pid = strtol(pid_s, &end, 10);
    if (*end || pid <= 0 || pid > INT_MAX)
      return ct_usage_error("dump", "--pid expects a process id", pid_s);
    if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) { /* (EPERM: it exists, not ours) */
      fprintf(stderr, "corotracer: dump: %ld: no such process\n", pid);
      return 1;
    }
    if (!is_flight_engine(pid)) {
      fprintf(stderr, "corotracer: dump: %ld is not a flight recorder (corotracer run --flight)\n",
              pid);
      return 1;
    }
  } else {
    pid = dir ? engine_of(dir) : find_engine(0);
    if (pid < 0) {
      fprintf(stderr, "corotracer: dump: %s%s\n", dir ? dir : "",
              pid == -2 ? ": more than one flight recorder: name one with --pid or RUN_DIR"
              : dir     ? ": no flight recorder of ours listens there"
                        : "no flight recorder (corotracer run --flight) of ours is running");
      return 1;
    }
  }
  if (kill((pid_t)pid, SIGUSR1) < 0) {
    fprintf(stderr, "corotracer: dump: %ld: %s\n", pid, strerror(errno));
    return 1;
  }
  printf("corotracer: dump: asked the flight recorder %ld for a dump (it prints where it wrote "
         "it)\n",
         pid);
  return 0;
}
