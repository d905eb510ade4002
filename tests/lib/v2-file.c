/* v2-file.c - lay out a v2 cTP file and play the engine's side of its queues
 * and rings (see v2-file.h). */
#include "v2-file.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define ALIGN64(x) (((x) + 63) & ~(uint64_t)63)

static uint64_t station_q_off(const struct ct_v2_params *p) {
  return ALIGN64(CTP_FILE_SIZE(p->stations));
}
static uint64_t ring_q_off(const struct ct_v2_params *p) {
  return station_q_off(p) + CTP_QUEUE_SIZE(p->stations);
}
static uint64_t rings_off(const struct ct_v2_params *p) {
  return ring_q_off(p) + CTP_QUEUE_SIZE(p->rings);
}

uint64_t ct_v2_size(const struct ct_v2_params *p) {
  return rings_off(p) + (uint64_t)p->rings * CTP_RING_SIZE(p->ring_bytes);
}

void ct_v2_init(void *base, const struct ct_v2_params *p) {
  struct ctp_header *h = base;
  h->magic = CTP_MAGIC;
  h->version = CTP_VERSION;
  h->max_stations = p->stations;
  h->ext_magic = CTP_EXT_MAGIC;
  h->ext_version = p->ext_version ? p->ext_version : CTP_EXT_VERSION;
  h->engine_pid = (uint64_t)getpid();
  h->mode = CTP_MODE_RINGS | p->mode;
  h->lossless_ms = p->lossless_ms;
  h->clock = p->clock;
  h->ring_count = p->rings;
  h->ring_bytes = p->ring_bytes;
  h->rings_off = rings_off(p);
  h->station_q_off = station_q_off(p);
  h->ring_q_off = ring_q_off(p);
  h->v2_size = ct_v2_size(p);
}

void *ct_v2_create(const char *path, const struct ct_v2_params *p, uint64_t *len) {
  uint64_t size = ct_v2_size(p);
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    perror(path);
    return NULL;
  }
  void *base = MAP_FAILED;
  if (ftruncate(fd, (off_t)size) == 0)
    base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED)
    perror(path);
  close(fd);
  if (base == MAP_FAILED)
    return NULL;
  ct_v2_init(base, p);
  *len = size;
  return base;
}

void ct_v2_push(struct ctp_queue *q, uint32_t cap, uint32_t idx) {
  uint64_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
  atomic_store_explicit(&q->ent[t % cap], idx, memory_order_relaxed);
  atomic_store_explicit(&q->tail, t + 1, memory_order_release);
}

uint64_t ct_v2_consume(void *base, uint32_t r, void (*each)(const struct ctp_rec *, void *),
                       void *arg) {
  const struct ctp_header *h = base;
  struct ctp_ring *ring = ctp_ring_at(base, h, r);
  uint64_t cap = h->ring_bytes / sizeof(struct ctp_rec);
  uint64_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
  uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
  const struct ctp_rec *recs = ctp_ring_recs(ring);
  for (uint64_t i = tail; i < head && each; i++)
    each(&recs[i % cap], arg);
  atomic_store_explicit(&ring->tail, head, memory_order_release);
  return head - tail;
}
