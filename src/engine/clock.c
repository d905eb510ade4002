/* clock.c - which clock v2 records are stamped with (ctp_header.clock), and
 * the conversion of its ticks to CLOCK_MONOTONIC ns: (mono, ticks) pairs, the
 * slope of the whole run, anchored at the latest pair. */
#include <stdio.h>
#include <string.h>

#include "common/ctp.h"
#include "common/ticks.h"
#include "engine/clock.h"

/* 1 when the "flags" line of /proc/cpuinfo lists word (space separated). */
static int cpu_flag(const char *line, const char *word) {
  size_t n = strlen(word);
  for (const char *p = strstr(line, word); p; p = strstr(p + 1, word))
    if (p[-1] == ' ' && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
      return 1;
  return 0;
}

/* x86-64: the TSC only when it is invariant (constant rate, and it keeps
 * counting in deep C-states), else CLOCK_MONOTONIC; an unreadable
 * /proc/cpuinfo means MONO. */
static uint32_t pick_x86(void) {
  FILE *f = fopen("/proc/cpuinfo", "re");
  if (!f)
    return CTP_CLOCK_MONO;
  char line[8192];
  uint32_t clock = CTP_CLOCK_MONO;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5) != 0)
      continue;
    if (cpu_flag(line, "constant_tsc") && cpu_flag(line, "nonstop_tsc"))
      clock = CTP_CLOCK_TSC;
    break; /* the first CPU speaks for all: the kernel syncs or disables the TSC */
  }
  fclose(f);
  return clock;
}

uint32_t ct_clock_pick(void) {
  if (CT_TICKS_CLOCK == CTP_CLOCK_TSC)
    return pick_x86();
  return CT_TICKS_CLOCK; /* CNTVCT is architecturally constant; MONO is MONO */
}

/* One (mono, ticks) pair: the mono read bracketed by two tick reads, the
 * tightest bracket of a few tries, ticks taken at its middle. */
static void take_pair(uint64_t *mono, uint64_t *ticks) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 5; i++) {
    uint64_t t1 = ct_ticks();
    uint64_t m = ct_mono_ns();
    uint64_t t2 = ct_ticks();
    if (t2 >= t1 && t2 - t1 < best) {
      best = t2 - t1;
      *mono = m;
      *ticks = t1 + (t2 - t1) / 2;
    }
  }
  if (best == UINT64_MAX) { /* ticks went backwards: take the last read */
    *mono = ct_mono_ns();
    *ticks = ct_ticks();
  }
}

/* ns per tick of the whole run, 32.32 fixed point. */
static void set_slope(struct ct_clock *c) {
  uint64_t dm = c->ma - c->m0, dt = c->ta - c->t0;
  if (c->ta > c->t0 && c->ma > c->m0 && (dm >> 31) < dt)
    c->mult = (uint64_t)(((unsigned __int128)dm << 32) / dt);
}

void ct_clock_init(struct ct_clock *c, uint32_t kind) {
  memset(c, 0, sizeof *c);
  c->kind = kind;
  c->mult = (uint64_t)1 << 32;
  if (kind == CTP_CLOCK_MONO)
    return;
  take_pair(&c->m0, &c->t0);
  /* 10 ms apart: a first slope within a few ppm of the truth. */
  struct timespec ts = {0, 10000000};
  while (nanosleep(&ts, &ts) != 0)
    ;
  take_pair(&c->ma, &c->ta);
  set_slope(c);
}

void ct_clock_update(struct ct_clock *c) {
  if (c->kind == CTP_CLOCK_MONO)
    return;
  uint64_t m, t;
  take_pair(&m, &t);
  if (t <= c->ta || m <= c->ma)
    return; /* no time passed (or a clock went back): keep the anchor */
  c->ma = m;
  c->ta = t;
  set_slope(c);
}

uint64_t ct_clock_now(const struct ct_clock *c) {
  return c->kind == CTP_CLOCK_MONO ? ct_mono_ns() : ct_ticks();
}
