/* bench-writer.c - the engine's trace writer: one event line formatted by
 * hand (ct_w_u64/ct_w_hex, as src/engine/harvest.c does) vs snprintf, into
 * /dev/null. Best of 5 rounds of 1M lines each. Usage: bench-writer */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "format/writer.h"

#define LINES 1000000

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void by_hand(struct ct_writer *w, uint64_t i) {
  uint64_t site = 0x55d0c0a01234ull + i;
  ct_w_str(w, "{\"probe_id\":");
  ct_w_u64(w, 140 + i % 100);
  ct_w_str(w, ",\"tid\":");
  ct_w_u64(w, 4711);
  ct_w_str(w, ",\"addr\":");
  ct_w_hex(w, site);
  ct_w_str(w, ",\"seq\":");
  ct_w_u64(w, 2 * i);
  ct_w_str(w, ",\"is_active\":false,\"ts\":");
  ct_w_u64(w, 1234567890123ull + i);
  ct_w_str(w, ",\"kind\":\"suspend\",\"ev\":");
  ct_w_u64(w, i);
  ct_w_str(w, ",\"site\":");
  ct_w_hex(w, site);
  ct_w_str(w, ",\"wait\":\"fd\",\"obj\":");
  ct_w_u64(w, 12);
  ct_w_str(w, "}\n");
}

static void by_printf(struct ct_writer *w, uint64_t i) {
  uint64_t site = 0x55d0c0a01234ull + i;
  char buf[512];
  int n =
      snprintf(buf, sizeof buf,
               "{\"probe_id\":%" PRIu64 ",\"tid\":%d,\"addr\":\"0x%016" PRIx64 "\",\"seq\":%" PRIu64
               ",\"is_active\":false,\"ts\":%" PRIu64 ",\"kind\":\"suspend\",\"ev\":%" PRIu64
               ",\"site\":\"0x%016" PRIx64 "\",\"wait\":\"fd\",\"obj\":%d}\n",
               140 + i % 100, 4711, site, 2 * i, (uint64_t)1234567890123u + i, i, site, 12);
  ct_w_raw(w, buf, (size_t)n);
}

static double best(struct ct_writer *w, void (*fn)(struct ct_writer *, uint64_t)) {
  double b = 1e9;
  for (int round = 0; round < 5; round++) {
    double t0 = now();
    for (uint64_t i = 0; i < LINES; i++)
      fn(w, i);
    ct_writer_flush(w);
    double t = (now() - t0) / LINES * 1e9;
    if (t < b)
      b = t;
  }
  return b;
}

int main(void) {
  struct ct_writer w;
  if (ct_writer_open(&w, "/dev/null", 0))
    return 1;
  double hand = best(&w, by_hand), pf = best(&w, by_printf);
  printf("event line, by hand: %.0f ns; snprintf: %.0f ns (%.1fx)\n", hand, pf, pf / hand);
  return ct_writer_close(&w) ? 1 : 0;
}
