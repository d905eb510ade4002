/* test-flight-snap.c - the flight window's snapshot table (src/engine/
 * flight_snap.c) against a plain model: 6000 coroutine ids, 200,000 events
 * (creates, suspends on fds, wakes, resumes, destroys; ids reused, the table
 * grown and emptied by destroys, its probe sequences cut by them), every
 * chunk applied as the window drops it; the snapshot lines it writes are
 * exactly the coroutines alive, each in the state the model says (state,
 * ev, ts, label). Twice: events of ids at random, then in bursts of one
 * coroutine (runs of up to 40 events, with creates without a coroutine line
 * and events after a destroy among them: what the table skips in a run must
 * change nothing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/trace.h"
#include "engine/flight.h"
#include "engine/sink.h"
#include "format/ctrace.h"
#include "format/ctw.h"
#include "format/writer.h"
#include "lib/check.h"

#define IDS 6000u
#define STEPS 200000u

struct model {
  int alive, state; /* state: 0 created, 1 running, 2 suspended, 3 runnable */
  int label;        /* its coroutine line holds (no create since, but the first) */
  uint64_t ev, ts;  /* ts: its last event's but wakes */
};
static struct model m[IDS + 1];
static struct ct_fsnap *snap;
static uint64_t seen_lines;

static void on_chunk(void *ctx, const uint8_t *p, size_t n, const struct ct_ctw_chunk *c) {
  (void)ctx;
  ct_fsnap_apply(snap, p, n, c->rebinds);
}

static void on_line(void *ctx, const char *s, size_t n) {
  (void)ctx, (void)s, (void)n;
}

/* Each snapshot line of a payload against the model. */
static int check_payload(void *ctx, const uint8_t *p, size_t n, uint32_t k) {
  (void)ctx;
  const uint8_t *e = p + n;
  static const char *const names[] = {"created", "running", "suspended", "runnable"};
  for (uint32_t i = 0; i < k; i++) {
    ASSERT_EQ(*p++, CTR_OP_LINE);
    uint64_t len;
    ASSERT_PTR_NE((p = ctr_get_varint(p, e, &len)), NULL);
    struct ct_line l;
    ASSERT_EQ(ct_parse_line((const char *)p, (size_t)len, &l), CT_LINE_OK);
    ASSERT_EQ(l.type, CT_LINE_SNAPSHOT);
    ASSERT(l.probe_id >= 1 && l.probe_id <= IDS);
    struct model *c = &m[l.probe_id];
    ASSERT(c->alive);
    c->alive = 2; /* seen */
    ASSERT_EQ(l.state.n, strlen(names[c->state]));
    ASSERT_EQ(memcmp(l.state.p, names[c->state], l.state.n), 0);
    ASSERT_UINT64_EQ(l.ev, c->ev);
    ASSERT_UINT64_EQ(l.ts, c->ts);
    ASSERT_EQ(CT_HAS(&l, CT_K_LABEL) != 0, c->label);
    seen_lines++;
    p += len;
  }
  ASSERT(p == e);
  return 0;
}

/* One stream of STEPS events into a fresh table, checked; burst: runs of
 * one coroutine. */
static int run(int burst) {
  struct ct_writer w = {.fd = -1, .buf = malloc(CT_W_BUF), .binary = 1};
  struct ct_ctw *enc;
  memset(m, 0, sizeof m);
  seen_lines = 0;
  ASSERT_OK(ct_fsnap_new(&snap));
  ASSERT_OK(ct_ctw_open(&enc, &w));
  ct_ctw_redirect(enc, &(struct ct_ctw_to){.chunk = on_chunk, .line = on_line});
  uint64_t ts = 1000000000, rnd = 88172645463325252ull;
  uint32_t id = 0, left = 0;
  for (uint32_t step = 0; step < STEPS; step++) {
    rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
    int cont = left > 0; /* the run goes on */
    if (!cont) {
      id = 1 + (uint32_t)(rnd % IDS);
      left = burst ? (uint32_t)(rnd >> 40) % 40 : 0;
    } else {
      left--;
    }
    struct model *c = &m[id];
    struct ct_ev_item ev = {.ts = ts += 10, .probe_id = id, .tid = 7, .addr = 0x1000};
    if (!c->alive && cont && (rnd >> 30) % 2) {
      /* An event after its destroy, no coroutine line: an entry of its own. */
      ev.kind = CTP_KIND_RESUME;
      ev.active = 1;
      ev.addr = 0;
      ev.ev = ++c->ev;
      *c = (struct model){.alive = 1, .state = 1, .ev = c->ev, .ts = ts};
    } else if (!c->alive) { /* a new coroutine (the id reused) */
      struct ct_coro_item co = {.probe_id = id,
                                .station = id,
                                .gen = 1,
                                .pid = 7,
                                .birth_ts = ts,
                                .create_site = 0x2000,
                                .has_label = 1};
      strcpy(co.label, "co");
      ct_ctw_coro(enc, &co);
      ev.kind = CTP_KIND_CREATE;
      *c = (struct model){.alive = 1, .state = 0, .label = 1, .ev = 0, .ts = ts};
    } else {
      ev.ev = ++c->ev;
      switch ((rnd >> 20) % (burst ? 7 : 5)) {
      case 0:
        ev.kind = CTP_KIND_DESTROY;
        c->alive = 0;
        break;
      case 1:
      case 5:
        ev.kind = CTP_KIND_RESUME;
        ev.active = 1;
        ev.addr = 0;
        c->state = 1;
        c->ts = ts;
        break;
      case 2:
      case 3:
        ev.kind = CTP_KIND_SUSPEND;
        ev.wait = CTP_WAIT_FD;
        ev.obj = id % 50;
        c->state = 2;
        c->ts = ts;
        break;
      case 6: /* a new incarnation without a coroutine line */
        ev.kind = CTP_KIND_CREATE;
        c->state = 0;
        c->label = 0;
        c->ts = ts;
        break;
      default:
        ev.kind = CTP_KIND_WAKE;
        ev.obj = 0;
        if (c->state == 2)
          c->state = 3;
        break;
      }
    }
    ev.seq = 2 * (ev.ev + 1);
    ct_ctw_event(enc, &ev);
  }
  ASSERT_OK(ct_ctw_flush(enc));
  uint64_t count, untracked, alive = 0;
  ASSERT_OK(ct_fsnap_emit(snap, check_payload, NULL, &count, &untracked));
  for (uint32_t i = 1; i <= IDS; i++) {
    ASSERT(m[i].alive != 1); /* every coroutine alive has its line */
    alive += m[i].alive == 2;
  }
  ASSERT_UINT64_EQ(count, alive);
  ASSERT_UINT64_EQ(seen_lines, alive);
  ASSERT_UINT64_EQ(untracked, 0);
  ASSERT(alive > 1000);
  printf("test-flight-snap: %s: %llu coroutines alive in the snapshot: ok\n",
         burst ? "bursts" : "ids at random", (unsigned long long)alive);
  ct_ctw_free(enc);
  ct_fsnap_free(snap);
  free(w.buf);
  return 0;
}

int main(void) {
  if (run(0) || run(1))
    return 1;
  return 0;
}
