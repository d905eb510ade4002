/* test-engine-sleepwake.c - the engine's sleep/wake handshake, 1000 times in a
 * row: with a 10 s fallback (--poll-ms 10000), each event written while the
 * engine sleeps must be harvested within a second, so only the wake-up byte can
 * have woken it.
 *
 * Run without arguments (tests/run.sh): runs itself as the target (`--target
 * N`). The target maps CTP_SHM_PATH read-only and, per round: waits until
 * tracer_sleeping == 1, writes one suspend (fd = round), then requires the
 * engine to have gone back to sleep (flag 1 again after the probe cleared it)
 * within 1 s. The driver then finds every round's event in the trace. */
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
#include "lib/ctlib.h"

#define FALLBACK_MS 10000
#define ROUND_LIMIT_NS 1000000000ull

static char dir[4096], trace[4200];

static void remove_files(void) {
  unlink(trace);
  rmdir(dir);
}

/* Wait until the flag reads `want`; the time it took, or die after limit_ns. */
static uint64_t wait_flag(_Atomic uint32_t *flag, uint32_t want, uint64_t limit_ns, unsigned round) {
  uint64_t t0 = ct_now_ns();
  while (atomic_load(flag) != want) {
    uint64_t dt = ct_now_ns() - t0;
    if (dt > limit_ns)
      ct_die("round %u: tracer_sleeping still %u after %.3f s: the wake-up did not reach the engine", round,
             1 - want, (double)dt / 1e9);
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
  return ct_now_ns() - t0;
}

static int target_main(unsigned rounds) {
  int rc = corotracer_init();
  if (rc != 0) ct_die("target: corotracer_init: %s", strerror(-rc));
  const char *shm = getenv(CTP_ENV_SHM);
  int fd = shm ? open(shm, O_RDONLY | O_CLOEXEC) : -1;
  if (fd < 0) ct_die("target: open %s: %s", shm ? shm : "(no " CTP_ENV_SHM ")", strerror(errno));
  struct ctp_header *h = mmap(NULL, CTP_HEADER_SIZE, PROT_READ, MAP_SHARED, fd, 0);
  if (h == MAP_FAILED) ct_die("target: mmap: %s", strerror(errno));
  close(fd);
  corotracer_co *co = corotracer_create(1, "sleepy", NULL);
  uint64_t worst = 0, total = 0;
  wait_flag(&h->tracer_sleeping, 1, 5000000000ull, 0); /* first sleep, after the create */
  for (unsigned i = 1; i <= rounds; i++) {
    wait_flag(&h->tracer_sleeping, 1, ROUND_LIMIT_NS, i);
    corotracer_suspend(co, NULL, COROTRACER_WAIT_FD, i);
    /* The probe cleared the flag (CAS 1 -> 0) and sent the byte; only the
     * engine sets it to 1 again, after a scan that found nothing new. */
    uint64_t dt = wait_flag(&h->tracer_sleeping, 1, ROUND_LIMIT_NS, i);
    total += dt;
    if (dt > worst) worst = dt;
  }
  corotracer_destroy(co);
  printf("sleepwake: %u rounds, engine back asleep after %.0f us on average, %.0f us worst\n", rounds,
         (double)total / rounds / 1e3, (double)worst / 1e3);
  munmap(h, CTP_HEADER_SIZE);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--target") == 0) return target_main((unsigned)atoi(argv[2]));
  const char *engine = getenv("COROTRACER"), *build = getenv("CT_BUILD"), *san = getenv("CT_SAN");
  if (engine == NULL || build == NULL) ct_die("run me through tests/run.sh");
  unsigned rounds = san != NULL && san[0] != '\0' ? 200 : 1000;
  char self[4096], nrounds[16], poll[16];
  snprintf(dir, sizeof dir, "%s/sleepwake.XXXXXX", build);
  if (mkdtemp(dir) == NULL) ct_die("mkdtemp %s: %s", dir, strerror(errno));
  atexit(remove_files);
  snprintf(trace, sizeof trace, "%s/trace.jsonl", dir);
  snprintf(nrounds, sizeof nrounds, "%u", rounds);
  snprintf(poll, sizeof poll, "%d", FALLBACK_MS);
  ct_self_path(self, sizeof self);
  char *args[] = {(char *)engine, "run", "--quiet", "--poll-ms", poll, "-n", "4", "-o", trace,
                  "--", self, "--target", nrounds, NULL};
  uint64_t t0 = ct_now_ns();
  int st = ct_wait(ct_spawn(args));
  double secs = (double)(ct_now_ns() - t0) / 1e9;
  if (ct_exit_code(st) != 0) ct_die("engine/target exited %d", ct_exit_code(st));
  /* Every round's event is in the trace, once (obj = round number). */
  char *seen = calloc(rounds + 1, 1);
  FILE *f = fopen(trace, "re");
  if (seen == NULL || f == NULL) ct_die("%s: %s", trace, strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  unsigned found = 0;
  while (getline(&line, &cap, f) > 0) {
    size_t len;
    const char *kind = ct_json_raw(line, "kind", &len);
    uint64_t obj;
    if (kind == NULL || len != 7 || memcmp(kind, "suspend", 7) != 0) continue;
    if (ct_json_u64(line, "obj", &obj) != 0 || obj < 1 || obj > rounds || seen[obj]++)
      ct_die("unexpected or repeated suspend: %s", line);
    found++;
  }
  free(line);
  fclose(f);
  free(seen);
  if (found != rounds) ct_die("trace holds %u of the %u events", found, rounds);
  printf("sleepwake: %u events harvested in %.2f s (a fallback would need %u s)\n", rounds, secs,
         rounds * FALLBACK_MS / 1000);
  return 0;
}
