/* v2-file.h - a cTP file laid out for v2 (docs/PROTOCOL.md "v2") as our engine
 * lays it out, and the engine's side of its queues and rings, for tests and
 * benchmarks that run the probe without the engine. */
#ifndef CT_V2_FILE_H
#define CT_V2_FILE_H

#include <stdint.h>

#include "common/ctp.h"

struct ct_v2_params {
  uint32_t stations;   /* max_stations */
  uint32_t rings;      /* ring_count */
  uint32_t ring_bytes; /* record area of one ring */
  uint32_t clock;      /* enum ctp_clock */
  uint32_t mode;       /* CTP_MODE_* besides CTP_MODE_RINGS (e.g. CTP_MODE_LOSSLESS) */
  uint32_t lossless_ms;
  uint32_t ext_version; /* 0: CTP_EXT_VERSION (the probe then waits for an ack byte at attach) */
};

/* Bytes of the file for p (its v2_size). */
uint64_t ct_v2_size(const struct ct_v2_params *p);

/* Write the header of a zeroed mapping of ct_v2_size(p) bytes at base: v1
 * fields, our extension, mode = CTP_MODE_RINGS | p->mode, the v2 layout
 * (station queue, ring queue, rings, in that order after the stations). */
void ct_v2_init(void *base, const struct ct_v2_params *p);

/* Create path (O_EXCL, 0600) for p, map it and init it: the mapping, or NULL
 * with the reason printed. *len receives its size. */
void *ct_v2_create(const char *path, const struct ct_v2_params *p, uint64_t *len);

/* The engine's push on a free-index queue of cap entries (one producer). */
void ct_v2_push(struct ctp_queue *q, uint32_t cap, uint32_t idx);

/* Consume ring r as the engine does: records tail .. head-1 are handed to
 * each(rec, arg) (may be NULL) in order, then tail is release-stored. Returns
 * the number consumed. */
uint64_t ct_v2_consume(void *base, uint32_t r, void (*each)(const struct ctp_rec *, void *),
                       void *arg);

#endif
