/* test-report-runs.c - the report's and the dashboard's fast path (a binary
 * trace's runs of one coroutine's events, ct_ctr_run -> ct_trace_read_runs ->
 * ct_state_run, ct_model_run) against their general one (every entry a line,
 * ct_ctr_next -> ct_state_line, ct_model_line): on seeded random binary
 * traces (runs of one coroutine, every kind of event, waits, wakes, gaps,
 * migrations, torn records, coroutine records and text lines in between),
 * both readings must deliver the same lines, numbered alike, with the same
 * meaning (struct ct_event) for each event, the reports built from the two
 * states must be byte for byte the same, in Markdown and in JSON, and so must
 * the dashboard's blobs serialized from the two models. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/model.h"
#include "analysis/trace.h"
#include "common/buf.h"
#include "format/ctrace.h"
#include "format/ctw.h"
#include "format/writer.h"
#include "html/model.h"
#include "lib/check.h"
#include "lib/rnd.h"

#define TRACES 24
#define NEV 20000
#define NCORO 48

static uint64_t rng;
static uint64_t rnd(void) {
  return ct_rnd(&rng);
}
/* 1 with probability pct %. */
static int chance(unsigned pct) {
  return rnd() % 100 < pct;
}

/* What the generator remembers of a coroutine to write a plausible next event. */
struct gen_coro {
  uint64_t ev;
  uint8_t kind; /* its last event's (0: none yet) */
  uint32_t tid;
};

/* The next event of coroutine k at ts: mostly what a scheduler writes next
 * (create, resume, suspend on some wait, wake, destroy), sometimes anything:
 * an odd kind, a lost event (a gap in ev), a torn record, a clock from before
 * the trace's meta. */
static void next_event(struct ct_ev_item *e, struct gen_coro *g, uint64_t k, uint64_t ts) {
  static const uint64_t sites[] = {0x55d0c0a01234, 0x55d0c0a01300, 0x55d0c0a01400, 0x7f0012345678};
  uint64_t r = rnd();
  memset(e, 0, sizeof *e);
  e->probe_id = 0x1000 + k;
  e->ts = ts;
  if (!g->tid || chance(3))
    g->tid = 4711 + (uint32_t)(rnd() % 3);
  e->tid = g->tid;
  switch (g->kind) {
  case 0:
  case CTP_KIND_DESTROY:
    e->kind = CTP_KIND_CREATE;
    break;
  case CTP_KIND_CREATE:
  case CTP_KIND_WAKE:
    e->kind = chance(85) ? CTP_KIND_RESUME : CTP_KIND_WAKE;
    break;
  case CTP_KIND_RESUME:
    e->kind = chance(90) ? CTP_KIND_SUSPEND : CTP_KIND_DESTROY;
    break;
  default:
    e->kind = chance(50) ? CTP_KIND_WAKE : chance(80) ? CTP_KIND_RESUME : CTP_KIND_DESTROY;
  }
  if (chance(4))
    e->kind = (uint8_t)(rnd() % CTP_KIND_MAX_);
  e->active = e->kind == CTP_KIND_RESUME || (e->kind == CTP_KIND_V1 && chance(50));
  e->addr = e->active ? 0 : sites[r % 4];
  if (e->kind == CTP_KIND_SUSPEND) {
    e->wait = (uint8_t)((r >> 8) % CTP_WAIT_MAX_);
    e->obj = e->wait == CTP_WAIT_COROUTINE ? 0x1000 + (r >> 16) % NCORO : (r >> 16) % 8;
  } else if (e->kind == CTP_KIND_WAKE || e->kind == CTP_KIND_CREATE) {
    e->obj = chance(30) ? 0 : 0x1000 + (r >> 16) % NCORO;
  }
  if (chance(2))
    g->ev += 1 + rnd() % 3; /* events lost */
  e->ev = g->ev++;
  e->seq = 2 * (e->ev + 1);
  g->kind = e->kind;
  if (chance(1)) /* torn: the decoder's verdict */
    rnd() % 2 ? (e->ts = 0) : (e->tid = 0);
  else if (chance(1)) /* before the meta line: the state's verdict */
    e->ts = 1000;
}

/* A trace for seed: meta, events in runs of one coroutine (coroutine records
 * and text lines between them), end; written by the engine's encoder to fd. */
static void make_trace(int fd, uint64_t seed) {
  struct gen_coro g[NCORO] = {{0}};
  struct ct_writer w = {.fd = fd, .buf = malloc(CT_W_BUF), .binary = 1};
  struct ct_ctw *enc;
  char line[256];
  uint64_t ts = 10000000000ull, k = 0;
  rng = seed;
  ASSERT_PTR_NE(w.buf, NULL);
  ASSERT_OK(ct_ctw_open(&enc, &w));
  ASSERT_OK(ct_ctw_header(enc));
  int n = snprintf(line, sizeof line,
                   "{\"type\":\"meta\",\"format\":\"corotracer/1\",\"run_id\":\"r%llu\","
                   "\"clock\":{\"mono_ns\":%llu},\"target_pid\":4242}\n",
                   (unsigned long long)seed, (unsigned long long)ts);
  ct_ctw_text(enc, line, (size_t)n);
  for (uint64_t i = 0; i < NEV; i++) {
    if (!chance(seed % 2 ? 90 : 70)) /* the run goes on, or another coroutine's starts */
      k = rnd() % NCORO;
    ts += chance(1) ? rnd() % 3000000000ull : chance(5) ? rnd() % 50000000 : rnd() % 2000;
    struct ct_ev_item e;
    next_event(&e, &g[k], k, ts);
    ct_ctw_event(enc, &e);
    if (e.kind == CTP_KIND_CREATE && chance(30)) {
      struct ct_coro_item c = {.probe_id = e.probe_id,
                               .birth_ts = ts,
                               .create_site = e.addr,
                               .parent = e.obj,
                               .station = (uint32_t)k,
                               .pid = 4242,
                               .has_label = 1};
      snprintf(c.label, sizeof c.label, "worker-%llu", (unsigned long long)(k % 5));
      ct_ctw_coro(enc, &c);
    }
    if (chance(1))
      ct_ctw_text(enc, "{\"type\":\"process\",\"pid\":4242}\n", 30);
  }
  n = snprintf(line, sizeof line, "{\"type\":\"end\",\"ts\":%llu,\"exit\":{\"code\":0}}\n",
               (unsigned long long)ts + 1000);
  ct_ctw_text(enc, line, (size_t)n);
  ASSERT_OK(ct_ctw_flush(enc));
  ct_ctw_free(enc);
  ASSERT_OK(ct_writer_flush(&w));
  free(w.buf);
}

/* One delivered line: its number, verdict, type, and meaning (an event's). */
struct got {
  uint64_t lineno;
  int err, type;
  struct ct_event e;
};

/* A reading: the state and the dashboard's model it fed, and what it was given. */
struct reading {
  struct ct_state *st;
  struct ct_model m;
  struct got *g;
  size_t n, runs, run_events;
};

static void keep(struct reading *rd, uint64_t lineno, int err, int type, const struct ct_event *e) {
  struct got *g = &rd->g[rd->n++];
  memset(g, 0, sizeof *g);
  g->lineno = lineno;
  g->err = err;
  g->type = type;
  if (e)
    g->e = *e;
}

static int on_line(void *ctx, uint64_t lineno, enum ct_line_err err, const struct ct_line *l) {
  struct reading *rd = ctx;
  int event = err == CT_LINE_OK && l->type == CT_LINE_EVENT;
  keep(rd, lineno, err, err == CT_LINE_OK ? (int)l->type : -1, event ? &l->e : NULL);
  ASSERT_OK(ct_model_line(&rd->m, err, l));
  return ct_state_line(rd->st, lineno, err, l);
}

static int on_run(void *ctx, const struct ct_event *ev, size_t n) {
  struct reading *rd = ctx;
  ASSERT_GE(n, 1);
  for (size_t i = 0; i < n; i++) {
    ASSERT_UINT64_EQ(ev[i].probe_id, ev[0].probe_id); /* one coroutine's */
    keep(rd, ev[i].line, CT_LINE_OK, CT_LINE_EVENT, &ev[i]);
  }
  rd->runs++;
  rd->run_events += n;
  ASSERT_OK(ct_model_run(&rd->m, ev, n));
  return ct_state_run(rd->st, ev, n);
}

static void on_peek(void *ctx, const struct ct_line *l) {
  ct_state_prefetch(((struct reading *)ctx)->st, l);
}

/* The two events, field by field (padding aside). */
static void same_event(const struct ct_event *a, const struct ct_event *b, uint64_t lineno) {
  const uint64_t fa[] = {a->line, a->probe_id, a->tid,    a->ts,   a->addr, a->seq,
                         a->ev,   a->from,     a->parent, a->site, a->obj};
  const uint64_t fb[] = {b->line, b->probe_id, b->tid,    b->ts,   b->addr, b->seq,
                         b->ev,   b->from,     b->parent, b->site, b->obj};
  const uint8_t ba[] = {a->kind,    a->v1,     a->wait,     a->is_active, a->obj_is_str,
                        a->has_tid, a->has_ev, a->has_site, a->has_from,  a->has_parent};
  const uint8_t bb[] = {b->kind,    b->v1,     b->wait,     b->is_active, b->obj_is_str,
                        b->has_tid, b->has_ev, b->has_site, b->has_from,  b->has_parent};
  for (size_t k = 0; k < sizeof fa / sizeof fa[0]; k++)
    if (fa[k] != fb[k])
      FAIL("line %llu: field %zu: %llu != %llu", (unsigned long long)lineno, k,
           (unsigned long long)fa[k], (unsigned long long)fb[k]);
  for (size_t k = 0; k < sizeof ba; k++)
    if (ba[k] != bb[k])
      FAIL("line %llu: flag %zu: %u != %u", (unsigned long long)lineno, k, ba[k], bb[k]);
}

/* The report of rd's state, as Markdown then JSON, in *out (malloc'ed). */
static size_t report_text(const struct reading *rd, uint64_t bytes, char **out) {
  struct ct_report r;
  size_t n = 0;
  FILE *f = open_memstream(out, &n);
  ASSERT_PTR_NE(f, NULL);
  ASSERT_OK(ct_report_build(rd->st, "trace", bytes, 2000000000ull, 0, &r));
  ASSERT_OK(ct_write_markdown(f, &r));
  ASSERT_OK(ct_write_json(f, &r));
  ct_report_free(&r);
  ASSERT_EQ(fclose(f), 0);
  return n;
}

/* The dashboard's model for seed, in *m; for odd seeds, as `corotracer html`
 * makes it of a file (rows pruned, coroutines kept in full as its second pass
 * keeps those the findings name), with a span budget the trace overflows. */
static void model_init(struct ct_model *m, uint64_t seed) {
  size_t budget = seed % 2 ? 300 : 1000000;
  ASSERT_OK(ct_model_init(m, budget, budget / 5 * 7));
  if (seed % 2) {
    ct_model_prune(m);
    for (uint64_t k = seed % 4; k < NCORO; k += 7)
      ASSERT_OK(ct_model_keep(m, 0x1000 + k));
    /* Rows of no coroutine of the trace: with the NCORO ones, past the 64
     * rows at which pruning starts, so that rows go (and come back when
     * their coroutine is created again) while the events come. */
    for (uint64_t k = 0; k < 24; k++)
      ASSERT_OK(ct_model_keep(m, 0x900000 + k));
  }
}

/* The blob serialized from rd's model (compressed, what the page embeds) in *z. */
static void model_blob(const struct reading *rd, struct ct_buf *z) {
  uint64_t raw = 0;
  memset(z, 0, sizeof *z);
  struct ct_model_page pg = {"{}", 2, NULL, "trace", 0, 0};
  ASSERT_OK(ct_model_serialize(&rd->m, &pg, z, NULL, &raw));
  ASSERT_GT(raw, 0);
}

static char path[] = "/tmp/test-report-runs.XXXXXX";
static void rm_file(void) {
  unlink(path);
}

int main(void) {
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  CHECK_ATFAIL(rm_file);
  size_t cap = 3 * NEV;
  struct reading a = {.g = calloc(cap, sizeof(struct got))};
  struct reading b = {.g = calloc(cap, sizeof(struct got))};
  ASSERT_PTR_NE(a.g, NULL);
  ASSERT_PTR_NE(b.g, NULL);
  size_t runs = 0, run_events = 0;
  uint64_t pruned = 0;
  for (uint64_t seed = 1; seed <= TRACES; seed++) {
    ASSERT_OK(ftruncate(fd, 0));
    ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
    make_trace(fd, seed * 0x9e3779b97f4a7c15ull);
    uint64_t ba = 0, bb = 0;
    struct ct_read_diag da, db;
    a.n = b.n = b.runs = b.run_events = 0;
    ASSERT_OK(ct_state_new(1000000, &a.st));
    ASSERT_OK(ct_state_new(1000000, &b.st));
    model_init(&a.m, seed);
    model_init(&b.m, seed);
    /* Small buffers, as many as the seeds (chunks cut by the buffer's end). */
    size_t buf = 4096 << (seed % 6);
    ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
    ASSERT_OK(ct_trace_read_diag(fd, buf, on_line, on_peek, &a, &ba, &da));
    ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
    ASSERT_OK(
        ct_trace_read_runs(fd, buf, on_line, on_run, seed % 3 ? on_peek : NULL, &b, &bb, &db));
    ASSERT_STR_EQ(da.why, "");
    ASSERT_STR_EQ(db.why, "");
    ASSERT_UINT64_EQ(ba, bb);
    ASSERT_UINT64_EQ(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
      ASSERT_UINT64_EQ(a.g[i].lineno, i + 1);
      ASSERT_UINT64_EQ(b.g[i].lineno, i + 1);
      ASSERT_EQ(a.g[i].err, b.g[i].err);
      ASSERT_EQ(a.g[i].type, b.g[i].type);
      same_event(&a.g[i].e, &b.g[i].e, i + 1);
    }
    char *ta, *tb;
    size_t na = report_text(&a, ba, &ta), nb = report_text(&b, bb, &tb);
    if (na != nb || memcmp(ta, tb, na)) {
      size_t k = 0;
      while (k < na && k < nb && ta[k] == tb[k])
        k++;
      FAIL("seed %llu: the reports differ at byte %zu:\n%.200s\n---\n%.200s",
           (unsigned long long)seed, k, ta + k, tb + k);
    }
    if (getenv("TEST_REPORT_RUNS_SHOW") && seed == 1)
      fwrite(ta, 1, na, stdout);
    free(ta);
    free(tb);
    struct ct_buf za, zb;
    model_blob(&a, &za);
    model_blob(&b, &zb);
    if (seed % 2) /* the budget overflowed: the spans kept and the spans dropped agree too */
      ASSERT_GT(a.m.spans_dropped, 0);
    ASSERT_UINT64_EQ(a.m.lines, b.m.lines);
    ASSERT_UINT64_EQ(a.m.nspans, b.m.nspans);
    ASSERT_UINT64_EQ(a.m.spans_dropped, b.m.spans_dropped);
    ASSERT_UINT64_EQ(a.m.coros_pruned, b.m.coros_pruned);
    pruned += a.m.coros_pruned;
    if (za.n != zb.n || memcmp(za.p, zb.p, za.n))
      FAIL("seed %llu: the dashboard's blobs differ (%zu and %zu bytes compressed)",
           (unsigned long long)seed, za.n, zb.n);
    ct_buf_free(&za);
    ct_buf_free(&zb);
    ct_model_free(&a.m);
    ct_model_free(&b.m);
    ct_state_free(a.st);
    ct_state_free(b.st);
    runs += b.runs;
    run_events += b.run_events;
  }
  /* The fast path was taken, on runs longer than one event. */
  ASSERT_GT(runs, TRACES * 100);
  ASSERT_GT(run_events, 2 * runs);
  ASSERT_GT(pruned, 0); /* and the dashboard's model pruned rows between events */
  printf("%d traces: %zu runs of %.1f events on average, %llu rows pruned\n", TRACES, runs,
         (double)run_events / (double)runs, (unsigned long long)pruned);
  close(fd);
  rm_file();
  free(a.g);
  free(b.g);
  puts("test-report-runs: ok");
  return 0;
}
