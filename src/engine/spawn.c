/* spawn.c - the target process: start it in its own process group with the
 * CTP_* environment, hand it the terminal, forward signals, reap it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/ctp.h"
#include "engine/opts.h"
#include "engine/target.h"

extern char **environ;

static void handled_set(sigset_t *s) {
  sigemptyset(s);
  sigaddset(s, SIGINT);
  sigaddset(s, SIGTERM);
  sigaddset(s, SIGHUP);
  sigaddset(s, SIGUSR1);
  sigaddset(s, SIGCHLD);
}

int ct_signals_setup(void) {
  sigset_t s;
  handled_set(&s);
  /* SIGTTOU is blocked (not read): tcsetpgrp from the background must not
   * stop us when we take the terminal back. */
  sigset_t blocked = s;
  sigaddset(&blocked, SIGTTOU);
  if (sigprocmask(SIG_BLOCK, &blocked, NULL) < 0)
    return -errno;
  /* A dead socket peer must not kill the engine, nor a file past
   * RLIMIT_FSIZE: its write fails (EFBIG) and the trace or dump says so. */
  signal(SIGPIPE, SIG_IGN);
  signal(SIGXFSZ, SIG_IGN);
  int fd = signalfd(-1, &s, SFD_CLOEXEC | SFD_NONBLOCK);
  return fd < 0 ? -errno : fd;
}

static void free_env(char **env) {
  for (size_t i = 0; env[i]; i++)
    if (strncmp(env[i], "CTP_", 4) == 0)
      free(env[i]);
  free(env);
}

/* environ without CTP_*, plus our three. Returns a malloc'ed array whose
 * CTP_* strings are malloc'ed too (freed by free_env), NULL on ENOMEM. */
static char **make_env(const char *shm, const char *sock, uint32_t stations) {
  size_t n = 0;
  while (environ[n])
    n++;
  char **env = calloc(n + 4, sizeof(*env));
  if (!env)
    return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "CTP_", 4) != 0)
      env[k++] = environ[i];
  char *ours[3] = {NULL, NULL, NULL};
  int ok = asprintf(&ours[0], "%s=%s", CTP_ENV_SHM, shm) >= 0;
  ok = ok && asprintf(&ours[1], "%s=%s", CTP_ENV_SOCK, sock) >= 0;
  ok = ok && asprintf(&ours[2], "%s=%u", CTP_ENV_STATIONS, stations) >= 0;
  for (int i = 0; i < 3 && ok; i++)
    env[k++] = ours[i];
  if (!ok) {
    for (int i = 0; i < 3; i++)
      free(ours[i]);
    free(env);
    return NULL;
  }
  return env;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void child(char **argv, char **env, int errfd, int tty_fd) {
  setpgid(0, 0);
  /* Taking the foreground here, before exec, means the program never runs a
   * moment in the background (SIGTTIN on its first read). SIGTTOU is still
   * blocked, inherited from the engine. */
  if (tty_fd >= 0)
    tcsetpgrp(tty_fd, getpid());
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &sa, NULL); /* ignored dispositions survive exec */
  sigaction(SIGXFSZ, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  execvpe(argv[0], argv, env);
  int e = errno;
  ssize_t k;
  do
    k = write(errfd, &e, sizeof(e));
  while (k < 0 && errno == EINTR);
  _exit(CT_EXIT_EXEC);
}

int ct_target_spawn(struct ct_target *t, char **argv, const char *shm, const char *sock,
                    uint32_t stations) {
  memset(t, 0, sizeof(*t));
  t->tty_fd = -1;
  if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp())
    t->tty_fd = STDIN_FILENO;
  int rc = 0;
  int pfd[2] = {-1, -1};
  char **env = make_env(shm, sock, stations);
  if (!env)
    return -ENOMEM;
  if (pipe2(pfd, O_CLOEXEC) < 0) {
    rc = -errno;
    goto out;
  }
  pid_t pid = fork();
  if (pid < 0) {
    rc = -errno;
    goto out;
  }
  if (pid == 0)
    child(argv, env, pfd[1], t->tty_fd);
  t->pid = pid;
  /* Also here, so the group exists before we signal it, whoever runs first
   * (EACCES once the child has exec'ed is fine: it did it itself). */
  setpgid(pid, pid);
  close(pfd[1]);
  pfd[1] = -1;
  int e = 0;
  ssize_t k;
  do
    k = read(pfd[0], &e, sizeof(e));
  while (k < 0 && errno == EINTR);
  if (k == (ssize_t)sizeof(e)) {
    /* exec failed: the child is gone with CT_EXIT_EXEC. */
    while (waitpid(pid, &t->status, 0) < 0 && errno == EINTR) {
    }
    t->exited = 1;
    ct_target_release_tty(t);
    rc = -e;
  }
out:
  if (pfd[0] >= 0)
    close(pfd[0]);
  if (pfd[1] >= 0)
    close(pfd[1]);
  free_env(env);
  return rc;
}

/* The program was stopped on the terminal (Ctrl-Z): stop with it, so the
 * shell sees its job stop and takes the terminal back; when continued, pass
 * the terminal on if `fg` gave it to us (not on `bg`), and continue the
 * program. SIGSTOP to ourselves is delivered before kill() returns. */
static void follow_stop(struct ct_target *t) {
  tcsetpgrp(t->tty_fd, getpgrp());
  kill(getpid(), SIGSTOP);
  if (tcgetpgrp(t->tty_fd) == getpgrp())
    tcsetpgrp(t->tty_fd, t->pid);
  kill(-t->pid, SIGCONT);
}

int ct_target_on_signals(struct ct_target *t, int sigfd) {
  int forwarded = 0;
  struct signalfd_siginfo si;
  for (;;) {
    ssize_t k = read(sigfd, &si, sizeof(si));
    if (k < 0 && errno == EINTR)
      continue;
    if (k != (ssize_t)sizeof(si))
      break; /* EAGAIN: drained */
    if (si.ssi_signo == SIGCHLD)
      continue;
    if (si.ssi_signo == SIGUSR1 && t->dump_sig) {
      /* Someone asking for a dump (the live findings have a channel of
       * their own, flight_watch.c: signals do not queue). */
      t->dumps_asked++;
      continue;
    }
    /* The whole group: a shell's children too (the reference signalled only
     * the shell and orphaned the program). */
    if (!t->exited)
      kill(-t->pid, (int)si.ssi_signo);
    forwarded++;
  }
  /* SIGCHLD may coalesce, so check the child whatever was read. Stops
   * matter only when it has our terminal (job control). */
  if (!t->exited) {
    int st;
    pid_t r;
    do
      r = waitpid(t->pid, &st, WNOHANG | (t->tty_fd >= 0 ? WUNTRACED : 0));
    while (r < 0 && errno == EINTR);
    if (r == t->pid && WIFSTOPPED(st)) {
      follow_stop(t);
    } else if (r == t->pid) {
      t->status = st;
      t->exited = 1;
    }
  }
  return forwarded;
}

void ct_target_release_tty(struct ct_target *t) {
  if (t->tty_fd < 0)
    return;
  tcsetpgrp(t->tty_fd, getpgrp()); /* SIGTTOU is blocked */
  t->tty_fd = -1;
}

int ct_target_exit_code(const struct ct_target *t) {
  if (WIFEXITED(t->status))
    return WEXITSTATUS(t->status);
  if (WIFSIGNALED(t->status))
    return 128 + WTERMSIG(t->status);
  return 1;
}
