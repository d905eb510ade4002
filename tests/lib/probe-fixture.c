/* probe-fixture.c - the engine's side of the probe's setup, shared by test-probe and test-probe-fd.
 */
#include "probe-fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/ctp.h"

int ct_make_tmpdir(char *dir, size_t len, const char *prefix) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, len, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return -1;
  }
  return 0;
}

int ct_listen_unix(const char *path, int backlog) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof sa.sun_path) {
    printf("socket path too long: %s\n", path);
    return -1;
  }
  memcpy(sa.sun_path, path, strlen(path) + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    perror("socket");
    return -1;
  }
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, backlog) != 0) {
    perror(path);
    close(fd);
    return -1;
  }
  return fd;
}

void ct_set_env(const char *shm, const char *sock, const char *count) {
  const char *name[] = {CTP_ENV_SHM, CTP_ENV_SOCK, CTP_ENV_STATIONS}, *value[] = {shm, sock, count};
  for (int i = 0; i < 3; i++) {
    if (value[i])
      setenv(name[i], value[i], 1);
    else
      unsetenv(name[i]);
  }
}

int ct_run_forked(int (*body)(void), const char *shm, const char *sock, const char *count,
                  const char *errpath) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return -1;
  }
  if (pid == 0) {
    if (errpath) {
      int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0 || dup2(fd, 2) < 0)
        _exit(3);
      close(fd);
    }
    ct_set_env(shm, sock, count);
    int rc = body();
    fflush(stdout);
    _exit(rc);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) {
      perror("waitpid");
      return -1;
    }
  return st;
}
