/* bench-fsnap.c - the flight window's snapshot table (src/engine/flight_snap.c)
 * fed a whole binary trace: every chunk applied as the window applies a chunk it
 * drops, R times (a fresh table each), then the table's snapshot lines written to
 * stdout (one a line: builds compared by their output) and, to stderr, the CPU
 * per chunk byte and per event of the trace (the end record's harvested when
 * asked: -e EVENTS); -c N feeds the first N chunks only (a snapshot taken
 * mid-run, its coroutines alive); -x takes packs as the decoder expands them
 * (ct_fsnap_expand: the path before ctr_stream_walk, for a before/after in
 * one binary and for tests/test-fsnap-packs.sh, which compares the two
 * outputs). The window's cost per switch once it turns over (a flight
 * recorder's steady state): the seedclaim benchmark's 3 s under --flight 64M
 * never drops a chunk.
 * Usage: bench-fsnap [-x] [-R rounds] [-e events] [-c chunks] FILE.ctrace */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/flight.h"
#include "format/ctrace.h"
#include "format/ctrace_dec.h"

/* The whole file into *p (*n bytes). 0, or -1 with a message. */
static int slurp(const char *path, uint8_t **p, size_t *n) {
  FILE *f = fopen(path, "rb");
  size_t cap = 1 << 20, len = 0;
  uint8_t *b = malloc(cap);
  int rc = -1;
  if (!f || !b)
    goto out;
  for (size_t k; (k = fread(b + len, 1, cap - len, f)) > 0;) {
    len += k;
    if (len == cap) {
      uint8_t *nb = realloc(b, cap *= 2);
      if (!nb)
        goto out;
      b = nb;
    }
  }
  *p = b, *n = len, b = NULL, rc = 0;
out:
  if (rc)
    fprintf(stderr, "bench-fsnap: %s: cannot read\n", path);
  free(b);
  if (f)
    fclose(f);
  return rc;
}

/* The snapshot's payload (lines as entries) to stdout, one a line. */
static int print_lines(void *ctx, const uint8_t *p, size_t n, uint32_t k) {
  (void)ctx;
  const uint8_t *e = p + n;
  for (uint32_t i = 0; i < k && p < e && *p == CTR_OP_LINE; i++) {
    uint64_t len;
    if (!(p = ctr_get_varint(p + 1, e, &len)) || len > (uint64_t)(e - p))
      return -1;
    printf("%.*s\n", (int)len, (const char *)p);
    p += len;
  }
  return 0;
}

/* CLOCK_PROCESS_CPUTIME_ID in ns. */
static double cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* One round: a fresh table fed the trace's chunks (p, n bytes), at most max
 * of them; the table kept in *out (the caller frees it). Returns the chunk
 * bytes fed. */
static size_t round_of(const uint8_t *p, size_t n, unsigned long max, int expand,
                       struct ct_fsnap **out) {
  char why[160];
  int off = ct_ctr_file_header(p, n, why, sizeof why);
  size_t fed = 0;
  if (off < 0 || ct_fsnap_new(out)) {
    fprintf(stderr, "bench-fsnap: %s\n", off < 0 ? why : "no memory");
    exit(1);
  }
  ct_fsnap_expand(*out, expand);
  for (size_t at = (size_t)off, len; at < n && max; at += len, max--) {
    if (ct_ctr_chunk(p + at, n - at, at, &len, why, sizeof why) != 1)
      break;
    /* rebinds 0: the walk, as the engine takes a chunk without coroutine
     * lines, gaps or standalone wakes (a steady run's, past its first); -x
     * the merge, as it takes one with them (a channel's chunks). */
    ct_fsnap_apply(*out, p + at, len, 0);
    fed += len;
  }
  return fed;
}

int main(int argc, char **argv) {
  int rounds = 5, expand = 0, opt;
  double events = 0;
  unsigned long chunks = (unsigned long)-1;
  while ((opt = getopt(argc, argv, "xR:e:c:")) != -1) {
    if (opt == 'R')
      rounds = atoi(optarg);
    else if (opt == 'c')
      chunks = strtoul(optarg, NULL, 10);
    else if (opt == 'x')
      expand = 1;
    else if (opt == 'e')
      events = atof(optarg);
    else
      return 2;
  }
  if (optind + 1 != argc || rounds < 1) {
    fprintf(stderr, "usage: bench-fsnap [-x] [-R rounds] [-e events] [-c chunks] FILE.ctrace\n");
    return 2;
  }
  uint8_t *p;
  size_t n;
  if (slurp(argv[optind], &p, &n))
    return 1;
  struct ct_fsnap *t = NULL;
  double best = 0;
  size_t fed = 0;
  for (int r = 0; r < rounds; r++) {
    ct_fsnap_free(t);
    double t0 = cpu_ns();
    fed = round_of(p, n, chunks, expand, &t);
    double dt = cpu_ns() - t0;
    best = r == 0 || dt < best ? dt : best;
  }
  uint64_t count, untracked;
  int rc = ct_fsnap_emit(t, print_lines, NULL, &count, &untracked);
  fprintf(stderr, "bench-fsnap: %zu chunk bytes, best of %d: %.2f ms, %.3f ns a byte", fed, rounds,
          best / 1e6, best / (double)fed);
  if (events > 0)
    fprintf(stderr, ", %.2f ns an event", best / events);
  fprintf(stderr, "; %llu snapshot lines, %llu untracked\n", (unsigned long long)count,
          (unsigned long long)untracked);
  ct_fsnap_free(t);
  free(p);
  return rc ? 1 : 0;
}
