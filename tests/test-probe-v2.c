/* test-probe-v2.c - the probe's v2 writer (docs/PROTOCOL.md "v2") against a
 * file laid out here as our engine lays it out (tests/lib/v2-file.c), with
 * this test playing the engine: records in per-thread rings, full rings,
 * lossless waits, station reuse, ring claims and closes, a switch's three
 * records with one stamp and one publish, and every bad header falling back
 * to the v1 stations. Each case runs in a forked child
 * (the probe attaches once per process). The bodies read the file through
 * the probe's own mapping (a handle points into it): TSan keys
 * synchronization on addresses and cannot see two mappings alias. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/ctp.h"
#include "common/ticks.h"
#include "corotracer.h"
#include "lib/check.h"
#include "lib/probe-fixture.h"
#include "lib/v2-file.h"

static char dir[256], shm_path[300], sock_path[300];
static struct ct_v2_params prm;
static void *file; /* the test's mapping, for the set-up before a case */
static uint64_t file_len;
static int listen_fd = -1;

/* The probe's mapping, found from a handle on station index i. */
static char *base;
static struct ctp_header *H;
static void find_base(corotracer_co *co, uint32_t i) {
  ASSERT_NOT_NULL(co);
  base = (char *)co - CTP_HEADER_SIZE - (size_t)i * CTP_STATION_SIZE;
  H = (struct ctp_header *)base;
}
static struct ctp_station *station(uint32_t i) {
  return ctp_station_at(base, i);
}
static struct ctp_ring *ring(uint32_t r) {
  return ctp_ring_at(base, H, r);
}
static struct ctp_rec *rec(uint32_t r, uint64_t k) {
  return &ctp_ring_recs(ring(r))[k % (H->ring_bytes / sizeof(struct ctp_rec))];
}
static uint64_t my_tid(void) {
  return (uint64_t)syscall(SYS_gettid);
}
static uint64_t ms_since(uint64_t t0) {
  return (ct_mono_ns() - t0) / 1000000u;
}

/* A fresh file for prm (a case changes prm, then calls this). */
static void make_file(void) {
  if (file)
    munmap(file, file_len);
  unlink(shm_path);
  file = ct_v2_create(shm_path, &prm, &file_len);
  ASSERT_NOT_NULL(file);
}

static void default_params(void) {
  prm = (struct ct_v2_params){
      .stations = 4, .rings = 4, .ring_bytes = 4096, .clock = CT_TICKS_CLOCK, .ext_version = 1};
}

/* Run body in a forked child traced by the current file; 0 when it passed. */
static int run_case(const char *name, int (*body)(void)) {
  char count[16];
  snprintf(count, sizeof count, "%u", prm.stations);
  int st = ct_run_forked(body, shm_path, sock_path, count, NULL);
  ASSERT(st != -1);
  int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
  printf("%s %s\n", ok ? "ok  " : "FAIL", name);
  return !ok;
}

/* run_case for a body that finds the shared memory corrupt: it passes, and
 * the probe said so in exactly one line on stderr. */
static int run_case_err(const char *name, int (*body)(void)) {
  char count[16], errpath[400], line[512];
  snprintf(count, sizeof count, "%u", prm.stations);
  snprintf(errpath, sizeof errpath, "%s/stderr", dir);
  int st = ct_run_forked(body, shm_path, sock_path, count, errpath);
  ASSERT(st != -1);
  int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0, lines = 0, named = 0;
  FILE *f = fopen(errpath, "re");
  while (f && fgets(line, sizeof line, f)) {
    if (!ok)
      printf("     %s", line); /* the failed assertion */
    lines++;
    named += strstr(line, "shared memory holds") != NULL;
  }
  if (f)
    fclose(f);
  unlink(errpath);
  if (ok && (lines != 1 || named != 1)) {
    printf("     %d line(s) on stderr, %d naming the corruption; want 1 and 1\n", lines, named);
    ok = 0;
  }
  printf("%s %s\n", ok ? "ok  " : "FAIL", name);
  return !ok;
}

/* The engine's wake of lossless waiters after it made room. */
static void engine_made_room(void) {
  atomic_fetch_add_explicit(&H->harvest_epoch, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&H->waiters, memory_order_seq_cst) > 0)
    syscall(SYS_futex, &H->harvest_epoch, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

#define SITE(x) ((const void *)(uintptr_t)(x))

/* ---- cases ---------------------------------------------------------------- */

/* Every kind lands in this thread's ring with its fields; the station holds
 * the identity and no slot event. */
static int body_records(void) {
  uint64_t t0 = ct_ticks();
  corotracer_co *co = corotracer_create(0, "first", SITE(0x1111));
  find_base(co, 0);
  corotracer_resume(co);
  corotracer_suspend(co, SITE(0x2222), COROTRACER_WAIT_PTR, 0xabc);
  corotracer_wake(co, SITE(0x3333));
  corotracer_destroy(co);
  uint64_t t1 = ct_ticks();

  struct ctp_station *st = station(0);
  ASSERT_UINT64_EQ(atomic_load(&st->ext_flags), CTP_STF_EXT | CTP_STF_RINGS | CTP_STF_LABEL);
  ASSERT_UINT64_EQ(st->gen, 1);
  ASSERT_UINT64_EQ(st->probe_id, (UINT64_C(1) << 63) | (UINT64_C(1) << 21) | 1);
  ASSERT_STR_EQ(st->label, "first");
  ASSERT_EQ(st->is_dead, 1);
  ASSERT_UINT64_EQ(st->birth_ts, 0); /* v2: the create record's stamp is the birth */
  ASSERT_UINT64_EQ(st->pid, (uint64_t)getpid());
  ASSERT_UINT64_EQ(st->create_site, 0x1111);
  ASSERT_UINT64_EQ(atomic_load(&st->ev_claimed), 0);
  for (int s = 0; s < (int)CTP_SLOTS; s++)
    ASSERT_UINT64_EQ(atomic_load(&st->slots[s].seq), 0);

  ASSERT_UINT64_EQ(atomic_load(&H->rings_fresh), 1);
  struct ctp_ring *r = ring(0);
  ASSERT_UINT64_EQ(atomic_load(&r->head), 5);
  ASSERT_UINT64_EQ(atomic_load(&r->lost), 0);
  ASSERT_UINT64_EQ(atomic_load(&r->state), CTP_RING_OWNED);
  ASSERT_UINT64_EQ(r->pid, (uint64_t)getpid());
  ASSERT_UINT64_EQ(r->tid, my_tid());
  ASSERT_UINT64_EQ(r->owner_gen, 1);
  static const struct {
    uint8_t kind, wait;
    uint64_t site, obj;
  } want[] = {{CTP_KIND_CREATE, 0, 0x1111, 0},
              {CTP_KIND_RESUME, 0, 0, 0},
              {CTP_KIND_SUSPEND, CTP_WAIT_PTR, 0x2222, 0xabc},
              {CTP_KIND_WAKE, 0, 0x3333, 0},
              {CTP_KIND_DESTROY, 0, 0, 0}};
  uint64_t prev = t0;
  for (int k = 0; k < 5; k++) {
    struct ctp_rec *e = rec(0, (uint64_t)k);
    ASSERT_EQ(e->kind, want[k].kind);
    ASSERT_EQ(e->wait, want[k].wait);
    ASSERT_EQ(e->station, 0);
    ASSERT_EQ(e->gen, 1);
    if (want[k].kind != CTP_KIND_DESTROY) /* the destroy's site is its caller */
      ASSERT_UINT64_EQ(e->site, want[k].site);
    ASSERT_UINT64_EQ(e->obj, want[k].obj);
    ASSERT_UINT64_GE(e->ts, prev); /* the header's clock, in order */
    prev = e->ts;
  }
  ASSERT_UINT64_LE(prev, t1);
  ASSERT_UINT64_NE(rec(0, 4)->site, 0);
  uint64_t recorded, dropped;
  corotracer_stats(&recorded, &dropped);
  ASSERT_UINT64_EQ(recorded, 5);
  ASSERT_UINT64_EQ(dropped, 0);
  return 0;
}

/* clock = CTP_CLOCK_MONO: records carry CLOCK_MONOTONIC ns. */
static int body_mono(void) {
  uint64_t t0 = ct_mono_ns();
  corotracer_co *co = corotracer_create(5, NULL, NULL);
  find_base(co, 0);
  corotracer_resume(co);
  corotracer_co *b = corotracer_create(6, NULL, NULL);
  /* the out-of-line path of a switch: still one stamp */
  corotracer_switch(co, NULL, COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, b);
  /* ... and one whose obj does not fit a switch record: three records */
  corotracer_switch(b, NULL, COROTRACER_WAIT_PTR, 0x10000, COROTRACER_SWITCH_RUNNABLE, co);
  uint64_t t1 = ct_mono_ns();
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 7);
  ASSERT_UINT64_GE(rec(0, 0)->ts, t0);
  ASSERT_UINT64_LE(rec(0, 1)->ts, rec(0, 3)->ts);
  ASSERT_EQ(rec(0, 3)->kind, CTP_KIND_SWITCH);
  ASSERT_UINT64_LE(rec(0, 3)->ts, rec(0, 4)->ts);
  ASSERT_UINT64_EQ(rec(0, 5)->ts, rec(0, 4)->ts);
  ASSERT_UINT64_EQ(rec(0, 6)->ts, rec(0, 4)->ts);
  ASSERT_EQ(rec(0, 6)->kind, CTP_KIND_RESUME);
  ASSERT_UINT64_LE(rec(0, 6)->ts, t1);
  ASSERT_UINT64_EQ(atomic_load(&station(0)->ext_flags), CTP_STF_EXT | CTP_STF_RINGS);
  return 0;
}

/* One record as a case expects it. */
static void want_rec(uint64_t k, uint8_t kind, uint32_t st, uint64_t site, uint8_t wait,
                     uint64_t obj) {
  struct ctp_rec *e = rec(0, k);
  ASSERT_EQ(e->kind, kind);
  ASSERT_EQ(e->station, st);
  ASSERT_EQ(e->gen, 1);
  ASSERT_UINT64_EQ(e->site, site);
  ASSERT_EQ(e->wait, wait);
  ASSERT_UINT64_EQ(e->obj, obj);
}

/* Record k as the switch record (struct ctp_swrec) a case expects. */
static void want_sw(uint64_t k, uint32_t from, uint32_t to, uint64_t site, uint8_t wait,
                    uint16_t obj) {
  struct ctp_swrec sw;
  memcpy(&sw, rec(0, k), sizeof sw);
  ASSERT_EQ(sw.kind, CTP_KIND_SWITCH);
  ASSERT_EQ(sw.from, from);
  ASSERT_EQ(sw.from_gen, 1);
  ASSERT_EQ(sw.to, to);
  ASSERT_EQ(sw.to_gen, 1);
  ASSERT_UINT64_EQ(sw.site, site);
  ASSERT_EQ(sw.wait, wait);
  ASSERT_EQ(sw.obj, obj);
}

static void *switch_nothing(void *arg) {
  corotracer__switch(NULL, NULL, COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, NULL);
  return arg;
}

/* corotracer_switch: the suspend of from, its wake (RUNNABLE), the resume of
 * to, one stamp, in that order: one switch record when both are given, obj
 * fits in 16 bits and the waker is none, else three records; NULL from or
 * to leaves its records out; the current coroutine and the waker are what
 * the separate calls make them. */
static int body_switch(void) {
  corotracer_co *a = corotracer_create(0xa, NULL, NULL);
  find_base(a, 0);
  corotracer_co *b = corotracer_create(0xb, NULL, NULL);
  corotracer_resume(a);
  uint64_t t0 = ct_ticks();
  corotracer_switch(a, SITE(0x7777), COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, b);
  uint64_t t1 = ct_ticks();
  ASSERT_PTR_EQ(corotracer_current(), b);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 4);
  /* waker: this thread, no coroutine */
  want_sw(3, 0, 1, 0x7777, CTP_WAIT_NONE | CTP_SW_WAKE, 0);
  ASSERT_UINT64_GE(rec(0, 3)->ts, t0);
  ASSERT_UINT64_GE(rec(0, 3)->ts, rec(0, 2)->ts);
  ASSERT_UINT64_LE(rec(0, 3)->ts, t1);
  /* a wait on an fd, not runnable; the largest obj a record holds */
  corotracer_switch(b, SITE(0x6666), COROTRACER_WAIT_FD, 0xffff, 0, a);
  want_sw(4, 1, 0, 0x6666, CTP_WAIT_FD, 0xffff);
  /* one beyond: three records (no wake: two) */
  corotracer_switch(a, SITE(0x5555), COROTRACER_WAIT_PTR, 0x10000, 0, b);
  ASSERT_PTR_EQ(corotracer_current(), b);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 7);
  want_rec(5, CTP_KIND_SUSPEND, 0, 0x5555, CTP_WAIT_PTR, 0x10000);
  want_rec(6, CTP_KIND_RESUME, 1, 0, CTP_WAIT_NONE, 0);
  ASSERT_UINT64_EQ(rec(0, 6)->ts, rec(0, 5)->ts);
  /* to NULL: the suspend alone (no RUNNABLE: no wake), with its wait */
  corotracer_switch(b, SITE(0x8888), COROTRACER_WAIT_PTR, 0xabc, 0, NULL);
  ASSERT_NULL(corotracer_current());
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 8);
  want_rec(7, CTP_KIND_SUSPEND, 1, 0x8888, CTP_WAIT_PTR, 0xabc);
  /* from NULL: the resume alone, whatever the flags */
  corotracer_switch(NULL, SITE(0x9999), COROTRACER_WAIT_FD, 3, COROTRACER_SWITCH_RUNNABLE, a);
  ASSERT_PTR_EQ(corotracer_current(), a);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 9);
  want_rec(8, CTP_KIND_RESUME, 0, 0, CTP_WAIT_NONE, 0);
  /* from is not the running one: a stays current and is the waker; an
   * unknown wait kind is recorded as none */
  corotracer_switch(b, SITE(0x9999), (enum corotracer_wait)9, 0x55, COROTRACER_SWITCH_RUNNABLE,
                    NULL);
  ASSERT_PTR_EQ(corotracer_current(), a);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 11);
  want_rec(9, CTP_KIND_SUSPEND, 1, 0x9999, CTP_WAIT_NONE, 0);
  want_rec(10, CTP_KIND_WAKE, 1, 0x9999, CTP_WAIT_NONE, 0xa);
  /* a waker (a is current) with both given: three records, not one */
  corotracer_switch(b, SITE(0x4444), COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, a);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 14);
  want_rec(11, CTP_KIND_SUSPEND, 1, 0x4444, CTP_WAIT_NONE, 0);
  want_rec(12, CTP_KIND_WAKE, 1, 0x4444, CTP_WAIT_NONE, 0xa);
  want_rec(13, CTP_KIND_RESUME, 0, 0, CTP_WAIT_NONE, 0);
  /* site NULL: the caller */
  corotracer_switch(a, NULL, COROTRACER_WAIT_NONE, 0, 0, NULL);
  ASSERT_NULL(corotracer_current());
  ASSERT_UINT64_NE(rec(0, 14)->site, 0);
  corotracer_switch(NULL, NULL, COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, NULL);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 15);
  /* Both NULL through the out-of-line half (no inline NULL test), on a
   * thread that has no ring yet: nothing, and no ring claimed. */
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, NULL, switch_nothing, NULL), 0);
  ASSERT_EQ(pthread_join(th, NULL), 0);
  ASSERT_UINT64_EQ(atomic_load(&H->rings_fresh), 1);
  uint64_t recorded, dropped;
  corotracer_stats(&recorded, &dropped);
  ASSERT_UINT64_EQ(recorded, 18); /* events: the switch records stand for 5 more */
  ASSERT_UINT64_EQ(dropped, 0);
  return 0;
}

/* A ring with room for 2, then 1 of a switch's 3 records (obj beyond a
 * switch record's, so three records): record by record,
 * the latest dropped and counted on their stations; room found only after a
 * reload of tail: one stamp again. */
static int body_switch_room(void) {
  corotracer_co *a = corotracer_create(1, NULL, NULL);
  find_base(a, 0);
  corotracer_co *b = corotracer_create(2, NULL, NULL);
  uint64_t cap = H->ring_bytes / sizeof(struct ctp_rec);
  while (atomic_load(&ring(0)->head) < cap - 2)
    corotracer_suspend(a, SITE(1), COROTRACER_WAIT_NONE, 0);
  corotracer_switch(a, SITE(2), COROTRACER_WAIT_PTR, 0x10000, COROTRACER_SWITCH_RUNNABLE, b);
  ASSERT_PTR_EQ(corotracer_current(), b);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), cap);
  ASSERT_EQ(rec(0, cap - 2)->kind, CTP_KIND_SUSPEND);
  ASSERT_EQ(rec(0, cap - 1)->kind, CTP_KIND_WAKE);
  ASSERT_UINT64_LE(rec(0, cap - 2)->ts, rec(0, cap - 1)->ts);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->lost), 1);
  ASSERT_UINT64_EQ(atomic_load(&station(0)->v2_lost), 0);
  ASSERT_UINT64_EQ(atomic_load(&station(1)->v2_lost), 1); /* b's resume */
  ASSERT_UINT64_EQ(ct_v2_consume(base, 0, NULL, NULL), cap);
  while (atomic_load(&ring(0)->head) < 2 * cap - 1)
    corotracer_suspend(a, SITE(1), COROTRACER_WAIT_NONE, 0);
  corotracer_switch(b, SITE(3), COROTRACER_WAIT_PTR, 0x10000, COROTRACER_SWITCH_RUNNABLE, a);
  ASSERT_PTR_EQ(corotracer_current(), a);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 2 * cap);
  ASSERT_EQ(rec(0, 2 * cap - 1)->kind, CTP_KIND_SUSPEND);
  ASSERT_EQ(rec(0, 2 * cap - 1)->station, 1);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->lost), 3);
  ASSERT_UINT64_EQ(atomic_load(&station(0)->v2_lost), 1); /* a's resume */
  ASSERT_UINT64_EQ(atomic_load(&station(1)->v2_lost), 2); /* and b's wake */
  /* The engine consumed: the probe sees the room only after a reload. */
  ASSERT_UINT64_EQ(ct_v2_consume(base, 0, NULL, NULL), cap);
  corotracer_switch(a, SITE(4), COROTRACER_WAIT_PTR, 0x10000, COROTRACER_SWITCH_RUNNABLE, b);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 2 * cap + 3);
  ASSERT_EQ(rec(0, 2 * cap)->kind, CTP_KIND_SUSPEND);
  ASSERT_EQ(rec(0, 2 * cap + 1)->kind, CTP_KIND_WAKE);
  ASSERT_EQ(rec(0, 2 * cap + 2)->kind, CTP_KIND_RESUME);
  ASSERT_UINT64_EQ(rec(0, 2 * cap + 1)->ts, rec(0, 2 * cap)->ts);
  ASSERT_UINT64_EQ(rec(0, 2 * cap + 2)->ts, rec(0, 2 * cap)->ts);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->lost), 3);
  uint64_t recorded, dropped;
  corotracer_stats(&recorded, &dropped);
  ASSERT_UINT64_EQ(dropped, 3);
  /* A full ring and a switch of one record: its three events dropped, each
   * counted on its station. */
  while (atomic_load(&ring(0)->head) < 3 * cap)
    corotracer_suspend(a, SITE(1), COROTRACER_WAIT_NONE, 0);
  corotracer_switch(a, SITE(5), COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, b);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 3 * cap);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->lost), 6);
  ASSERT_UINT64_EQ(atomic_load(&station(0)->v2_lost), 3); /* a's suspend and wake */
  ASSERT_UINT64_EQ(atomic_load(&station(1)->v2_lost), 3); /* b's resume */
  corotracer_stats(&recorded, &dropped);
  ASSERT_UINT64_EQ(dropped, 6);
  return 0;
}

/* One publish per switch: head, as the engine sees it, never stands between
 * a switch's records. Profiling-timer signals interrupt the writer at
 * arbitrary instructions (CPU time: as many on a loaded machine); the
 * handler, on the writer's own thread, sees every head store made before
 * it. Records are consumed between batches, so the ring never fills (a full
 * ring would write record by record). */
static struct ctp_ring *pub_ring;
static _Atomic uint64_t pub_samples, pub_torn;
static void on_prof(int sig) {
  (void)sig;
  uint64_t h = atomic_load_explicit(&pub_ring->head, memory_order_relaxed);
  atomic_fetch_add_explicit(&pub_samples, 1, memory_order_relaxed);
  if (h % 3 != 2) /* 2 creates, then switches of 3 (obj beyond a switch record's) */
    atomic_fetch_add_explicit(&pub_torn, 1, memory_order_relaxed);
}
static int body_switch_publish(void) {
  corotracer_co *a = corotracer_create(1, NULL, NULL);
  find_base(a, 0);
  corotracer_co *b = corotracer_create(2, NULL, NULL);
  pub_ring = ring(0);
  uint64_t cap = H->ring_bytes / sizeof(struct ctp_rec);
  struct sigaction sa = {.sa_handler = on_prof, .sa_flags = SA_RESTART};
  ASSERT_EQ(sigaction(SIGPROF, &sa, NULL), 0);
  struct itimerval it = {{0, 100}, {0, 100}};
  ASSERT_EQ(setitimer(ITIMER_PROF, &it, NULL), 0);
  uint64_t t0 = ct_mono_ns();
  while (atomic_load(&pub_samples) < 200 && ms_since(t0) < 60000) {
    for (uint64_t i = 0; i < cap / 8; i++) {
      corotracer_switch(a, SITE(1), COROTRACER_WAIT_PTR, 0x10000, COROTRACER_SWITCH_RUNNABLE, b);
      corotracer_switch(b, SITE(1), COROTRACER_WAIT_PTR, 0x10000, COROTRACER_SWITCH_RUNNABLE, a);
    }
    ct_v2_consume(base, 0, NULL, NULL);
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  ASSERT_EQ(setitimer(ITIMER_PROF, &off, NULL), 0);
  printf("     %llu samples of head\n", (unsigned long long)atomic_load(&pub_samples));
  ASSERT_UINT64_GE(atomic_load(&pub_samples), 200);
  ASSERT_UINT64_EQ(atomic_load(&pub_torn), 0);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->lost), 0);
  return 0;
}

/* Default mode: a full ring drops, counting each loss in the ring, the
 * station and the stats; once the engine consumed, writes go on. */
static int body_full(void) {
  corotracer_co *co = corotracer_create(9, NULL, NULL);
  find_base(co, 0);
  uint64_t cap = H->ring_bytes / sizeof(struct ctp_rec);
  for (uint64_t i = 0; i < cap + 50; i++)
    corotracer_suspend(co, SITE(1), COROTRACER_WAIT_NONE, i);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), cap);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->lost), 51); /* the create took one place */
  ASSERT_UINT64_EQ(atomic_load(&station(0)->v2_lost), 51);
  uint64_t recorded, dropped;
  corotracer_stats(&recorded, &dropped);
  ASSERT_UINT64_EQ(dropped, 51);
  ASSERT_UINT64_EQ(recorded, cap + 51);
  /* the last record kept is event cap - 2 of the suspends (obj cap - 2) */
  ASSERT_UINT64_EQ(rec(0, cap - 1)->obj, cap - 2);
  ASSERT_UINT64_EQ(ct_v2_consume(base, 0, NULL, NULL), cap);
  corotracer_suspend(co, SITE(1), COROTRACER_WAIT_NONE, 777);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), cap + 1);
  ASSERT_UINT64_EQ(rec(0, cap)->obj, 777);
  return 0;
}

/* Lossless, nobody consuming: the first event past a full ring waits
 * lossless_ms, then drops; later ones do not wait again while the engine
 * makes no progress; a bump of the epoch (progress) re-arms the wait. */
static int body_lossless_timeout(void) {
  corotracer_co *co = corotracer_create(9, NULL, NULL);
  find_base(co, 0);
  uint64_t cap = H->ring_bytes / sizeof(struct ctp_rec);
  for (uint64_t i = 1; i < cap; i++)
    corotracer_suspend(co, SITE(1), COROTRACER_WAIT_NONE, i);
  uint64_t t0 = ct_mono_ns();
  corotracer_suspend(co, SITE(1), COROTRACER_WAIT_NONE, 0);
  uint64_t waited = ms_since(t0);
  ASSERT_UINT64_GE(waited, H->lossless_ms - 1);
  ASSERT_UINT64_LT(waited, H->lossless_ms + 2000);
  t0 = ct_mono_ns();
  for (int i = 0; i < 100; i++)
    corotracer_suspend(co, SITE(1), COROTRACER_WAIT_NONE, 0);
  ASSERT_UINT64_LT(ms_since(t0), H->lossless_ms / 2); /* stalled: no more waits */
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->lost), 101);
  ASSERT_UINT64_EQ(atomic_load(&station(0)->v2_lost), 101);
  ASSERT_UINT64_EQ(atomic_load(&H->waiters), 0);
  atomic_fetch_add(&H->harvest_epoch, 1); /* progress, but no room */
  t0 = ct_mono_ns();
  corotracer_suspend(co, SITE(1), COROTRACER_WAIT_NONE, 0);
  ASSERT_UINT64_GE(ms_since(t0), H->lossless_ms - 1);
  return 0;
}

/* Lossless with a consumer: every event of a burst far larger than the
 * ring arrives, in order, none lost. */
#define BURST 20000
static atomic_int consumer_stop;
static uint64_t consumed_obj_next; /* consumer thread only */
static int consumer_bad;
static void check_rec(const struct ctp_rec *e, void *arg) {
  (void)arg;
  if (e->kind != CTP_KIND_SUSPEND)
    return;
  if (e->obj != consumed_obj_next)
    consumer_bad = 1;
  consumed_obj_next++;
}
static void *consumer(void *arg) {
  (void)arg;
  while (!atomic_load(&consumer_stop)) {
    if (ct_v2_consume(base, 0, check_rec, NULL))
      engine_made_room();
    else
      usleep(200);
  }
  ct_v2_consume(base, 0, check_rec, NULL);
  return NULL;
}
static int body_lossless_reader(void) {
  corotracer_co *co = corotracer_create(9, NULL, NULL);
  find_base(co, 0);
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, consumer, NULL), 0);
  for (uint64_t i = 0; i < BURST; i++)
    corotracer_suspend(co, SITE(1), COROTRACER_WAIT_NONE, i);
  atomic_store(&consumer_stop, 1);
  ASSERT_EQ(pthread_join(t, NULL), 0);
  ASSERT_EQ(consumer_bad, 0);
  ASSERT_UINT64_EQ(consumed_obj_next, BURST);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->lost), 0);
  uint64_t recorded, dropped;
  corotracer_stats(&recorded, &dropped);
  ASSERT_UINT64_EQ(dropped, 0);
  ASSERT_UINT64_EQ(recorded, BURST + 1);
  return 0;
}

/* Station reuse: create pops the free-station queue before the cursor,
 * bumps gen, rewrites the identity; with neither queue nor cursor,
 * overflow. (An index out of range on the queue: body_corrupt_entry.) */
static int body_reuse(void) {
  corotracer_co *a = corotracer_create(0, "a", NULL);
  find_base(a, 0);
  corotracer_co *b = corotracer_create(0xb, NULL, NULL);
  ASSERT_PTR_EQ(b, station(1));
  corotracer_destroy(a);
  ASSERT_EQ(station(0)->is_dead, 1);
  /* the engine harvested a's destroy and the next pass: it frees station 0 */
  struct ctp_queue *q = ctp_queue_at(base, H->station_q_off);
  ct_v2_push(q, H->max_stations, 0);
  station(0)->birth_ts = 1234; /* what a v1 incarnation or a scribble left */
  corotracer_co *c = corotracer_create(0, NULL, SITE(0x4444));
  ASSERT_PTR_EQ(c, a);
  struct ctp_station *st = station(0);
  ASSERT_UINT64_EQ(st->gen, 2);
  ASSERT_EQ(st->is_dead, 0);
  ASSERT_UINT64_EQ(st->birth_ts, 0); /* no birth of another incarnation */
  ASSERT_UINT64_EQ(st->probe_id, (UINT64_C(1) << 63) | (UINT64_C(2) << 21) | 1);
  ASSERT_UINT64_EQ(atomic_load(&st->ext_flags), CTP_STF_EXT | CTP_STF_RINGS); /* no label now */
  ASSERT_UINT64_EQ(st->create_site, 0x4444);
  ASSERT_UINT64_EQ(atomic_load(&H->allocated_count), 2); /* no fresh station taken */
  corotracer_resume(c);
  /* create a, create b, destroy a, create c, resume c */
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 5);
  ASSERT_EQ(rec(0, 2)->gen, 1);
  ASSERT_EQ(rec(0, 2)->kind, CTP_KIND_DESTROY);
  ASSERT_EQ(rec(0, 3)->gen, 2);
  ASSERT_EQ(rec(0, 3)->kind, CTP_KIND_CREATE);
  ASSERT_EQ(rec(0, 3)->station, 0);
  ASSERT_EQ(rec(0, 4)->gen, 2);
  ASSERT_UINT64_EQ(atomic_load(&q->head), 1);
  /* 4 stations: two fresh left, then none */
  ASSERT_NOT_NULL(corotracer_create(0, NULL, NULL));
  ASSERT_NOT_NULL(corotracer_create(0, NULL, NULL));
  ASSERT_NULL(corotracer_create(0, NULL, NULL));
  ASSERT_UINT64_EQ(atomic_load(&H->overflow), 1);
  return 0;
}

/* Lossless create with no station free: waits lossless_ms and gives up; a
 * station the engine frees meanwhile is taken. */
static void *freer(void *arg) {
  usleep(50000);
  ct_v2_push(ctp_queue_at(base, H->station_q_off), H->max_stations, (uint32_t)(uintptr_t)arg);
  engine_made_room();
  return NULL;
}
/* Shared memory that cannot be true stops tracing: the call that finds it
 * returns at once (never a retry loop: a lossless create once spun forever
 * on a broken queue, issue #24), its event counted dropped, and nothing is
 * written afterwards. alarm: a hang fails the case instead of the suite. */
static int stopped(corotracer_co *live, uint64_t head) {
  ASSERT_EQ(corotracer_enabled(), 0);
  ASSERT_NULL(corotracer_create(5, NULL, NULL));
  corotracer_suspend(live, SITE(1), COROTRACER_WAIT_NONE, 0);
  corotracer_resume(live);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), head); /* nothing written since */
  uint64_t recorded, dropped;
  corotracer_stats(&recorded, &dropped);
  ASSERT_UINT64_EQ(dropped, 1);
  return 0;
}
static int body_corrupt_queue(void) {
  alarm(20);
  corotracer_co *a = corotracer_create(1, NULL, NULL);
  find_base(a, 0);
  struct ctp_queue *q = ctp_queue_at(base, H->station_q_off);
  /* what the scribble left: head 1.4e19, tail 3.4e18 */
  atomic_store(&q->head, UINT64_C(14000000000000000000));
  atomic_store(&q->tail, UINT64_C(3400000000000000000));
  uint64_t t0 = ct_mono_ns();
  ASSERT_NULL(corotracer_create(2, NULL, NULL));
  ASSERT_UINT64_LT(ms_since(t0), H->lossless_ms); /* no wait either */
  return stopped(a, 1);
}
static int body_corrupt_entry(void) {
  alarm(20);
  corotracer_co *a = corotracer_create(1, NULL, NULL);
  find_base(a, 0);
  struct ctp_queue *q = ctp_queue_at(base, H->station_q_off);
  ct_v2_push(q, H->max_stations, 7); /* beyond the file's one station */
  ASSERT_NULL(corotracer_create(2, NULL, NULL));
  return stopped(a, 1);
}
static int body_corrupt_tail(void) {
  alarm(20);
  corotracer_co *co = corotracer_create(1, NULL, NULL);
  find_base(co, 0);
  uint64_t cap = H->ring_bytes / sizeof(struct ctp_rec);
  atomic_store(&ring(0)->tail, UINT64_C(0xdeadbeefdeadbeef)); /* beyond its head */
  /* the writer looks at tail at a quarter of the ring: up to there it goes on */
  uint64_t k = 1;
  while (corotracer_enabled() && k <= cap) {
    corotracer_suspend(co, SITE(1), COROTRACER_WAIT_NONE, k);
    k++;
  }
  ASSERT_EQ(corotracer_enabled(), 0);
  ASSERT_UINT64_LE(k, cap / 4 + 2);
  return stopped(co, atomic_load(&ring(0)->head));
}

static int body_lossless_create(void) {
  corotracer_co *a = corotracer_create(1, NULL, NULL);
  find_base(a, 0);
  uint64_t t0 = ct_mono_ns();
  ASSERT_NULL(corotracer_create(2, NULL, NULL));
  ASSERT_UINT64_GE(ms_since(t0), H->lossless_ms - 1);
  corotracer_destroy(a);
  atomic_fetch_add(&H->harvest_epoch, 1); /* progress: the next create waits again */
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, freer, (void *)0), 0);
  t0 = ct_mono_ns();
  corotracer_co *b = corotracer_create(3, NULL, NULL);
  ASSERT_EQ(pthread_join(t, NULL), 0);
  ASSERT_PTR_EQ(b, a);
  ASSERT_UINT64_EQ(station(0)->gen, 2);
  ASSERT_UINT64_LT(ms_since(t0), H->lossless_ms);
  return 0;
}

/* Two threads, two rings, each with its own tid and its own records; a
 * thread's exit closes its ring, a ring the engine frees is taken again by
 * the next thread with its head going on; a thread that finds no ring loses
 * its events, counted. */
static corotracer_co *shared_co;
static void *writer(void *arg) {
  uint64_t n = (uint64_t)(uintptr_t)arg;
  for (uint64_t i = 0; i < n; i++)
    corotracer_wake(shared_co, SITE(0x5555));
  return (void *)(uintptr_t)my_tid();
}
static int body_threads(void) {
  shared_co = corotracer_create(1, NULL, NULL);
  find_base(shared_co, 0);
  pthread_t t1, t2;
  void *tid1, *tid2;
  ASSERT_EQ(pthread_create(&t1, NULL, writer, (void *)10), 0);
  ASSERT_EQ(pthread_join(t1, &tid1), 0);
  ASSERT_EQ(pthread_create(&t2, NULL, writer, (void *)20), 0);
  ASSERT_EQ(pthread_join(t2, &tid2), 0);
  /* main: ring 0 (its create); t1: ring 1, t2: ring 2 (ring 1 is closed,
   * not yet freed by the engine) */
  ASSERT_UINT64_EQ(atomic_load(&H->rings_fresh), 3);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->state), CTP_RING_OWNED);
  ASSERT_UINT64_EQ(atomic_load(&ring(1)->state), CTP_RING_CLOSED);
  ASSERT_UINT64_EQ(atomic_load(&ring(2)->state), CTP_RING_CLOSED);
  ASSERT_UINT64_EQ(ring(1)->tid, (uint64_t)(uintptr_t)tid1);
  ASSERT_UINT64_EQ(ring(2)->tid, (uint64_t)(uintptr_t)tid2);
  ASSERT_UINT64_NE(ring(1)->tid, ring(2)->tid);
  ASSERT_UINT64_EQ(atomic_load(&ring(1)->head), 10);
  ASSERT_UINT64_EQ(atomic_load(&ring(2)->head), 20);
  ASSERT_EQ(rec(2, 19)->kind, CTP_KIND_WAKE);
  ASSERT_UINT64_EQ(rec(2, 19)->obj, 0); /* woken by a plain thread */
  uint64_t recorded, dropped;
  corotracer_stats(&recorded, &dropped);
  ASSERT_UINT64_EQ(recorded, 31);
  /* The engine drains ring 1, frees it: the next thread takes it. */
  ASSERT_UINT64_EQ(ct_v2_consume(base, 1, NULL, NULL), 10);
  atomic_store(&ring(1)->state, CTP_RING_FREE);
  ct_v2_push(ctp_queue_at(base, H->ring_q_off), H->ring_count, 1);
  ASSERT_EQ(pthread_create(&t1, NULL, writer, (void *)5), 0);
  ASSERT_EQ(pthread_join(t1, &tid1), 0);
  ASSERT_UINT64_EQ(atomic_load(&H->rings_fresh), 3);
  ASSERT_UINT64_EQ(ring(1)->owner_gen, 2);
  ASSERT_UINT64_EQ(ring(1)->tid, (uint64_t)(uintptr_t)tid1);
  ASSERT_UINT64_EQ(atomic_load(&ring(1)->head), 15);
  ASSERT_EQ(rec(1, 14)->kind, CTP_KIND_WAKE);
  /* The last fresh ring, then none: the fifth thread's events are lost. */
  ASSERT_EQ(pthread_create(&t1, NULL, writer, (void *)1), 0);
  ASSERT_EQ(pthread_join(t1, NULL), 0);
  ASSERT_UINT64_EQ(atomic_load(&H->no_ring), 0);
  uint64_t lost0 = atomic_load(&station(0)->v2_lost);
  ASSERT_EQ(pthread_create(&t1, NULL, writer, (void *)7), 0);
  ASSERT_EQ(pthread_join(t1, NULL), 0);
  ASSERT_UINT64_EQ(atomic_load(&H->no_ring), 1);
  ASSERT_UINT64_EQ(atomic_load(&station(0)->v2_lost) - lost0, 7);
  corotracer_stats(&recorded, &dropped);
  ASSERT_UINT64_EQ(dropped, 7);
  ASSERT_UINT64_EQ(recorded, 31 + 5 + 1 + 7);
  return 0;
}

/* Two threads writing at once: each claims a ring of its own, and each ring
 * holds exactly its thread's events, in its order. */
#define CONC 3000
static atomic_int conc_gate;
static void *conc_writer(void *arg) {
  corotracer_co *co = arg;
  while (!atomic_load(&conc_gate))
    ;
  for (uint64_t i = 0; i < CONC; i++)
    corotracer_suspend(co, SITE(0x6666), COROTRACER_WAIT_PTR, i);
  return (void *)(uintptr_t)my_tid();
}
static int body_concurrent(void) {
  corotracer_co *a = corotracer_create(1, NULL, NULL);
  find_base(a, 0);
  corotracer_co *b = corotracer_create(2, NULL, NULL);
  ASSERT_PTR_EQ(b, station(1));
  pthread_t t[2];
  void *tid[2];
  ASSERT_EQ(pthread_create(&t[0], NULL, conc_writer, a), 0);
  ASSERT_EQ(pthread_create(&t[1], NULL, conc_writer, b), 0);
  atomic_store(&conc_gate, 1);
  for (int i = 0; i < 2; i++)
    ASSERT_EQ(pthread_join(t[i], &tid[i]), 0);
  ASSERT_UINT64_EQ(atomic_load(&H->rings_fresh), 3);
  for (uint32_t r = 1; r <= 2; r++) {
    ASSERT_UINT64_EQ(atomic_load(&ring(r)->head), CONC);
    ASSERT_UINT64_EQ(atomic_load(&ring(r)->lost), 0);
    uint32_t who = rec(r, 0)->station; /* which thread took which ring is up to them */
    ASSERT(who == 0 || who == 1);
    ASSERT_UINT64_EQ(ring(r)->tid, (uint64_t)(uintptr_t)tid[who]);
    for (uint64_t k = 0; k < CONC; k++) {
      ASSERT_EQ(rec(r, k)->station, who);
      ASSERT_EQ(rec(r, k)->kind, CTP_KIND_SUSPEND);
      ASSERT_UINT64_EQ(rec(r, k)->obj, k);
    }
  }
  ASSERT_UINT64_NE(rec(1, 0)->station, rec(2, 0)->station);
  return 0;
}

/* This process's connection to the test's socket, among those earlier
 * cases left in the backlog (they are closed). */
static int my_connection(void) {
  int me = -1;
  for (;;) {
    struct pollfd lp = {.fd = listen_fd, .events = POLLIN};
    if (poll(&lp, 1, 0) != 1)
      break;
    int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0)
      break;
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (me < 0 && getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && cr.pid == getpid())
      me = c;
    else
      close(c);
  }
  ASSERT_GE(me, 0);
  return me;
}

/* The engine asleep: the next event sends it one byte and takes the flag. */
static int body_kick(void) {
  corotracer_co *co = corotracer_create(1, NULL, NULL);
  find_base(co, 0);
  int me = my_connection();
  char c;
  ASSERT_EQ(recv(me, &c, 1, MSG_DONTWAIT), -1); /* nothing yet */
  atomic_store(&H->tracer_sleeping, 1);
  corotracer_resume(co);
  ASSERT_UINT64_EQ(atomic_load(&H->tracer_sleeping), 0);
  struct pollfd pf = {.fd = me, .events = POLLIN};
  ASSERT_EQ(poll(&pf, 1, 5000), 1);
  ASSERT_EQ(recv(me, &c, 1, MSG_DONTWAIT), 1);
  ASSERT_EQ(c, '1');
  corotracer_suspend(co, NULL, COROTRACER_WAIT_NONE, 0); /* awake: no byte */
  ASSERT_EQ(recv(me, &c, 1, MSG_DONTWAIT), -1);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 3);
  return 0;
}

/* Default mode, 4 rings: a full ring is retired (CLOSED) and the writer
 * goes on in a free one while more than a quarter of the rings are free
 * (here 3, then 2), nothing lost; with only one free left it drops. */
static int body_spare(void) {
  corotracer_co *co = corotracer_create(9, NULL, NULL);
  find_base(co, 0);
  uint64_t cap = H->ring_bytes / sizeof(struct ctp_rec);
  for (uint64_t i = 1; i < 3 * cap + 10; i++)
    corotracer_suspend(co, SITE(1), COROTRACER_WAIT_NONE, i);
  for (uint32_t r = 0; r < 3; r++) {
    ASSERT_UINT64_EQ(atomic_load(&ring(r)->head), cap);
    ASSERT_UINT64_EQ(atomic_load(&ring(r)->lost), r < 2 ? 0 : 10);
    ASSERT_UINT64_EQ(atomic_load(&ring(r)->state), r < 2 ? CTP_RING_CLOSED : CTP_RING_OWNED);
    ASSERT_UINT64_EQ(__atomic_load_n(&ring(r)->tid, __ATOMIC_RELAXED), my_tid());
  }
  ASSERT_UINT64_EQ(atomic_load(&H->rings_fresh), 3);
  /* The thread's order holds across rings: ring 1 goes on from ring 0. */
  ASSERT_UINT64_EQ(rec(0, cap - 1)->obj, cap - 1);
  ASSERT_UINT64_EQ(rec(1, 0)->obj, cap);
  ASSERT_UINT64_EQ(rec(2, cap - 1)->obj, 3 * cap - 1);
  uint64_t recorded, dropped;
  corotracer_stats(&recorded, &dropped);
  ASSERT_UINT64_EQ(dropped, 10);
  ASSERT_UINT64_EQ(recorded, 3 * cap + 10);
  return 0;
}

/* Default mode, 40 rings and nobody draining (a stopped engine): 16 spares
 * in a row, then drops, though 23 rings are still free; once the engine
 * moved the tail of the ring in use (here: drained it), a full ring goes on
 * in a spare again. */
static int body_spare_blind(void) {
  corotracer_co *co = corotracer_create(9, NULL, NULL);
  find_base(co, 0);
  uint64_t cap = H->ring_bytes / sizeof(struct ctp_rec);
  for (uint64_t i = 0; i < 20 * cap + 10; i++)
    corotracer_suspend(co, SITE(1), COROTRACER_WAIT_NONE, i);
  ASSERT_UINT64_EQ(atomic_load(&H->rings_fresh), 17);
  for (uint32_t r = 0; r < 17; r++)
    ASSERT_UINT64_EQ(atomic_load(&ring(r)->head), cap);
  ASSERT_UINT64_EQ(atomic_load(&ring(16)->state), CTP_RING_OWNED);
  ASSERT_UINT64_EQ(atomic_load(&ring(16)->lost), 3 * cap + 11); /* + its create */
  ASSERT_UINT64_EQ(ct_v2_consume(base, 16, NULL, NULL), cap);
  for (uint64_t i = 0; i < cap + 1; i++)
    corotracer_suspend(co, SITE(1), COROTRACER_WAIT_NONE, i);
  ASSERT_UINT64_EQ(atomic_load(&H->rings_fresh), 18);
  ASSERT_UINT64_EQ(atomic_load(&ring(16)->state), CTP_RING_CLOSED);
  ASSERT_UINT64_EQ(atomic_load(&ring(16)->head), 2 * cap);
  ASSERT_UINT64_EQ(atomic_load(&ring(17)->head), 1);
  uint64_t recorded, dropped;
  corotracer_stats(&recorded, &dropped);
  ASSERT_UINT64_EQ(dropped, 3 * cap + 11);
  return 0;
}

/* The engine napping: a ring that passes a quarter full sends one byte and
 * takes the flag; below a quarter, nothing. */
static int body_nudge(void) {
  corotracer_co *co = corotracer_create(1, NULL, NULL);
  find_base(co, 0);
  int me = my_connection();
  uint64_t cap = H->ring_bytes / sizeof(struct ctp_rec);
  atomic_store(&H->napping, 1);
  char c;
  for (uint64_t i = 1; i < cap / 4; i++)
    corotracer_suspend(co, SITE(1), COROTRACER_WAIT_NONE, i);
  ASSERT_UINT64_EQ(atomic_load(&H->napping), 1);
  ASSERT_EQ(recv(me, &c, 1, MSG_DONTWAIT), -1); /* a quarter not reached: no byte */
  corotracer_suspend(co, SITE(1), COROTRACER_WAIT_NONE, 0);
  ASSERT_UINT64_EQ(atomic_load(&H->napping), 0);
  struct pollfd pf = {.fd = me, .events = POLLIN};
  ASSERT_EQ(poll(&pf, 1, 5000), 1);
  ASSERT_EQ(recv(me, &c, 1, MSG_DONTWAIT), 1);
  ASSERT_EQ(c, '1');
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), cap / 4 + 1);
  return 0;
}

/* fork: the child writes nothing anywhere; the parent's ring goes on. */
static int body_fork(void) {
  corotracer_co *a = corotracer_create(1, NULL, NULL);
  find_base(a, 0);
  corotracer_resume(a);
  fflush(stdout);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    corotracer_suspend(a, NULL, COROTRACER_WAIT_NONE, 0);
    _exit(corotracer_create(2, NULL, NULL) != NULL || corotracer_enabled() != 0);
  }
  int st;
  ASSERT(waitpid(pid, &st, 0) == pid);
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 2);
  ASSERT_UINT64_EQ(atomic_load(&H->rings_fresh), 1);
  ASSERT_UINT64_EQ(atomic_load(&H->allocated_count), 1);
  corotracer_suspend(a, NULL, COROTRACER_WAIT_NONE, 0);
  ASSERT_UINT64_EQ(atomic_load(&ring(0)->head), 3);
  return 0;
}

/* A header the probe must not trust: it writes v1 stations instead. */
static int body_v1_fallback(void) {
  corotracer_co *co = corotracer_create(1, NULL, NULL);
  find_base(co, 0);
  corotracer_resume(co);
  ASSERT_UINT64_EQ(atomic_load(&station(0)->ext_flags), CTP_STF_EXT);
  ASSERT_UINT64_EQ(atomic_load(&station(0)->ev_claimed), 2);
  ASSERT_UINT64_EQ(atomic_load(&station(0)->slots[1].seq), 2);
  ASSERT_EQ(station(0)->slots[1].kind, CTP_KIND_RESUME);
  ASSERT_UINT64_EQ(station(0)->gen, 0);
  ASSERT_UINT64_EQ(atomic_load(&H->rings_fresh), 0);
  return 0;
}

/* A switch under v1 stations: the three calls' events, each in its station. */
static int body_v1_switch(void) {
  corotracer_co *a = corotracer_create(1, NULL, NULL);
  find_base(a, 0);
  corotracer_co *b = corotracer_create(2, NULL, NULL);
  corotracer_resume(a);
  corotracer_switch(a, SITE(0x7777), COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, b);
  ASSERT_PTR_EQ(corotracer_current(), b);
  struct ctp_station *sa = station(0), *sb = station(1);
  ASSERT_UINT64_EQ(atomic_load(&sa->ev_claimed), 4); /* create, resume, suspend, wake */
  ASSERT_UINT64_EQ(atomic_load(&sa->slots[3].seq), 2);
  ASSERT_EQ(sa->slots[2].kind, CTP_KIND_SUSPEND);
  ASSERT_UINT64_EQ(sa->slots[2].addr, 0x7777);
  ASSERT_EQ(sa->slots[3].kind, CTP_KIND_WAKE);
  ASSERT_UINT64_EQ(sa->slots[3].addr, 0x7777);
  ASSERT_UINT64_EQ(sa->slots[3].obj, 0);
  ASSERT_UINT64_EQ(atomic_load(&sb->ev_claimed), 2); /* create, resume */
  ASSERT_EQ(sb->slots[1].kind, CTP_KIND_RESUME);
  ASSERT_EQ(sb->slots[1].is_active, 1);
  ASSERT_UINT64_LE(sa->slots[2].timestamp, sa->slots[3].timestamp);
  ASSERT_UINT64_LE(sa->slots[3].timestamp, sb->slots[1].timestamp);
  ASSERT_UINT64_EQ(atomic_load(&H->rings_fresh), 0);
  return 0;
}

struct bad {
  const char *name;
  void (*spoil)(struct ctp_header *h);
};
static void bad_pow2(struct ctp_header *h) {
  h->ring_bytes = 5000;
}
static void bad_small(struct ctp_header *h) {
  h->ring_bytes = 2048;
}
static void bad_count(struct ctp_header *h) {
  h->ring_count = 0;
}
static void bad_rings_off(struct ctp_header *h) {
  h->rings_off += 64; /* the last ring would end past v2_size */
}
static void bad_align(struct ctp_header *h) {
  h->station_q_off += 8;
}
static void bad_q_inside(struct ctp_header *h) {
  h->ring_q_off = CTP_FILE_SIZE(h->max_stations) - 64; /* over the last station */
}
static void bad_size(struct ctp_header *h) {
  h->v2_size += 4096; /* larger than the file */
}
static void bad_clock(struct ctp_header *h) {
  /* a counter this CPU does not have */
  h->clock = CT_TICKS_CLOCK == CTP_CLOCK_TSC ? CTP_CLOCK_CNTVCT : CTP_CLOCK_TSC;
}
static void bad_clock_unknown(struct ctp_header *h) {
  h->clock = 7;
}
static void bad_magic(struct ctp_header *h) {
  h->ext_magic = 0; /* not our engine: mode means nothing */
}

int main(void) {
  if (ct_make_tmpdir(dir, sizeof dir, "ct-probe-v2") != 0)
    return 1;
  snprintf(shm_path, sizeof shm_path, "%s/ctp", dir);
  snprintf(sock_path, sizeof sock_path, "%s/sock", dir);
  listen_fd = ct_listen_unix(sock_path, 64);
  ASSERT(listen_fd >= 0);
  int fails = 0;

  default_params();
  make_file();
  fails += run_case("records in the thread's ring", body_records);
  prm.clock = CTP_CLOCK_MONO;
  make_file();
  fails += run_case("CLOCK_MONOTONIC records", body_mono);
  default_params();
  make_file();
  fails += run_case("switch: three records, one stamp", body_switch);
  prm.rings = 1; /* no spare ring to go on in */
  make_file();
  fails += run_case("switch: room for 2, then 1 of its records", body_switch_room);
  prm.ring_bytes = 64 * 1024;
  make_file();
  fails += run_case("switch: one publish", body_switch_publish);
  default_params();
  prm.rings = 1; /* no spare ring to go on in */
  make_file();
  fails += run_case("full ring drops and counts", body_full);
  prm.mode = CTP_MODE_LOSSLESS;
  prm.lossless_ms = 300;
  make_file();
  fails += run_case("lossless: timeout without a reader", body_lossless_timeout);
  prm.lossless_ms = 10000;
  make_file();
  fails += run_case("lossless: nothing lost with a reader", body_lossless_reader);
  default_params();
  make_file();
  fails += run_case("station reuse", body_reuse);
  prm.stations = 1;
  prm.mode = CTP_MODE_LOSSLESS;
  prm.lossless_ms = 300;
  make_file();
  fails += run_case("lossless create waits for a station", body_lossless_create);
  make_file();
  fails += run_case_err("corrupt: a broken station queue stops tracing", body_corrupt_queue);
  make_file();
  fails += run_case_err("corrupt: a queue entry out of range stops tracing", body_corrupt_entry);
  make_file();
  fails += run_case_err("corrupt: a ring tail beyond its head stops tracing", body_corrupt_tail);
  default_params();
  make_file();
  fails += run_case("threads: rings claimed, closed, reused, none left", body_threads);
  make_file();
  fails += run_case("fork: the child is untraced", body_fork);
  make_file();
  fails += run_case("the engine asleep: one wake-up byte", body_kick);
  make_file();
  fails += run_case("the engine napping: a quarter-full ring nudges it", body_nudge);
  make_file();
  fails += run_case("a full ring: on in a spare one, while a quarter are free", body_spare);
  prm.rings = 40;
  make_file();
  fails += run_case("a stopped engine: 16 spares in a row, then drops", body_spare_blind);
  prm.ring_bytes = 128 * 1024;
  make_file();
  fails += run_case("two threads at once, two rings", body_concurrent);

  static const struct bad bad[] = {
      {"ring_bytes not a power of two", bad_pow2},
      {"ring_bytes below the minimum", bad_small},
      {"ring_count 0", bad_count},
      {"rings past v2_size", bad_rings_off},
      {"unaligned queue", bad_align},
      {"queue over the stations", bad_q_inside},
      {"v2_size past the file", bad_size},
      {"another CPU's clock", bad_clock},
      {"unknown clock", bad_clock_unknown},
      {"not our engine", bad_magic},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    default_params();
    make_file();
    bad[i].spoil(file);
    char name[128];
    snprintf(name, sizeof name, "v1 fallback: %s", bad[i].name);
    fails += run_case(name, body_v1_fallback);
  }
  default_params();
  make_file();
  bad_magic(file);
  fails += run_case("v1 fallback: a switch's three events", body_v1_switch);

  munmap(file, file_len);
  close(listen_fd);
  unlink(sock_path);
  unlink(shm_path);
  rmdir(dir);
  printf("%d case(s) failed\n", fails);
  return fails != 0;
}
