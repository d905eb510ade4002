/* v2-writer.c - a v2 writer written from docs/PROTOCOL.md "v2" alone, without
 * the probe: it lets the engine's ring harvest be tested on its own, and
 * stands for a second implementation of the protocol.
 *
 *   v2-writer run THREADS EVENTS GAP_NS OUT
 *       THREADS threads, one coroutine each: a create, EVENTS-2 suspends and
 *       resumes (GAP_NS of busy waiting between two), a destroy.
 *   v2-writer churn COROS OUT
 *       one thread, COROS coroutines one after the other: create, resume,
 *       suspend (exit), destroy; in lossless mode it waits for a free station.
 *
 * OUT gets "written W dropped D": records published, and records dropped
 * (ring full, no ring, no station); the engine's trace must account for all
 * W + D. Needs an engine that offers v2 (exit 3 otherwise). */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/ticks.h"

static struct ctp_header *hdr;
static char *base;
static uint32_t nst, cap;
static int sock = -1, lossless;
static _Atomic uint64_t written, dropped;

static _Noreturn void die(const char *what) {
  fprintf(stderr, "v2-writer: %s: %s\n", what, strerror(errno));
  exit(1);
}

static uint64_t now_ticks(void) {
  return hdr->clock == CTP_CLOCK_MONO ? ct_mono_ns() : ct_ticks();
}

static void attach(void) {
  const char *shm = getenv(CTP_ENV_SHM), *sp = getenv(CTP_ENV_SOCK);
  if (!shm || !sp)
    die("no CTP_SHM_PATH / CTP_SOCK_PATH");
  int fd = open(shm, O_RDWR | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) < 0)
    die(shm);
  base = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED)
    die("mmap");
  close(fd);
  hdr = (struct ctp_header *)base;
  if (!(hdr->mode & CTP_MODE_RINGS) || hdr->v2_size > (uint64_t)sb.st_size) {
    fprintf(stderr, "v2-writer: the engine offers no v2\n");
    exit(3);
  }
  nst = hdr->max_stations;
  cap = hdr->ring_bytes / 32u;
  lossless = (hdr->mode & CTP_MODE_LOSSLESS) != 0;
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sp);
  sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof sa) < 0)
    die(sp);
  struct pollfd p = {sock, POLLIN, 0};
  char b;
  if (poll(&p, 1, 1000) == 1) /* the engine's acknowledgement */
    (void)!recv(sock, &b, 1, 0);
  atomic_fetch_add(&hdr->attached, 1);
}

static void kick(void) {
  uint32_t one = 1;
  if (atomic_load_explicit(&hdr->tracer_sleeping, memory_order_relaxed) == 1 &&
      atomic_compare_exchange_strong(&hdr->tracer_sleeping, &one, 0))
    (void)send(sock, "1", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Lossless wait until ok() (loaded seq_cst), at most lossless_ms. */
static int wait_for(int (*ok)(void *), void *arg) {
  uint64_t end = ct_mono_ns() + (uint64_t)hdr->lossless_ms * 1000000u;
  while (!ok(arg)) {
    if (ct_mono_ns() > end)
      return 0;
    uint32_t one = 1;
    if (atomic_compare_exchange_strong(&hdr->tracer_sleeping, &one, 0))
      (void)send(sock, "1", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    uint32_t e0 = atomic_load(&hdr->harvest_epoch);
    atomic_fetch_add(&hdr->waiters, 1);
    if (!ok(arg)) {
      struct timespec ts = {0, 10000000};
      syscall(SYS_futex, &hdr->harvest_epoch, FUTEX_WAIT, e0, &ts, NULL, 0);
    }
    atomic_fetch_sub(&hdr->waiters, 1);
  }
  return 1;
}

/* Pop a free queue; -1 when empty. */
static int64_t pop(struct ctp_queue *q, uint32_t qcap) {
  for (;;) {
    uint64_t h = atomic_load_explicit(&q->head, memory_order_acquire);
    if (h == atomic_load_explicit(&q->tail, memory_order_acquire))
      return -1;
    uint32_t i = atomic_load_explicit(&q->ent[h % qcap], memory_order_relaxed);
    if (atomic_compare_exchange_weak_explicit(&q->head, &h, h + 1, memory_order_acq_rel,
                                              memory_order_relaxed))
      return i;
  }
}

struct ring {
  struct ctp_ring *r;
  struct ctp_rec *recs;
  uint64_t head;
};

static int claim_ring(struct ring *w) {
  int64_t r = pop(ctp_queue_at(base, hdr->ring_q_off), hdr->ring_count);
  if (r < 0) {
    uint32_t f = atomic_fetch_add(&hdr->rings_fresh, 1);
    if (f >= hdr->ring_count)
      return -1;
    r = f;
  }
  w->r = ctp_ring_at(base, hdr, (uint32_t)r);
  w->recs = ctp_ring_recs(w->r);
  w->head = atomic_load(&w->r->head);
  w->r->pid = (uint32_t)getpid();
  w->r->tid = (uint32_t)syscall(SYS_gettid);
  w->r->owner_gen++;
  atomic_store_explicit(&w->r->state, CTP_RING_OWNED, memory_order_release);
  return 0;
}

static int ring_room(void *arg) {
  struct ring *w = arg;
  return w->head - atomic_load(&w->r->tail) < cap;
}

static void put(struct ring *w, uint32_t st, uint8_t kind, uint8_t wait, uint64_t site,
                uint64_t obj) {
  struct ctp_station *s = ctp_station_at(base, st);
  if (w->head - atomic_load_explicit(&w->r->tail, memory_order_acquire) >= cap &&
      !(lossless && wait_for(ring_room, w))) {
    atomic_store_explicit(&w->r->lost, atomic_load(&w->r->lost) + 1, memory_order_relaxed);
    atomic_fetch_add(&s->v2_lost, 1);
    atomic_fetch_add(&dropped, 1);
    return;
  }
  struct ctp_rec *r = &w->recs[w->head % cap];
  r->ts = now_ticks();
  r->station = st;
  r->gen = (uint16_t)s->gen;
  r->kind = kind;
  r->wait = wait;
  r->site = site;
  r->obj = obj;
  atomic_store_explicit(&w->r->head, ++w->head, memory_order_release);
  atomic_fetch_add_explicit(&written, 1, memory_order_relaxed);
  kick();
}

static int station_free(void *arg) {
  int64_t *i = arg;
  *i = pop(ctp_queue_at(base, hdr->station_q_off), nst);
  return *i >= 0;
}

/* A station for a new coroutine, or -1 (counted as overflow). */
static int64_t create(struct ring *w, uint64_t id) {
  int64_t i = pop(ctp_queue_at(base, hdr->station_q_off), nst);
  if (i < 0 && atomic_load(&hdr->allocated_count) < nst) {
    uint32_t a = atomic_fetch_add(&hdr->allocated_count, 1);
    i = a < nst ? (int64_t)a : -1;
  }
  if (i < 0 && lossless)
    wait_for(station_free, &i);
  if (i < 0) {
    atomic_fetch_add(&hdr->overflow, 1);
    return -1;
  }
  struct ctp_station *s = ctp_station_at(base, (uint32_t)i);
  s->gen = s->gen + 1;
  s->probe_id = id ? id : (1ull << 63) | ((uint64_t)s->gen << 24) | (uint64_t)i;
  s->birth_ts = ct_mono_ns();
  s->create_site = 0x1000;
  s->parent_id = 0;
  s->pid = (uint32_t)getpid();
  snprintf(s->label, sizeof s->label, "v2w");
  s->is_dead = 0;
  atomic_store_explicit(&s->ext_flags, CTP_STF_EXT | CTP_STF_RINGS | CTP_STF_LABEL,
                        memory_order_release);
  put(w, (uint32_t)i, CTP_KIND_CREATE, 0, 0x1000, 0);
  return i;
}

static void destroy(struct ring *w, uint32_t i) {
  put(w, i, CTP_KIND_DESTROY, 0, 0x1004, 0);
  __atomic_store_n(&ctp_station_at(base, i)->is_dead, 1, __ATOMIC_RELEASE);
}

struct targ {
  uint64_t events, gap, id;
};

static void *run_thread(void *arg) {
  const struct targ *a = arg;
  struct ring w;
  if (claim_ring(&w) < 0)
    return NULL;
  int64_t st = create(&w, a->id);
  if (st >= 0) {
    uint64_t next = ct_mono_ns();
    for (uint64_t k = 1; k + 1 < a->events; k++) {
      if (a->gap) {
        next += a->gap;
        while (ct_mono_ns() < next)
          ;
      }
      if (k % 2)
        put(&w, (uint32_t)st, CTP_KIND_SUSPEND, CTP_WAIT_NONE, 0x1008, 0);
      else
        put(&w, (uint32_t)st, CTP_KIND_RESUME, 0, 0, 0);
    }
    destroy(&w, (uint32_t)st);
  }
  atomic_store_explicit(&w.r->state, CTP_RING_CLOSED, memory_order_release);
  return NULL;
}

int main(int argc, char **argv) {
  int run = argc == 6 && strcmp(argv[1], "run") == 0;
  int churn = argc == 4 && strcmp(argv[1], "churn") == 0;
  if (!run && !churn) {
    fprintf(stderr, "usage: v2-writer run THREADS EVENTS GAP_NS OUT | churn COROS OUT\n");
    return 2;
  }
  attach();
  if (run) {
    int n = atoi(argv[2]);
    pthread_t t[64];
    struct targ a[64];
    for (int k = 0; k < n && k < 64; k++) {
      a[k] = (struct targ){strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10), 100u + k};
      pthread_create(&t[k], NULL, run_thread, &a[k]);
    }
    for (int k = 0; k < n && k < 64; k++)
      pthread_join(t[k], NULL);
  } else {
    struct ring w;
    if (claim_ring(&w) < 0)
      die("no ring");
    uint64_t n = strtoull(argv[2], NULL, 10);
    for (uint64_t k = 0; k < n; k++) {
      int64_t st = create(&w, 0);
      if (st < 0)
        continue;
      put(&w, (uint32_t)st, CTP_KIND_RESUME, 0, 0, 0);
      put(&w, (uint32_t)st, CTP_KIND_SUSPEND, CTP_WAIT_EXIT, 0x100c, 0);
      destroy(&w, (uint32_t)st);
    }
    atomic_store_explicit(&w.r->state, CTP_RING_CLOSED, memory_order_release);
  }
  FILE *f = fopen(argv[argc - 1], "we");
  if (!f ||
      fprintf(f, "written %llu dropped %llu\n", (unsigned long long)atomic_load(&written),
              (unsigned long long)atomic_load(&dropped)) < 0 ||
      fclose(f))
    die(argv[argc - 1]);
  return 0;
}
