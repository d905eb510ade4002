/* test-layout.c - every cTP v1 offset and size (shared/reference/ctp-v1.md) and
 * every extension offset (docs/PROTOCOL.md), checked at run time against a
 * table written independently from those documents, not from ctp.h. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/ctp.h"
#include "corotracer.h"
#include "lib/check.h"

struct field {
  const char *name;
  size_t off, size;           /* from the compiler */
  size_t want_off, want_size; /* from the documents */
  int ext;                    /* ours: must lie in bytes v1 leaves zero */
};

#define FIELD(type, member, off, size, ext)                                                        \
  {                                                                                                \
#type "." #member, offsetof(struct type, member), sizeof(((struct type *)0)->member), off,     \
        size, ext                                                                                  \
  }
#define F(type, member, off, size) FIELD(type, member, off, size, 0)
#define X(type, member, off, size) FIELD(type, member, off, size, 1)

static const struct field fields[] = {
    /* GlobalHeader, ctp-v1.md */
    F(ctp_header, magic, 0x00, 8),
    F(ctp_header, version, 0x08, 4),
    F(ctp_header, max_stations, 0x0C, 4),
    F(ctp_header, allocated_count, 0x10, 4),
    F(ctp_header, tracer_sleeping, 0x14, 4),
    /* header extensions, PROTOCOL.md */
    X(ctp_header, ext_magic, 0x18, 4),
    X(ctp_header, ext_version, 0x1C, 4),
    X(ctp_header, engine_pid, 0x20, 8),
    X(ctp_header, attached, 0x28, 4),
    X(ctp_header, overflow, 0x2C, 4),
    X(ctp_header, mode, 0x30, 4),
    X(ctp_header, lossless_ms, 0x34, 4),
    X(ctp_header, harvest_epoch, 0x38, 4),
    X(ctp_header, waiters, 0x3C, 4),
    /* v2 header fields, PROTOCOL.md "v2" */
    X(ctp_header, clock, 0x40, 4),
    X(ctp_header, ring_count, 0x44, 4),
    X(ctp_header, ring_bytes, 0x48, 4),
    X(ctp_header, rings_fresh, 0x4C, 4),
    X(ctp_header, rings_off, 0x50, 8),
    X(ctp_header, station_q_off, 0x58, 8),
    X(ctp_header, ring_q_off, 0x60, 8),
    X(ctp_header, no_ring, 0x68, 4),
    X(ctp_header, v2_size, 0x70, 8),
    X(ctp_header, sites_off, 0x78, 8),
    X(ctp_header, sites_bytes, 0x80, 4),
    X(ctp_header, sites_used, 0x84, 4),
    X(ctp_header, reserved, 0x88, 1024 - 0x88),
    /* Station, ctp-v1.md */
    F(ctp_station, probe_id, 0x000, 8),
    F(ctp_station, birth_ts, 0x008, 8),
    F(ctp_station, is_dead, 0x010, 1),
    F(ctp_station, slots, 0x040, 8 * 64),
    /* station extensions, PROTOCOL.md (inside v1's pad and flexible area) */
    X(ctp_station, ext_flags, 0x014, 4),
    X(ctp_station, ev_claimed, 0x018, 8),
    X(ctp_station, create_site, 0x020, 8),
    X(ctp_station, parent_id, 0x028, 8),
    X(ctp_station, pid, 0x030, 4),
    X(ctp_station, gen, 0x034, 4),
    X(ctp_station, harvested_ev, 0x038, 8),
    X(ctp_station, label, 0x240, 64),
    X(ctp_station, v2_lost, 0x280, 8),
    /* Event slot, ctp-v1.md */
    F(ctp_slot, timestamp, 0x00, 8),
    F(ctp_slot, tid, 0x08, 8),
    F(ctp_slot, addr, 0x10, 8),
    F(ctp_slot, seq, 0x18, 8),
    F(ctp_slot, is_active, 0x3F, 1),
    /* slot extensions, PROTOCOL.md */
    X(ctp_slot, kind, 0x20, 1),
    X(ctp_slot, wait_kind, 0x21, 1),
    X(ctp_slot, flags, 0x22, 2),
    X(ctp_slot, aux, 0x24, 4),
    X(ctp_slot, obj, 0x28, 8),
    X(ctp_slot, reserved, 0x30, 15),
    /* v2 areas (PROTOCOL.md "v2"): past v1's stations, so not in its gaps */
    F(ctp_rec, ts, 0x00, 8),
    F(ctp_rec, station, 0x08, 4),
    F(ctp_rec, gen, 0x0C, 2),
    F(ctp_rec, kind, 0x0E, 1),
    F(ctp_rec, wait, 0x0F, 1),
    F(ctp_rec, site, 0x10, 8),
    F(ctp_rec, obj, 0x18, 8),
    F(ctp_ring, head, 0x00, 8),
    F(ctp_ring, lost, 0x08, 8),
    F(ctp_ring, pid, 0x10, 4),
    F(ctp_ring, tid, 0x14, 4),
    F(ctp_ring, state, 0x18, 4),
    F(ctp_ring, owner_gen, 0x1C, 4),
    F(ctp_ring, tail, 0x40, 8),
    F(ctp_queue, head, 0x00, 8),
    F(ctp_queue, tail, 0x40, 8),
};

/* v1's zero areas (ctp-v1.md): header 0x18..0x3FF, station pad 0x011..0x03F
 * and flexible 0x240..0x3FF, slot reserved 0x20..0x3E. Every extension field
 * must lie inside one of them, or a v1 reader would see our bytes. */
static void check_in_v1_gaps(void) {
  static const struct {
    const char *prefix;
    size_t lo, hi; /* [lo, hi) */
  } gaps[] = {{"ctp_header.", 0x18, 0x400},
              {"ctp_station.", 0x011, 0x040},
              {"ctp_station.", 0x240, 0x400},
              {"ctp_slot.", 0x20, 0x3F}};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    const struct field *f = &fields[i];
    int inside = 0;
    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++)
      inside |= !strncmp(f->name, gaps[g].prefix, strlen(gaps[g].prefix)) && f->off >= gaps[g].lo &&
                f->off + f->size <= gaps[g].hi;
    if (f->ext && !inside)
      printf("%s (%#zx+%zu) is outside v1's zero areas\n", f->name, f->off, f->size);
    ASSERT(!f->ext || inside);
  }
}

int main(void) {
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    const struct field *f = &fields[i];
    if (f->off != f->want_off || f->size != f->want_size) /* which field the assertion is about */
      printf("%s: offset %#zx size %zu, the documents say offset %#zx size %zu\n", f->name, f->off,
             f->size, f->want_off, f->want_size);
    ASSERT_UINT64_EQ(f->off, f->want_off);
    ASSERT_UINT64_EQ(f->size, f->want_size);
  }
  check_in_v1_gaps();

  ASSERT_UINT64_EQ(sizeof(struct ctp_header), 1024);
  ASSERT_UINT64_EQ(sizeof(struct ctp_station), 1024);
  ASSERT_UINT64_EQ(sizeof(struct ctp_slot), 64);
  ASSERT_UINT64_EQ(sizeof(struct ctp_rec), 32);
  ASSERT_UINT64_EQ(sizeof(struct ctp_ring), 128);
  ASSERT_UINT64_EQ(sizeof(struct ctp_queue), 128);
  ASSERT_UINT64_EQ(CTP_QUEUE_SIZE(3), 192);
  ASSERT_UINT64_EQ(CTP_RING_SIZE(4096), 128 + 4096);
  ASSERT_UINT64_EQ(CTP_HEADER_SIZE, 1024);
  ASSERT_UINT64_EQ(CTP_STATION_SIZE, 1024);
  ASSERT_UINT64_EQ(CTP_SLOTS, 8);
  ASSERT_UINT64_EQ(CTP_SLOT_SIZE, 64);
  ASSERT_UINT64_EQ(CTP_FILE_SIZE(0), 1024);
  ASSERT_UINT64_EQ(CTP_FILE_SIZE(128), 1024 + 128 * 1024);
  ASSERT_UINT64_EQ(CTP_FILE_SIZE(4294967295u), 1024 + 4294967295ull * 1024);
  ASSERT_UINT64_EQ(CTP_VERSION, 1);
  ASSERT_UINT64_EQ(CTP_MAGIC, 0x434F524F54524352ull);

  /* "COROTRCR" read as big-endian ASCII: in the little-endian file the bytes
   * appear reversed. */
  uint64_t m = CTP_MAGIC;
  unsigned char b[8];
  memcpy(b, &m, 8);
  ASSERT_MEM_EQ(b, "RCRTOROC", 8);
  uint32_t x = CTP_EXT_MAGIC;
  memcpy(b, &x, 4);
  ASSERT_MEM_EQ(b, "CTX1", 4);

  /* Station i starts at 1024 * (i + 1). */
  static unsigned char file[1024 * 4];
  ASSERT_UINT64_EQ((unsigned char *)ctp_station_at(file, 0) - file, 1024);
  ASSERT_UINT64_EQ((unsigned char *)ctp_station_at(file, 2) - file, 3 * 1024);
  /* Slot k of a station sits at 0x40 + 64 * k. */
  struct ctp_station *st = ctp_station_at(file, 1);
  ASSERT_UINT64_EQ((unsigned char *)&st->slots[5] - (unsigned char *)st, 0x40 + 5 * 64);

  /* Enumerations on the wire, PROTOCOL.md. */
  ASSERT_UINT64_EQ(CTP_KIND_V1, 0);
  ASSERT_UINT64_EQ(CTP_KIND_CREATE, 1);
  ASSERT_UINT64_EQ(CTP_KIND_SUSPEND, 2);
  ASSERT_UINT64_EQ(CTP_KIND_RESUME, 3);
  ASSERT_UINT64_EQ(CTP_KIND_WAKE, 4);
  ASSERT_UINT64_EQ(CTP_KIND_DESTROY, 5);
  ASSERT_UINT64_EQ(CTP_WAIT_NONE, 0);
  ASSERT_UINT64_EQ(CTP_WAIT_FD, 1);
  ASSERT_UINT64_EQ(CTP_WAIT_PTR, 2);
  ASSERT_UINT64_EQ(COROTRACER_WAIT_NONE, CTP_WAIT_NONE);
  ASSERT_UINT64_EQ(COROTRACER_WAIT_FD, CTP_WAIT_FD);
  ASSERT_UINT64_EQ(COROTRACER_WAIT_PTR, CTP_WAIT_PTR);
  ASSERT_UINT64_EQ(CTP_STF_EXT, 1);
  ASSERT_UINT64_EQ(CTP_STF_LABEL, 2);

  /* Event index of a stable slot: (seq/2 - 1) * 8 + slot. */
  ASSERT_UINT64_EQ(ctp_event_index(2, 0), 0);
  ASSERT_UINT64_EQ(ctp_event_index(2, 7), 7);
  ASSERT_UINT64_EQ(ctp_event_index(4, 3), 11);
  ASSERT_UINT64_EQ(ctp_event_index(10, 1), 33);

  printf("layout: %zu fields and the constants match the documents\n",
         sizeof fields / sizeof fields[0]);
  return 0;
}
