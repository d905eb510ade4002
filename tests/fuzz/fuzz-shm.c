/* fuzz-shm.c - libFuzzer target: the engine's reading of the shared memory.
 * The input is the file a target could leave behind (header + stations, any
 * bytes: seqs, indexes, flags, pids, labels); the engine's live scans, sleep
 * re-scan, final scan and totals run over it and must neither crash nor read
 * outside it (ASan). The trace goes to /dev/null. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

/* At most this many stations: enough for every path, small enough to be fast. */
#define FUZZ_STATIONS 8u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < CTP_HEADER_SIZE + CTP_STATION_SIZE)
    return 0;
  uint32_t n = (uint32_t)((size - CTP_HEADER_SIZE) / CTP_STATION_SIZE);
  if (n > FUZZ_STATIONS)
    n = FUZZ_STATIONS;
  size_t len = (size_t)CTP_FILE_SIZE(n);
  void *map = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
  if (!map)
    return 0;
  memcpy(map, data, len);
  struct ct_writer w;
  struct ct_procs procs = {0};
  struct ct_harvest h;
  if (ct_writer_open(&w, "/dev/null", 1) == 0) {
    if (ct_harvest_init(&h, map, n, &procs, &w) == 0) {
      /* The target keeps writing between passes: flip the bytes after the
       * first pass with the input's tail, so stateful paths (last seq, next
       * event, retired stations) meet changed values. */
      ct_harvest_scan(&h, CT_SCAN_QUICK);
      size_t rest = size - len;
      if (rest > 0)
        memcpy(map, data + len, rest < len ? rest : len);
      ct_harvest_scan(&h, CT_SCAN_SLOTS);
      ct_harvest_scan(&h, CT_SCAN_QUICK);
      ct_harvest_scan(&h, CT_SCAN_FULL);
      uint64_t events, lost;
      ct_harvest_finish(&h, &events, &lost);
      (void)ct_harvest_live(&h);
      ct_harvest_free(&h);
    }
    ct_writer_close(&w);
  }
  ct_procs_free(&procs);
  free(map);
  return 0;
}
