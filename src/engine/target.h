/* target.h - the traced program: its start, signals, terminal and exit status (spawn.c). */
#ifndef CT_ENGINE_TARGET_H
#define CT_ENGINE_TARGET_H

#include <stdint.h>
#include <sys/types.h>

/* Block the signals the engine handles through a signalfd (INT, TERM, HUP,
 * USR1, CHLD, and TTOU for tcsetpgrp) and ignore SIGPIPE. Returns the signalfd
 * (CLOEXEC, nonblocking) or -errno. */
int ct_signals_setup(void);

struct ct_target {
  pid_t pid;  /* also the process group id */
  int tty_fd; /* terminal handed to the program (job control), or -1 */
  int exited;
  int status;           /* waitpid status once exited */
  int dump_sig;         /* --flight: SIGUSR1 asks for a dump instead of going to the target */
  uint32_t dumps_asked; /* SIGUSR1s read under dump_sig */
};

/* Start argv in its own process group with env extended by the CTP_*
 * variables; give it the terminal's foreground when stdin is a tty. Returns
 * 0, or -errno from exec (the child is reaped; t->status is set). */
int ct_target_spawn(struct ct_target *t, char **argv, const char *shm, const char *sock,
                    uint32_t stations);
/* Drain the signalfd: forward INT/TERM/HUP (and USR1 unless t->dump_sig:
 * then counted in t->dumps_asked) to the target's group; reap the
 * target (t->exited, t->status), or follow its stop when it holds the
 * terminal. Returns the number of signals forwarded. */
int ct_target_on_signals(struct ct_target *t, int sigfd);
/* Take the terminal back if we gave it away. */
void ct_target_release_tty(struct ct_target *t);
/* Exit status the engine mirrors: code, or 128 + signal. */
int ct_target_exit_code(const struct ct_target *t);

#endif /* CT_ENGINE_TARGET_H */
