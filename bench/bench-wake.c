/* bench-wake.c - what one wake-up of a sleeping process costs in CPU time
 * as a function of the memory it has mapped (issue #9: the engine's CPU grew
 * with the number of stations though it touched none of them).
 *
 *   bench-wake [MB [SECS]]      default 1000 MB, 3 s per case
 *
 * Per case the process maps MB of memory, touches every page once, then
 * sleeps 16 ms at a time (ppoll) for SECS and prints its CPU time per
 * wake-up: with nothing mapped, with an MB memfd (MAP_SHARED, as the engine
 * maps the stations), with the same after MADV_DONTNEED (the file keeps its
 * data, the process drops its page-table entries), with MB anonymous in
 * 4 KiB pages and in huge pages (MADV_HUGEPAGE). */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum kind { NONE, MEMFD, MEMFD_DROPPED, ANON, ANON_HUGE };

static double now(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* CPU microseconds per wake-up over secs of 16 ms sleeps; -1 on a failed mapping. */
static double run_case(enum kind k, size_t len, double secs) {
  char *p = NULL;
  size_t maplen = len + (2u << 20);
  if (k == MEMFD || k == MEMFD_DROPPED) {
    int fd = memfd_create("bench-wake", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)len) != 0)
      return -1;
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    maplen = len;
  } else if (k != NONE) {
    p = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  if (p == MAP_FAILED)
    return -1;
  char *q = p;
  if (k == ANON || k == ANON_HUGE) /* 2 MiB aligned, so huge pages can back it */
    q = (char *)(((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
  if (k == ANON_HUGE)
    (void)madvise(q, len, MADV_HUGEPAGE);
  if (k != NONE)
    memset(q, 1, len);
  if (k == MEMFD_DROPPED)
    (void)madvise(q, len, MADV_DONTNEED);
  double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
  long n = 0;
  while (now(CLOCK_MONOTONIC) - t0 < secs) {
    struct timespec ts = {0, 16000000};
    ppoll(NULL, 0, &ts, NULL);
    n++;
  }
  double c = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
  if (p)
    munmap(p, maplen);
  return n ? 1e6 * c / (double)n : -1;
}

int main(int argc, char **argv) {
  size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
  double secs = argc > 2 ? atof(argv[2]) : 3;
  static const char *names[] = {"nothing mapped", "memfd, touched", "memfd, MADV_DONTNEED",
                                "anonymous, 4 KiB pages", "anonymous, huge pages"};
  printf("| mapped (%zu MB) | CPU us per wake-up |\n| --- | --- |\n", mb);
  for (int k = NONE; k <= ANON_HUGE; k++) {
    double us = run_case((enum kind)k, mb << 20, secs);
    printf("| %s | %.1f |\n", names[k], us);
    fflush(stdout);
  }
  return 0;
}
