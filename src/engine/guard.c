/* guard.c - survive a truncated shared-memory file: an explicit --shm file
 * cannot be sealed, and reading a page past its new end raises SIGBUS. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

#include "engine/engine.h"

static sigjmp_buf guard_env;
static volatile sig_atomic_t guard_armed;

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
  (void)si;
  (void)uc;
  if (!guard_armed) {
    /* Not one of our guarded reads: die of it as we would have. */
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  guard_armed = 0;
  siglongjmp(guard_env, 1);
}

int ct_guard_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_sigbus;
  /* SA_NODEFER: we leave the handler by longjmp with savemask 0 (no
   * sigprocmask syscall per scan), so SIGBUS must not stay blocked. */
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  return sigaction(SIGBUS, &sa, NULL) < 0 ? -errno : 0;
}

int ct_guard(void (*fn)(void *), void *arg) {
  if (sigsetjmp(guard_env, 0)) return -EFAULT;
  guard_armed = 1;
  fn(arg);
  guard_armed = 0;
  return 0;
}
