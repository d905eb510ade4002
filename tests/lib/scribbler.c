/* scribbler.c - a hostile target: it traces with the public SDK, then writes
 * random bytes (seeded) over the whole shared mapping, and goes on tracing.
 *
 *   scribbler SEED EVENTS OUT [counters|alloc|packs]
 *       COROS coroutines created, EVENTS suspend/resume events over them,
 *       then the scribble (none when SEED is 0; with "counters", random
 *       words over the counters only: every station's ev_claimed,
 *       harvested_ev and v2_lost, every ring's lost; no padding touched, so
 *       only the values can tell; with "alloc", the one 32-bit word of the
 *       header's allocated_count, set to 0xfffffff0; with "packs", nothing
 *       over the mapping, but a thread of its own claims a ring through the
 *       SDK and then writes into it as a buggy probe would, under
 *       `corotracer run --pack`: PACKS pack headers with a bad nrec, nbytes,
 *       nent, span or nsolo byte, garbage continuation records, entries naming
 *       stations no coroutine has, a pack straddling head, and valid packs
 *       among them; the events are then switches, corotracer_switch's hot
 *       case, so that the probe packs too), EVENTS more, COROS more
 *       coroutines created (a lossless create waits for a free station), and
 *       every coroutine destroyed. OUT gets "written W ms M honest H": W the
 *       events the program asked the SDK to record (with "packs", and those
 *       its rogue thread wrote by hand, 3 a record: an upper bound of any
 *       true count in the trace), M its own wall time in ms, H the events of
 *       the coroutines but the rogue thread's (all in a lossless run's trace).
 *
 * Exit 3 when not traced; killed by SIGALRM after 30 s. tests/test-engine-hostile.sh drives it. */
#include <corotracer.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/ctp.h"
#include "ctlib.h"

#define COROS 4

/* xorshift64*: the scribble is the same for a seed on every run. */
static uint64_t next_rand(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

/* The whole file CTP_SHM_PATH names, mapped read-write (*len its size). */
static uint64_t *map_shm(size_t *len) {
  const char *path = getenv("CTP_SHM_PATH");
  if (!path)
    ct_die("CTP_SHM_PATH not set");
  int fd = open(path, O_RDWR | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0)
    ct_die("%s: %s", path, strerror(errno));
  *len = (size_t)sb.st_size;
  uint64_t *p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    ct_die("mmap %s: %s", path, strerror(errno));
  close(fd);
  return p;
}

/* Random bytes over the whole shared file: header, stations, queues and
 * rings, through a mapping of our own. */
static void scribble(uint64_t seed, const char *what) {
  size_t len;
  uint64_t *p = map_shm(&len);
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL | 1;
  const struct ctp_header *h = (const struct ctp_header *)p;
  if (!strcmp(what, "alloc")) {
    atomic_store_explicit(&((struct ctp_header *)p)->allocated_count, 0xfffffff0u,
                          memory_order_relaxed);
  } else if (!strcmp(what, "counters")) {
    for (uint32_t i = 0; i < h->max_stations; i++) {
      struct ctp_station *st = ctp_station_at(p, i);
      atomic_store_explicit(&st->ev_claimed, next_rand(&s), memory_order_relaxed);
      atomic_store_explicit(&st->harvested_ev, next_rand(&s), memory_order_relaxed);
      atomic_store_explicit(&st->v2_lost, next_rand(&s), memory_order_relaxed);
    }
    for (uint32_t r = 0; (h->mode & CTP_MODE_RINGS) && r < h->ring_count; r++)
      atomic_store_explicit(&ctp_ring_at(p, h, r)->lost, next_rand(&s), memory_order_relaxed);
  } else {
    for (size_t k = 0; k < len / 8; k++)
      __atomic_store_n(&p[k], next_rand(&s), __ATOMIC_RELAXED);
  }
  munmap(p, len);
}

/* ---- "packs": a thread writes into its own ring as a buggy probe would ---- */

#define PACKS 240 /* rogue packs written */

/* The ring the probe claimed for this thread (found by pid and tid), or NULL. */
static struct ctp_ring *own_ring(void *base) {
  const struct ctp_header *h = base;
  uint32_t tid = (uint32_t)syscall(SYS_gettid), pid = (uint32_t)getpid();
  for (uint32_t r = 0; (h->mode & CTP_MODE_RINGS) && r < h->ring_count; r++) {
    struct ctp_ring *rg = ctp_ring_at(base, h, r);
    if (atomic_load_explicit(&rg->state, memory_order_acquire) == CTP_RING_OWNED &&
        rg->pid == pid && rg->tid == tid)
      return rg;
  }
  return NULL;
}

/* rec[0..n) stored at the ring's head and published with one release store,
 * as a probe does, once the engine has left room for them (2 s at most).
 * 1 when published, 0 when the room never came. */
static int put(struct ctp_ring *rg, uint64_t cap, const struct ctp_rec *rec, uint32_t n) {
  uint64_t head = atomic_load_explicit(&rg->head, memory_order_relaxed);
  for (int w = 0; head + n - atomic_load_explicit(&rg->tail, memory_order_acquire) > cap; w++) {
    if (w == 2000)
      return 0;
    usleep(1000);
  }
  struct ctp_rec *recs = ctp_ring_recs(rg);
  for (uint32_t k = 0; k < n; k++)
    recs[(head + k) & (cap - 1)] = rec[k];
  atomic_store_explicit(&rg->head, head + n, memory_order_release);
  return 1;
}

/* A rogue pack into rec[] (CTP_PACK_RECS records, garbage past the header
 * unless entries go there), for station st at ticks now, its flaw chosen by
 * s: a bad nrec, nbytes, nent, span, nsolo byte or ts0, garbage entries, an
 * entry whose `to` no coroutine has, a pack published in two parts (*split
 * records first: it straddles head until the rest comes), or none. Returns
 * the records to publish; *events: the events it may add to the trace. */
static uint32_t rogue_pack(uint64_t *s, uint32_t st, uint64_t now, struct ctp_rec *rec,
                           uint64_t *events, uint32_t *split) {
  for (unsigned k = 0; k < CTP_PACK_RECS * sizeof *rec / 8; k++)
    ((uint64_t *)rec)[k] = next_rand(s);
  uint32_t nrec = 1 + (uint32_t)(next_rand(s) % (CTP_PACK_RECS - 1));
  uint32_t nent = 1 + (uint32_t)(next_rand(s) % (16 * nrec));
  uint8_t *b = (uint8_t *)(rec + 1);
  for (uint32_t e = 0; e < nent; e++) { /* plain entries, 1 tick apart, `to` = `from` */
    b[2 * e] = (1 << 2) | CTP_PK_PLAIN;
    b[2 * e + 1] = 0;
  }
  struct ctp_pack *pk = (struct ctp_pack *)rec;
  *pk = (struct ctp_pack){.ts0 = now,
                          .from = st,
                          .kind = CTP_KIND_PACK,
                          .nrec = (uint8_t)nrec,
                          .site = 0x401000,
                          .span = nent - 1,
                          .nbytes = (uint8_t)(2 * nent),
                          .nent = (uint8_t)nent};
  *events = 2u * nent;
  *split = 0;
  switch (next_rand(s) % 10) {
  case 0:
    pk->nrec = (uint8_t)(CTP_PACK_RECS + next_rand(s) % (256 - CTP_PACK_RECS));
    break;
  case 1:
    pk->nbytes = (uint8_t)(32 * nrec + 1 + next_rand(s) % (255 - 32 * nrec));
    break;
  case 2:
    pk->nent = 0;
    break;
  case 3:
    pk->span = (uint32_t)next_rand(s);
    return 1 + nrec;
  case 4: /* garbage entries */
    pk->nbytes = (uint8_t)(next_rand(s) % (32 * nrec + 1));
    pk->nent = (uint8_t)(1 + next_rand(s) % 255);
    *events = 3u * pk->nent;
    for (uint32_t k = 0; k < 32 * nrec; k++)
      b[k] = (uint8_t)next_rand(s);
    return 1 + nrec;
  case 5: { /* one entry whose `to` is far from any station */
    uint64_t zz = (uint32_t)next_rand(s) | 0x10000u;
    unsigned n = 1;
    for (; zz >= 0x80; zz >>= 7)
      b[n++] = (uint8_t)(zz | 0x80);
    b[n++] = (uint8_t)zz;
    pk->nbytes = (uint8_t)n;
    pk->nent = 1;
    pk->span = 1;
    *events = 2;
    return 1 + nrec;
  }
  case 6:
    pk->nsolo = (uint8_t)(nent + 1u + next_rand(s) % (256u - nent)); /* more than nent */
    return 1 + nrec;
  case 7:
    pk->ts0 = next_rand(s);
    return 1 + nrec;
  case 8:
    *split = 1 + (uint32_t)(next_rand(s) % nrec);
    return 1 + nrec;
  default:
    return 1 + nrec;
  }
  *events = 0; /* refused by its framing */
  return 1 + nrec;
}

struct rogue {
  uint64_t seed, written;
  corotracer_co *co;
};

/* The rogue thread: one coroutine through the SDK (the probe claims this
 * thread's ring for its records), then PACKS rogue packs written past them
 * by hand. The probe never writes this ring again: its head is ours. */
static void *rogue(void *arg) {
  struct rogue *g = arg;
  g->co = corotracer_create(0, "rogue", NULL);
  corotracer_resume(g->co);
  g->written = 2;
  size_t len;
  uint64_t *p = map_shm(&len);
  const struct ctp_header *h = (const struct ctp_header *)p;
  struct ctp_ring *rg = own_ring(p);
  if (!rg)
    ct_die("rogue: this thread has no ring (run me under corotracer run --pack)");
  uint64_t cap = h->ring_bytes / sizeof(struct ctp_rec), s = g->seed * 0x9E3779B97F4A7C15ULL | 1;
  uint64_t head = atomic_load_explicit(&rg->head, memory_order_relaxed);
  const struct ctp_rec *last = &ctp_ring_recs(rg)[(head - 1) & (cap - 1)];
  uint32_t st = last->station;
  uint64_t now = last->ts, events;
  struct ctp_rec rec[CTP_PACK_RECS];
  for (unsigned i = 0; i < PACKS; i++) {
    uint32_t split, n = rogue_pack(&s, st, now += 1000, rec, &events, &split);
    if (split && put(rg, cap, rec, split))
      usleep(2000); /* a pass or so sees it straddle head */
    if (!put(rg, cap, rec + split, n - split))
      break;
    g->written += events + 3u * n; /* a record read as one: a switch, 3 events */
  }
  munmap(p, len);
  return NULL;
}

/* EVENTS events over co[]: a suspend and a resume per step, as two calls
 * or (switches) as one switch from a coroutine to the next. */
static uint64_t run(corotracer_co **co, uint64_t events, int switches) {
  uint64_t w = 0;
  for (uint64_t k = 0; k + 1 < events; k += 2) {
    corotracer_co *c = co[(k / 2) % COROS];
    if (switches) {
      corotracer_switch(c, NULL, COROTRACER_WAIT_NONE, 0, 0, co[(k / 2 + 1) % COROS]);
    } else {
      corotracer_suspend(c, NULL, COROTRACER_WAIT_NONE, 0);
      corotracer_resume(c);
    }
    w += 2;
  }
  return w;
}

int main(int argc, char **argv) {
  const char *what = argc == 5 ? argv[4] : "all";
  int packs = !strcmp(what, "packs");
  if (argc != 4 && !(argc == 5 && (!strcmp(what, "counters") || !strcmp(what, "alloc") || packs))) {
    fprintf(stderr, "usage: scribbler SEED EVENTS OUT [counters|alloc|packs]\n");
    return 2;
  }
  uint64_t seed = strtoull(argv[1], NULL, 10), events = strtoull(argv[2], NULL, 10);
  uint64_t t0 = ct_now_ns();
  alarm(30); /* a probe that hangs must not leave us spinning after the test */
  if (corotracer_init() != 0)
    return 3;
  corotracer_co *co[2 * COROS];
  uint64_t written = 0;
  for (int k = 0; k < COROS; k++) {
    co[k] = corotracer_create(0, "scribbled", NULL);
    corotracer_resume(co[k]);
    written += 2;
  }
  written += run(co, events, packs);
  struct rogue g = {.seed = seed};
  pthread_t th;
  if (seed && packs) {
    if (pthread_create(&th, NULL, rogue, &g) || pthread_join(th, NULL))
      ct_die("rogue thread");
    written += g.written;
  } else if (seed) {
    scribble(seed, what);
  }
  written += run(co, events, packs);
  for (int k = COROS; k < 2 * COROS; k++) {
    co[k] = corotracer_create(0, "after", NULL);
    corotracer_resume(co[k]);
    written += 2;
  }
  for (int k = 0; k < 2 * COROS; k++) {
    corotracer_destroy(co[k]);
    written++;
  }
  if (g.co) {
    corotracer_destroy(g.co);
    written++;
  }
  uint64_t ms = (ct_now_ns() - t0) / 1000000u;
  FILE *f = fopen(argv[3], "we");
  if (!f ||
      fprintf(f, "written %llu ms %llu honest %llu\n", (unsigned long long)written,
              (unsigned long long)ms, (unsigned long long)(written - g.written - !!g.co)) < 0 ||
      fclose(f))
    ct_die("%s: %s", argv[3], strerror(errno));
  return 0;
}
