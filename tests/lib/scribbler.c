/* scribbler.c - a hostile target: it traces with the public SDK, then writes
 * random bytes (seeded) over the whole shared mapping, and goes on tracing.
 *
 *   scribbler SEED EVENTS OUT [counters|alloc]
 *       COROS coroutines created, EVENTS suspend/resume events over them,
 *       then the scribble (none when SEED is 0; with "counters", random
 *       words over the counters only: every station's ev_claimed,
 *       harvested_ev and v2_lost, every ring's lost; no padding touched, so
 *       only the values can tell; with "alloc", the one 32-bit word of the
 *       header's allocated_count, set to 0xfffffff0), EVENTS more, COROS more
 *       coroutines created (a lossless create waits for a free station), and
 *       every coroutine destroyed. OUT gets "written W ms M": W the events
 *       the program asked the SDK to record (an upper bound of any true
 *       count in the trace), M its own wall time in ms.
 *
 * Exit 3 when not traced; killed by SIGALRM after 30 s. tests/test-engine-hostile.sh drives it. */
#include <corotracer.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ctp.h"
#include "ctlib.h"

#define COROS 4

/* xorshift64*: the scribble is the same for a seed on every run. */
static uint64_t next_rand(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

/* Random bytes over the whole file CTP_SHM_PATH names: header, stations,
 * queues and rings, through a mapping of our own. */
static void scribble(uint64_t seed, const char *what) {
  const char *path = getenv("CTP_SHM_PATH");
  if (!path)
    ct_die("CTP_SHM_PATH not set");
  int fd = open(path, O_RDWR | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0)
    ct_die("%s: %s", path, strerror(errno));
  size_t len = (size_t)sb.st_size;
  uint64_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    ct_die("mmap %s: %s", path, strerror(errno));
  close(fd);
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL | 1;
  const struct ctp_header *h = (const struct ctp_header *)p;
  if (!strcmp(what, "alloc")) {
    atomic_store_explicit(&((struct ctp_header *)p)->allocated_count, 0xfffffff0u,
                          memory_order_relaxed);
  } else if (!strcmp(what, "counters")) {
    for (uint32_t i = 0; i < h->max_stations; i++) {
      struct ctp_station *st = ctp_station_at(p, i);
      atomic_store_explicit(&st->ev_claimed, next_rand(&s), memory_order_relaxed);
      atomic_store_explicit(&st->harvested_ev, next_rand(&s), memory_order_relaxed);
      atomic_store_explicit(&st->v2_lost, next_rand(&s), memory_order_relaxed);
    }
    for (uint32_t r = 0; (h->mode & CTP_MODE_RINGS) && r < h->ring_count; r++)
      atomic_store_explicit(&ctp_ring_at(p, h, r)->lost, next_rand(&s), memory_order_relaxed);
  } else {
    for (size_t k = 0; k < len / 8; k++)
      __atomic_store_n(&p[k], next_rand(&s), __ATOMIC_RELAXED);
  }
  munmap(p, len);
}

/* EVENTS events over co[]: a suspend and a resume per step. */
static uint64_t run(corotracer_co **co, uint64_t events) {
  uint64_t w = 0;
  for (uint64_t k = 0; k + 1 < events; k += 2) {
    corotracer_co *c = co[(k / 2) % COROS];
    corotracer_suspend(c, NULL, COROTRACER_WAIT_NONE, 0);
    corotracer_resume(c);
    w += 2;
  }
  return w;
}

int main(int argc, char **argv) {
  const char *what = argc == 5 ? argv[4] : "all";
  if (argc != 4 && !(argc == 5 && (!strcmp(what, "counters") || !strcmp(what, "alloc")))) {
    fprintf(stderr, "usage: scribbler SEED EVENTS OUT [counters|alloc]\n");
    return 2;
  }
  uint64_t seed = strtoull(argv[1], NULL, 10), events = strtoull(argv[2], NULL, 10);
  uint64_t t0 = ct_now_ns();
  alarm(30); /* a probe that hangs must not leave us spinning after the test */
  if (corotracer_init() != 0)
    return 3;
  corotracer_co *co[2 * COROS];
  uint64_t written = 0;
  for (int k = 0; k < COROS; k++) {
    co[k] = corotracer_create(0, "scribbled", NULL);
    corotracer_resume(co[k]);
    written += 2;
  }
  written += run(co, events);
  if (seed)
    scribble(seed, what);
  written += run(co, events);
  for (int k = COROS; k < 2 * COROS; k++) {
    co[k] = corotracer_create(0, "after", NULL);
    corotracer_resume(co[k]);
    written += 2;
  }
  for (int k = 0; k < 2 * COROS; k++) {
    corotracer_destroy(co[k]);
    written++;
  }
  uint64_t ms = (ct_now_ns() - t0) / 1000000u;
  FILE *f = fopen(argv[3], "we");
  if (!f ||
      fprintf(f, "written %llu ms %llu\n", (unsigned long long)written, (unsigned long long)ms) <
          0 ||
      fclose(f))
    ct_die("%s: %s", argv[3], strerror(errno));
  return 0;
}
