/* fuzz-shm.c - libFuzzer target: the engine's reading of the shared memory.
 * The input is the file a target could leave behind (header, stations, the
 * v2 queues and rings: any bytes, seqs, indexes, heads, record fields,
 * labels). The engine lays out a small v2 file (8 stations, 2 rings of 4 KiB)
 * and copies the input over it, keeping only its own layout fields in the
 * header; then its live scans, sleep re-scan, final scan and totals run over
 * it and must neither crash nor read outside it (ASan). Between passes the
 * input's tail overwrites the file again, layout fields included (the engine
 * must have kept its own copies). A small text-site area follows the file
 * (any records, lengths, names: the engine's site lines must still parse).
 * The binary trace goes to a memory file,
 * which the reader must then frame whole: whatever the shared memory held,
 * the engine writes nothing the reader cannot read. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/trace.h"
#include "common/ctp.h"
#include "engine/clock.h"
#include "engine/harvest.h"
#include "engine/opts.h"
#include "engine/procs.h"
#include "engine/rundir.h"
#include "engine/sink.h"
#include "engine/sites.h"

static int on_line(void *ctx, uint64_t lineno, enum ct_line_err err, const struct ct_line *l) {
  (void)ctx;
  (void)lineno;
  (void)l;
  /* Our engine's lines all parse (torn ones are never written, but an event
   * of probe_id 0 or ts 0 read from hostile memory reads as torn). */
  if (err != CT_LINE_OK && err != CT_LINE_TORN)
    __builtin_trap();
  return 0;
}

#define FUZZ_STATIONS 8u
#define FUZZ_SITES 4096u /* bytes of the text-site area after the file */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct ct_opts o = {.stations = FUZZ_STATIONS, .rings = 2, .ring_kib = 4};
  size_t len = (size_t)ct_layout(&o, NULL);
  size_t all = len + FUZZ_SITES;
  void *map = aligned_alloc(4096, (all + 4095) & ~(size_t)4095);
  if (!map)
    return 0;
  memset(map, 0, all);
  memcpy(map, data, size < all ? size : all);
  /* The engine's own header fields (the input decides the rest, v1 mode,
   * lossless or packs (--pack: the harvest hops over pack records) included). */
  struct ctp_header *h = map;
  h->magic = CTP_MAGIC;
  h->version = CTP_VERSION;
  h->max_stations = FUZZ_STATIONS;
  h->mode &= CTP_MODE_LOSSLESS | CTP_MODE_RINGS | CTP_MODE_PACK;
  h->waiters = 0; /* no futex wake of a word nobody waits on */
  uint32_t rings = h->mode & CTP_MODE_RINGS;
  h->mode &= ~(uint32_t)CTP_MODE_RINGS;
  if (rings)
    ct_layout(&o, h);
  struct ct_sink sink;
  struct ct_procs procs = {0};
  struct ct_clock clock;
  struct ct_harvest hv;
  ct_clock_init(&clock, CTP_CLOCK_MONO);
  int out = memfd_create("fuzz-shm-trace", MFD_CLOEXEC);
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", out);
  if (out >= 0 && ct_sink_open(&sink, path, 0, CT_FORMAT_CTRACE, NULL, 64, 1) == 0) {
    if (ct_harvest_init(&hv, map, len, FUZZ_STATIONS, &procs, &sink, &clock) == 0) {
      ct_harvest_scan(&hv, CT_SCAN_QUICK);
      size_t rest = size > len ? size - len : 0;
      if (rest > 0)
        memcpy(map, data + len, rest < len ? rest : len);
      h->waiters = 0;
      ct_harvest_scan(&hv, CT_SCAN_SLOTS);
      ct_harvest_scan(&hv, CT_SCAN_QUICK);
      hv.final = 1;
      ct_harvest_scan(&hv, CT_SCAN_FULL);
      uint64_t events, lost;
      ct_harvest_finish(&hv, &events, &lost);
      (void)ct_harvest_live(&hv);
      struct ct_sites sites;
      ct_sites_init(&sites, map, len, FUZZ_SITES);
      ct_sites_scan(&sites, &sink.tw);
      h->sites_used += 64; /* more claimed: read again from where it stopped */
      ct_sites_scan(&sites, &sink.tw);
    }
    ct_harvest_free(&hv);
    ct_sink_close(&sink);
    uint64_t bytes = 0;
    struct ct_read_diag d;
    if (lseek(out, 0, SEEK_SET) != 0 || ct_trace_read_diag(out, 0, on_line, NULL, NULL, &bytes, &d))
      __builtin_trap();
    /* A record the reader cannot frame. (A file header alone, when the
     * input made the engine write nothing, is a trace with no chunk: said
     * so, but nothing misframed.) */
    if (d.why[0] && bytes > sizeof(struct ctr_file_hdr))
      __builtin_trap();
  }
  if (out >= 0)
    close(out);
  ct_procs_free(&procs);
  free(map);
  return 0;
}
