/* test-read-event.c - one trace, three consumers, one meaning: the report's
 * state (src/analysis/state.c), the dashboard's model (src/html/model.c) and
 * the export's model (src/export/export_model.c) read the same trace, as
 * JSONL and as the binary trace, and must derive the same kind, site, wait
 * kind and wait object for every event, v1 lines (no "kind") and ours alike:
 * what the reader decided (struct ct_event), and what docs/TRACE_FORMAT.md
 * says (a v1 line's kind from is_active, its site its addr).
 *
 * The trace: hand-written v1 lines (as the reference engine writes them, text in both files), and
 * our SDK's events written by the engine's own writers (records.c for the JSONL line,
 * ctrace_enc.c for the binary entry) from one struct ct_ev_item each. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/state.h"
#include "analysis/trace.h"
#include "engine/sink.h"
#include "export/export.h"
#include "format/ctrace.h"
#include "format/ctw.h"
#include "format/records.h"
#include "format/writer.h"
#include "html/model.h"
#include "lib/check.h"

/* Unknown: the consumer keeps no site for this kind of event. */
#define NA UINT64_MAX
#define MAXEV 64

/* What one consumer derived from one event. */
struct seen {
  uint64_t
      kind; /* enum ct_ev_kind, never CT_EV_V1 (64 bits: no padding, the views are memcmp-ed) */
  uint64_t site, wait, obj;
};

/* The trace's events, in file order, as each consumer saw them. */
struct views {
  struct seen state[MAXEV], model[MAXEV], expo[MAXEV];
  size_t nstate, nmodel, nexpo;
};

/* ---- the trace ------------------------------------------------------------ */

#define V1_A 0x1000 /* a v1 coroutine */
#define B 0x2000    /* ours: waits on an fd, a pointer, a coroutine; returns */
#define C 0x3000    /* ours: yields, is joined */
#define S(n) (0x555555550000ull + (n)*0x100)

/* The hand-written v1 lines (the reference engine's keys, nothing more). */
static const char *const v1_lines[] = {
    "{\"probe_id\":4096,\"tid\":100,\"addr\":\"0x0000555555550100\",\"seq\":1,\"is_active\":false,"
    "\"ts\":1000000100}",
    "{\"probe_id\":4096,\"tid\":100,\"addr\":\"0x0000000000000000\",\"seq\":2,\"is_active\":true,"
    "\"ts\":1000000200}",
    "{\"probe_id\":4096,\"tid\":100,\"addr\":\"0x0000000000000000\",\"seq\":3,\"is_active\":true,"
    "\"ts\":1000000300}",
    "{\"probe_id\":4096,\"tid\":100,\"addr\":\"0x0000555555550200\",\"seq\":4,\"is_active\":false,"
    "\"ts\":1000000400}",
    "{\"probe_id\":4096,\"tid\":101,\"addr\":\"0x0000000000000000\",\"seq\":5,\"is_active\":true,"
    "\"ts\":1000000500}",
};

/* Our events: kind, coroutine, site (addr), wait, obj (parent, waker, object). */
static const struct {
  uint8_t kind;
  uint64_t id, addr;
  uint8_t wait;
  uint64_t obj;
} ours[] = {
    {CT_EV_CREATE, C, S(10), 0, 0},
    {CT_EV_CREATE, B, S(11), 0, C},
    {CT_EV_RESUME, B, 0, 0, 0},
    {CT_EV_SUSPEND, B, S(3), CTP_WAIT_FD, 7},
    {CT_EV_RESUME, C, 0, 0, 0},
    {CT_EV_WAKE, B, S(12), 0, C},
    {CT_EV_SUSPEND, C, S(7), CTP_WAIT_NONE, 0},
    {CT_EV_RESUME, B, 0, 0, 0},
    {CT_EV_SUSPEND, B, S(4), CTP_WAIT_PTR, 0x7f00deadbe00ull},
    {CT_EV_WAKE, B, S(13), 0, 0},
    {CT_EV_RESUME, B, 0, 0, 0},
    {CT_EV_SUSPEND, B, S(5), CTP_WAIT_COROUTINE, C},
    {CT_EV_RESUME, C, 0, 0, 0},
    {CT_EV_DESTROY, C, S(14), 0, 0},
    {CT_EV_WAKE, B, S(15), 0, 0},
    {CT_EV_RESUME, B, 0, 0, 0},
    {CT_EV_SUSPEND, B, S(6), CTP_WAIT_EXIT, 0},
    {CT_EV_DESTROY, B, S(16), 0, 0},
};
#define NOURS (sizeof ours / sizeof ours[0])
#define NV1 (sizeof v1_lines / sizeof v1_lines[0])

/* What every consumer must see: the v1 lines' meaning by the format's rule. */
static struct seen expected(size_t i) {
  if (i < NV1) {
    static const struct seen v1[] = {{CT_EV_SUSPEND, S(1), CTP_WAIT_NONE, 0},
                                     {CT_EV_RESUME, 0, CTP_WAIT_NONE, 0},
                                     {CT_EV_RESUME, 0, CTP_WAIT_NONE, 0},
                                     {CT_EV_SUSPEND, S(2), CTP_WAIT_NONE, 0},
                                     {CT_EV_RESUME, 0, CTP_WAIT_NONE, 0}};
    return v1[i];
  }
  i -= NV1;
  int has_obj = ours[i].kind == CT_EV_SUSPEND && ours[i].wait != CTP_WAIT_NONE &&
                ours[i].wait != CTP_WAIT_EXIT;
  return (struct seen){ours[i].kind, ours[i].addr, ours[i].kind == CT_EV_SUSPEND ? ours[i].wait : 0,
                       has_obj ? ours[i].obj : 0};
}

static char jpath[] = "/tmp/test-read-event.XXXXXX", bpath[] = "/tmp/test-read-event-b.XXXXXX";
static void rm_files(void) {
  unlink(jpath);
  unlink(bpath);
}

/* Writes the trace: JSONL to jpath, binary to bpath. */
static void write_trace(void) {
  int jfd = mkstemp(jpath), bfd = mkstemp(bpath);
  ASSERT_GE(jfd, 0);
  ASSERT_GE(bfd, 0);
  CHECK_ATFAIL(rm_files);
  struct ct_writer w = {.fd = bfd, .buf = malloc(CT_W_BUF), .binary = 1};
  struct ct_writer text = {.fd = -1, .buf = malloc(CT_W_BUF)};
  ASSERT_NOT_NULL(w.buf);
  ASSERT_NOT_NULL(text.buf);
  struct ct_ctw *enc;
  ASSERT_OK(ct_ctw_open(&enc, &w));
  ASSERT_OK(ct_ctw_header(enc));
  char line[512];
  for (size_t i = 0; i < NV1; i++) {
    int n = snprintf(line, sizeof line, "%s\n", v1_lines[i]);
    ASSERT_EQ(write(jfd, line, (size_t)n), n);
    ct_ctw_text(enc, line, (size_t)n);
  }
  uint64_t evs[2] = {0, 0};
  for (size_t i = 0; i < NOURS; i++) {
    uint64_t *ev = &evs[ours[i].id == C];
    struct ct_ev_item e = {.ts = 1000001000 + 100 * i,
                           .probe_id = ours[i].id,
                           .tid = 100 + i % 2,
                           .addr = ours[i].addr,
                           .obj = ours[i].obj,
                           .ev = *ev,
                           .seq = 2 * (*ev + 1),
                           .kind = ours[i].kind,
                           .wait = ours[i].wait,
                           .active = ours[i].kind == CT_EV_RESUME};
    ++*ev;
    ct_ctw_event(enc, &e);
    text.len = 0;
    ct_rec_event(&text, &e);
    ASSERT_EQ(write(jfd, text.buf, text.len), (ssize_t)text.len);
  }
  ASSERT_OK(ct_ctw_flush(enc));
  ct_ctw_free(enc);
  ASSERT_OK(ct_writer_flush(&w));
  free(w.buf);
  free(text.buf);
  close(jfd);
  close(bfd);
}

/* ---- the consumers' views ------------------------------------------------- */

struct feed {
  struct ct_state *st;
  struct ct_model m;
  struct views *v;
};

/* The report's state after event e: what it made of it. */
static struct seen state_view(const struct ct_state *st, uint64_t id, uint8_t wakes_before) {
  const struct ct_coro *c = ct_map_get(&st->coros, id, 0);
  ASSERT_NOT_NULL(c);
  switch (c->state) {
  case CT_CS_CREATED:
    if (c->susp_wakes > wakes_before)
      return (struct seen){CT_EV_WAKE, NA, 0, 0};
    return (struct seen){CT_EV_CREATE, c->create_site, 0, 0};
  case CT_CS_RUNNING:
    return (struct seen){CT_EV_RESUME, NA, 0, 0};
  case CT_CS_SUSPENDED:
    if (c->susp_wakes > wakes_before)
      return (struct seen){CT_EV_WAKE, NA, 0, 0};
    return (struct seen){CT_EV_SUSPEND, c->susp_site, c->returned ? CTP_WAIT_EXIT : c->wait,
                         c->obj};
  case CT_CS_DESTROYED:
    return (struct seen){CT_EV_DESTROY, NA, 0, 0};
  }
  FAIL("coroutine %" PRIu64 ": state %u after an event", id, c->state);
  return (struct seen){0, 0, 0, 0};
}

/* The dashboard's model after the event: the same questions. */
static struct seen model_view(const struct ct_model *m, uint64_t id, uint32_t wakes_before) {
  const uint32_t *ix = ct_map_get(&m->ids, id, 0);
  ASSERT_NOT_NULL(ix);
  const struct ct_mcoro *c = &m->coros[*ix];
  if (c->destroyed)
    return (struct seen){CT_EV_DESTROY, NA, 0, 0};
  if (c->wakes > wakes_before)
    return (struct seen){CT_EV_WAKE, NA, 0, 0};
  switch (c->state) {
  case CT_SP_CREATED:
    return (struct seen){CT_EV_CREATE, m->sites[c->create_site].site, 0, 0};
  case CT_SP_RUNNING:
    return (struct seen){CT_EV_RESUME, NA, 0, 0};
  case CT_SP_SUSPENDED:
    return (struct seen){CT_EV_SUSPEND, m->sites[c->site].site, c->wait, c->obj};
  }
  FAIL("coroutine %" PRIu64 ": model state %u after an event", id, c->state);
  return (struct seen){0, 0, 0, 0};
}

static int on_line(void *ctx, uint64_t lineno, enum ct_line_err err, const struct ct_line *l) {
  struct feed *f = ctx;
  ASSERT_EQ(err, CT_LINE_OK);
  ASSERT_EQ(l->type, CT_LINE_EVENT);
  ASSERT_UINT64_EQ(l->e.line, lineno);
  const struct ct_coro *c = ct_map_get(&f->st->coros, l->probe_id, 0);
  uint8_t swakes = c ? c->susp_wakes : 0;
  const uint32_t *ix = ct_map_get(&f->m.ids, l->probe_id, 0);
  uint32_t mwakes = ix ? f->m.coros[*ix].wakes : 0;
  ASSERT_OK(ct_state_line(f->st, lineno, err, l));
  ASSERT_OK(ct_model_line(&f->m, err, l));
  ASSERT_LT(f->v->nstate, MAXEV);
  f->v->state[f->v->nstate++] = state_view(f->st, l->probe_id, swakes);
  f->v->model[f->v->nmodel++] = model_view(&f->m, l->probe_id, mwakes);
  return 0;
}

static int on_export(void *ctx, size_t run, const struct ct_event *e) {
  struct views *v = ctx;
  ASSERT_EQ(run, 0);
  ASSERT_LT(v->nexpo, MAXEV);
  v->expo[v->nexpo++] =
      (struct seen){e->kind, e->has_site ? e->site : 0, e->wait, e->wait ? e->obj : 0};
  return 0;
}

static void read_views(const char *path, struct views *v) {
  memset(v, 0, sizeof *v);
  struct feed f = {.v = v};
  ASSERT_OK(ct_state_new(CT_BLOCKER_NS, &f.st));
  ASSERT_OK(ct_model_init(&f.m, 1000, 2000));
  int fd = open(path, O_RDONLY);
  ASSERT_GE(fd, 0);
  uint64_t bytes = 0;
  struct ct_read_diag diag;
  ASSERT_OK(ct_trace_read_diag(fd, 0, on_line, NULL, &f, &bytes, &diag));
  ASSERT_STR_EQ(diag.why, "");
  close(fd);
  ct_model_free(&f.m);
  ct_state_free(f.st);

  struct cx_model m;
  uint64_t bad = 0;
  ASSERT_OK(cx_model_load(path, NULL, NULL, NULL, &m, &bad));
  ASSERT_EQ(m.nruns, 1);
  ASSERT_OK(cx_model_events(&m, on_export, v));
  cx_model_free(&m);
}

static const char *kind_name(uint64_t k) {
  static const char *const kinds[] = {"v1", "create", "suspend", "resume", "wake", "destroy"};
  return k <= CT_EV_DESTROY ? kinds[k] : "?";
}

/* a (a consumer's view of event i) agrees with the expectation x, where it has a word on it. */
static void same(const char *who, const char *path, size_t i, struct seen a, struct seen x) {
  if (a.kind != x.kind || (a.site != NA && a.site != x.site) || a.wait != x.wait || a.obj != x.obj)
    FAIL("%s: event %zu (%s): %s sees %s site 0x%" PRIx64 " wait %" PRIu64 " obj 0x%" PRIx64
         ", expected %s site 0x%" PRIx64 " wait %" PRIu64 " obj 0x%" PRIx64,
         path, i, i < NV1 ? "v1" : "ours", who, kind_name(a.kind), a.site, a.wait, a.obj,
         kind_name(x.kind), x.site, x.wait, x.obj);
}

/* The binary reader fills an event's meaning directly (ctrace_dec.c, read
 * speed): for every kind of record, hostile ones included, it is what
 * ct_line_event makes of the line, the one place that decides it. */
static void direct_fill(void) {
  static const uint8_t kinds[] = {0, 1, 2, 3, 4, 5, 6, 7, 200}, waits[] = {0, 1, 2, 3, 4, 5, 255};
  static const uint64_t addrs[] = {0, S(7)}, objs[] = {0, 42, 1ull << 63};
  size_t n = 0;
  for (size_t k = 0; k < sizeof kinds; k++)
    for (size_t w = 0; w < sizeof waits; w++)
      for (uint8_t act = 0; act < 3; act++)
        for (size_t a = 0; a < 2; a++)
          for (size_t o = 0; o < 3; o++) {
            struct ct_ev_item ev = {.ts = 1000 + n,
                                    .probe_id = B,
                                    .tid = 7,
                                    .addr = addrs[a],
                                    .seq = 4,
                                    .obj = objs[o],
                                    .ev = 1,
                                    .kind = kinds[k],
                                    .wait = waits[w],
                                    .active = act};
            struct ct_line l, x;
            ASSERT_EQ(ct_line_from_event(&ev, &l), CT_LINE_OK);
            x = l;
            x.e.site = x.e.obj = x.e.line = 0xbad;
            memset(&x.e.kind, 0xee,
                   offsetof(struct ct_event, has_parent) + 1 - offsetof(struct ct_event, kind));
            ct_line_event(&x);
            const struct ct_event *d = &l.e, *g = &x.e;
            if (d->line != g->line || d->site != g->site || d->obj != g->obj ||
                d->kind != g->kind || d->v1 != g->v1 || d->wait != g->wait ||
                d->is_active != g->is_active || d->obj_is_str != g->obj_is_str ||
                d->has_tid != g->has_tid || d->has_ev != g->has_ev || d->has_site != g->has_site ||
                d->has_from != g->has_from || d->has_parent != g->has_parent)
              FAIL("record kind %u wait %u active %u addr 0x%" PRIx64 " obj 0x%" PRIx64
                   ": the binary reader's meaning is not ct_line_event's",
                   ev.kind, ev.wait, ev.active, ev.addr, ev.obj);
            n++;
          }
  printf("ok: %zu records, the binary reader's meaning is ct_line_event's\n", n);
}

int main(void) {
  direct_fill();
  write_trace();
  static struct views j, b;
  read_views(jpath, &j);
  read_views(bpath, &b);
  const struct views *both[] = {&j, &b};
  const char *paths[] = {"jsonl", "binary"};
  for (int k = 0; k < 2; k++) {
    const struct views *v = both[k];
    ASSERT_EQ(v->nstate, NV1 + NOURS);
    ASSERT_EQ(v->nmodel, NV1 + NOURS);
    ASSERT_EQ(v->nexpo, NV1 + NOURS);
    for (size_t i = 0; i < NV1 + NOURS; i++) {
      struct seen x = expected(i);
      same("the report's state", paths[k], i, v->state[i], x);
      same("the dashboard's model", paths[k], i, v->model[i], x);
      same("the export", paths[k], i, v->expo[i], x);
    }
  }
  /* The two formats: the same views, field for field. */
  ASSERT_MEM_EQ(&j, &b, sizeof j);
  rm_files();
  printf("ok: %zu events (%zu v1), JSONL and binary, state = model = export\n", NV1 + NOURS, NV1);
  return 0;
}
