/* ctp.h - the cTP v1 shared-memory layout, plus corotracer's extensions.
 *
 * This is the one header shared by the probe (writer, linked into the target)
 * and the engine (reader). Every v1 offset and size is pinned with
 * _Static_assert. Extensions live only in bytes that v1 leaves zero, so an SDK
 * written for the reference engine works with ours and ours with theirs.
 * docs/PROTOCOL.md explains each field: who writes it, when, with what ordering.
 *
 * All multi-byte fields are little-endian (we only build for little-endian
 * targets; see the _Static_assert at the bottom).
 */
#ifndef CTP_H
#define CTP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define CTP_MAGIC 0x434F524F54524352ULL /* "COROTRCR" read as big-endian ASCII */
#define CTP_VERSION 1u
#define CTP_HEADER_SIZE 1024u
#define CTP_STATION_SIZE 1024u
#define CTP_SLOTS 8u
#define CTP_SLOT_SIZE 64u
#define CTP_LABEL_MAX 64u /* bytes of the label area, NUL included */

/* Environment handed to the target by the engine. */
#define CTP_ENV_SHM "CTP_SHM_PATH"
#define CTP_ENV_SOCK "CTP_SOCK_PATH"
#define CTP_ENV_STATIONS "CTP_MAX_STATIONS"

/* Most stations a trace may have: the engine's `--stations` limit (1 Mi
 * stations is a 1 GiB file), and the highest CTP_MAX_STATIONS a probe accepts. */
#define CTP_STATIONS_MAX (1u << 20)

/* Size of a v1 file for n stations. */
#define CTP_FILE_SIZE(n) ((uint64_t)CTP_HEADER_SIZE + (uint64_t)(n)*CTP_STATION_SIZE)

/* ---- extension values (all zero in a v1 writer) ------------------------- */

/* ctp_slot.kind: what the event is. 0 = written by a v1 SDK: derive suspend or
 * resume from is_active. */
enum ctp_kind {
  CTP_KIND_V1 = 0,
  CTP_KIND_CREATE = 1,  /* is_active 0, addr = creation site, obj = parent id */
  CTP_KIND_SUSPEND = 2, /* is_active 0, addr = suspension site, obj = wait object */
  CTP_KIND_RESUME = 3,  /* is_active 1, addr = 0 (v1 rule) */
  CTP_KIND_WAKE = 4,    /* is_active 0, addr = wake site, obj = waker id (0: a thread) */
  CTP_KIND_DESTROY = 5, /* is_active 0, addr = destroy site */
  CTP_KIND_MAX_ = 6,    /* events' kinds are below it */
  /* v2 ring records only (never a slot's kind, nor an event's): one
   * corotracer_switch, its three events in one record (struct ctp_swrec). */
  CTP_KIND_SWITCH = 7,
  /* v2 ring records only, under CTP_MODE_PACK: a pack of hot switches
   * (struct ctp_pack) and its continuation records (docs/ROUTE1.md). */
  CTP_KIND_PACK = 8
};

/* ctp_slot.wait_kind: what obj means on a SUSPEND. */
enum ctp_wait {
  CTP_WAIT_NONE = 0,
  CTP_WAIT_FD = 1,        /* obj = file descriptor */
  CTP_WAIT_PTR = 2,       /* obj = address of a wait object (mutex, channel, ...) */
  CTP_WAIT_EXIT = 3,      /* the final suspend: the coroutine returned (obj 0) */
  CTP_WAIT_COROUTINE = 4, /* obj = probe_id of the coroutine it waits for (join, await) */
  CTP_WAIT_MAX_ = 5
};

/* ctp_station.ext_flags bits. */
#define CTP_STF_EXT 0x1u   /* ext fields (ev_claimed, create_site, ...) are valid */
#define CTP_STF_LABEL 0x2u /* label[] holds a NUL-terminated name */
#define CTP_STF_RINGS 0x4u /* v2: this station's events are in rings, its slots stay unused */

/* ctp_header.mode bits (our engine only; zero from any other). */
#define CTP_MODE_LOSSLESS 0x1u /* a writer waits (bounded) for room instead of overwriting */
#define CTP_MODE_RINGS 0x2u    /* v2 offered: per-thread rings, station reuse (ctp_v2 below) */
/* v2, flight recorder (never with LOSSLESS): a writer whose ring is full
 * overwrites its oldest unread records instead of dropping the new one: it
 * moves tail past them with a CAS, and the engine moves tail with a CAS too
 * (docs/PROTOCOL.md "Overwrite mode"). */
#define CTP_MODE_OVERWRITE 0x4u
/* v2, binary trace only (never with OVERWRITE): a writer may encode a
 * scheduler's hot switches into packs (struct ctp_pack, docs/ROUTE1.md). */
#define CTP_MODE_PACK 0x8u

/* ctp_header.ext_magic, written by our engine: "CTX1". */
#define CTP_EXT_MAGIC 0x31585443u
/* ctp_header.ext_version. 2: the engine acknowledges each connection with one
 * byte once it has written that process's module lines (docs/PROTOCOL.md). */
#define CTP_EXT_VERSION 2u

/* ---- the layout ---------------------------------------------------------- */

/* Event slot ("Epoch"): 64 bytes, one cache line. */
struct ctp_slot {
  uint64_t timestamp;   /* 0x00 ns, CLOCK_MONOTONIC */
  uint64_t tid;         /* 0x08 OS thread id of the writer */
  uint64_t addr;        /* 0x10 v1: site on suspend, 0 on resume */
  _Atomic uint64_t seq; /* 0x18 seqlock: odd = being written */
  /* 0x20..0x3E: reserved in v1; ours: */
  uint8_t kind;         /* 0x20 enum ctp_kind */
  uint8_t wait_kind;    /* 0x21 enum ctp_wait */
  uint16_t flags;       /* 0x22 reserved, 0 */
  uint32_t aux;         /* 0x24 reserved, 0 */
  uint64_t obj;         /* 0x28 kind-dependent: wait object, parent id, waker id */
  uint8_t reserved[15]; /* 0x30 zero */
  uint8_t is_active;    /* 0x3F 1 = running, 0 = not */
};

/* Station: 1024 bytes, one coroutine owns it for life. */
struct ctp_station {
  uint64_t probe_id; /* 0x000 unique id of the coroutine */
  uint64_t birth_ts; /* 0x008 creation time, ns, CLOCK_MONOTONIC */
  uint8_t is_dead;   /* 0x010 1 once destroyed */
  /* 0x011..0x03F: pad, zero in v1; ours: */
  uint8_t pad0[3];             /* 0x011 zero */
  _Atomic uint32_t ext_flags;  /* 0x014 CTP_STF_*, release-stored after the ext fields */
  _Atomic uint64_t ev_claimed; /* 0x018 events claimed so far (fetch_add cursor) */
  uint64_t create_site;        /* 0x020 code address where the coroutine was created */
  uint64_t parent_id;          /* 0x028 probe_id of the creator, 0 if a plain thread */
  uint32_t pid;                /* 0x030 process that owns the station */
  uint32_t gen;                /* 0x034 v2: incarnation, probe bumps on reuse (1 = first) */
  _Atomic uint64_t
      harvested_ev; /* 0x038 engine: every event index below it is copied or counted lost */
  struct ctp_slot slots[CTP_SLOTS]; /* 0x040 ring: event k goes to slot k % 8 */
  /* 0x240..0x3FF: flexible, zero in v1; ours: */
  char label[CTP_LABEL_MAX]; /* 0x240 NUL-terminated short name (CTP_STF_LABEL) */
  /* v2: events of this station a writer dropped (ring full, no ring), all
   * incarnations; rare path, fetch_add by any writer. */
  _Atomic uint64_t v2_lost; /* 0x280 */
  uint8_t flexible[376];    /* 0x288 zero, reserved */
};

/* Global header: 1024 bytes at offset 0. */
struct ctp_header {
  uint64_t magic;                   /* 0x000 CTP_MAGIC */
  uint32_t version;                 /* 0x008 CTP_VERSION */
  uint32_t max_stations;            /* 0x00C N */
  _Atomic uint32_t allocated_count; /* 0x010 station allocation cursor */
  _Atomic uint32_t tracer_sleeping; /* 0x014 1 = engine asleep, wants a byte */
  /* 0x018..0x3FF: reserved, zero in v1; ours: */
  uint32_t ext_magic;             /* 0x018 CTP_EXT_MAGIC when the engine is ours */
  uint32_t ext_version;           /* 0x01C CTP_EXT_VERSION */
  uint64_t engine_pid;            /* 0x020 pid of the engine */
  _Atomic uint32_t attached;      /* 0x028 processes that attached (probe fetch_add) */
  _Atomic uint32_t overflow;      /* 0x02C coroutines left untraced: no station free */
  uint32_t mode;                  /* 0x030 CTP_MODE_* bits, set before the target starts */
  uint32_t lossless_ms;           /* 0x034 longest lossless wait of one event, ms */
  _Atomic uint32_t harvest_epoch; /* 0x038 futex word: engine adds 1 and wakes waiting writers */
  _Atomic uint32_t waiters;       /* 0x03C writers waiting for room (lossless mode) */
  /* 0x040..0x07F: v2 (CTP_MODE_RINGS), written by the engine before the
   * target starts, except the two cursors. Offsets are from the file start. */
  uint32_t clock;               /* 0x040 enum ctp_clock: what ctp_rec.ts counts */
  uint32_t ring_count;          /* 0x044 rings in the file */
  uint32_t ring_bytes;          /* 0x048 record area of one ring: power of two, >= 4 KiB */
  _Atomic uint32_t rings_fresh; /* 0x04C rings never owned: claim cursor (probe fetch_add) */
  uint64_t rings_off;           /* 0x050 ring 0 (each ring CTP_RING_HDR + ring_bytes) */
  uint64_t station_q_off;       /* 0x058 free-station queue (max_stations entries) */
  uint64_t ring_q_off;          /* 0x060 free-ring queue (ring_count entries) */
  _Atomic uint32_t no_ring;     /* 0x068 threads that found no ring (their events lost) */
  _Atomic uint32_t napping;     /* 0x06C 1 = engine napping between passes: a writer past a quarter
                                 * of its ring may take it (1 -> 0) and send a byte (a hint) */
  uint64_t v2_size;             /* 0x070 bytes of the whole file, v2 areas included */
  /* 0x078..0x087: text sites (corotracer_site), our engine only; zero: none. */
  uint64_t sites_off;          /* 0x078 the text-site area (CTP_SITES_BYTES), from the file start */
  uint32_t sites_bytes;        /* 0x080 its size */
  _Atomic uint32_t sites_used; /* 0x084 bytes claimed (probe fetch_add; may pass sites_bytes) */
  uint8_t reserved[888];       /* 0x088 zero, reserved */
};

/* ---- v2: per-thread rings, station reuse (docs/PROTOCOL.md "v2") ---------- */

/* ctp_header.clock. */
enum ctp_clock {
  CTP_CLOCK_MONO = 0,  /* ns, CLOCK_MONOTONIC (vDSO) */
  CTP_CLOCK_TSC = 1,   /* x86-64 rdtsc ticks; the engine converts to CLOCK_MONOTONIC ns */
  CTP_CLOCK_CNTVCT = 2 /* AArch64 cntvct_el0 ticks; likewise */
};

/* One event in a ring: 32 bytes, written with plain stores by the ring's one
 * writer, published by the release store of ctp_ring.head. */
struct ctp_rec {
  uint64_t ts;      /* 0x00 ticks of ctp_header.clock */
  uint32_t station; /* 0x08 station index (< max_stations, checked by the reader) */
  uint16_t gen;     /* 0x0C low 16 bits of the station's gen when written */
  uint8_t kind;     /* 0x0E enum ctp_kind (never CTP_KIND_V1) */
  uint8_t wait;     /* 0x0F enum ctp_wait (suspend) */
  uint64_t site;    /* 0x10 code address (0 on resume) */
  uint64_t obj;     /* 0x18 as ctp_slot.obj: wait object, parent id, waker id */
};

/* A switch (kind CTP_KIND_SWITCH): a ctp_rec whose last 8 bytes hold the
 * coroutine switched to, so that one record carries what the probe would
 * write as three (the suspend of `from` with wait, site, obj; with
 * CTP_SW_WAKE its wake, same site, waker 0; the resume of `to`), all at ts,
 * in that order. A probe writes it only when both coroutines are given, obj
 * fits in 16 bits and the wake's waker is 0 (a scheduler loop's switch);
 * else the three records. */
struct ctp_swrec {
  uint64_t ts;       /* 0x00 as ctp_rec.ts */
  uint32_t from;     /* 0x08 station of the coroutine leaving */
  uint16_t from_gen; /* 0x0C its gen's low 16 bits */
  uint8_t kind;      /* 0x0E CTP_KIND_SWITCH */
  uint8_t wait;      /* 0x0F enum ctp_wait of from's suspend, | CTP_SW_WAKE */
  uint64_t site;     /* 0x10 from's suspension (and wake) site */
  uint32_t to;       /* 0x18 station of the coroutine resumed */
  uint16_t to_gen;   /* 0x1C its gen's low 16 bits */
  uint16_t obj;      /* 0x1E the suspend's wait object */
};
#define CTP_SW_WAKE 0x80u      /* ctp_swrec.wait: `from` stays runnable, its wake follows */
#define CTP_SW_OBJ_MAX 0xffffu /* largest obj a switch record holds */

/* A pack (kind CTP_KIND_PACK, docs/ROUTE1.md): a run of one thread's hot
 * switches, as 1 + nrec ring records published together. This header is the
 * first; the nrec that follow hold nbytes of entries, each: varint v, with
 * v & CTP_PK_PLAIN a plain entry (wait none, no obj, no explicit `from`)
 * whose bit 1 is its wake and v >> 2 its delta, else flags b = v >> 1 (bits
 * 0-2 the wait, CTP_PK_*) and a varint delta; the
 * delta is ticks since the previous entry (0 for the first); then varint
 * zigzag(`to` - `from`) (stations), varint `from` station when CTP_PK_FROM
 * (else the previous entry's `to`, the header's `from` for the first),
 * varint obj when CTP_PK_OBJ, varint zigzag(obj - the last obj an earlier
 * entry of the pack gave, 0 before any) when CTP_PK_ODELTA (an obj past
 * 0xffff; never with CTP_PK_OBJ), varint zigzag(the entry's site - site) when
 * CTP_PK_SITE (at most CTP_PK_SITE_NEAR away; else the entry is at site). A
 * CTP_PK_SOLO entry is a standalone wake (corotracer_wake): one event, the
 * wake of `to` by `from` (the running coroutine, which stays the current one),
 * no wait, obj or wake bits. A pack is self-contained: nothing in it refers
 * to another. Events: 2 x nent + nwake - nsolo (ctp_pack_events). */
struct ctp_pack {
  uint64_t ts0;      /* 0x00 ticks of the first entry */
  uint32_t from;     /* 0x08 station of the first entry's `from` */
  uint16_t from_gen; /* 0x0C its gen's low 16 bits */
  uint8_t kind;      /* 0x0E CTP_KIND_PACK */
  uint8_t nrec;      /* 0x0F continuation records (< CTP_PACK_RECS) */
  uint64_t site;     /* 0x10 every entry's suspension site */
  union {
    struct {
      uint32_t span;  /* 0x18 ticks from ts0 to the last entry */
      uint8_t nbytes; /* 0x1C entry bytes (<= 32 * nrec) */
      uint8_t nent;   /* 0x1D entries (>= 1) */
      uint8_t nwake;  /* 0x1E entries with a wake */
      uint8_t nsolo;  /* 0x1F standalone wakes (CTP_PK_SOLO; <= nent; old writers 0) */
    };
    /* The four as one word: while the pack is open the writer release-stores
     * it after each entry (ctp_ring.open), the engine acquire-loads it. */
    uint64_t counts; /* 0x18 */
  };
};
#define CTP_PACK_RECS 8u                            /* records of a pack at most */
#define CTP_PACK_BYTES ((CTP_PACK_RECS - 1u) * 32u) /* entry bytes at most: 224 */
#define CTP_PK_WAIT 0x07u                           /* entry byte: enum ctp_wait */
#define CTP_PK_WAKE 0x08u                           /* `from` stays runnable: its wake follows */
#define CTP_PK_OBJ 0x10u                            /* a varint obj follows */
#define CTP_PK_FROM 0x20u                           /* a varint `from` station follows */
#define CTP_PK_ODELTA 0x40u                         /* varint zigzag(obj - the last obj) follows */
#define CTP_PK_SITE 0x80u                           /* varint zigzag(site - the pack's) follows */
#define CTP_PK_SOLO 0x100u /* a standalone wake: `to` woken by `from`, which runs on */
#define CTP_PK_PLAIN 0x01u /* first varint's low bit: a plain entry, the rest its delta */
/* How far an entry's own site (CTP_PK_SITE) may be from its pack's: a pack's
 * sites are one loop's, the header's site is the one the engine looks up
 * module lines for, and a site this near is in the same mapping. */
#define CTP_PK_SITE_NEAR 0xffffu

/* Events of pack pk as its header counts them: each entry a suspend and a
 * resume, a wake more when nwake counts it, a standalone wake one event
 * (nsolo; a header with more than nent is refused by every reader, and
 * counted here as nent). */
static inline uint32_t ctp_pack_events(const struct ctp_pack *pk) {
  return 2u * pk->nent + pk->nwake - (pk->nsolo <= pk->nent ? pk->nsolo : pk->nent);
}

/* ctp_ring.state. */
enum ctp_ring_state {
  CTP_RING_FREE = 0,  /* in the free-ring queue, or never owned */
  CTP_RING_OWNED = 1, /* a live thread writes it */
  CTP_RING_CLOSED = 2 /* its thread exited: the engine drains it, then frees it */
};

/* Ring header: two cache lines, the writer's and the engine's, then the
 * record area (ring_bytes). head and tail only grow (record counts since the
 * file was made, never reset): record i is at (i % cap) * 32, cap =
 * ring_bytes / 32; head - tail <= cap. */
#define CTP_RING_HDR 128u
struct ctp_ring {
  /* writer's line */
  _Atomic uint64_t head;     /* 0x00 records published (release store, one writer) */
  _Atomic uint64_t lost;     /* 0x08 records dropped, ring full (writer; published by head) */
  uint32_t pid;              /* 0x10 owner process */
  uint32_t tid;              /* 0x14 owner thread (gettid) */
  _Atomic uint32_t state;    /* 0x18 enum ctp_ring_state (release store by the writer) */
  uint32_t owner_gen;        /* 0x1C ownerships so far, bumped by each new owner */
  _Atomic uint64_t ev_extra; /* 0x20 events beyond one a record: a switch record's 1 or 2 more
                              * (writer, relaxed; for corotracer_stats) */
  _Atomic uint64_t open;     /* 0x28 under CTP_MODE_PACK: 1 + the index of the record where the
                              * thread's open pack starts, its header (0: none yet). Release-
                              * stored once a pack, after the header and first entry; the pack
                              * is open while head is that index (docs/ROUTE1.md "Latency") */
  uint8_t pad_w[16];         /* 0x30 zero */
  /* engine's line */
  _Atomic uint64_t tail; /* 0x40 records consumed (release store, engine) */
  uint8_t pad_e[56];     /* 0x48 zero */
};

/* A free-index queue (stations, rings): one producer, the engine, which
 * pushes an index only after it has drained everything written under it;
 * many consumers, the probes, which claim with a CAS on head. head and tail
 * only grow (64-bit: no ABA); entry i is at ent[i % cap]. */
struct ctp_queue {
  _Atomic uint64_t head;  /* 0x00 entries taken (probe CAS) */
  uint8_t pad_h[56];      /* 0x08 */
  _Atomic uint64_t tail;  /* 0x40 entries pushed (engine release store) */
  uint8_t pad_t[56];      /* 0x48 */
  _Atomic uint32_t ent[]; /* 0x80 cap entries (cap = max_stations or ring_count) */
};
/* Of n stations, when so few are left (never allocated plus queued free) that
 * the engine must release destroyed ones now: an eighth, at least 64. A
 * create under v2 that takes a fresh station past this mark nudges a napping
 * engine; the engine wakes its formatter for them (docs/PROTOCOL.md "Station
 * reuse"). */
#define CTP_STATIONS_LOW(n) ((n) / 8 > 64 ? (n) / 8 : 64)
#define CTP_QUEUE_SIZE(cap) (((uint64_t)128 + (uint64_t)(cap)*4 + 63) & ~(uint64_t)63)
#define CTP_RING_SIZE(bytes) ((uint64_t)CTP_RING_HDR + (uint64_t)(bytes))
#define CTP_RING_BYTES_MIN 4096u
#define CTP_RING_BYTES_MAX (64u << 20)
#define CTP_RINGS_MAX 4096u

/* ---- text sites (docs/PROTOCOL.md "Text sites") ---------------------------- */

/* A site with this bit set is no code address but a text site: the offset of
 * its record in the text-site area (user-space code addresses never have it). */
#define CTP_SITE_TEXT (UINT64_C(1) << 63)
/* The area's size, set by our engine. */
#define CTP_SITES_BYTES (1u << 20)
/* Longest file or function name a record keeps (bytes, NUL excluded). */
#define CTP_SITE_NAME_MAX 255u

/* One text site: 8-byte aligned in the area, at the offset the probe claimed.
 * The probe writes line, pid and text (file NUL function NUL), then
 * release-stores len (the record's bytes, a multiple of 8): 0 is "not yet
 * written". The engine acquire-loads len and checks every field against the
 * area before use. */
struct ctp_site_rec {
  _Atomic uint32_t len; /* 0x00 */
  uint32_t line;        /* 0x04 */
  uint32_t pid;         /* 0x08 */
  uint32_t pad;         /* 0x0C zero */
  char text[];          /* 0x10 file NUL function NUL, zero-padded to len */
};

/* ---- every offset and size, pinned -------------------------------------- */
/* Field f of struct s at offset off; the message names both. */
#define CTP_PIN(s, f, off) _Static_assert(offsetof(struct s, f) == (off), #s "." #f);
/* Each struct's layout as a list of (field, offset), expanded by CTP_PIN; a
 * few fields per line, in offset order, as in the structs. */
// clang-format off
#define CTP_SLOT_LAYOUT(X, s) \
  X(s, timestamp, 0x00) X(s, tid, 0x08) X(s, addr, 0x10) X(s, seq, 0x18) \
  X(s, kind, 0x20) X(s, wait_kind, 0x21) X(s, flags, 0x22) X(s, aux, 0x24) \
  X(s, obj, 0x28) X(s, reserved, 0x30) X(s, is_active, 0x3F)
#define CTP_STATION_LAYOUT(X, s) \
  X(s, probe_id, 0x000) X(s, birth_ts, 0x008) X(s, is_dead, 0x010) X(s, pad0, 0x011) \
  X(s, ext_flags, 0x014) X(s, ev_claimed, 0x018) X(s, create_site, 0x020) X(s, parent_id, 0x028) \
  X(s, pid, 0x030) X(s, gen, 0x034) X(s, harvested_ev, 0x038) X(s, slots, 0x040) \
  X(s, label, 0x240) X(s, v2_lost, 0x280) X(s, flexible, 0x288)
#define CTP_HEADER_LAYOUT(X, s) \
  X(s, magic, 0x000) X(s, version, 0x008) X(s, max_stations, 0x00C) X(s, allocated_count, 0x010) \
  X(s, tracer_sleeping, 0x014) X(s, ext_magic, 0x018) X(s, ext_version, 0x01C) X(s, engine_pid, 0x020) \
  X(s, attached, 0x028) X(s, overflow, 0x02C) X(s, mode, 0x030) X(s, lossless_ms, 0x034) \
  X(s, harvest_epoch, 0x038) X(s, waiters, 0x03C) X(s, clock, 0x040) X(s, ring_count, 0x044) \
  X(s, ring_bytes, 0x048) X(s, rings_fresh, 0x04C) X(s, rings_off, 0x050) X(s, station_q_off, 0x058) \
  X(s, ring_q_off, 0x060) X(s, no_ring, 0x068) X(s, napping, 0x06C) X(s, v2_size, 0x070) \
  X(s, sites_off, 0x078) X(s, sites_bytes, 0x080) X(s, sites_used, 0x084) X(s, reserved, 0x088)
#define CTP_REC_LAYOUT(X, s) \
  X(s, ts, 0x00) X(s, station, 0x08) X(s, gen, 0x0C) X(s, kind, 0x0E) \
  X(s, wait, 0x0F) X(s, site, 0x10) X(s, obj, 0x18)
#define CTP_SWREC_LAYOUT(X, s) \
  X(s, ts, 0x00) X(s, from, 0x08) X(s, from_gen, 0x0C) X(s, kind, 0x0E) \
  X(s, wait, 0x0F) X(s, site, 0x10) X(s, to, 0x18) X(s, to_gen, 0x1C) X(s, obj, 0x1E)
#define CTP_PACK_LAYOUT(X, s) \
  X(s, ts0, 0x00) X(s, from, 0x08) X(s, from_gen, 0x0C) X(s, kind, 0x0E) X(s, nrec, 0x0F) \
  X(s, site, 0x10) X(s, span, 0x18) X(s, nbytes, 0x1C) X(s, nent, 0x1D) X(s, nwake, 0x1E) \
  X(s, nsolo, 0x1F) X(s, counts, 0x18)
#define CTP_RING_LAYOUT(X, s) \
  X(s, head, 0x00) X(s, lost, 0x08) X(s, pid, 0x10) X(s, tid, 0x14) \
  X(s, state, 0x18) X(s, owner_gen, 0x1C) X(s, ev_extra, 0x20) X(s, open, 0x28) \
  X(s, pad_w, 0x30) X(s, tail, 0x40)
#define CTP_QUEUE_LAYOUT(X, s) \
  X(s, head, 0x00) X(s, tail, 0x40) X(s, ent, 0x80)
#define CTP_SITE_REC_LAYOUT(X, s) \
  X(s, len, 0x00) X(s, line, 0x04) X(s, pid, 0x08) X(s, pad, 0x0C) X(s, text, 0x10)
// clang-format on

_Static_assert(sizeof(struct ctp_slot) == 64, "ctp_slot size");
CTP_SLOT_LAYOUT(CTP_PIN, ctp_slot)
_Static_assert(sizeof(struct ctp_station) == 1024, "ctp_station size");
CTP_STATION_LAYOUT(CTP_PIN, ctp_station)
_Static_assert(sizeof(struct ctp_header) == 1024, "ctp_header size");
CTP_HEADER_LAYOUT(CTP_PIN, ctp_header)
_Static_assert(sizeof(struct ctp_rec) == 32, "ctp_rec size");
CTP_REC_LAYOUT(CTP_PIN, ctp_rec)
_Static_assert(sizeof(struct ctp_swrec) == sizeof(struct ctp_rec), "ctp_swrec size");
CTP_SWREC_LAYOUT(CTP_PIN, ctp_swrec)
_Static_assert(sizeof(struct ctp_pack) == sizeof(struct ctp_rec), "ctp_pack size");
CTP_PACK_LAYOUT(CTP_PIN, ctp_pack)
_Static_assert(CTP_PACK_BYTES <= 255u, "ctp_pack.nbytes is a byte");
_Static_assert(sizeof(struct ctp_ring) == CTP_RING_HDR, "ctp_ring size");
CTP_RING_LAYOUT(CTP_PIN, ctp_ring)
_Static_assert(sizeof(struct ctp_queue) == 128, "ctp_queue size");
CTP_QUEUE_LAYOUT(CTP_PIN, ctp_queue)
_Static_assert(sizeof(struct ctp_site_rec) == 16, "ctp_site_rec size");
CTP_SITE_REC_LAYOUT(CTP_PIN, ctp_site_rec)

/* The atomics must be plain lock-free words, or the layout means nothing. */
_Static_assert(sizeof(_Atomic uint64_t) == 8 && sizeof(_Atomic uint32_t) == 4, "atomic sizes");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2, "lock-free atomics");
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "cTP is little-endian; big-endian targets are not supported"
#endif

/* Station i of a mapping that starts at base. */
static inline struct ctp_station *ctp_station_at(void *base, uint32_t i) {
  return (struct ctp_station *)((char *)base + CTP_HEADER_SIZE + (size_t)i * CTP_STATION_SIZE);
}

/* v2 areas of a mapping that starts at base (offsets from the header; the
 * reader checks them against the file size before use). */
static inline struct ctp_ring *ctp_ring_at(void *base, const struct ctp_header *h, uint32_t r) {
  return (struct ctp_ring *)((char *)base + h->rings_off +
                             (uint64_t)r * CTP_RING_SIZE(h->ring_bytes));
}
static inline struct ctp_rec *ctp_ring_recs(struct ctp_ring *ring) {
  return (struct ctp_rec *)((char *)ring + CTP_RING_HDR);
}
static inline struct ctp_queue *ctp_queue_at(void *base, uint64_t off) {
  return (struct ctp_queue *)((char *)base + off);
}

/* Event index of the write that left `seq` (even, > 0) in slot `slot`:
 * seq / 2 writes have reached that slot, event k lands in slot k % 8. */
static inline uint64_t ctp_event_index(uint64_t seq, unsigned slot) {
  return (seq / 2 - 1) * CTP_SLOTS + slot;
}

#endif /* CTP_H */
