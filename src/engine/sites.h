/* sites.h - the text-site area of the shared memory, read into site lines (sites.c). */
#ifndef CT_ENGINE_SITES_H
#define CT_ENGINE_SITES_H

#include <stdint.h>

#include "common/ctp.h"
#include "format/writer.h"

/* The engine's view of the area: where it is (from the engine's own layout,
 * never from the file) and how far it has been read. */
struct ct_sites {
  const char *area;
  struct ctp_header *hdr;
  uint32_t bytes;
  uint32_t done; /* records below this offset are written as lines */
  int bad;       /* a malformed record stopped the reading */
};
void ct_sites_init(struct ct_sites *s, void *map, uint64_t off, uint32_t bytes);
/* Writes a `site` line to w for each record published since the last call;
 * returns how many. Reads the shared file: call it under the SIGBUS guard. */
int ct_sites_scan(struct ct_sites *s, struct ct_writer *w);

#endif /* CT_ENGINE_SITES_H */
