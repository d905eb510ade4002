/* v1-writer.c - a target built from the cTP v1 facts alone (shared/reference/
 * ctp-v1.md), the way an SDK written for the reference engine would be: no
 * corotracer header, no extension field, its own layout constants. It stands
 * for "someone else's SDK" in the engine's compatibility and loss tests.
 *
 *   v1-writer COROS EVENTS GAP_NS
 *
 * COROS coroutines on one thread, round robin, EVENTS events each alternating
 * suspend/resume (is_active 0/1), GAP_NS of busy waiting between two events.
 * Writes per v1: slot = events % 8; seq odd, release fence, payload, seq even
 * (release); then a seq_cst fence, and when tracer_sleeping is 1 a CAS 1 -> 0
 * and one byte '1' on the socket. Prints "written N" (the events it wrote). */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The v1 layout, restated here on purpose (not common/ctp.h). */
#define V1_MAGIC 0x434F524F54524352ULL
#define V1_HDR 1024u
#define V1_STATION 1024u
#define V1_ALLOC 0x10u
#define V1_SLEEPING 0x14u
#define V1_SLOTS 0x40u
#define V1_SLOT 64u

static _Noreturn void die(const char *what) {
  fprintf(stderr, "v1-writer: %s: %s\n", what, strerror(errno));
  exit(1);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct coro {
  unsigned char *st; /* its station */
  uint64_t count;    /* events written */
};

static unsigned char *base;
static int sock = -1;

#define U64(p) ((_Atomic uint64_t *)(void *)(p))
#define U32(p) ((_Atomic uint32_t *)(void *)(p))

static void emit(struct coro *c, int active, uint64_t addr, uint64_t tid) {
  unsigned char *slot = c->st + V1_SLOTS + (c->count % 8) * V1_SLOT;
  uint64_t s = atomic_load_explicit(U64(slot + 0x18), memory_order_relaxed);
  atomic_store_explicit(U64(slot + 0x18), s + 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(U64(slot + 0x00), now_ns(), memory_order_relaxed);
  atomic_store_explicit(U64(slot + 0x08), tid, memory_order_relaxed);
  atomic_store_explicit(U64(slot + 0x10), addr, memory_order_relaxed);
  __atomic_store_n(slot + 0x3f, (unsigned char)active, __ATOMIC_RELAXED);
  atomic_store_explicit(U64(slot + 0x18), s + 2, memory_order_release);
  c->count++;
  atomic_thread_fence(memory_order_seq_cst);
  _Atomic uint32_t *sleeping = U32(base + V1_SLEEPING);
  uint32_t one = 1;
  if (atomic_load_explicit(sleeping, memory_order_relaxed) == 1 &&
      atomic_compare_exchange_strong(sleeping, &one, 0))
    (void)send(sock, "1", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: v1-writer COROS EVENTS GAP_NS\n");
    return 2;
  }
  unsigned ncoro = (unsigned)atoi(argv[1]);
  uint64_t nev = strtoull(argv[2], NULL, 10), gap = strtoull(argv[3], NULL, 10);
  const char *shm = getenv("CTP_SHM_PATH"), *sp = getenv("CTP_SOCK_PATH"),
             *ns = getenv("CTP_MAX_STATIONS");
  if (!shm || !sp || !ns || ncoro == 0) {
    fprintf(stderr, "v1-writer: CTP_* not set (or no coroutine)\n");
    return 2;
  }
  uint32_t n = (uint32_t)atoi(ns);
  int fd = open(shm, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    die(shm);
  base = mmap(NULL, V1_HDR + (size_t)n * V1_STATION, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED)
    die("mmap");
  close(fd);
  uint64_t magic;
  memcpy(&magic, base, 8);
  if (magic != V1_MAGIC) {
    fprintf(stderr, "v1-writer: bad magic\n");
    return 1;
  }
  sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sp);
  if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof sa) < 0)
    die(sp);
  uint64_t tid = (uint64_t)syscall(SYS_gettid);
  struct coro *co = calloc(ncoro, sizeof(*co));
  if (!co)
    die("calloc");
  for (unsigned i = 0; i < ncoro; i++) {
    uint32_t idx = atomic_fetch_add(U32(base + V1_ALLOC), 1);
    if (idx >= n) {
      fprintf(stderr, "v1-writer: out of stations\n");
      return 1;
    }
    co[i].st = base + V1_HDR + (size_t)idx * V1_STATION;
    atomic_store_explicit(U64(co[i].st), 0x10000u + i, memory_order_relaxed); /* probe_id */
    atomic_store_explicit(U64(co[i].st + 8), now_ns(), memory_order_relaxed); /* birth_ts */
  }
  uint64_t written = 0;
  for (uint64_t e = 0; e < nev; e++) {
    for (unsigned i = 0; i < ncoro; i++) {
      /* A gap after each event, not a schedule: a writer that was preempted
       * does not catch up in a burst (no engine could save an 8-slot ring
       * from that), it just goes on at the same rate. */
      uint64_t t0 = now_ns();
      while (now_ns() - t0 < gap) {
      }
      /* Even events suspend (addr = the frame), odd ones resume (addr 0). */
      emit(&co[i], (int)(e & 1), (e & 1) ? 0 : (uint64_t)(uintptr_t)&co[i], tid);
      written++;
    }
  }
  for (unsigned i = 0; i < ncoro; i++)
    __atomic_store_n(co[i].st + 0x10, 1, __ATOMIC_RELEASE);
  free(co);
  printf("written %llu\n", (unsigned long long)written);
  return 0;
}
