/* test-probe.c - the probe against a cTP file and socket made here, as the
 * engine would make them. Each case runs in a forked child (the probe attaches
 * once per process; this parent never calls it), with its stderr captured so
 * the parent can count the lines the probe printed. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/ctp.h"
#include "corotracer.h"
#include "lib/check.h"
#include "lib/probe-fixture.h"

static char dir[256];                                                  /* private temp dir */
static char shm_path[300], sock_path[300], errpath[320], missing[320]; /* missing: never made */
static struct ctp_header *hdr; /* the test's own mapping of shm_path */
static uint64_t map_len;
static int listen_fd = -1;

static uint64_t my_tid(void) {
  return (uint64_t)syscall(SYS_gettid);
}

/* Make shm_path as the engine would: zeroed, size for size_n stations, header
 * saying hdr_n stations, with the given magic and version. Maps it into hdr. */
static int make_file(uint32_t hdr_n, uint32_t size_n, uint64_t magic, uint32_t version) {
  if (hdr)
    munmap(hdr, map_len);
  hdr = NULL;
  unlink(shm_path);
  int fd = open(shm_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  map_len = CTP_FILE_SIZE(size_n);
  ASSERT_EQ(ftruncate(fd, (off_t)map_len), 0);
  void *p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  ASSERT_PTR_NE(p, MAP_FAILED);
  hdr = p;
  hdr->magic = magic;
  hdr->version = version;
  hdr->max_stations = hdr_n;
  hdr->ext_magic = CTP_EXT_MAGIC;
  hdr->ext_version = 1;
  hdr->engine_pid = (uint64_t)getpid();
  return 0;
}

/* The engine may pass a sealed memfd as /proc/PID/fd/N: make one, map it
 * into hdr, and name it in path. */
static int make_memfd(uint32_t n, char *path, size_t len) {
  if (hdr)
    munmap(hdr, map_len);
  hdr = NULL;
  int fd = memfd_create("ctp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_GE(fd, 0);
  map_len = CTP_FILE_SIZE(n);
  ASSERT_EQ(ftruncate(fd, (off_t)map_len), 0);
  struct ctp_header h = {.magic = CTP_MAGIC, .version = CTP_VERSION, .max_stations = n};
  ASSERT_EQ(pwrite(fd, &h, sizeof h, 0), (ssize_t)sizeof h);
  ASSERT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL), 0);
  void *p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_PTR_NE(p, MAP_FAILED);
  hdr = p;
  snprintf(path, len, "/proc/%d/fd/%d", (int)getpid(), fd); /* fd stays open for the run */
  return 0;
}

static int make_good_file(uint32_t n) {
  return make_file(n, n, CTP_MAGIC, CTP_VERSION);
}

static int make_listener(void) {
  if (listen_fd >= 0)
    close(listen_fd);
  unlink(sock_path);
  listen_fd = ct_listen_unix(sock_path, 16);
  ASSERT_GE(listen_fd, 0);
  return 0;
}

/* ---- running one case in a child ---------------------------------------- */

struct env {
  const char *shm, *sock, *count; /* NULL = unset */
};

/* Run body in a forked child with env set and stderr captured; the child's
 * exit status must be 0 and it must have printed exactly want_lines lines on
 * stderr, the first containing want_text (when not NULL). */
static int run_case(const char *name, struct env e, int (*body)(void), int want_lines,
                    const char *want_text) {
  int st = ct_run_forked(body, e.shm, e.sock, e.count, errpath);
  ASSERT_NE(st, -1);
  char buf[4096] = "";
  FILE *f = fopen(errpath, "re");
  ASSERT_NOT_NULL(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  int lines = 0;
  for (size_t i = 0; i < n; i++)
    lines += buf[i] == '\n';
  int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && lines == want_lines && n == strlen(buf) &&
           (!want_text || strstr(buf, want_text));
  if (want_lines == 1)
    ok = ok && !strncmp(buf, "corotracer: ", 12) && strstr(buf, "running untraced\n");
  printf("%s %s", ok ? "ok  " : "FAIL", name);
  if (WIFSIGNALED(st))
    printf(" (killed by signal %d)", WTERMSIG(st));
  else if (WEXITSTATUS(st))
    printf(" (exit %d)", WEXITSTATUS(st));
  if (!ok || n)
    printf(" stderr: %s", n ? buf : "(empty)\n");
  else
    printf("\n");
  return !ok;
}

/* ---- helpers for the bodies ----------------------------------------------- */

static struct ctp_station *station(uint32_t i) {
  return ctp_station_at(hdr, i);
}

/* Event k of station st (must not have been lapped): its slot, checked stable
 * and holding exactly that event. */
static struct ctp_slot *event(struct ctp_station *st, uint64_t k) {
  struct ctp_slot *sl = &st->slots[k % CTP_SLOTS];
  uint64_t seq = atomic_load(&sl->seq);
  if (seq != 2 * (k / CTP_SLOTS) + 2) {
    printf("event %llu: slot seq %llu\n", (unsigned long long)k, (unsigned long long)seq);
    return NULL;
  }
  return sl;
}

static int check_reserved_zero(const struct ctp_slot *sl) {
  ASSERT_EQ(sl->flags, 0);
  ASSERT_EQ(sl->aux, 0);
  for (size_t i = 0; i < sizeof sl->reserved; i++)
    ASSERT_EQ(sl->reserved[i], 0);
  return 0;
}

/* noinline functions whose probe calls use the default site: the sites must
 * land inside them (code starts at the function's address; they are far
 * smaller than 512 bytes). The volatile store after each call keeps the
 * compiler from turning it into a tail call, which would make the site the
 * caller's caller. */
static volatile uintptr_t sink;
static __attribute__((noinline)) corotracer_co *create_here(uint64_t id) {
  corotracer_co *co = corotracer_create(id, NULL, NULL);
  sink = (uintptr_t)co;
  return co;
}
static __attribute__((noinline)) void suspend_here(corotracer_co *co) {
  corotracer_suspend(co, NULL, COROTRACER_WAIT_FD, 7);
  sink = 1;
}
static __attribute__((noinline)) void destroy_here(corotracer_co *co) {
  corotracer_destroy(co);
  sink = 2;
}
static int in_func(uint64_t site, void *fn) {
  return site > (uint64_t)(uintptr_t)fn && site < (uint64_t)(uintptr_t)fn + 512;
}

#define SITE(x) ((const void *)(uintptr_t)(x))

/* ---- cases ---------------------------------------------------------------- */

static int body_events(void) {
  ASSERT_OK(corotracer_init());
  ASSERT_EQ(corotracer_enabled(), 1);
  ASSERT_EQ(atomic_load(&hdr->attached), 1);
  uint64_t tid = my_tid();
  corotracer_co *a = corotracer_create(100, "worker", SITE(0x1111));
  ASSERT_NOT_NULL(a);
  ASSERT_NULL(corotracer_current());
  corotracer_resume(a);
  ASSERT_PTR_EQ(corotracer_current(), a);
  /* b is created by a: parent 100 */
  corotracer_co *b = corotracer_create(0, NULL, SITE(0x2222));
  ASSERT_NOT_NULL(b);
  ASSERT_PTR_NE(b, a);
  corotracer_wake(b, SITE(0x3333)); /* from a coroutine: obj = 100 */
  corotracer_suspend(a, SITE(0x4444), COROTRACER_WAIT_PTR, 0xabcdef);
  ASSERT_NULL(corotracer_current());
  corotracer_wake(a, SITE(0x5555)); /* from a plain thread: obj = 0 */
  corotracer_resume(b);
  destroy_here(b);
  ASSERT_NULL(corotracer_current());
  /* 12 more suspend/resume pairs on a: its ring laps */
  for (int i = 0; i < 12; i++) {
    corotracer_resume(a);
    corotracer_suspend(a, SITE(0x6000 + i), COROTRACER_WAIT_NONE, 0);
  }
  /* default sites */
  corotracer_co *c = create_here(300);
  suspend_here(c);

  ASSERT_EQ(atomic_load(&hdr->allocated_count), 3);
  struct ctp_station *sa = station(0), *sb = station(1), *sc = station(2);
  ASSERT_UINT64_EQ(sa->probe_id, 100);
  ASSERT_EQ(atomic_load(&sa->ext_flags), CTP_STF_EXT | CTP_STF_LABEL);
  ASSERT_STR_EQ(sa->label, "worker");
  ASSERT_UINT64_EQ(sa->create_site, 0x1111);
  ASSERT_UINT64_EQ(sa->parent_id, 0);
  ASSERT_EQ(sa->pid, (uint32_t)getpid());
  ASSERT_EQ(sa->gen, 0);
  ASSERT_EQ(sa->is_dead, 0);
  ASSERT_UINT64_NE(sa->birth_ts, 0);
  ASSERT_UINT64_EQ(atomic_load(&sa->ev_claimed), 1 + 1 + 1 + 1 + 24);

  /* a: create, resume, suspend, wake, then 12 x (resume, suspend) = events 0..27 */
  struct ctp_slot *s;
  /* events 0..19 were lapped; check what the ring holds: 20..27 */
  for (uint64_t k = 20; k < 28; k++) {
    ASSERT_NOT_NULL(s = event(sa, k));
    ASSERT_EQ(check_reserved_zero(s), 0);
    ASSERT_UINT64_EQ(s->tid, tid);
    ASSERT_UINT64_GE(s->timestamp, sa->birth_ts);
    int i = (int)(k - 4) / 2;
    if (k % 2 == 0) { /* resume */
      ASSERT_EQ(s->kind, CTP_KIND_RESUME);
      ASSERT_EQ(s->is_active, 1);
      ASSERT_UINT64_EQ(s->addr, 0);
      ASSERT_UINT64_EQ(s->obj, 0);
      ASSERT_EQ(s->wait_kind, 0);
    } else {
      ASSERT_EQ(s->kind, CTP_KIND_SUSPEND);
      ASSERT_EQ(s->is_active, 0);
      ASSERT_UINT64_EQ(s->addr, (uint64_t)(0x6000 + i));
      ASSERT_EQ(s->wait_kind, CTP_WAIT_NONE);
      ASSERT_UINT64_EQ(s->obj, 0);
    }
  }
  /* timestamps increase along a's ring */
  for (uint64_t k = 21; k < 28; k++)
    ASSERT_UINT64_GE(event(sa, k)->timestamp, event(sa, k - 1)->timestamp);

  /* b: created by a, woken by a, resumed, destroyed */
  ASSERT_UINT64_EQ(sb->probe_id, UINT64_C(1) << 63 | 2); /* id 0: picked, non-zero, bit 63 */
  ASSERT_EQ(atomic_load(&sb->ext_flags), CTP_STF_EXT);
  ASSERT_EQ(sb->label[0], '\0');
  ASSERT_UINT64_EQ(sb->create_site, 0x2222);
  ASSERT_UINT64_EQ(sb->parent_id, 100);
  ASSERT_UINT64_EQ(atomic_load(&sb->ev_claimed), 4);
  ASSERT_NOT_NULL(s = event(sb, 0));
  ASSERT_EQ(s->kind, CTP_KIND_CREATE);
  ASSERT_UINT64_EQ(s->addr, 0x2222);
  ASSERT_UINT64_EQ(s->obj, 100);
  ASSERT_EQ(s->is_active, 0);
  ASSERT_NOT_NULL(s = event(sb, 1));
  ASSERT_EQ(s->kind, CTP_KIND_WAKE);
  ASSERT_UINT64_EQ(s->addr, 0x3333);
  ASSERT_UINT64_EQ(s->obj, 100);
  ASSERT_EQ(s->is_active, 0);
  ASSERT_UINT64_EQ(s->tid, tid);
  ASSERT_NOT_NULL(s = event(sb, 2));
  ASSERT_EQ(s->kind, CTP_KIND_RESUME);
  ASSERT_EQ(s->is_active, 1);
  ASSERT_UINT64_EQ(s->addr, 0);
  ASSERT_NOT_NULL(s = event(sb, 3));
  ASSERT_EQ(s->kind, CTP_KIND_DESTROY);
  ASSERT_EQ(s->is_active, 0);
  ASSERT_UINT64_NE(s->addr, 0);
  ASSERT(in_func(s->addr, (void *)destroy_here)); /* destroy site: the caller */
  ASSERT_EQ(sb->is_dead, 1);
  for (uint64_t k = 0; k < 4; k++)
    ASSERT_EQ(check_reserved_zero(event(sb, k)), 0);
  for (unsigned i = 4; i < CTP_SLOTS; i++) {
    ASSERT_UINT64_EQ(atomic_load(&sb->slots[i].seq), 0);
    ASSERT_UINT64_EQ(sb->slots[i].timestamp, 0);
  }

  corotracer_co *d = corotracer_create(400, NULL, SITE(0x7777));
  ASSERT_NULL(d); /* N = 3 in this case: no station left */

  /* c: default sites are the callers' return addresses */
  ASSERT_UINT64_EQ(sc->probe_id, 300);
  ASSERT(in_func(sc->create_site, (void *)create_here));
  ASSERT_NOT_NULL(s = event(sc, 0));
  ASSERT_EQ(s->kind, CTP_KIND_CREATE);
  ASSERT_UINT64_EQ(s->addr, sc->create_site);
  ASSERT_NOT_NULL(s = event(sc, 1));
  ASSERT_EQ(s->kind, CTP_KIND_SUSPEND);
  ASSERT(in_func(s->addr, (void *)suspend_here));
  ASSERT_EQ(s->wait_kind, CTP_WAIT_FD);
  ASSERT_UINT64_EQ(s->obj, 7);

  uint64_t rec, drop;
  corotracer_stats(&rec, &drop);
  ASSERT_EQ(rec, 28 + 4 + 2);
  ASSERT_EQ(drop, 1); /* d's create */
  ASSERT_EQ(atomic_load(&hdr->overflow), 1);
  return 0;
}

/* Suspend with a wait object, wake from a plain thread, label truncation. */
static int body_fields(void) {
  char longlabel[100];
  memset(longlabel, 'x', sizeof longlabel - 1);
  longlabel[sizeof longlabel - 1] = '\0';
  corotracer_co *a = corotracer_create(7, longlabel, SITE(0x10));
  ASSERT_NOT_NULL(a);
  struct ctp_station *st = station(0);
  ASSERT_EQ(strlen(st->label), 63);
  ASSERT_EQ(st->label[62], 'x');
  for (size_t i = 63; i < CTP_LABEL_MAX; i++)
    ASSERT_EQ(st->label[i], '\0');
  corotracer_resume(a);
  corotracer_suspend(a, SITE(0x20), COROTRACER_WAIT_PTR, 0xdeadbeef);
  corotracer_suspend(a, SITE(0x21), (enum corotracer_wait)9, 5); /* unknown kind: obj dropped */
  corotracer_wake(a, SITE(0x30));
  struct ctp_slot *s;
  ASSERT_NOT_NULL(s = event(st, 2));
  ASSERT_EQ(s->kind, CTP_KIND_SUSPEND);
  ASSERT_UINT64_EQ(s->addr, 0x20);
  ASSERT_EQ(s->wait_kind, CTP_WAIT_PTR);
  ASSERT_UINT64_EQ(s->obj, 0xdeadbeef);
  ASSERT_NOT_NULL(s = event(st, 3));
  ASSERT_EQ(s->wait_kind, CTP_WAIT_NONE);
  ASSERT_UINT64_EQ(s->obj, 0);
  ASSERT_NOT_NULL(s = event(st, 4));
  ASSERT_EQ(s->kind, CTP_KIND_WAKE);
  ASSERT_UINT64_EQ(s->addr, 0x30);
  ASSERT_UINT64_EQ(s->obj, 0);
  ASSERT_UINT64_EQ(s->tid, my_tid());
  /* label that fits exactly */
  corotracer_co *b = corotracer_create(8, "", NULL);
  ASSERT_NOT_NULL(b);
  ASSERT_EQ(atomic_load(&station(1)->ext_flags), CTP_STF_EXT | CTP_STF_LABEL);
  ASSERT_EQ(station(1)->label[0], 0);
  return 0;
}

/* The exported plain names (tests/lib/probe-noinline.c) behave the same. */
void ct_test_plain_calls(corotracer_co *co, corotracer_co *null);
static int body_plain_names(void) {
  corotracer_co *a = corotracer_create(5, NULL, NULL);
  ASSERT_NOT_NULL(a);
  ct_test_plain_calls(a, NULL);
  struct ctp_station *st = station(0);
  ASSERT_UINT64_EQ(atomic_load(&st->ev_claimed), 7);
  ASSERT_EQ(atomic_load(&hdr->allocated_count), 1);
  struct ctp_slot *s;
  ASSERT_NOT_NULL(s = event(st, 1));
  ASSERT_EQ(s->kind, CTP_KIND_RESUME);
  ASSERT_NOT_NULL(s = event(st, 2));
  ASSERT_EQ(s->kind, CTP_KIND_SUSPEND);
  ASSERT_EQ(s->wait_kind, CTP_WAIT_FD);
  ASSERT_UINT64_EQ(s->obj, 9);
  ASSERT(in_func(s->addr, (void *)ct_test_plain_calls));
  ASSERT_NOT_NULL(s = event(st, 3));
  ASSERT_EQ(s->kind, CTP_KIND_WAKE);
  ASSERT_UINT64_EQ(s->addr, 0x99);
  ASSERT_NOT_NULL(s = event(st, 4)); /* the switch: v1, three events */
  ASSERT_EQ(s->kind, CTP_KIND_SUSPEND);
  ASSERT(in_func(s->addr, (void *)ct_test_plain_calls));
  ASSERT_NOT_NULL(s = event(st, 5));
  ASSERT_EQ(s->kind, CTP_KIND_WAKE);
  ASSERT(in_func(s->addr, (void *)ct_test_plain_calls));
  ASSERT_NOT_NULL(s = event(st, 6));
  ASSERT_EQ(s->kind, CTP_KIND_RESUME);
  ASSERT_PTR_EQ(corotracer_current(), a);
  return 0;
}

static int body_overflow(void) {
  corotracer_co *h[5];
  for (int i = 0; i < 5; i++)
    h[i] = corotracer_create((uint64_t)i + 1, NULL, NULL);
  ASSERT_NOT_NULL(h[0]);
  ASSERT_NOT_NULL(h[1]);
  ASSERT_NULL(h[2]);
  ASSERT_NULL(h[3]);
  ASSERT_NULL(h[4]);
  ASSERT_EQ(atomic_load(&hdr->overflow), 3);
  ASSERT_EQ(atomic_load(&hdr->allocated_count), 2);
  for (int i = 0; i < 5; i++) { /* NULL handles are accepted */
    corotracer_resume(h[i]);
    corotracer_suspend(h[i], NULL, COROTRACER_WAIT_NONE, 0);
    corotracer_wake(h[i], NULL);
    corotracer_switch(h[i], NULL, COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, h[i]);
  }
  uint64_t rec, drop;
  corotracer_stats(&rec, &drop);
  ASSERT_EQ(rec, 2 * 7);
  ASSERT_EQ(drop, 3);
  return 0;
}

/* Untraced: the call fails with the expected error, every call is a no-op, the
 * verdict is kept (no second line), and nothing was written to the file. */
static int want_err;
static int body_untraced(void) {
  int rc = corotracer_init();
  if (rc != want_err)
    printf("init returned %d, want %d\n", rc, want_err);
  ASSERT_EQ(rc, want_err);
  ASSERT_EQ(corotracer_init(), rc);
  ASSERT_EQ(corotracer_enabled(), 0);
  corotracer_co *co = corotracer_create(1, "x", NULL);
  ASSERT_NULL(co);
  corotracer_resume(co);
  corotracer_suspend(co, NULL, COROTRACER_WAIT_NONE, 0);
  corotracer_wake(co, NULL);
  corotracer_switch(co, NULL, COROTRACER_WAIT_NONE, 0, COROTRACER_SWITCH_RUNNABLE, co);
  corotracer_destroy(co);
  ASSERT_NULL(corotracer_current());
  uint64_t rec = 1, drop = 1;
  corotracer_stats(&rec, &drop);
  ASSERT_EQ(rec, 0);
  ASSERT_EQ(drop, 0);
  ASSERT_EQ(atomic_load(&hdr->attached), 0);
  ASSERT_EQ(atomic_load(&hdr->allocated_count), 0);
  return 0;
}

/* Engine gone: the peer of our socket is closed; the engine asked for a byte
 * before every event. SIGPIPE keeps its default action: a write(2) would kill us. */
static int body_engine_gone(void) {
  signal(SIGPIPE, SIG_DFL);
  ASSERT_OK(corotracer_init());
  int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
  ASSERT_GE(c, 0);
  close(c);
  close(listen_fd);
  corotracer_co *a = corotracer_create(1, NULL, NULL);
  ASSERT_NOT_NULL(a);
  for (int i = 0; i < 100; i++) {
    atomic_store(&hdr->tracer_sleeping, 1);
    errno = 4242;
    corotracer_resume(a);
    ASSERT_EQ(errno, 4242); /* the failed send did not leak its errno */
    ASSERT_EQ(atomic_load(&hdr->tracer_sleeping), 0);
  }
  ASSERT_UINT64_EQ(atomic_load(&station(0)->ev_claimed), 101);
  ASSERT_NOT_NULL(event(station(0), 100));
  ASSERT_EQ(event(station(0), 100)->kind, CTP_KIND_RESUME);
  return 0;
}

/* Engine alive but not reading: the socket buffer fills; no event may block. */
static int body_engine_stuck(void) {
  int n = getenv("CT_SAN") && *getenv("CT_SAN") ? 20000 : 100000;
  alarm(60); /* a blocking send would hang here: die instead */
  ASSERT_OK(corotracer_init());
  int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
  ASSERT_GE(c, 0);
  corotracer_co *a = corotracer_create(1, NULL, NULL);
  ASSERT_NOT_NULL(a);
  int queued = -1;
  /* engine awake: no byte; engine asleep: one byte, from the first event only */
  for (int i = 0; i < 100; i++)
    corotracer_wake(a, NULL);
  ASSERT_EQ(ioctl(c, FIONREAD, &queued), 0);
  ASSERT_UINT64_EQ(queued, 0);
  atomic_store(&hdr->tracer_sleeping, 1);
  for (int i = 0; i < 3; i++)
    corotracer_wake(a, NULL);
  ASSERT_EQ(ioctl(c, FIONREAD, &queued), 0);
  ASSERT_UINT64_EQ(queued, 1);
  ASSERT_EQ(atomic_load(&hdr->tracer_sleeping), 0);
  char b[1];
  ASSERT_EQ(read(c, b, 1), 1);
  ASSERT_EQ(b[0], '1');
  for (int i = 0; i < n; i++) {
    atomic_store(&hdr->tracer_sleeping, 1);
    corotracer_wake(a, NULL);
  }
  ASSERT_EQ(ioctl(c, FIONREAD, &queued), 0);
  printf("engine stuck: %d events asked for a byte, %d bytes queued\n", n, queued);
  ASSERT_UINT64_GT(queued, 0);
  ASSERT_UINT64_LT(queued, n); /* the buffer filled, later sends failed */
  ASSERT_EQ(read(c, b, 1), 1);
  ASSERT_EQ(b[0], '1');
  ASSERT_UINT64_EQ(atomic_load(&station(0)->ev_claimed), (uint64_t)n + 1 + 103);
  close(c);
  return 0;
}

/* Our engine (ext_version 2) acknowledges a connection once it has written the
 * process's module lines; attach waits for that byte, at most ~1 s, then runs
 * traced anyway. ack_ms: when the byte comes after the connection, -1 never. */
static int ack_ms;
static void *acker(void *arg) {
  (void)arg;
  int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC); /* left open: the child exits */
  struct timespec ts = {0, ack_ms * 1000L * 1000L};
  nanosleep(&ts, NULL);
  return (void *)(intptr_t)(c >= 0 && write(c, "1", 1) == 1);
}

static int body_ack(void) {
  pthread_t t;
  struct timespec a, b;
  void *sent = (void *)1;
  if (ack_ms >= 0)
    ASSERT_EQ(pthread_create(&t, NULL, acker, NULL), 0);
  clock_gettime(CLOCK_MONOTONIC, &a);
  ASSERT_OK(corotracer_init());
  clock_gettime(CLOCK_MONOTONIC, &b);
  long dt = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000,
       want = ack_ms >= 0 ? ack_ms : 1000;
  printf("ack after %d ms: init took %ld ms\n", ack_ms, dt);
  ASSERT_GE(dt, want - 10);
  ASSERT_LT(dt, want + 700);
  if (ack_ms >= 0) {
    ASSERT_EQ(pthread_join(t, &sent), 0);
    ASSERT_NOT_NULL(sent);
  }
  ASSERT_NOT_NULL(corotracer_create(1, NULL, NULL));
  ASSERT_UINT64_EQ(atomic_load(&station(0)->ev_claimed), 1);
  return 0;
}

/* fork: the child's calls must change nothing in the parent's stations. */
static int body_fork(void) {
  corotracer_co *a = corotracer_create(1, "parent", NULL);
  ASSERT_NOT_NULL(a);
  corotracer_resume(a);
  static unsigned char before[CTP_STATION_SIZE];
  memcpy(before, station(0), sizeof before);
  uint32_t alloc = atomic_load(&hdr->allocated_count);
  fflush(stdout);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int bad =
        corotracer_enabled() != 0 || corotracer_init() != -ECHILD || corotracer_current() != NULL;
    atomic_store(&hdr->tracer_sleeping, 1);
    corotracer_suspend(a, NULL, COROTRACER_WAIT_NONE, 0);
    corotracer_wake(a, NULL);
    corotracer_resume(a);
    corotracer_destroy(a);
    bad |= corotracer_create(2, "child", NULL) != NULL;
    uint64_t rec = 1, drop = 1;
    corotracer_stats(&rec, &drop);
    bad |= rec != 0 || drop != 0;
    bad |= atomic_load(&hdr->tracer_sleeping) != 1; /* no kick from the child */
    _exit(bad);
  }
  int st;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT(WIFEXITED(st));
  ASSERT_EQ(WEXITSTATUS(st), 0);
  ASSERT_MEM_EQ(before, station(0), sizeof before);
  ASSERT_EQ(atomic_load(&hdr->allocated_count), alloc);
  ASSERT_EQ(atomic_load(&hdr->attached), 1);
  /* the parent still traces */
  corotracer_suspend(a, NULL, COROTRACER_WAIT_NONE, 0);
  ASSERT_UINT64_EQ(atomic_load(&station(0)->ev_claimed), 3);
  ASSERT_EQ(corotracer_enabled(), 1);
  return 0;
}

/* ---- first calls racing ---------------------------------------------------- */

#define RACERS 4
static atomic_int race_gate;
static void *racer(void *arg) {
  while (!atomic_load(&race_gate))
    sched_yield();
  return corotracer_create((uint64_t)(uintptr_t)arg, NULL, NULL); /* this thread's first call */
}

/* Several threads make the process's first probe call at once: one attach. */
static int body_first_calls(void) {
  pthread_t t[RACERS];
  void *h[RACERS];
  for (int i = 0; i < RACERS; i++)
    ASSERT_EQ(pthread_create(&t[i], NULL, racer, (void *)(uintptr_t)(i + 1)), 0);
  atomic_store(&race_gate, 1);
  for (int i = 0; i < RACERS; i++) {
    ASSERT_EQ(pthread_join(t[i], &h[i]), 0);
    ASSERT_NOT_NULL(h[i]);
  }
  ASSERT_EQ(atomic_load(&hdr->attached), 1);
  ASSERT_EQ(atomic_load(&hdr->allocated_count), RACERS);
  uint64_t seen = 0;
  for (uint32_t i = 0; i < RACERS; i++) {
    uint64_t id = station(i)->probe_id;
    ASSERT_GE(id, 1);
    ASSERT_LE(id, RACERS);
    ASSERT(!(seen & (1u << id)));
    seen |= 1u << id;
    ASSERT_UINT64_EQ(atomic_load(&station(i)->ev_claimed), 1);
  }
  return 0;
}

/* ---- many writers on one station ------------------------------------------ */

#define WAKERS 3
static corotracer_co *victim;
/* The victim's station as the probe maps it. White box: a handle is a pointer
 * to its station. The reader must use this mapping, not the test's own: TSan
 * keys synchronization on virtual addresses and cannot see that two mappings
 * of one file alias, so the probe's releases would never reach our acquires. */
static struct ctp_station *victim_st;
static uint64_t waker_tid[WAKERS];
static uint64_t owner_tid;
static int iters;
static atomic_int stop_reader;
static atomic_int start_line;

struct harvest {
  uint64_t last_seen[CTP_SLOTS];
  uint64_t harvested, torn, bad;
};

/* One stable copy of a slot by the engine's read protocol; 0 if none. */
static int read_slot(struct ctp_slot *sl, struct ctp_slot *c, uint64_t *seq) {
  uint64_t v1 = atomic_load_explicit(&sl->seq, memory_order_acquire);
  if (v1 == 0 || (v1 & 1))
    return 0;
  c->timestamp = __atomic_load_n(&sl->timestamp, __ATOMIC_RELAXED);
  c->tid = __atomic_load_n(&sl->tid, __ATOMIC_RELAXED);
  c->addr = __atomic_load_n(&sl->addr, __ATOMIC_RELAXED);
  c->kind = __atomic_load_n(&sl->kind, __ATOMIC_RELAXED);
  c->wait_kind = __atomic_load_n(&sl->wait_kind, __ATOMIC_RELAXED);
  c->obj = __atomic_load_n(&sl->obj, __ATOMIC_RELAXED);
  c->is_active = __atomic_load_n(&sl->is_active, __ATOMIC_RELAXED);
  atomic_thread_fence(memory_order_acquire);
  if (atomic_load_explicit(&sl->seq, memory_order_relaxed) != v1)
    return -1;
  *seq = v1;
  return 1;
}

/* Is c a coherent event of the victim (no field from another write)? */
static int coherent(const struct ctp_slot *c, uint64_t k) {
  switch (c->kind) {
  case CTP_KIND_CREATE:
    return k == 0 && c->addr == 0x9000 && c->obj == 0 && !c->is_active;
  case CTP_KIND_RESUME:
    return c->tid == owner_tid && c->addr == 0 && c->obj == 0 && c->is_active == 1 &&
           c->wait_kind == 0;
  case CTP_KIND_SUSPEND:
    return c->tid == owner_tid && c->addr == 0x9100 && c->wait_kind == CTP_WAIT_PTR &&
           c->obj >= 0x70000 && c->obj < 0x70000 + (uint64_t)iters && !c->is_active;
  case CTP_KIND_WAKE:
    for (int w = 0; w < WAKERS; w++)
      if (c->obj == 1000 + (uint64_t)w)
        return c->tid == waker_tid[w] && c->addr == 0xA000 + 0x100 * (uint64_t)w && !c->is_active &&
               c->wait_kind == 0;
    return 0;
  case CTP_KIND_DESTROY:
    return c->tid == owner_tid && !c->is_active;
  default:
    return 0;
  }
}

static void harvest(struct ctp_station *st, struct harvest *h) {
  for (unsigned s = 0; s < CTP_SLOTS; s++) {
    struct ctp_slot c;
    uint64_t seq;
    int r = read_slot(&st->slots[s], &c, &seq);
    if (r < 0)
      h->torn++;
    if (r <= 0 || seq <= h->last_seen[s])
      continue;
    uint64_t k = ctp_event_index(seq, s);
    if ((!coherent(&c, k) || k >= atomic_load(&st->ev_claimed)) && h->bad++ < 10) {
      printf("incoherent event %llu: kind %u tid %llu addr %#llx obj %#llx active %u\n",
             (unsigned long long)k, c.kind, (unsigned long long)c.tid, (unsigned long long)c.addr,
             (unsigned long long)c.obj, c.is_active);
    }
    h->harvested++;
    h->last_seen[s] = seq;
  }
}

static void *reader(void *arg) {
  struct harvest *h = arg;
  while (!atomic_load(&stop_reader))
    harvest(victim_st, h);
  return NULL;
}

static void *waker(void *arg) {
  int w = (int)(intptr_t)arg;
  waker_tid[w] = my_tid();
  corotracer_co *me = corotracer_create(1000 + (uint64_t)w, "waker", NULL);
  corotracer_resume(me);
  while (!atomic_load(&start_line))
    sched_yield();
  for (int i = 0; i < iters; i++)
    corotracer_wake(victim, SITE(0xA000 + 0x100 * w));
  return NULL;
}

static void *owner(void *arg) {
  (void)arg;
  owner_tid = my_tid();
  while (!atomic_load(&start_line))
    sched_yield();
  for (int i = 0; i < iters; i++) {
    corotracer_resume(victim);
    corotracer_suspend(victim, SITE(0x9100), COROTRACER_WAIT_PTR, 0x70000 + (uint64_t)i);
  }
  corotracer_destroy(victim);
  return NULL;
}

static int body_threads(void) {
  iters = getenv("CT_SAN") && *getenv("CT_SAN") ? 20000 : 200000;
  victim = corotracer_create(1, "victim", SITE(0x9000));
  ASSERT_NOT_NULL(victim);
  victim_st = (struct ctp_station *)victim;
  ASSERT_UINT64_EQ(victim_st->probe_id, 1);
  ASSERT_UINT64_EQ(station(0)->probe_id, 1);
  ASSERT_UINT64_EQ(victim_st->create_site, 0x9000);
  pthread_t t[WAKERS + 2];
  static struct harvest h;
  ASSERT_EQ(pthread_create(&t[0], NULL, reader, &h), 0);
  for (int w = 0; w < WAKERS; w++)
    ASSERT_EQ(pthread_create(&t[1 + w], NULL, waker, (void *)(intptr_t)w), 0);
  /* wakers' creates must not race owner_tid's reader: both set before start */
  ASSERT_EQ(pthread_create(&t[WAKERS + 1], NULL, owner, NULL), 0);
  while (atomic_load(&hdr->allocated_count) < 1 + WAKERS)
    sched_yield();
  atomic_store(&start_line, 1);
  for (int i = 1; i < WAKERS + 2; i++)
    ASSERT_EQ(pthread_join(t[i], NULL), 0);
  atomic_store(&stop_reader, 1);
  ASSERT_EQ(pthread_join(t[0], NULL), 0);

  struct ctp_station *st = victim_st;
  uint64_t calls = 1 + 2 * (uint64_t)iters + WAKERS * (uint64_t)iters + 1;
  uint64_t claimed = atomic_load(&st->ev_claimed);
  ASSERT_UINT64_EQ(claimed, calls);
  uint64_t rec, drop;
  corotracer_stats(&rec, &drop);
  ASSERT_UINT64_EQ(rec, calls + 2 * WAKERS); /* + each waker's create and resume */
  /* every slot stable, holding a coherent event, never beyond the claims */
  for (unsigned s = 0; s < CTP_SLOTS; s++) {
    struct ctp_slot c;
    uint64_t seq;
    ASSERT_EQ(read_slot(&st->slots[s], &c, &seq), 1);
    uint64_t k = ctp_event_index(seq, s);
    ASSERT_UINT64_LT(k, claimed);
    ASSERT(coherent(&c, k));
  }
  harvest(st, &h);
  printf("threads: %llu events claimed, %llu dropped, %llu harvested live, %llu torn reads\n",
         (unsigned long long)claimed, (unsigned long long)drop, (unsigned long long)h.harvested,
         (unsigned long long)h.torn);
  ASSERT_EQ(h.bad, 0);
  /* Dropped events leave their index unused: at most claimed - dropped
   * distinct events were ever stable, so that many could be harvested. */
  ASSERT_UINT64_LE(drop, claimed);
  ASSERT_UINT64_LE(h.harvested, claimed - drop);
  /* the destroy came last in the owner's thread and nobody laps it */
  ASSERT_EQ(st->is_dead, 1);
  return 0;
}

/* ---- main ------------------------------------------------------------------ */

struct bad_case {
  const char *name;
  uint32_t hdr_n, size_n;
  uint64_t magic;
  uint32_t version;
  const char *count; /* CTP_MAX_STATIONS */
  int err;
  const char *text;
};

/* A setup the probe must refuse: init returns err, and its one stderr line
 * holds fmt with arg in its %s before the program goes on untraced. */
static int refused(const char *name, struct env e, int err, const char *fmt, const char *arg) {
  char text[512];
  snprintf(text, sizeof text, fmt, arg);
  want_err = err;
  return run_case(name, e, body_untraced, 1, text);
}

int main(void) {
  ASSERT_EQ(ct_make_tmpdir(dir, sizeof dir, "ct-probe"), 0); /* it says why */
  snprintf(shm_path, sizeof shm_path, "%s/ctp", dir);
  snprintf(sock_path, sizeof sock_path, "%s/sock", dir);
  snprintf(errpath, sizeof errpath, "%s/stderr", dir);
  snprintf(missing, sizeof missing, "%s/nope", dir);
  struct env good = {shm_path, sock_path, "3"};
  int fails = 0;

  fails += make_good_file(3) || make_listener() || run_case("events", good, body_events, 0, NULL);
  good.count = "2";
  fails += make_good_file(2) || run_case("fields", good, body_fields, 0, NULL);
  fails += make_good_file(2) || run_case("overflow", good, body_overflow, 0, NULL);
  fails += make_good_file(2) || run_case("exported plain names", good, body_plain_names, 0, NULL);
  fails += make_good_file(2) || run_case("fork", good, body_fork, 0, NULL);
  fails += make_good_file(2) || run_case("engine gone", good, body_engine_gone, 0, NULL);
  fails += make_good_file(2) || make_listener() ||
           run_case("engine stuck", good, body_engine_stuck, 0, NULL);
  static const int acks[] = {200, -1};
  for (size_t i = 0; i < sizeof acks / sizeof acks[0] && (ack_ms = acks[i], 1); i++)
    fails += make_good_file(2) || make_listener() || (hdr->ext_version = CTP_EXT_VERSION, 0) ||
             run_case(ack_ms >= 0 ? "acknowledged attach" : "attach without acknowledgement", good,
                      body_ack, 0, NULL);
  fails += make_listener();
  char memfd_path[64];
  fails += make_memfd(2, memfd_path, sizeof memfd_path) ||
           run_case("sealed memfd via /proc", (struct env){memfd_path, sock_path, "2"},
                    body_overflow, 0, NULL);
  good.count = "8";
  fails += make_good_file(8) || run_case("first calls racing", good, body_first_calls, 0, NULL);
  fails += make_good_file(8) || run_case("threads", good, body_threads, 0, NULL);

  static const struct bad_case bad[] = {
      {"bad magic", 2, 2, 0x1122334455667788ull, 1, "2", -EPROTO,
       "CTP_SHM_PATH=%s: bad magic 0x1122334455667788"},
      {"bad version", 2, 2, CTP_MAGIC, 2, "2", -EPROTONOSUPPORT,
       "CTP_SHM_PATH=%s: unsupported cTP version 2"},
      {"env count larger than the file", 2, 2, CTP_MAGIC, 1, "4", -EINVAL,
       "CTP_SHM_PATH=%s: file is 3072 bytes"},
      {"env count larger than the header", 2, 4, CTP_MAGIC, 1, "4", -EINVAL,
       "CTP_MAX_STATIONS=4: the header"},
      {"env count smaller than the header", 4, 4, CTP_MAGIC, 1, "2", -EINVAL,
       "CTP_MAX_STATIONS=2: the header"},
      {"file too small", 4, 3, CTP_MAGIC, 1, "4", -EINVAL, "CTP_SHM_PATH=%s: file is 4096 bytes"},
      {"garbage count", 2, 2, CTP_MAGIC, 1, "2x", -EINVAL, "CTP_MAX_STATIONS=2x: not a decimal"},
      {"negative count", 2, 2, CTP_MAGIC, 1, "-2", -EINVAL, "CTP_MAX_STATIONS=-2: not a decimal"},
      {"empty count", 2, 2, CTP_MAGIC, 1, "", -EINVAL, "CTP_MAX_STATIONS=: not a decimal"},
      {"zero count", 2, 2, CTP_MAGIC, 1, "0", -ERANGE, "CTP_MAX_STATIONS=0: not a decimal"},
      {"huge count", 2, 2, CTP_MAGIC, 1, "18446744073709551617", -ERANGE, "CTP_MAX_STATIONS=1844"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    fails += make_file(bad[i].hdr_n, bad[i].size_n, bad[i].magic, bad[i].version) ||
             refused(bad[i].name, (struct env){shm_path, sock_path, bad[i].count}, bad[i].err,
                     bad[i].text, shm_path);

  fails += make_good_file(2);
  fails += refused("missing file", (struct env){missing, sock_path, "2"}, -ENOENT,
                   "CTP_SHM_PATH=%s: cannot open: No such file", missing);
  fails += refused("directory", (struct env){dir, sock_path, "2"}, -EISDIR,
                   "CTP_SHM_PATH=%s: cannot open: Is a directory", dir);
  fails += refused("missing socket", (struct env){shm_path, missing, "2"}, -ENOENT,
                   "CTP_SOCK_PATH=%s: cannot connect", missing);
  fails += refused("socket is a file", (struct env){shm_path, shm_path, "2"}, -ECONNREFUSED,
                   "CTP_SOCK_PATH=%s: cannot connect: Connection refused", shm_path);

  want_err = -EINVAL;
  fails +=
      run_case("control characters in a value", (struct env){shm_path, sock_path, "1\n\033[2J"},
               body_untraced, 1, "CTP_MAX_STATIONS=1??[2J: not a decimal");
  want_err = -ENOENT;
  fails += run_case("no variables: silent", (struct env){NULL, NULL, NULL}, body_untraced, 0, NULL);
  fails += run_case("no CTP_SHM_PATH: silent", (struct env){NULL, sock_path, "2"}, body_untraced, 0,
                    NULL);
  fails += run_case("no CTP_SOCK_PATH: silent", (struct env){shm_path, NULL, "2"}, body_untraced, 0,
                    NULL);
  fails += run_case("no CTP_MAX_STATIONS: silent", (struct env){shm_path, sock_path, NULL},
                    body_untraced, 0, NULL);

  close(listen_fd);
  unlink(sock_path);
  unlink(shm_path);
  unlink(errpath);
  rmdir(dir);
  munmap(hdr, map_len);
  printf("%d case(s) failed\n", fails);
  return fails != 0;
}
