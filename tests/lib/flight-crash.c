/* flight-crash.c - a target for the flight recorder's crash test
 * (tests/test-flight-crash.sh, issue #34 N6): a burst that fills its ring
 * while the engine cannot drain it, then the final events, then SIGSEGV.
 *
 *   flight-crash COROS EVENTS FINAL
 *       COROS coroutines (labels co-0 ...), each resumed and suspended once;
 *       then the engine (our parent) is stopped (SIGSTOP), so that whatever
 *       its speed the ring fills: EVENTS switches round robin among them (a
 *       single thread: one runs at a time), then the last FINAL coroutines
 *       each resumed, exited and destroyed (3 x FINAL events, the last
 *       coroutine's destroy the newest event), the engine continued
 *       (SIGCONT), and the program dies of SIGSEGV.
 *   flight-crash COROS EVENTS FINAL run
 *       the same with the engine left running: it races the writer for
 *       the full ring's records (whatever the machine's load, each event
 *       is kept or counted lost, once).
 * Before the crash it prints corotracer_stats: "recorded R dropped D". */
#include <corotracer.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctlib.h"

int main(int argc, char **argv) {
  if (argc != 4 && !(argc == 5 && strcmp(argv[4], "run") == 0))
    ct_die("usage: flight-crash COROS EVENTS FINAL [run]");
  int stop = argc == 4;
  unsigned long n = strtoul(argv[1], NULL, 10), final = strtoul(argv[3], NULL, 10);
  unsigned long long events = strtoull(argv[2], NULL, 10);
  if (n < 2 || final > n)
    ct_die("flight-crash: COROS >= 2 and FINAL <= COROS");
  corotracer_co **co = calloc(n, sizeof *co);
  if (!co)
    ct_die("flight-crash: no memory");
  for (unsigned long i = 0; i < n; i++) {
    char label[32];
    snprintf(label, sizeof label, "co-%lu", i);
    if (!(co[i] = corotracer_create(i + 1, label, NULL)))
      ct_die("flight-crash: create %lu failed", i);
    corotracer_resume(co[i]);
    corotracer_suspend(co[i], NULL, COROTRACER_WAIT_PTR, 1);
  }
  pid_t engine = getppid();
  if (stop && kill(engine, SIGSTOP) != 0)
    ct_die("flight-crash: cannot stop the engine");
  /* A scheduler loop: the thread goes from one coroutine to the next, each
   * waiting on an object of its own. */
  corotracer_resume(co[0]);
  unsigned long cur = 0;
  for (unsigned long long e = 0; e < events; e++) {
    unsigned long next = (cur + 1) % n;
    corotracer_switch(co[cur], NULL, COROTRACER_WAIT_PTR, next + 1, 0, co[next]);
    cur = next;
  }
  corotracer_suspend(co[cur], NULL, COROTRACER_WAIT_PTR, 1);
  for (unsigned long i = n - final; i < n; i++) {
    corotracer_resume(co[i]);
    corotracer_exit(co[i], NULL);
    corotracer_destroy(co[i]);
  }
  uint64_t recorded, dropped;
  corotracer_stats(&recorded, &dropped);
  printf("recorded %llu dropped %llu\n", (unsigned long long)recorded, (unsigned long long)dropped);
  fflush(stdout);
  if (stop)
    kill(engine, SIGCONT);
  /* The default action, not a sanitizer's handler (which would exit 1). */
  signal(SIGSEGV, SIG_DFL);
  raise(SIGSEGV);
  return 1;
}
