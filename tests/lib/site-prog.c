/* site-prog.c - text sites (corotracer_site), for tests/test-report-site.sh:
 * a coroutine created and parked at lines of a file it names itself (as
 * generated code would), never woken. With --scribble it first writes a bad
 * record into the text-site area (hostile to the engine): a length past the
 * area, or (--scribble-text) a text without its NULs. */
#include <corotracer.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/ctp.h"

/* Claims a record in the area and fills it with garbage. */
static int scribble(int text) {
  const char *path = getenv(CTP_ENV_SHM);
  int fd = path ? open(path, O_RDWR | O_CLOEXEC) : -1;
  if (fd < 0 || corotracer_init() != 0)
    return -1;
  struct ctp_header h;
  if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || !h.sites_bytes)
    return -1;
  size_t len = (size_t)(h.sites_off + h.sites_bytes);
  char *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED)
    return -1;
  struct ctp_header *hp = (struct ctp_header *)base;
  uint32_t at = atomic_fetch_add(&hp->sites_used, 64);
  struct ctp_site_rec *r = (struct ctp_site_rec *)(base + h.sites_off + at);
  memset(r->text, 'A', 64 - sizeof *r); /* no NUL anywhere */
  r->line = 7;
  atomic_store(&r->len, text ? 64u : 0xfffffff8u);
  return 0;
}

/* Distinct sites (distinct pointers: no cache hit) until corotracer_site
 * says the area is full; prints the count. */
static int fill(void) {
  static char names[64 * 1024];
  memset(names, 'f', sizeof names - 1);
  int n = 0;
  while (n < 200000 && corotracer_site(names + n % (sizeof names - 40), (unsigned)n, "fill"))
    n++;
  printf("filled %d\n", n);
  return n > 0 && n < 200000 ? 0 : 5;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--fill") == 0)
    return fill();
  if (argc > 1 && strncmp(argv[1], "--scribble", 10) == 0 &&
      scribble(strcmp(argv[1], "--scribble-text") == 0) != 0)
    return 4;
  const void *made = corotracer_site("grammar.y", 17, "start_rule");
  corotracer_co *co = corotracer_create(0, "parser", made);
  corotracer_resume(co);
  corotracer_suspend(co, NULL, COROTRACER_WAIT_NONE, 0); /* a yield: the trace has wakes */
  corotracer_wake(co, NULL);
  corotracer_resume(co);
  static int token;
  corotracer_suspend(co, corotracer_site("grammar.y", 42, "parse_rule"), COROTRACER_WAIT_PTR,
                     (uint64_t)(uintptr_t)&token);
  /* The same literals again: the same token (the probe's cache). */
  if (corotracer_site("grammar.y", 17, "start_rule") != made)
    return 3;
  struct timespec ts = {1, 300000000}; /* left parked a while: stuck */
  while (nanosleep(&ts, &ts))
    ;
  return 0;
}
