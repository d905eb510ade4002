/* bench-report-gen.c - writes a synthetic trace of N events to stdout for
 * bench/bench-report.sh: `alive` coroutines at a time, each living through
 * create, cycles of resume / suspend on an fd / wake, and destroy, in the
 * format of our engine (docs/TRACE_FORMAT.md), lines interleaved like a harvest.
 * Usage: bench-report-gen EVENTS [ALIVE [ref|ref-sites]] > trace.jsonl
 * ref: the reference engine's format instead (event lines only, no kind, ev,
 * meta or module lines): ALIVE coroutines resumed and suspended in turn, each
 * suspend address the coroutine's own frame address, as the reference's
 * C++/Rust SDKs write; ref-sites: the same with 16 code-like addresses. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CYCLES 6 /* resume/suspend/wake cycles per coroutine */

struct co {
  uint64_t id, ev;
  int step; /* 0 create, 1..3*CYCLES cycles, then resume, destroy */
};

/* The reference format: v1 event lines only. */
static int gen_ref(uint64_t n, uint64_t alive, int frames) {
  uint64_t ts = 1000000000000ull;
  for (uint64_t k = 0; k < n; k++) {
    uint64_t i = k % alive, id = i + 1, active = (k / alive) % 2 == 0;
    uint64_t addr = active   ? 0
                    : frames ? 0x00007f3a10000000ull + i * 0x240
                             : 0x0000555555560000ull + (i % 16) * 0x40;
    ts += 1000;
    printf("{\"probe_id\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"addr\":\"0x%016" PRIx64
           "\",\"seq\":%" PRIu64 ",\"is_active\":%s,\"ts\":%" PRIu64 "}\n",
           id, 100 + (i & 7), addr, 2 * (k / alive + 1), active ? "true" : "false", ts);
  }
  return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s EVENTS [ALIVE]\n", argv[0]);
    return 2;
  }
  uint64_t n = strtoull(argv[1], NULL, 10), alive = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
  if (!alive)
    alive = 1;
  struct co *cs = calloc(alive, sizeof *cs);
  static char buf[1 << 20];
  if (!cs || setvbuf(stdout, buf, _IOFBF, sizeof buf))
    return 1;
  if (argc > 3) {
    free(cs);
    if (strcmp(argv[3], "ref") && strcmp(argv[3], "ref-sites")) {
      fprintf(stderr, "%s: mode must be ref or ref-sites, not %s\n", argv[0], argv[3]);
      return 2;
    }
    return gen_ref(n, alive, !strcmp(argv[3], "ref"));
  }
  uint64_t ts = 1000000000000ull, next_id = 1, written = 0;
  printf("{\"type\":\"meta\",\"format\":\"corotracer-trace\",\"format_version\":1,\"run_id\":"
         "\"bench\","
         "\"host\":\"bench\",\"engine\":\"corotracer "
         "0.1.0\",\"command\":[\"./bench\"],\"engine_pid\":1,"
         "\"target_pid\":2,\"stations\":%" PRIu64 ",\"clock\":{\"mono_ns\":%" PRIu64
         ",\"wall_ns\":1763700000000000000},\"poll_ms\":1000}\n",
         alive, ts);
  printf("{\"type\":\"module\",\"pid\":2,\"start\":\"0x0000555555554000\",\"end\":"
         "\"0x0000555555600000\","
         "\"offset\":\"0x0000000000000000\",\"path\":\"/nonexistent/bench\"}\n");
  for (uint64_t i = 0; i < alive; i++)
    cs[i].id = next_id++;
  for (uint64_t i = 0; written < n; i = (i + 1) % alive) {
    struct co *c = &cs[i];
    uint64_t tid = 100 + (i & 7), site = 0x0000555555560000ull + (i % 16) * 0x40, fd = 10 + i % 500;
    ts += 1000;
    const char *head = "{\"probe_id\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"addr\":\"0x%016" PRIx64
                       "\",\"seq\":%" PRIu64 ",\"is_active\":%s,\"ts\":%" PRIu64
                       ",\"kind\":\"%s\",\"ev\":%" PRIu64;
    if (c->step == 0) {
      printf("{\"type\":\"coroutine\",\"probe_id\":%" PRIu64 ",\"station\":%" PRIu64
             ",\"pid\":2,\"birth_ts\":%" PRIu64
             ",\"label\":\"conn\",\"create_site\":\"0x%016" PRIx64 "\",\"parent\":0}\n",
             c->id, i, ts, site);
      printf(head, c->id, tid, site, 2 * (c->ev / 8 + 1), "false", ts, "create", c->ev);
      printf(",\"site\":\"0x%016" PRIx64 "\",\"parent\":0}\n", site);
    } else if (c->step <= 3 * CYCLES) {
      switch (c->step % 3) {
      case 1:
        printf(head, c->id, tid, (uint64_t)0, 2 * (c->ev / 8 + 1), "true", ts, "resume", c->ev);
        fputs("}\n", stdout);
        break;
      case 2:
        printf(head, c->id, tid, site + 8, 2 * (c->ev / 8 + 1), "false", ts, "suspend", c->ev);
        printf(",\"site\":\"0x%016" PRIx64 "\",\"wait\":\"fd\",\"obj\":%" PRIu64 "}\n", site + 8,
               fd);
        break;
      default:
        printf(head, c->id, tid + 1, site + 16, 2 * (c->ev / 8 + 1), "false", ts, "wake", c->ev);
        printf(",\"site\":\"0x%016" PRIx64 "\",\"from\":0}\n", site + 16);
      }
    } else if (c->step == 3 * CYCLES + 1) {
      printf(head, c->id, tid, (uint64_t)0, 2 * (c->ev / 8 + 1), "true", ts, "resume", c->ev);
      fputs("}\n", stdout);
    } else {
      printf(head, c->id, tid, site + 24, 2 * (c->ev / 8 + 1), "false", ts, "destroy", c->ev);
      printf(",\"site\":\"0x%016" PRIx64 "\"}\n", site + 24);
      *c = (struct co){.id = next_id++, .ev = 0, .step = 0};
      written++;
      continue;
    }
    c->ev++;
    c->step++;
    written++;
  }
  printf("{\"type\":\"end\",\"ts\":%" PRIu64
         ",\"wall_ns\":1763700000900000000,\"exit\":{\"code\":0},"
         "\"events\":%" PRIu64 ",\"harvested\":%" PRIu64 ",\"lost\":0,\"stations_used\":%" PRIu64
         ",\"untraced_coroutines\":0,\"torn\":0}\n",
         ts + 1000, written, written, next_id - 1);
  free(cs);
  return fflush(stdout) ? 1 : 0;
}
