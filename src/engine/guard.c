/* guard.c - survive a truncated shared-memory file: an explicit --shm file
 * cannot be sealed, and reading a page past its new end raises SIGBUS. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/guard.h"

static char *guard_base;
static size_t guard_len;
static atomic_int guard_hit;

/* A fault inside the shared mapping: put anonymous zero pages in its place
 * and return, so the faulting load completes (reading 0, "nothing new").
 * Unlike a siglongjmp, this never abandons a half-done operation (a
 * sanitizer's lock, a line half-written into the trace buffer). mmap is a
 * plain system call here, async-signal-safe. */
static void on_sigbus(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  char *a = si->si_addr;
  if (guard_base && a >= guard_base && a < guard_base + guard_len &&
      syscall(SYS_mmap, guard_base, guard_len, PROT_READ | PROT_WRITE,
              MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != -1) {
    atomic_store_explicit(&guard_hit, 1, memory_order_relaxed);
    return;
  }
  /* Not the shared file: die of it as we would have. */
  signal(sig, SIG_DFL);
  raise(sig);
}

int ct_guard_install(void *base, size_t len) {
  guard_base = base;
  guard_len = len;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  return sigaction(SIGBUS, &sa, NULL) < 0 ? -errno : 0;
}

int ct_guard_tripped(void) {
  return atomic_load_explicit(&guard_hit, memory_order_relaxed);
}
