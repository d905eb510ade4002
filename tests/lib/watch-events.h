/* watch-events.h - the event stories the flight watch's tests encode as a
 * binary trace's chunks (ctrace_enc.c): one thread (tid 7) of pid 7, a
 * coroutine parking on an fd and woken on it, nothing else. */
#ifndef CT_TESTS_WATCH_EVENTS_H
#define CT_TESTS_WATCH_EVENTS_H

#include "common/ctp.h"
#include "format/ctw.h"

/* struct ct_ctw_to's line callback: the tests want only chunks. */
static void on_line(void *ctx, const char *s, size_t n) {
  (void)ctx, (void)s, (void)n;
}

/* Event kind of coroutine id at ts (ns), its ev-th; a suspend parks on fd
 * (at site 0x1000), a wake wakes fd's waiter. */
static void event(struct ct_ctw *enc, uint32_t id, uint64_t ev, int kind, uint64_t ts, int fd) {
  struct ct_ev_item e = {.ts = ts, .probe_id = id, .tid = 7, .ev = ev, .kind = (uint8_t)kind};
  e.seq = 2 * (ev + 1);
  if (kind == CTP_KIND_SUSPEND) {
    e.wait = CTP_WAIT_FD;
    e.obj = (uint64_t)fd;
    e.addr = 0x1000;
  } else if (kind == CTP_KIND_WAKE) {
    e.obj = (uint64_t)fd;
  } else if (kind == CTP_KIND_RESUME) {
    e.active = 1;
  }
  ct_ctw_event(enc, &e);
}

/* A new coroutine id at ts (its coroutine line and create). */
static void create(struct ct_ctw *enc, uint32_t id, uint64_t ts) {
  struct ct_coro_item co = {
      .probe_id = id, .station = id, .gen = 1, .pid = 7, .birth_ts = ts, .create_site = 0x2000};
  ct_ctw_coro(enc, &co);
  event(enc, id, 0, CTP_KIND_CREATE, ts, 0);
}

#endif
