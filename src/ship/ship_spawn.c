/* ship_spawn.c - `run --ship`'s shipper: the engine hands each dump to a
 * `corotracer ship` process (posix_spawn of its own executable, so nothing
 * runs between fork and exec in the multithreaded engine), which queues it
 * in the spool and drains the spool into the database in its own session at
 * the lowest priority, retrying for ten minutes while the database is away
 * (docs/FLEET.md). */
#include "ship/ship_spawn.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

#define SHIP_WAIT_S "600"
#define PENDING_MAX 64

/* Launchers started and not reaped yet (each exits once its shipper forked):
 * reaped without waiting at the next call, so the engine never waits for a
 * process start (the rest are the init's once the engine exits). Only the
 * harvest thread calls ct_ship_spawn. */
static pid_t pending[PENDING_MAX];

/* Reaps the launchers that exited; keeps the others. */
static void reap(void) {
  for (int i = 0; i < PENDING_MAX; i++)
    if (pending[i] > 0 && waitpid(pending[i], NULL, WNOHANG) == pending[i])
      pending[i] = 0;
}
#define URL_ENV "COROTRACER_SHIP_URL="

int ct_ship_spawn(const char *url, const char *spool, const char *path) {
  size_t n = 0;
  while (environ[n])
    n++;
  char **env = calloc(n + 2, sizeof *env), *url_env = malloc(sizeof URL_ENV + strlen(url));
  char *argv[] = {"corotracer", "ship",      "--detach", "--add",       (char *)path,
                  "--wait",     SHIP_WAIT_S, "--spool",  (char *)spool, NULL};
  posix_spawnattr_t attr;
  sigset_t none, all;
  pid_t pid;
  int rc = -ENOMEM;
  if (!spool)
    argv[7] = NULL; /* the shipper's default spool */
  if (!env || !url_env)
    goto out;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) /* the URL given replaces one in the environment */
    if (strncmp(environ[i], URL_ENV, sizeof URL_ENV - 1))
      env[k++] = environ[i];
  snprintf(url_env, sizeof URL_ENV + strlen(url), URL_ENV "%s", url);
  env[k++] = url_env;
  sigemptyset(&none);
  sigfillset(&all);
  /* The engine blocks signals for its signalfd: the shipper gets them back. */
  if ((rc = -posix_spawnattr_init(&attr)))
    goto out;
  rc = -posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (!rc)
    rc = -posix_spawnattr_setsigmask(&attr, &none);
  if (!rc)
    rc = -posix_spawnattr_setsigdefault(&attr, &all);
  if (!rc)
    rc = -posix_spawn(&pid, "/proc/self/exe", NULL, &attr, argv, env);
  posix_spawnattr_destroy(&attr);
  reap();
  for (int i = 0; !rc && i < PENDING_MAX; i++)
    if (pending[i] <= 0) {
      pending[i] = pid;
      break;
    }
out:
  free(env);
  free(url_env);
  return rc;
}
