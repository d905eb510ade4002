/* bench-clock.c - the error of the engine's tick -> CLOCK_MONOTONIC
 * conversion (src/engine/clock.c), measured: (ticks, mono) samples are taken
 * at the same moment (a mono read bracketed by two tick reads) and the
 * converted ticks compared with the mono reading, for samples up to 1 ms,
 * ~100 ms and ~1 s older than the conversion's anchor (a pass every 1 ms; a
 * sleeping engine re-anchors up to 100 ms later; 1 s is the fallback poll).
 *
 *   bench-clock [SECONDS]     default 3
 *
 * Prints the clock picked, and per distance the median and max |error|, ns. */
#include <stdio.h>
#include <stdlib.h>

#include "common/ctp.h"
#include "common/ticks.h"
#include "engine/clock.h"

struct sample {
  uint64_t t, m;
};

/* A pair whose tick bracket is wider than this was interrupted: its mono
 * reading may be anywhere inside, so it measures the sampling, not the
 * conversion. Retried. */
#define BRACKET_TICKS 2000u

static struct sample take(void) {
  for (;;) {
    uint64_t t1 = ct_ticks(), m = ct_mono_ns(), t2 = ct_ticks();
    if (t2 - t1 < BRACKET_TICKS)
      return (struct sample){t1 + (t2 - t1) / 2, m};
  }
}

static int cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static void report(const char *what, uint64_t *e, size_t n) {
  if (!n)
    return;
  qsort(e, n, sizeof *e, cmp);
  printf("| %s | %zu | %llu | %llu |\n", what, n, (unsigned long long)e[n / 2],
         (unsigned long long)e[n - 1]);
}

static uint64_t err(const struct ct_clock *c, struct sample s) {
  uint64_t ns = ct_clock_ns(c, s.t);
  return ns > s.m ? ns - s.m : s.m - ns;
}

int main(int argc, char **argv) {
  double secs = argc > 1 ? atof(argv[1]) : 3.0;
  uint32_t kind = ct_clock_pick();
  if (kind == CTP_CLOCK_MONO) {
    printf("clock: mono (no invariant tick counter): conversion is the identity\n");
    return 0;
  }
  struct ct_clock c;
  ct_clock_init(&c, kind);
  size_t cap = (size_t)(secs * 1000) + 16;
  uint64_t *near = calloc(cap * 10, sizeof *near), *mid = calloc(cap, sizeof *mid),
           *far = calloc(cap, sizeof *far);
  struct sample *hist = calloc(cap, sizeof *hist);
  if (!near || !mid || !far || !hist)
    return 1;
  size_t nn = 0, nm = 0, nf = 0, nh = 0;
  uint64_t end = ct_mono_ns() + (uint64_t)(secs * 1e9);
  while (ct_mono_ns() < end && nh < cap) {
    /* One "pass" per ms: 10 samples in it, converted with the anchor the
     * next pass takes (as records are: stamped before the pass that reads them). */
    struct sample s[10];
    for (int k = 0; k < 10; k++) {
      s[k] = take();
      uint64_t until = ct_mono_ns() + 100000;
      while (ct_mono_ns() < until) {
      }
    }
    ct_clock_update(&c);
    for (int k = 0; k < 10; k++)
      near[nn++] = err(&c, s[k]);
    hist[nh++] = s[0];
    /* Older samples against today's anchor: a sleeping engine's view. */
    if (nh > 100)
      mid[nm++] = err(&c, hist[nh - 101]);
    if (nh > 1000)
      far[nf++] = err(&c, hist[nh - 1001]);
  }
  printf("clock: %s, %.0f s, slope %.6f ns/tick\n", kind == CTP_CLOCK_TSC ? "tsc" : "cntvct", secs,
         (double)c.mult / 4294967296.0);
  printf("| sample age vs anchor | samples | median abs error ns | max abs error ns |\n");
  printf("| --- | --- | --- | --- |\n");
  report("< 1 ms", near, nn);
  report("~100 ms", mid, nm);
  report("~1 s", far, nf);
  return 0;
}
