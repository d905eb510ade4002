/* librip-prog.c - a program written against librip's own API, for
 * test-rip-librip.sh: it includes "librip.h", defines the storage librip's
 * README asks for by hand, and is built with no library and no link flag.
 * Usage: librip-prog RING: a worker thread snapshots twice and exits
 * (rip_exit), the main thread snapshots once; prints "main TID LINE" and
 * "worker TID LINE" (the line of the last snapshot of each). */
#include <pthread.h>
#include <stdio.h>

#include "librip.h"

thread_local pid_t rip_tid;
thread_local uint8_t rip_idx;
thread_local uint8_t rip_ctr;
struct rip_ring *rip_ring;

static int worker_line;
static pid_t worker_tid;

static void *worker(void *arg) {
  (void)arg;
  rip_init(0, "worker", 6, 0, 0);
  worker_tid = rip_tid;
  rip_snap();
  rip_snap(), worker_line = __LINE__; /* one line: the line of the snapshot */
  rip_exit();
  return NULL;
}

int main(int argc, char **argv) {
  pthread_t t;
  int main_line;
  if (argc != 2) {
    fprintf(stderr, "usage: librip-prog RING\n");
    return 2;
  }
  if (!rip_create_ring(argv[1], 0)) {
    perror(argv[1]);
    return 1;
  }
  rip_init(0, "main", 4, 0, 0);
  if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
    return 1;
  rip_snap(), main_line = __LINE__;
  printf("main %d %d\nworker %d %d\n", (int)rip_tid, main_line, (int)worker_tid, worker_line);
  return 0;
}
