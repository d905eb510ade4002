/* bench-probe.c - ns per probe event, traced and untraced, each against a
 * plain loop with the same body minus the probe call, measured in the same
 * process in the same run. Prints medians of several runs.
 *
 * Usage: bench-probe [runs [iterations]]   (defaults 7, 2000000)
 *
 * The probe attaches once per process, so each mode runs in its own forked
 * child: "untraced" with no CTP_* variable, "traced" against a cTP file and a
 * listening socket made here as the engine would (engine awake:
 * tracer_sleeping stays 0, so no event sends a byte). */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/ctp.h"
#include "corotracer.h"

/* The handle is read from memory on every iteration, as a scheduler reads it
 * from its coroutine object; otherwise the compiler would hoist the inline
 * NULL test out of the loop and the untraced loop would be empty. */
static corotracer_co *volatile handle;

#define BARRIER(x) __asm__ volatile("" : : "r"(x) : "memory")
#define SITE ((const void *)(uintptr_t)0x1234)

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Loop bodies: the baseline is the same loop minus the probe call. */
static __attribute__((noinline)) double loop_plain(long n) {
  uint64_t t = now_ns();
  for (long i = 0; i < n; i++) {
    corotracer_co *co = handle;
    BARRIER(co);
  }
  return (double)(now_ns() - t) / (double)n;
}

static __attribute__((noinline)) double loop_suspend(long n) {
  uint64_t t = now_ns();
  for (long i = 0; i < n; i++) {
    corotracer_co *co = handle;
    corotracer_suspend(co, SITE, COROTRACER_WAIT_PTR, (uint64_t)i);
    BARRIER(co);
  }
  return (double)(now_ns() - t) / (double)n;
}

static __attribute__((noinline)) double loop_wake(long n) {
  uint64_t t = now_ns();
  for (long i = 0; i < n; i++) {
    corotracer_co *co = handle;
    corotracer_wake(co, SITE);
    BARRIER(co);
  }
  return (double)(now_ns() - t) / (double)n;
}

/* ns per suspend+resume pair (two events). */
static __attribute__((noinline)) double loop_pair(long n) {
  uint64_t t = now_ns();
  for (long i = 0; i < n; i++) {
    corotracer_co *co = handle;
    corotracer_resume(co);
    corotracer_suspend(co, SITE, COROTRACER_WAIT_NONE, 0);
    BARRIER(co);
  }
  return (double)(now_ns() - t) / (double)n;
}

/* The floor of a traced event, for comparison: its clock read alone, and its
 * three locked read-modify-writes alone (claim, slot CAS, publishing exchange). */
static __attribute__((noinline)) double loop_clock(long n) {
  uint64_t t = now_ns();
  for (long i = 0; i < n; i++) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    BARRIER(ts.tv_nsec);
  }
  return (double)(now_ns() - t) / (double)n;
}

static _Atomic uint64_t rmw_word[3];
static __attribute__((noinline)) double loop_rmw3(long n) {
  uint64_t t = now_ns();
  for (long i = 0; i < n; i++) {
    uint64_t k = atomic_fetch_add_explicit(&rmw_word[0], 1, memory_order_relaxed);
    uint64_t v = atomic_load_explicit(&rmw_word[1], memory_order_relaxed);
    atomic_compare_exchange_strong_explicit(&rmw_word[1], &v, k + 1, memory_order_acquire,
                                            memory_order_relaxed);
    atomic_exchange_explicit(&rmw_word[2], k + 2, memory_order_seq_cst);
  }
  return (double)(now_ns() - t) / (double)n;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MODES 6
static const char *const mode_names[MODES] = {"plain loop",           "suspend (1 event)",
                                              "wake (1 event)",       "resume+suspend pair",
                                              "floor: clock_gettime", "floor: 3 locked RMW"};
static double (*const modes[MODES])(long) = {loop_plain, loop_suspend, loop_wake,
                                             loop_pair,  loop_clock,   loop_rmw3};

/* One child: runs * every mode, interleaved so noise hits them alike. */
static int measure(const char *label, int runs, long iters) {
  double *res = calloc((size_t)runs * MODES, sizeof *res);
  if (!res)
    return 1;
  handle = corotracer_create(1, "bench", NULL);
  corotracer_resume(handle);
  for (int m = 0; m < MODES; m++) /* warm-up: page faults, TLS, branch predictors */
    modes[m](iters / 10);
  for (int r = 0; r < runs; r++)
    for (int m = 0; m < MODES; m++)
      res[m * runs + r] = modes[m](iters);
  double base = median(res, runs);
  printf("%-9s %-22s %8s %10s\n", label, "loop", "ns/iter", "- plain");
  for (int m = 0; m < MODES; m++) {
    double med = median(res + m * runs, runs);
    printf("%-9s %-22s %8.2f %10.2f\n", label, mode_names[m], med, med - base);
  }
  uint64_t rec, drop;
  corotracer_stats(&rec, &drop);
  printf("%-9s enabled=%d recorded=%llu dropped=%llu\n\n", label, corotracer_enabled(),
         (unsigned long long)rec, (unsigned long long)drop);
  free(res);
  return 0;
}

/* Make the runtime files in dir as the engine would; returns the listening
 * socket (kept open by the parent for the run) or -1. */
static int make_engine_files(const char *dir, char *shm, char *sock, size_t len) {
  snprintf(shm, len, "%s/ctp", dir);
  snprintf(sock, len, "%s/sock", dir);
  int fd = open(shm, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate(fd, (off_t)CTP_FILE_SIZE(4)) != 0)
    return -1;
  struct ctp_header h = {.magic = CTP_MAGIC, .version = CTP_VERSION, .max_stations = 4};
  ssize_t w = pwrite(fd, &h, sizeof h, 0);
  close(fd);
  if (w != (ssize_t)sizeof h)
    return -1;
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(sock) >= sizeof sa.sun_path)
    return -1;
  memcpy(sa.sun_path, sock, strlen(sock) + 1);
  int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(l, 4) != 0)
    return -1;
  return l;
}

static int run_child(const char *label, int traced, const char *shm, const char *sock, int runs,
                     long iters) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0)
    return 1;
  if (pid == 0) {
    unsetenv(CTP_ENV_SHM);
    unsetenv(CTP_ENV_SOCK);
    unsetenv(CTP_ENV_STATIONS);
    if (traced) {
      setenv(CTP_ENV_SHM, shm, 1);
      setenv(CTP_ENV_SOCK, sock, 1);
      setenv(CTP_ENV_STATIONS, "4", 1);
      if (corotracer_init() != 0)
        _exit(1);
    }
    int rc = measure(label, runs, iters);
    fflush(stdout);
    _exit(rc);
  }
  int st;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    fprintf(stderr, "bench-probe: %s child failed\n", label);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 7;
  long iters = argc > 2 ? atol(argv[2]) : 2000000;
  if (runs < 1 || iters < 10) {
    fprintf(stderr, "usage: bench-probe [runs [iterations]]\n");
    return 2;
  }
  const char *tmp = getenv("TMPDIR");
  char dir[256], shm[300], sock[300];
  snprintf(dir, sizeof dir, "%s/ct-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("bench-probe: mkdtemp");
    return 1;
  }
  int rc = 1;
  int l = make_engine_files(dir, shm, sock, sizeof shm);
  if (l < 0) {
    fprintf(stderr, "bench-probe: %s: cannot make the runtime files\n", dir);
    goto out;
  }
  printf("bench-probe: %d runs x %ld iterations, medians; \"- plain\" = minus the plain loop\n\n",
         runs, iters);
  rc = run_child("untraced", 0, shm, sock, runs, iters) |
       run_child("traced", 1, shm, sock, runs, iters);
out:
  if (l >= 0)
    close(l);
  unlink(shm);
  unlink(sock);
  rmdir(dir);
  return rc;
}
