/* bench-demo-switch.c - context switches per second of the demo scheduler
 * (examples/demo), for bench/bench-demo.sh to compare untraced against traced
 * (`corotracer run -- bench-demo-switch`). Two loads on one worker thread, so
 * the number is the switch path itself, not thread hand-offs:
 *   yield     2 coroutines, each sch_yield() in a loop (suspend, wake, resume)
 *   pingpong  2 coroutines wake each other and park (the park/wake path)
 * Prints one line per load: "NAME switches_per_sec=X traced=0|1
 * cpu_switches_per_sec=Y" (Y: per second of the process's CPU time).
 * Usage: bench-demo-switch [ITERATIONS [DELAY_MS [LOAD]]] (LOAD: only that one,
 * after a warm-up of ITERATIONS / 10); with DELAY_MS it prints
 * "attached" once the probe is attached, then sleeps DELAY_MS before measuring
 * (the script stops the engine meanwhile, to time the probe alone).
 *
 * bench-demo-switch --clock [ITERATIONS] prints "clock_read_ns=X": a tick
 * read (ct_ticks, rdtsc on x86-64) back to back, the median of 5 loops:
 * bench-demo.sh's floor for a traced yield, 1 / (1 + X * untraced rate)
 * (issue #32: one clock read a switch).
 *
 * bench-demo-switch --compare [RUNS [ITERATIONS]] needs no engine: it runs
 * itself RUNS times each untraced, traced on v1 stations and traced on v2
 * rings (a file laid out as our engine does, tests/lib/v2-file.c; 4 MiB
 * rings, so a parent descheduled for a few ms on a loaded machine does not
 * turn the measure into one of the drop path), rotating the order, while
 * this parent process harvests the rings as the engine does (copy the
 * records out, release tail, nap 50 us); prints the medians and the traced /
 * untraced ratios of the same invocation, by wall time and by the child's CPU
 * time (on a shared machine the wall-time rates also measure who else ran). Each run first warms up
 * with a tenth of its iterations (the rings' pages fault in on their first lap: tens of
 * microseconds per page on a VM). */
#include <fcntl.h>
#include <sched.h>
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

#include "../examples/demo/scheduler.h"
#include "../tests/lib/v2-file.h"
#include "common/ticks.h"

static long iterations = 1000000;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Set once both yielders are spawned: each waits for it, without a yield of
 * its own (the yields are counted), so that every yield finds the other one
 * queued, whenever the spawning thread ran (test-demo-switch counts them). */
static _Atomic int yielders_ready;

static void yielder(void *unused) {
  (void)unused;
  while (!atomic_load_explicit(&yielders_ready, memory_order_acquire))
    sched_yield();
  for (long i = 0; i < iterations; i++)
    sch_yield();
}

struct pp {
  _Atomic int turn;
  sch_co *co[2];
  _Atomic int ready;
};
struct pp_side {
  struct pp *p;
  int me;
};

static void pinger(void *arg) {
  struct pp_side *s = arg;
  struct pp *p = s->p;
  while (!atomic_load(&p->ready))
    sch_yield();
  for (long i = 0; i < iterations; i++) {
    while (atomic_load(&p->turn) != s->me) {
      sch_park_prepare(NULL, COROTRACER_WAIT_PTR, (uint64_t)(uintptr_t)p);
      sch_park();
    }
    atomic_store(&p->turn, !s->me);
    if (s->me == 1 && i == iterations - 1)
      break; /* side 0 is done: do not wake it */
    sch_wake(p->co[!s->me]);
  }
}

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Run one load; returns switches per second, and in *per_cpu_sec per second
 * of this process's CPU time (the worker's, as the others sleep): a rate
 * that a loaded machine's preemptions leave alone. */
static double run(const char *name, double *per_cpu_sec) {
  struct sch_stats a, b;
  struct pp p = {0};
  struct pp_side side[2] = {{&p, 0}, {&p, 1}};
  sch_get_stats(&a);
  uint64_t t0 = now_ns();
  uint64_t c0 = cpu_ns();
  int ok;
  if (strcmp(name, "yield") == 0) {
    atomic_store(&yielders_ready, 0);
    ok = sch_spawn(yielder, NULL, "yield", NULL) && sch_spawn(yielder, NULL, "yield", NULL);
    atomic_store_explicit(&yielders_ready, 1, memory_order_release);
  } else {
    p.co[0] = sch_spawn(pinger, &side[0], "ping", NULL);
    p.co[1] = sch_spawn(pinger, &side[1], "pong", NULL);
    ok = p.co[0] && p.co[1];
    atomic_store(&p.ready, 1);
  }
  if (!ok) {
    fprintf(stderr, "bench-demo-switch: spawn failed\n");
    exit(1);
  }
  if (sch_wait_idle(120000) != 0) {
    fprintf(stderr, "bench-demo-switch: %s did not finish\n", name);
    exit(1);
  }
  double secs = (double)(now_ns() - t0) / 1e9;
  double cpu = (double)(cpu_ns() - c0) / 1e9;
  sch_get_stats(&b);
  *per_cpu_sec = (double)(b.switches - a.switches) / cpu;
  return (double)(b.switches - a.switches) / secs;
}

/* ---- --compare: untraced, v1 and v2 in one invocation ---------------------- */

enum trace_kind { UNTRACED, V1, V2, KINDS };
static const char *const kind_name[KINDS] = {"untraced", "v1 stations", "v2 rings"};

static uint64_t harvest_sum; /* touch what is copied, as a writer of it would */
static void take(const struct ctp_rec *r, void *arg) {
  (void)arg;
  harvest_sum += r->ts;
}

/* One pass of the engine over every ring ever claimed; *lost (when not
 * NULL) receives the records the writers dropped so far. */
static uint64_t harvest(void *base, uint64_t *lost) {
  struct ctp_header *h = base;
  uint32_t n = atomic_load_explicit(&h->rings_fresh, memory_order_acquire);
  uint64_t got = 0;
  for (uint32_t r = 0; r < n && r < h->ring_count; r++) {
    got += ct_v2_consume(base, r, take, NULL);
    if (lost)
      *lost += atomic_load_explicit(&ctp_ring_at(base, h, r)->lost, memory_order_relaxed);
  }
  return got;
}

/* A fresh cTP file at path for kind (V1 or V2); the parent's mapping of it
 * (length *len), or NULL. */
static void *make_file(const char *path, enum trace_kind kind, uint64_t *len) {
  unlink(path);
  if (kind == V2) {
    struct ct_v2_params p = {.stations = 64,
                             .rings = 16,
                             .ring_bytes = 4u << 20,
                             .clock = CT_TICKS_CLOCK,
                             .ext_version = 1};
    return ct_v2_create(path, &p, len);
  }
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return NULL;
  *len = CTP_FILE_SIZE(64);
  void *m = MAP_FAILED;
  if (ftruncate(fd, (off_t)*len) == 0)
    m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED)
    return NULL;
  struct ctp_header *h = m;
  h->magic = CTP_MAGIC;
  h->version = CTP_VERSION;
  h->max_stations = 64;
  return m;
}

/* Run this program once (yield load only) with kind's environment; the
 * parent harvests v2 rings meanwhile. Returns switches per second, or -1;
 * *per_cpu_sec receives them per second of the child's CPU time. */
static double run_once(const char *self, enum trace_kind kind, const char *shm, const char *sock,
                       long iters, uint64_t *harvested, uint64_t *lost, double *per_cpu_sec) {
  uint64_t len = 0;
  void *base = kind == UNTRACED ? NULL : make_file(shm, kind, &len);
  if (kind != UNTRACED && !base)
    return -1;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return -1;
  char it[32];
  snprintf(it, sizeof it, "%ld", iters);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    if (kind != UNTRACED) {
      setenv(CTP_ENV_SHM, shm, 1);
      setenv(CTP_ENV_SOCK, sock, 1);
      setenv(CTP_ENV_STATIONS, "64", 1);
    }
    execl(self, self, it, "0", "yield", (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  int st = 0;
  while (pid > 0 && waitpid(pid, &st, WNOHANG) == 0) {
    if (kind == V2)
      *harvested += harvest(base, NULL);
    struct timespec d = {0, 50000};
    nanosleep(&d, NULL);
  }
  if (kind == V2)
    *harvested += harvest(base, lost);
  char out[256] = "";
  ssize_t n = read(fds[0], out, sizeof out - 1);
  close(fds[0]);
  if (base)
    munmap(base, len);
  double rate = -1;
  if (pid > 0 && n > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
    out[n] = '\0';
    char *p = strstr(out, " switches_per_sec=");
    char *c = strstr(out, "cpu_switches_per_sec=");
    if (p && c) {
      rate = atof(p + strlen(" switches_per_sec="));
      *per_cpu_sec = atof(c + strlen("cpu_switches_per_sec="));
    }
  }
  return rate;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The medians of res (runs per kind, in kind order; sorted here) and their
 * ratios to untraced, after the line head. */
static void print_medians(const char *head, double *res, int runs) {
  double med[KINDS];
  printf("%s", head);
  for (int k = 0; k < KINDS; k++) {
    qsort(res + k * runs, (size_t)runs, sizeof *res, cmp_double);
    med[k] = runs % 2 ? res[k * runs + runs / 2]
                      : (res[k * runs + runs / 2 - 1] + res[k * runs + runs / 2]) / 2;
    printf("%-12s median %12.0f switches/s  (min %.0f, max %.0f)  ratio to untraced %.3f\n",
           kind_name[k], med[k], res[k * runs], res[k * runs + runs - 1], med[k] / med[UNTRACED]);
  }
}

static int compare(const char *self, int runs, long iters) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp)
    tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  char dir[256], shm[300], sock[300];
  snprintf(dir, sizeof dir, "%s/ct-switch-XXXXXX", tmp);
  if (!mkdtemp(dir)) {
    perror("bench-demo-switch: mkdtemp");
    return 1;
  }
  snprintf(shm, sizeof shm, "%s/ctp", dir);
  snprintf(sock, sizeof sock, "%s/sock", dir);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  int l = strlen(sock) < sizeof sa.sun_path ? socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;
  if (l >= 0)
    memcpy(sa.sun_path, sock, strlen(sock) + 1);
  int rc = 1;
  double *res = calloc((size_t)runs * KINDS * 2, sizeof *res);
  double *cpu = res ? res + runs * KINDS : NULL;
  uint64_t harvested = 0, lost = 0;
  if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(l, 64) != 0 || !res) {
    perror("bench-demo-switch: socket");
    goto out;
  }
  for (int r = 0; r < runs; r++)
    for (int j = 0; j < KINDS; j++) {
      enum trace_kind k = (enum trace_kind)((r + j) % KINDS); /* rotate who goes first */
      double c = 0;
      double v = run_once(self, k, shm, sock, iters, &harvested, &lost, &c);
      if (v <= 0 || c <= 0) {
        fprintf(stderr, "bench-demo-switch: a %s run failed\n", kind_name[k]);
        goto out;
      }
      res[k * runs + r] = v;
      cpu[k * runs + r] = c;
    }
  printf("bench-demo-switch --compare: %d runs x %ld yields x 2 coroutines, one worker\n", runs,
         iters);
  print_medians("", res, runs);
  print_medians("per CPU second (the child's CPU time: preemptions left out)\n", cpu, runs);
  printf("v2 records harvested: %llu, dropped (ring full): %llu\n", (unsigned long long)harvested,
         (unsigned long long)lost);
  rc = 0;
out:
  free(res);
  if (l >= 0)
    close(l);
  unlink(sock);
  unlink(shm);
  rmdir(dir);
  return rc;
}

/* --clock: ns per tick read, the median of 5 loops of n reads. */
static int clock_read(long n) {
  double v[5];
  for (int r = 0; r < 5; r++) {
    uint64_t sum = 0, t0 = now_ns();
    for (long i = 0; i < n; i++) {
      uint64_t x = ct_ticks();
      __asm__ volatile("" : "+r"(x)); /* each read kept, none merged */
      sum += x;
    }
    v[r] = (double)(now_ns() - t0) / (double)n;
    if (sum == 42)
      printf("\n"); /* uses sum: the loop stays */
  }
  qsort(v, 5, sizeof v[0], cmp_double);
  printf("clock_read_ns=%.2f\n", v[2]);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--clock") == 0) {
    long n = argc > 2 ? atol(argv[2]) : 10000000;
    if (n < 1) {
      fprintf(stderr, "usage: bench-demo-switch --clock [ITERATIONS]\n");
      return 2;
    }
    return clock_read(n);
  }
  if (argc > 1 && strcmp(argv[1], "--compare") == 0) {
    int runs = argc > 2 ? atoi(argv[2]) : 7;
    long iters = argc > 3 ? atol(argv[3]) : 1000000;
    if (runs < 1 || iters < 1) {
      fprintf(stderr, "usage: bench-demo-switch --compare [RUNS [ITERATIONS]]\n");
      return 2;
    }
    return compare("/proc/self/exe", runs, iters);
  }
  long delay_ms = 0;
  if (argc > 1)
    iterations = atol(argv[1]);
  if (argc > 2)
    delay_ms = atol(argv[2]);
  if (iterations < 1 || delay_ms < 0) {
    fprintf(stderr, "usage: bench-demo-switch [ITERATIONS [DELAY_MS]]\n");
    return 2;
  }
  if (delay_ms > 0) {
    corotracer_init(); /* attach now, before the delay */
    printf("attached\n");
    fflush(stdout);
    struct timespec d = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
    while (nanosleep(&d, &d) != 0) {
    }
  }
  struct sch_opts o = {.workers = 1};
  int rc = sch_start(&o);
  if (rc != 0) {
    fprintf(stderr, "bench-demo-switch: sch_start: %s\n", strerror(-rc));
    return 1;
  }
  int traced = corotracer_enabled();
  double per_cpu;
  const char *loads[] = {"yield", "pingpong"};
  for (int i = 0; i < 2; i++) {
    if (argc > 3 && strcmp(argv[3], loads[i]) != 0)
      continue;
    if (argc > 3) { /* one load (--compare): warm up first, as every mode alike */
      long n = iterations;
      iterations = n / 10 > 0 ? n / 10 : 1;
      run(loads[i], &per_cpu);
      iterations = n;
    }
    double rate = run(loads[i], &per_cpu);
    printf("%s switches_per_sec=%.0f traced=%d cpu_switches_per_sec=%.0f\n", loads[i], rate, traced,
           per_cpu);
  }
  sch_stop();
  return 0;
}
