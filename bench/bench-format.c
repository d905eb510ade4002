/* bench-format.c - the formatter's CPU per ring record, alone: passes of
 * capture blocks (one ring, 32,768 records each, as the harvest loop hands
 * them over) through ct_rings_on_block into a binary trace kept in memory,
 * timed with the thread's CPU clock around each pass (the records are made
 * outside it). COROS coroutines take turns, two records each (a suspend and
 * a resume): 1 is a back-to-back burst of one coroutine (the formatter's
 * fast path), more the alternating case (its general path every other
 * record). Median of ROUNDS rounds of N records. Blocks handed as kept (the
 * common case) or, with -b, as a batch (the path of a pass whose blocks the
 * formatter may not all keep, or of more runs than it merges in place). With
 * -w 2, two writers (two rings, a coroutine each, in one pass's block) whose
 * records alternate by time in stretches of S (-s): the merge of a 2-writer
 * burst, whose stretches are short while both writers run at once.
 * With -f, a Boost.Fiber handoff (bench-fiber.cpp's): two coroutines, three
 * records a handoff (the wake of the other, with its site and its waker;
 * the suspend on a wait object, at another site; the other's resume, with
 * the suspend's stamp). With -l MIB, each pass is formatted MIB MiB of
 * passes after it was written (a formatter that lags the harvest: its blocks
 * have left the caches). With -S, switch records (issue #32's shape: one
 * record a switch, written as one switch entry): each of the -w writers
 * switches round robin among its own COROS coroutines (-c, up to 1024), the
 * writers' records alternating in stretches of S (-s 1: two scheduler
 * threads running at once).
 * Usage: bench-format [-c COROS | -f] [-w 1|2 [-s S]] [-S] [-n N] [-r ROUNDS] [-b] [-l MIB] */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../tests/lib/fmt-map.h"
#include "common/ctp.h"
#include "engine/clock.h"
#include "engine/harvest.h"
#include "engine/procs.h"
#include "engine/rings_int.h"
#include "engine/sink.h"
#include "format/ctw.h"

#define NST 2048u  /* stations: -S takes up to 2 x 1024 */
#define NST_EV 64u /* coroutines of the event records' shapes */
#define PER 32768u /* records per pass */

static uint64_t bytes;
static void on_chunk(void *ctx, const uint8_t *p, size_t n, const struct ct_ctw_chunk *c) {
  (void)ctx;
  (void)p;
  (void)c;
  bytes += n;
}
static void on_line(void *ctx, const char *s, size_t n) {
  (void)ctx;
  (void)s;
  (void)n;
}

static double cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Record k of the Boost.Fiber handoffs (-f), at ts. */
static struct ctp_rec fiber_rec(uint64_t k, uint64_t ts) {
  uint32_t a = (uint32_t)(k / 3 % 2), b = 1 - a; /* a hands the thread to b */
  switch (k % 3) {
  case 0:
    return (struct ctp_rec){.ts = ts,
                            .station = b,
                            .gen = 1,
                            .kind = CTP_KIND_WAKE,
                            .site = 0x55d0c0a01c84ull,
                            .obj = 1000 + a};
  case 1:
    return (struct ctp_rec){.ts = ts,
                            .station = a,
                            .gen = 1,
                            .kind = CTP_KIND_SUSPEND,
                            .wait = CTP_WAIT_PTR,
                            .site = 0x55d0c0a01c48ull,
                            .obj = 0x7fd57bc1cd68ull};
  default:
    return (struct ctp_rec){.ts = ts, .station = b, .gen = 1, .kind = CTP_KIND_RESUME};
  }
}

/* Record kk of writer wi's round robin among its coros coroutines (-S), at
 * ts: the switch from its kk-th coroutine to the next. */
static struct ctp_rec switch_rec(uint32_t wi, uint32_t coros, uint64_t kk, uint64_t ts) {
  struct ctp_swrec sw = {.ts = ts,
                         .from = wi * coros + (uint32_t)(kk % coros),
                         .from_gen = 1,
                         .kind = CTP_KIND_SWITCH,
                         .wait = CTP_WAIT_NONE | CTP_SW_WAKE,
                         .site = 0x55d0c0a01234ull,
                         .to = wi * coros + (uint32_t)((kk + 1) % coros),
                         .to_gen = 1};
  struct ctp_rec r;
  memcpy(&r, &sw, sizeof r);
  return r;
}

/* One round: n records through a fresh formatter, from w writers taking
 * turns in stretches of st records (fiber: -f's records; sw: -S's), each
 * pass formatted lag passes after it was written. Returns ns per record. */
static double round_once(uint32_t coros, uint32_t w, uint32_t st, uint64_t n, int keep, int fiber,
                         int sw, uint32_t lag) {
  size_t len;
  void *map = ct_fmt_map(NST, 2, &len);
  size_t cap =
      (PER * sizeof(struct ctp_rec) + w * sizeof(struct seg) + SEG_END_BYTES + 63) & ~(size_t)63;
  uint8_t *pool = aligned_alloc(64, cap * (lag + 1)), *blk = pool;
  size_t *plen = calloc(lag + 1, sizeof *plen);
  if (!map || !pool || !plen) {
    fprintf(stderr, "bench-format: out of memory\n");
    exit(1);
  }
  ((struct ctp_header *)map)->allocated_count = NST;
  for (uint32_t i = 0; i < NST; i++) {
    struct ctp_station *s = ctp_station_at(map, i);
    s->probe_id = 1000 + i;
    s->gen = 1;
    atomic_store_explicit(&s->ext_flags, CTP_STF_EXT | CTP_STF_RINGS, memory_order_release);
  }
  struct ct_sink sink;
  memset(&sink, 0, sizeof sink);
  struct ct_ctw_to to = {.chunk = on_chunk, .line = on_line};
  struct ct_procs procs = {0};
  struct ct_clock clock;
  struct ct_harvest h;
  ct_clock_init(&clock, CTP_CLOCK_MONO);
  if (ct_ctw_open(&sink.enc, NULL) || ct_harvest_init(&h, map, len, NST, &procs, &sink, &clock)) {
    fprintf(stderr, "bench-format: set-up failed\n");
    exit(1);
  }
  ct_ctw_redirect(sink.enc, &to);
  /* Ticks ~0.7 ns, 40-120 apart (a back-to-back writer's), the anchor at
   * the pass's end. */
  struct ct_clock ck = {.kind = CTP_CLOCK_TSC, .mult = 3006477107ull, .ma = 1000000000ull};
  uint64_t ts = 1000000, x = 88172645463325252ull, k = 0;
  double t = 0;
  uint32_t ncreate = sw ? w * coros : w > 1 ? w : coros;
  for (uint32_t c = 0; c < ncreate; c++) {        /* the creates, untimed */
    uint32_t cw = sw ? c / coros : w > 1 ? c : 0; /* its writer */
    struct seg sg = {.kind = SEG_RECS, .n = 1, .ring = cw, .tid = 7 + cw};
    struct ctp_rec r = {.ts = ts++, .station = c, .gen = 1, .kind = CTP_KIND_CREATE};
    struct seg se = {.kind = SEG_END};
    memcpy(blk, &sg, sizeof sg);
    memcpy(blk + sizeof sg, &r, sizeof r);
    memset(blk + sizeof sg + sizeof r, 0, SEG_END_BYTES);
    memcpy(blk + sizeof sg + sizeof r, &se, sizeof se);
    memcpy(blk + sizeof sg + sizeof r + sizeof se, &ck, sizeof ck);
    ct_rings_on_block(&h, (const char *)blk, sizeof sg + sizeof r + SEG_END_BYTES, keep);
  }
  struct ctp_rec *ring_recs[2];
  for (uint32_t i = 0; i < w; i++) /* each writer's records, in time order */
    ring_recs[i] = malloc(PER * sizeof(struct ctp_rec));
  if (!ring_recs[0] || !ring_recs[w - 1]) {
    fprintf(stderr, "bench-format: out of memory\n");
    exit(1);
  }
  uint64_t kw[2] = {0, 0}; /* each writer's record count, for its kinds */
  /* Pass j is written at step j into slot j % (lag + 1), formatted at step
   * j + lag: after lag more passes were written (the slot's next use). */
  uint64_t passes = (n + PER - 1) / PER;
  for (uint64_t pass = 0; pass < passes + lag; pass++) {
    if (pass < passes) {
      uint32_t nr[2] = {0, 0};
      for (uint32_t j = 0; j < PER; j++, k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint32_t wi = w > 1 ? j / st % w : 0;
        uint64_t kk = kw[wi]++;
        if (fiber) { /* the resume has the suspend's stamp */
          ts += kk % 3 == 2 ? 0 : 40 + x % 80;
          ring_recs[0][nr[0]++] = fiber_rec(kk, ts);
          continue;
        }
        ts += 40 + x % 80;
        if (sw) {
          ring_recs[wi][nr[wi]++] = switch_rec(wi, coros, kk, ts);
          continue;
        }
        int resume = kk % 2;
        ring_recs[wi][nr[wi]++] =
            (struct ctp_rec){.ts = ts,
                             .station = w > 1 ? wi : (uint32_t)(kk / 2 % coros),
                             .gen = 1,
                             .kind = resume ? CTP_KIND_RESUME : CTP_KIND_SUSPEND,
                             .site = resume ? 0 : 0x55d0c0a01234ull};
      }
      uint8_t *p = blk = pool + pass % (lag + 1) * cap;
      for (uint32_t i = 0; i < w; i++) {
        struct seg sg = {.kind = SEG_RECS, .n = nr[i], .ring = i, .tid = 7 + i, .sorted = 1};
        memcpy(p, &sg, sizeof sg);
        memcpy(p + sizeof sg, ring_recs[i], nr[i] * sizeof(struct ctp_rec));
        p += sizeof sg + nr[i] * sizeof(struct ctp_rec);
      }
      struct seg se = {.kind = SEG_END};
      /* -S: the anchor moves with the ticks, as a real clock's does (a
       * switch entry needs ts not going back; the event shapes' clamp). */
      ck.ma += sw ? (uint64_t)(((unsigned __int128)(ts - ck.ta) * ck.mult) >> 32) : 30000;
      ck.ta = ts;
      memset(p, 0, SEG_END_BYTES);
      memcpy(p, &se, sizeof se);
      memcpy(p + sizeof se, &ck, sizeof ck);
      plen[pass % (lag + 1)] = (size_t)(p + SEG_END_BYTES - blk);
    }
    if (pass >= lag) {
      uint64_t j = (pass - lag) % (lag + 1);
      double a = cpu();
      ct_rings_on_block(&h, (const char *)pool + j * cap, plen[j], keep);
      t += cpu() - a;
    }
  }
  for (uint32_t i = 0; i < w; i++)
    free(ring_recs[i]);
  ct_ctw_flush(sink.enc);
  ct_ctw_free(sink.enc);
  ct_harvest_free(&h);
  free(pool);
  free(plen);
  free(map);
  return t * 1e9 / (double)k;
}

int main(int argc, char **argv) {
  uint32_t coros = 1, rounds = 5, w = 1, st = 64, lag_mib = 0;
  uint64_t n = 10000000;
  int keep = 1, fiber = 0, sw = 0, opt;
  while ((opt = getopt(argc, argv, "c:w:s:n:r:bfSl:")) != -1) {
    if (opt == 'c')
      coros = (uint32_t)strtoul(optarg, NULL, 10);
    else if (opt == 'w')
      w = (uint32_t)strtoul(optarg, NULL, 10);
    else if (opt == 's')
      st = (uint32_t)strtoul(optarg, NULL, 10);
    else if (opt == 'n')
      n = strtoull(optarg, NULL, 10);
    else if (opt == 'r')
      rounds = (uint32_t)strtoul(optarg, NULL, 10);
    else if (opt == 'b')
      keep = 0;
    else if (opt == 'f')
      fiber = 1;
    else if (opt == 'S')
      sw = 1;
    else if (opt == 'l')
      lag_mib = (uint32_t)strtoul(optarg, NULL, 10);
    else
      return 2;
  }
  if (coros < 1 || coros > (sw ? NST / 2 : NST_EV) || rounds < 1 || rounds > 99 || w < 1 || w > 2 ||
      st < 1 || (w > 1 && coros > 1 && !sw) || (fiber && (w > 1 || coros > 1 || sw)) ||
      (sw && coros < 2) || lag_mib > 1024) {
    fprintf(stderr,
            "bench-format: -c 1..%u (-S: 2..%u), -w 1..2 (with -c 1, or -S), -s 1.., -r 1..99, -f "
            "alone, -l 0..1024\n",
            NST_EV, NST / 2);
    return 2;
  }
  if (fiber)
    coros = 2;
  /* A pass's records are PER * 32 bytes: 1 MiB. */
  uint32_t lag = (uint32_t)((uint64_t)lag_mib * 1024 * 1024 / (PER * sizeof(struct ctp_rec)));
  double ns[99];
  for (uint32_t i = 0; i < rounds; i++)
    ns[i] = round_once(coros, w, st, n, keep, fiber, sw, lag);
  qsort(ns, rounds, sizeof ns[0], cmp_d);
  char how[96] = "";
  if (sw)
    snprintf(how, sizeof how, " a writer, switch records, %u writer(s) in stretches of %u", w, st);
  else if (w > 1)
    snprintf(how, sizeof how, ", %u writers in stretches of %u", w, st);
  else if (fiber)
    snprintf(how, sizeof how, ", Boost.Fiber handoffs");
  if (lag)
    snprintf(how + strlen(how), sizeof how - strlen(how), ", %u MiB behind", lag_mib);
  printf("formatter: %.2f ns per record (median of %u rounds of %llu; %u coroutine(s)%s, %s), "
         "%.2f bytes per record\n",
         ns[rounds / 2], rounds, (unsigned long long)n, w > 1 && !sw ? w : coros, how,
         keep ? "kept blocks" : "batch", (double)bytes / ((double)n * rounds));
  return 0;
}
