/* db_exec.c - how the corotracer binary runs the commands that need a
 * database client: the same command line in corotracer-db, the binary that
 * links them (src/common/commands.h "ct_db"). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/commands.h"

#define DB_BIN "corotracer-db"

char **ct_cli_argv;

int ct_db_exec(void) {
  char path[PATH_MAX];
  /* Beside our own executable, whatever the directory it was installed in or
   * the name it was started by (a PATH lookup, a symlink). */
  ssize_t n = readlink("/proc/self/exe", path, sizeof path);
  char *slash = n > 0 && (size_t)n < sizeof path ? memrchr(path, '/', (size_t)n) : NULL;
  if (!slash || (size_t)(slash + 1 - path) + sizeof DB_BIN > sizeof path) {
    fprintf(stderr, "corotracer: cannot find " DB_BIN ": /proc/self/exe: %s\n",
            n < 0 ? strerror(errno) : "path too long");
    return 1;
  }
  memcpy(slash + 1, DB_BIN, sizeof DB_BIN);
  if (ct_cli_argv)
    execv(path, ct_cli_argv);
  fprintf(stderr,
          "corotracer: %s: %s (the database commands run in " DB_BIN ", installed beside "
          "corotracer)\n",
          path, ct_cli_argv ? strerror(errno) : "no command line");
  return 1;
}

int ct_db_call(int (*fn)(int argc, char **argv), int argc, char **argv) {
  return fn ? fn(argc, argv) : ct_db_exec();
}
