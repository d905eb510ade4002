/* harvest.h - the harvest's state and passes: v1 stations (harvest.c), v2 rings (rings.c). */
#ifndef CT_ENGINE_HARVEST_H
#define CT_ENGINE_HARVEST_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ctp.h"
#include "engine/clock.h"

struct ct_procs;
struct ct_sink;
struct ct_writer;
struct ct_station_state {
  /* The formatter's fields of every v2 record (rings_format.c's emit_hit,
   * switch_entry), first: with the struct 64-byte aligned, one cache line a
   * station instead of two or three (a switch reads two stations; perf, a
   * round robin on 2 threads: their misses were a third of emit_switch). */
  uint64_t probe_id;
  uint64_t next_ev; /* index after the last event line written (v2: of this incarnation) */
  uint64_t last_ts; /* v2: ts of the incarnation's last event line */
  uint64_t dropped; /* v2: the station's v2_lost when last read */
  uint64_t harvested;
  uint32_t gen; /* v2: the incarnation whose records we attribute */
  uint32_t pid;
  uint8_t live;      /* v2: an incarnation was created (coroutine line written) */
  uint8_t queued;    /* v2: pushed on the free-station queue, not created again since */
  uint8_t destroyed; /* v2: that incarnation's destroy was harvested */
  uint8_t coro_done; /* coroutine line written */
  uint8_t c_corrupt; /* the same, found by the formatter (v2 counters) */
  uint8_t ext;       /* CTP_STF_EXT seen */
  uint8_t retired;   /* dead and fully harvested: skipped by live scans */
  uint8_t dead;
  uint8_t v2;      /* CTP_STF_RINGS seen: its events are in rings, not in slots */
  uint8_t listed;  /* in the v1 scan list */
  uint8_t corrupt; /* its memory held what cannot be true (harvest thread's finding) */
  uint64_t last_seq[CTP_SLOTS];
  uint64_t events; /* highest event index seen + 1; final: events the probe wrote */
  uint64_t room;   /* last value stored in the station's harvested_ev */
  uint64_t stale;  /* v2: records of a past incarnation */
} __attribute__((aligned(64)));
_Static_assert(offsetof(struct ct_station_state, corrupt) < 64,
               "the formatter's fields in one line");

/* The engine's own view of one ring (never re-read from the file). */
struct ct_ring_state {
  uint64_t tail; /* records consumed */
  uint64_t lost; /* the ring's lost counter, last read */
  /* The sites (of pid) its records last named, modules covered: a few, as
   * a loop's records name a few sites in turn (suspend, wake, ...). */
#define CT_RING_SITES 4
  uint64_t sites[CT_RING_SITES];
  uint64_t last_site; /* of sites[], the one the last record named (watch) */
  uint32_t sites_pid, next_site;
  uint8_t queued;    /* pushed on the free-ring queue, not owned since */
  uint8_t orphan;    /* its owner process is gone (connection EOF): CLOSED for us */
  uint8_t corrupt;   /* its header held what cannot be true: its lost count is left out */
  uint64_t lost_sum; /* what its lost counter added to ring_lost */
  /* Its open pack (rings_open.c): ring->open and the pack's counts as the
   * last pass saw them (unchanged a pass: taken), and the pack whose first
   * taken_nent entries were taken while it was open (header index), the
   * ticks of the last of them. */
  uint64_t open_seen, open_counts, taken_at, taken_last;
  uint32_t taken_nent;
};

/* A record copied out of a ring in this pass. */
struct ct_rrec {
  struct ctp_rec r;
  uint32_t tid; /* ties of ts keep capture order (sort_pass) */
};

/* Time-ordered runs of one pass merged from the capture blocks in place. */
#define CT_RUNS_MAX 64u
struct ct_harvest {
  struct ctp_header *hdr;
  void *base;
  uint32_t n;                  /* stations in the file */
  uint32_t used;               /* highest min(allocated_count, n) seen (bounded: used_now) */
  uint32_t init_hi;            /* stations [0, init_hi) seen initialized by their creator */
  struct ct_station_state *st; /* n of them, 64-byte aligned in st_mem */
  void *st_mem;
  uint64_t trim_mark; /* used + incarnations at the last trim of the station pages */
  uint64_t trim_ns;   /* CLOCK_MONOTONIC of that trim */
  uint32_t *v1list;   /* stations not known to be v2, scanned for slots */
  uint32_t nv1, capv1;
  struct ct_procs *procs;
  struct ct_sink *sink;
  struct ct_writer *w; /* the sink's text writer */
  uint64_t harvested, live_lost, torn;
  uint64_t late;     /* stable events older than one already written: lost */
  uint64_t peak;     /* last scan: most new event indexes on one station (ring: scaled to 8) */
  int progress;      /* last scan: some station's harvested_ev, or a ring's tail, moved */
  int lossless;      /* --lossless: publish harvested_ev, wake waiters */
  int overwrite;     /* v2 under --flight: writers take full rings' oldest records (rings.c) */
  int pack;          /* v2 under --pack: rings hold packs (docs/ROUTE1.md) */
  uint64_t first_ts; /* last scan: oldest timestamp written (UINT64_MAX: none) */
  int v1_seen;       /* some v1 slot event was harvested (the nap stays v1's) */
  /* v2 (CTP_MODE_RINGS), from our own copies of the layout. */
  int rings;
  uint32_t nrings, cap; /* rings, records per ring */
  uint64_t ring_size;
  char *ring_base;
  struct ctp_queue *sq, *rq;
  uint64_t sq_tail, rq_tail;
  struct ct_ring_state *rs;
  struct ct_clock *clock;
  struct ct_rrec *batch, *merge; /* merge: sort_pass's other half */
  size_t nbatch, capbatch, capmerge;
  /* The pass so far as time-ordered runs in the blocks the sink let us keep
   * (while nbatch is 0; past CT_RUNS_MAX runs or a block not to keep, they
   * are copied into the batch). kept: the last block holds some of them. */
  struct ct_run {
    const struct ctp_rec *p;
    uint32_t n, tid;
  } runs[CT_RUNS_MAX];
  unsigned nruns;
  /* The pass's packs (docs/ROUTE1.md): each one's bytes (header and
   * entries) at p, in a block the sink lets us keep until the pass is
   * written, or copied to pkb + off (p NULL) when it does not. pk_held: some
   * p point into held blocks (none may go back before the pass's end).
   * pk_runs: the packs came in more than one time-ordered run (a sort). */
  struct ct_pk {
    uint64_t ts0;
    const uint8_t *p;
    uint32_t off, len, tid, events;
  } * pks, *pks_tmp;
  size_t npks, cappks, cappks_tmp;
  uint8_t *pkb;
  size_t npkb, cappkb;
  int pk_held, pk_runs;
  /* --pack, losses (docs/ROUTE1.md item 4). Harvest thread: each station's
   * v2_lost as last sent (lost_seen, h->n of them once a ring lost), the
   * rings' lost counts' sum then, and lost_again: look once more (a writer
   * adds to its ring's count before its stations'). Formatter: the pass's
   * stations whose v2_lost grew, with the count (ct_rings_gaps). */
  uint64_t *lost_seen, *lost_s0, lost_sum; /* lost_s0: the counts before the copies */
  uint32_t lost_a;                         /* stations in lost_s0 (0: not looked) */
  int lost_again;
  struct ct_gap {
    uint32_t station, pad;
    uint64_t lost;
  } * gaps;
  size_t ngaps, capgaps;
  uint32_t *rel_now, *rel_prev; /* destroyed in this pass / the previous one */
  size_t nrel_now, nrel_prev, caprel_now, caprel_prev;
  uint32_t *rel_tmp; /* release's sort: its other half */
  size_t caprel_tmp;
  uint32_t rings_owned; /* last scan: rings in state OWNED */
  uint32_t populated;   /* rings [0, populated) are mapped in (ct_rings_populate) */
  int final;            /* the last pass: nothing held back */
  uint64_t stale, bad, gap, ring_lost, released, recycled;
  uint32_t incarnations;     /* v2 coroutines (coroutine lines) */
  _Atomic uint32_t v2_alive; /* v2 incarnations whose destroy was not written yet (formatter) */
  uint32_t v2_stations;      /* after ct_harvest_finish: stations that were v2 */
  uint64_t captured;         /* v2 records copied into the capture (harvest thread) */
  uint64_t creates;          /* create records among them (the station trim's count) */
  uint64_t destroys, destroys_seen; /* destroy records copied; as of the last pass */
  uint32_t overflow_seen;           /* the header's overflow at the last scan (a hint) */
  int release_due; /* the last pass copied destroys: wake the formatter at this one too */
  int pass_open;   /* the last pass captured records: end the next one too */
  /* The formatter thread's own (rings_format.c, the consumer half; read by the harvest
   * thread only after ct_sink_sync): the batch, rel_*, sq_tail, the v2
   * fields of st[], stale, bad, incarnations, released, and these. */
  uint64_t v2_harvested;  /* event lines written from rings */
  uint64_t pk_events;     /* events of the packs written: in no station_end line (the
                           * readers add them to the end's events), only the summary's */
  uint32_t c_used;        /* allocated stations, as far as the formatter knows */
  struct ct_clock cclock; /* the clock of the pass being written */
  /* Values of the shared memory that cannot be true (docs/ENGINE.md "Hostile
   * target"): how many were found (either thread), and the largest count any
   * counter can truthfully hold by now (ct_count_sane). */
  _Atomic uint64_t corrupt;
  uint64_t t0;            /* CLOCK_MONOTONIC at init */
  uint64_t sane;          /* updated each scan (relaxed atomic: the formatter reads it) */
  struct ctp_header hdr0; /* the header as the engine wrote it */
};

/* Most events per ns that all of a program's threads together can claim or
 * drop: far beyond any machine (the probe writes one per ~10 ns and thread),
 * so a count above it is a scribble, never a busy run. */
#define CT_EVENTS_PER_NS 16u
/* 1 when v can be a true count of events by now; counters the target wrote
 * over (random 64-bit words) almost never are. */
static inline int ct_count_sane(const struct ct_harvest *h, uint64_t v) {
  return v <= __atomic_load_n(&h->sane, __ATOMIC_RELAXED);
}
/* recs records of a ring of cap as the harvest loop's nap counts a ring's
 * fill (src/run/nap.h): in eighths, as a v1 station's 8 slots, rounded up. */
static inline uint64_t ct_ring_fill8(uint64_t recs, uint64_t cap) {
  return (recs * CTP_SLOTS + cap - 1) / cap;
}
/* a + b, saturating: totals of counts read from the target never wrap. */
static inline uint64_t ct_sat_add(uint64_t a, uint64_t b) {
  return a + b < a ? UINT64_MAX : a + b;
}
/* The shared memory held what cannot be true: counted, once per finding. */
static inline void ct_harvest_corrupt(struct ct_harvest *h) {
  atomic_fetch_add_explicit(&h->corrupt, 1, memory_order_relaxed);
}

/* Prepare to harvest the n stations (and, when the header offers v2, the
 * rings) of the mapping at base, of map_len bytes. h owns its per-station
 * state (ct_harvest_free); base, procs, sink and clock stay the caller's and
 * must outlive h. Returns 0, -ENOMEM, or -EINVAL when the v2 layout in the
 * header does not fit map_len. */
int ct_harvest_init(struct ct_harvest *h, void *base, size_t map_len, uint32_t n,
                    struct ct_procs *procs, struct ct_sink *sink, struct ct_clock *clock);
enum ct_scan {
  CT_SCAN_QUICK, /* live: skip a station whose ev_claimed shows nothing new */
  CT_SCAN_SLOTS, /* the re-scan of the sleep protocol: read every live slot */
  CT_SCAN_FULL   /* the final pass: every slot of every station, retired too */
};
/* One pass over the used stations and the rings; queues event lines.
 * Returns the number of stable events found. */
uint64_t ct_harvest_scan(struct ct_harvest *h, enum ct_scan mode);
/* After the final scan: compute per-station totals and write station_end
 * lines. */
void ct_harvest_finish(struct ct_harvest *h, uint64_t *events, uint64_t *lost);
/* Lossless writers wait for room: tell them there is some (bump
 * harvest_epoch, wake the waiters). Either thread. */
void ct_harvest_wake_waiters(struct ct_harvest *h);
/* After ct_harvest_finish: 1 when the header still holds what the engine
 * wrote (magic, layout, mode, zero reserved bytes) and the v2 queues' and
 * rings' padding is still zero; else the target wrote over them, and counts
 * read there (overflow, no_ring) mean nothing. Counts a finding. */
int ct_harvest_header_ok(struct ct_harvest *h);
/* Coroutines alive now, for the status line: v1 stations not dead, v2
 * incarnations harvested whose destroy was not (yet) harvested. Costs the v1
 * scan list, not the used stations: at 10^6 v2 coroutines a walk of the
 * station table every CT_STATUS_MS cost more than the whole harvest. */
uint32_t ct_harvest_live(const struct ct_harvest *h);
/* Free the per-station state; idempotent. */
void ct_harvest_free(struct ct_harvest *h);

/* Internal to harvest.c and rings.c. */
int ct_rings_init(struct ct_harvest *h, size_t map_len);
uint64_t ct_rings_scan(struct ct_harvest *h);
/* Maps in (MADV_POPULATE_WRITE) the rings up to POPULATE_AHEAD beyond the
 * first fresh ones, those not yet (harvest thread; fresh <= nrings). */
void ct_rings_populate(struct ct_harvest *h, uint32_t fresh);
/* Station i's v2 totals for its station_end line; adds to *events, *lost. */
void ct_rings_station_end(struct ct_harvest *h, uint32_t i, uint64_t *events, uint64_t *lost);
void ct_rings_free(struct ct_harvest *h);
/* After the final pass: 1 when the queues' and rings' padding is still zero;
 * a ring whose padding is not has its lost count taken back out of
 * ring_lost. Counts each finding. */
int ct_rings_clean(struct ct_harvest *h);
/* 1 when the bytes of station i that no writer touches are still zero. */
int ct_station_clean(const struct ct_harvest *h, uint32_t i);
/* Process pid detached (its connection reached EOF): its rings still OWNED
 * (a main thread runs no key destructors, a killed process none at all) are
 * drained and freed as if CLOSED (docs/PROTOCOL.md "v2"). */
void ct_rings_owner_gone(struct ct_harvest *h, uint32_t pid);
/* Make sure the module holding `site` of pid has been written (harvest.c). */
void ct_harvest_cover_site(struct ct_harvest *h, uint32_t pid, uint64_t site, uint64_t ts);

#endif /* CT_ENGINE_HARVEST_H */
