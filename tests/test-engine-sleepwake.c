/* test-engine-sleepwake.c - the engine's sleep/wake handshake, over a
 * thousand rounds: with a 10 s fallback (--poll-ms 10000), each event written
 * while the engine sleeps must be in the trace within a second, so only the
 * wake-up byte can have woken it and the scan it triggered must have found it.
 *
 * Run without arguments (tests/run.sh): runs itself as the target (`--target
 * PLAIN JITTER TRACE`). The target maps CTP_SHM_PATH read-only and, per round:
 * waits until tracer_sleeping == 1, writes one suspend (fd = round), then
 * requires the event in the trace file within 1 s (the engine flushes before
 * it sleeps). The JITTER rounds write 0-50 us after the flag turned 1, inside
 * the engine's window between its flag store and its re-scan. Last, the
 * coroutine is destroyed while the engine sleeps and the target stays alive
 * until the destroy line is in the trace: a station retired before its destroy
 * event was harvested would leave it to the final scan. The driver then finds
 * every round's event in the trace, once. Twice: on v1 stations (the engine
 * run with --rings 0) and on v2 rings, whose naps are longer, so fewer rounds. */
#include <corotracer.h>

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/ctp.h"
#include "lib/check.h"
#include "lib/ctlib.h"

#define FALLBACK_MS 10000
#define ROUND_LIMIT_NS 1000000000ull

static char dir[4096], trace[4200];

static void remove_files(void) {
  unlink(trace);
  rmdir(dir);
}

/* Wait until the flag reads `want`; the time it took, or die after limit_ns. */
static uint64_t wait_flag(_Atomic uint32_t *flag, uint32_t want, uint64_t limit_ns,
                          unsigned round) {
  uint64_t t0 = ct_now_ns();
  while (atomic_load(flag) != want) {
    uint64_t dt = ct_now_ns() - t0;
    if (dt > limit_ns)
      FAIL("round %u: tracer_sleeping still %u after %.3f s: the wake-up did not reach the engine",
           round, 1 - want, (double)dt / 1e9);
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
  return ct_now_ns() - t0;
}

/* The trace as the engine flushes it, read incrementally: the highest
 * suspend obj and whether a destroy line was seen so far. */
struct trace_tail {
  int fd;
  size_t len;
  uint64_t last_obj;
  int destroyed;
  char buf[1 << 16];
};

static void tail_read(struct trace_tail *t) {
  for (;;) {
    if (t->len == sizeof t->buf)
      FAIL("target: trace line longer than %zu bytes", sizeof t->buf);
    ssize_t r = read(t->fd, t->buf + t->len, sizeof t->buf - t->len);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      FAIL("target: read %s: %s", trace, strerror(errno));
    if (r == 0)
      return;
    t->len += (size_t)r;
    char *p = t->buf, *nl;
    while ((nl = memchr(p, '\n', t->len - (size_t)(p - t->buf))) != NULL) {
      *nl = '\0';
      size_t klen;
      const char *kind = ct_json_raw(p, "kind", &klen);
      uint64_t obj;
      if (kind != NULL && klen == 7 && memcmp(kind, "suspend", 7) == 0 &&
          ct_json_u64(p, "obj", &obj) == 0 && obj > t->last_obj)
        t->last_obj = obj;
      if (kind != NULL && klen == 7 && memcmp(kind, "destroy", 7) == 0)
        t->destroyed = 1;
      p = nl + 1;
    }
    t->len -= (size_t)(p - t->buf);
    memmove(t->buf, p, t->len);
  }
}

/* Wait until the trace holds suspend `round` (or, round 0, the destroy). */
static uint64_t wait_trace(struct trace_tail *t, unsigned round) {
  uint64_t t0 = ct_now_ns();
  for (;;) {
    tail_read(t);
    if (round ? t->last_obj >= round : t->destroyed)
      return ct_now_ns() - t0;
    uint64_t dt = ct_now_ns() - t0;
    if (dt > ROUND_LIMIT_NS)
      FAIL("round %u: %s not in the trace after %.3f s: the scan after the wake-up missed it",
           round, round ? "the suspend" : "the destroy", (double)dt / 1e9);
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
}

static int target_main(unsigned plain, unsigned jitter) {
  int rc = corotracer_init();
  if (rc != 0)
    FAIL("target: corotracer_init: %s", strerror(-rc));
  const char *shm = getenv(CTP_ENV_SHM);
  int fd = shm ? open(shm, O_RDONLY | O_CLOEXEC) : -1;
  if (fd < 0)
    FAIL("target: open %s: %s", shm ? shm : "(no " CTP_ENV_SHM ")", strerror(errno));
  struct ctp_header *h = mmap(NULL, CTP_HEADER_SIZE, PROT_READ, MAP_SHARED, fd, 0);
  if (h == MAP_FAILED)
    FAIL("target: mmap: %s", strerror(errno));
  close(fd);
  static struct trace_tail t;
  t.fd = open(trace, O_RDONLY | O_CLOEXEC);
  if (t.fd < 0)
    FAIL("target: open %s: %s", trace, strerror(errno));
  corotracer_co *co = corotracer_create(1, "sleepy", NULL);
  uint64_t worst = 0, total = 0;
  unsigned rounds = plain + jitter;
  srand((unsigned)getpid());
  wait_flag(&h->tracer_sleeping, 1, 5000000000ull, 0); /* first sleep, after the create */
  for (unsigned i = 1; i <= rounds; i++) {
    wait_flag(&h->tracer_sleeping, 1, ROUND_LIMIT_NS, i);
    if (i > plain) { /* spin: a nanosleep would take longer than the window */
      uint64_t until = ct_now_ns() + (uint64_t)(rand() % 50001);
      while (ct_now_ns() < until) {
      }
    }
    corotracer_suspend(co, NULL, COROTRACER_WAIT_FD, i);
    uint64_t dt = wait_trace(&t, i);
    total += dt;
    if (dt > worst)
      worst = dt;
  }
  wait_flag(&h->tracer_sleeping, 1, ROUND_LIMIT_NS, rounds + 1);
  corotracer_destroy(co);
  wait_trace(&t, 0);
  printf("sleepwake: %u rounds (%u jittered), each event in the trace after %.0f us on average, "
         "%.0f us "
         "worst; the destroy too\n",
         rounds, jitter, (double)total / rounds / 1e3, (double)worst / 1e3);
  close(t.fd);
  munmap(h, CTP_HEADER_SIZE);
  return 0;
}

/* One engine run with engine_opts (NULL-terminated) over plain + jitter
 * rounds; then every round's event is in the trace, once (obj = round). */
static void run_rounds(const char *engine, const char *what, const char *const *engine_opts,
                       unsigned plain, unsigned jitter) {
  unsigned rounds = plain + jitter;
  char self[4096], nplain[16], njitter[16], poll[16];
  snprintf(nplain, sizeof nplain, "%u", plain);
  snprintf(njitter, sizeof njitter, "%u", jitter);
  snprintf(poll, sizeof poll, "%d", FALLBACK_MS);
  ct_self_path(self, sizeof self);
  char *args[32];
  size_t n = 0;
  args[n++] = (char *)engine;
  args[n++] = "run";
  for (; *engine_opts; engine_opts++)
    args[n++] = (char *)*engine_opts;
  const char *rest[] = {"--quiet", "--poll-ms", poll,       "-n",   "4",     "-o", trace,
                        "--",      self,        "--target", nplain, njitter, trace};
  for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
    args[n++] = (char *)rest[i];
  args[n] = NULL;
  unlink(trace);
  uint64_t t0 = ct_now_ns();
  int st = ct_wait(ct_spawn(args));
  double secs = (double)(ct_now_ns() - t0) / 1e9;
  if (ct_exit_code(st) != 0)
    FAIL("%s: engine/target exited %d", what, ct_exit_code(st));
  char *seen = calloc(rounds + 1, 1);
  FILE *f = fopen(trace, "re");
  if (seen == NULL || f == NULL)
    FAIL("%s: %s", trace, strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  unsigned found = 0;
  while (getline(&line, &cap, f) > 0) {
    size_t len;
    const char *kind = ct_json_raw(line, "kind", &len);
    uint64_t obj;
    if (kind == NULL || len != 7 || memcmp(kind, "suspend", 7) != 0)
      continue;
    if (ct_json_u64(line, "obj", &obj) != 0 || obj < 1 || obj > rounds || seen[obj]++)
      FAIL("%s: unexpected or repeated suspend: %s", what, line);
    found++;
  }
  free(line);
  fclose(f);
  free(seen);
  if (found != rounds)
    FAIL("%s: trace holds %u of the %u events", what, found, rounds);
  printf("sleepwake, %s: %u events harvested in %.2f s (a fallback would need %u s)\n", what,
         rounds, secs, rounds * FALLBACK_MS / 1000);
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "--target") == 0) {
    snprintf(trace, sizeof trace, "%s", argv[4]);
    return target_main((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
  }
  const char *engine = getenv("COROTRACER"), *build = getenv("CT_BUILD"), *san = getenv("CT_SAN");
  if (engine == NULL || build == NULL)
    FAIL("run me through tests/run.sh");
  int sanitized = san != NULL && san[0] != '\0';
  snprintf(dir, sizeof dir, "%s/sleepwake.XXXXXX", build);
  if (mkdtemp(dir) == NULL)
    FAIL("mkdtemp %s: %s", dir, strerror(errno));
  atexit(remove_files);
  CHECK_ATFAIL(remove_files);
  snprintf(trace, sizeof trace, "%s/trace.jsonl", dir);
  /* v1 stations (no rings offered): the engine naps at most 250 us, so a
   * round takes about a millisecond and many rounds are cheap. */
  const char *const v1[] = {"--rings", "0", NULL};
  run_rounds(engine, "v1 stations", v1, sanitized ? 200 : 1000, sanitized ? 100 : 500);
  /* v2 rings: the engine naps up to 100 ms before it sleeps (a writer's ring
   * is deep), so a round takes about 0.26 s: fewer rounds. The sleep/wake
   * handshake of both is also proven for every interleaving by
   * tests/model/rings.pml (test-model-spin.sh). */
  const char *const v2[] = {NULL};
  run_rounds(engine, "v2 rings", v2, sanitized ? 30 : 60, sanitized ? 20 : 40);
  return 0;
}
