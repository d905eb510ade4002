/* test-report-value.c - the report is a value: ct_report_build leaves the
 * state it reads as it was. Built twice from one state it says the same; built
 * from a state still being fed (the live view's snapshots) it changes nothing
 * the next report sees: the final report equals that of a fresh state fed the
 * same lines once. The trace has what used to write into the state: a run
 * still going past the blocker threshold at the snapshot (closed by the build),
 * and a lost wakeup that is also never destroyed (marked, so that the leak
 * finding leaves it out). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model.h"
#include "lib/check.h"

/* tests/data/report/gen.awk of: meta; 1 parks on ptr 77 for good; 2 runs from
 * +10 ms on, never suspending; 3 returns at +500 ms, never freed; -- the
 * snapshot is taken here --; 4 lives and dies; the end at +3.2 s. */
static const char *const lines[] = {
    "{\"type\":\"meta\",\"format\":\"corotracer-trace\",\"format_version\":1,\"run_id\":\"00ff\","
    "\"host\":\"testbox\",\"engine\":\"corotracer "
    "0.1.0\",\"command\":[\"./"
    "app\"],\"engine_pid\":4241,\"target_pid\":4242,\"stations\":64,\"clock\":{\"mono_ns\":"
    "1000000000000,\"wall_ns\":1763700000000000000},\"poll_ms\":1000}",
    "{\"type\":\"coroutine\",\"probe_id\":1,\"station\":1,\"pid\":4242,\"birth_ts\":1000000000000,"
    "\"label\":\"conn\",\"create_site\":\"0x000000000000a000\",\"parent\":0}",
    "{\"probe_id\":1,\"tid\":100,\"addr\":\"0x000000000000a000\",\"seq\":2,\"is_active\":false,"
    "\"ts\":1000000000000,\"kind\":\"create\",\"ev\":0,\"site\":\"0x000000000000a000\",\"parent\":"
    "0}",
    "{\"probe_id\":1,\"tid\":100,\"addr\":\"0x0000000000000000\",\"seq\":4,\"is_active\":true,"
    "\"ts\":1000001000000,\"kind\":\"resume\",\"ev\":1}",
    "{\"probe_id\":1,\"tid\":100,\"addr\":\"0x0000000000001234\",\"seq\":6,\"is_active\":false,"
    "\"ts\":1000005000000,\"kind\":\"suspend\",\"ev\":2,\"site\":\"0x0000000000001234\",\"wait\":"
    "\"ptr\",\"obj\":\"0x0000000000000077\"}",
    "{\"type\":\"coroutine\",\"probe_id\":2,\"station\":1,\"pid\":4242,\"birth_ts\":1000000000000,"
    "\"label\":\"conn\",\"create_site\":\"0x000000000000a000\",\"parent\":0}",
    "{\"probe_id\":2,\"tid\":101,\"addr\":\"0x000000000000a000\",\"seq\":2,\"is_active\":false,"
    "\"ts\":1000000000000,\"kind\":\"create\",\"ev\":0,\"site\":\"0x000000000000a000\",\"parent\":"
    "0}",
    "{\"probe_id\":2,\"tid\":101,\"addr\":\"0x0000000000000000\",\"seq\":4,\"is_active\":true,"
    "\"ts\":1000010000000,\"kind\":\"resume\",\"ev\":1}",
    "{\"type\":\"coroutine\",\"probe_id\":3,\"station\":1,\"pid\":4242,\"birth_ts\":1000000000000,"
    "\"label\":\"conn\",\"create_site\":\"0x000000000000a000\",\"parent\":0}",
    "{\"probe_id\":3,\"tid\":100,\"addr\":\"0x000000000000a000\",\"seq\":2,\"is_active\":false,"
    "\"ts\":1000000000000,\"kind\":\"create\",\"ev\":0,\"site\":\"0x000000000000a000\",\"parent\":"
    "0}",
    "{\"probe_id\":3,\"tid\":100,\"addr\":\"0x0000000000000000\",\"seq\":4,\"is_active\":true,"
    "\"ts\":1000020000000,\"kind\":\"resume\",\"ev\":1}",
    "{\"probe_id\":3,\"tid\":100,\"addr\":\"0x0000000000005000\",\"seq\":6,\"is_active\":false,"
    "\"ts\":1000500000000,\"kind\":\"suspend\",\"ev\":2,\"site\":\"0x0000000000005000\",\"wait\":"
    "\"exit\"}",
    "{\"type\":\"coroutine\",\"probe_id\":4,\"station\":1,\"pid\":4242,\"birth_ts\":1003000000000,"
    "\"label\":\"conn\",\"create_site\":\"0x000000000000a000\",\"parent\":0}",
    "{\"probe_id\":4,\"tid\":100,\"addr\":\"0x000000000000a000\",\"seq\":2,\"is_active\":false,"
    "\"ts\":1003000000000,\"kind\":\"create\",\"ev\":0,\"site\":\"0x000000000000a000\",\"parent\":"
    "0}",
    "{\"probe_id\":4,\"tid\":100,\"addr\":\"0x0000000000000000\",\"seq\":4,\"is_active\":true,"
    "\"ts\":1003001000000,\"kind\":\"resume\",\"ev\":1}",
    "{\"probe_id\":4,\"tid\":100,\"addr\":\"0x0000000000005000\",\"seq\":6,\"is_active\":false,"
    "\"ts\":1003050000000,\"kind\":\"suspend\",\"ev\":2,\"site\":\"0x0000000000005000\",\"wait\":"
    "\"exit\"}",
    "{\"probe_id\":4,\"tid\":100,\"addr\":\"0x000000000000c000\",\"seq\":8,\"is_active\":false,"
    "\"ts\":1003100000000,\"kind\":\"destroy\",\"ev\":3,\"site\":\"0x000000000000c000\"}",
    "{\"type\":\"end\",\"ts\":1003200000000,\"wall_ns\":1763700000900000000,\"exit\":{\"code\":0},"
    "\"events\":100,\"harvested\":100,\"lost\":0,\"stations_used\":4,\"untraced_coroutines\":0,"
    "\"torn\":0}",
};
#define NLINES (sizeof lines / sizeof lines[0])
#define SNAPSHOT 12 /* lines fed before the live view's snapshot */

/* Feeds lines [from, to) to st. */
static void feed(struct ct_state *st, size_t from, size_t to) {
  for (size_t i = from; i < to; i++) {
    struct ct_line l;
    enum ct_line_err err = ct_parse_line(lines[i], strlen(lines[i]), &l);
    ASSERT_EQ(err, CT_LINE_OK);
    ASSERT_OK(ct_state_line(st, i + 1, err, &l));
  }
}

/* The report of st as its JSON (malloc'd); live_ts as ct_report_build's. */
static char *report_json(const struct ct_state *st, uint64_t live_ts) {
  struct ct_report r;
  char *json = NULL;
  size_t len = 0;
  ASSERT_OK(ct_report_build(st, "value.jsonl", 1234, CT_STUCK_NS, live_ts, &r));
  FILE *f = open_memstream(&json, &len);
  ASSERT_NOT_NULL(f);
  ASSERT_OK(ct_write_json(f, &r));
  ASSERT_EQ(fclose(f), 0);
  ct_report_free(&r);
  return json;
}

int main(void) {
  struct ct_state *live, *fresh;
  ASSERT_OK(ct_state_new(CT_BLOCKER_NS, &live));
  ASSERT_OK(ct_state_new(CT_BLOCKER_NS, &fresh));

  /* The snapshot: twice the same (the still running blocker counted once). */
  feed(live, 0, SNAPSHOT);
  char *a = report_json(live, 0), *b = report_json(live, 0);
  ASSERT_STR_EQ(a, b);
  ASSERT_NOT_NULL(strstr(a, "\"kind\":\"blocker\""));
  ASSERT_NOT_NULL(strstr(a, "2 coroutines ran longer than 100.0 ms without suspending (2 runs)"));
  free(b);
  b = report_json(live, 1002000000000ull); /* a live present: the findings judge to it */
  ASSERT_NOT_NULL(strstr(b, "\"end_ts\":1002000000000,"));
  free(a);
  free(b);

  /* The rest of the run: as if no report had been built on the way. */
  feed(live, SNAPSHOT, NLINES);
  feed(fresh, 0, NLINES);
  a = report_json(live, 0);
  b = report_json(fresh, 0);
  ASSERT_STR_EQ(a, b);
  ASSERT_NOT_NULL(strstr(a, "\"kind\":\"lost_wakeup\""));
  ASSERT_NOT_NULL(strstr(a, "reported as lost_wakeup"));
  ASSERT_NOT_NULL(strstr(a, "2 coroutines ran longer than 100.0 ms without suspending (2 runs)"));
  free(b);
  b = report_json(live, 0); /* and again: the marks are the report's, not the state's */
  ASSERT_STR_EQ(a, b);
  free(a);
  free(b);
  ct_state_free(live);
  ct_state_free(fresh);
  printf("ok: the report leaves its state as it was\n");
  return 0;
}
