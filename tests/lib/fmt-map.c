/* fmt-map.c - a cTP mapping as the engine lays it out (see fmt-map.h). */
#include "fmt-map.h"

#include <stdlib.h>
#include <string.h>

#include "common/ctp.h"
#include "engine/opts.h"
#include "engine/rundir.h"

void *ct_fmt_map(uint32_t stations, uint32_t rings, size_t *len) {
  struct ct_opts opt = {.stations = stations, .rings = rings, .ring_kib = 4};
  *len = (size_t)ct_layout(&opt, NULL);
  void *map = aligned_alloc(4096, (*len + 4095) & ~(size_t)4095);
  if (!map)
    return NULL;
  memset(map, 0, *len);
  struct ctp_header *hdr = map;
  hdr->magic = CTP_MAGIC;
  hdr->version = CTP_VERSION;
  hdr->max_stations = stations;
  ct_layout(&opt, hdr);
  return map;
}
