/* probe.h - state shared by the probe's attach code, its v1 station writer and
 * its v2 ring writer. */
#ifndef CT_PROBE_H
#define CT_PROBE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "common/ctp.h"

/* corotracer__probe.state: CT_UNINIT until the first call tries to attach, then
 * CT_TRACED or the negative errno that left the process untraced. */
#define CT_UNINIT 0
#define CT_TRACED 1

/* Longest lossless wait of one event we accept from the header (the
 * engine's --lossless-ms limit). */
#define CT_LOSSLESS_MS_MAX 600000u

/* Longest wait at attach for our engine's acknowledgement (module lines). */
#define CT_ACK_TIMEOUT_MS 1000

/* The process-wide probe. Written once by ct_attach (under pthread_once) before
 * state is release-stored as CT_TRACED; read-only afterwards, except by the
 * fork child handler, which runs alone in the child. */
struct ct_probe {
  _Atomic int state;
  int rings;              /* v2 negotiated (docs/PROTOCOL.md "Negotiation"): events go to rings */
  int use_ticks;          /* v2 with clock != CTP_CLOCK_MONO: ct_ticks() stamps the records */
  struct ctp_header *hdr; /* the whole MAP_SHARED file */
  uint64_t map_len;
  uint32_t nstations;
  uint32_t pid; /* getpid() at attach: the pid stamped on our stations and rings */
  /* v2 only: the areas, checked against the file at attach. */
  uint32_t ring_count;
  uint32_t ring_cap;    /* records per ring, a power of two */
  char *ring_base;      /* ring 0 */
  uint64_t ring_stride; /* CTP_RING_SIZE(ring_bytes) */
  struct ctp_queue *station_q, *ring_q;
  pthread_key_t ring_key; /* its destructor closes the thread's ring */
  /* Connected Unix stream socket, -1 when none. Atomic: the send path drops
   * it (stores -1) when the fd number no longer names our socket. */
  _Atomic int sock;
  uint64_t sock_dev, sock_ino; /* its identity, checked before each send */
  int lossless;                /* the engine set CTP_MODE_LOSSLESS */
  int overwrite;               /* v2, the engine set CTP_MODE_OVERWRITE (flight recorder) */
  int pack;                    /* v2, the engine set CTP_MODE_PACK: hot switches go to packs */
  uint32_t lossless_ms;        /* its bound on one wait */
  /* Lossless waits are skipped while the engine shows no progress after a
   * wait timed out: stalled says so, stall_epoch is harvest_epoch then. */
  _Atomic int stalled;
  _Atomic uint32_t stall_epoch;
  /* Rare-path counters (see corotracer_stats), on their own cache line: a drop
   * storm must not slow every event's read of state. */
  _Alignas(64) _Atomic uint64_t dropped;
  _Atomic uint64_t timeouts;          /* lossless waits that gave up */
  _Atomic uint64_t no_station;        /* creates that found no station (in dropped too) */
  _Atomic uint64_t ring_retired;      /* records published by our threads in rings they left */
  _Atomic uint64_t ring_retired_lost; /* records they dropped there, ring full */
  _Atomic uint64_t overwritten;       /* events written, then taken back (in the rings' lost) */
  _Atomic uint64_t corrupt;           /* impossible shared state found (tracing then stopped) */
};

extern struct ct_probe corotracer__probe;

/* Per-thread state, one TLS block (initial-exec: no __tls_get_addr call on
 * the hot path; the library is small enough for the static TLS surplus when
 * dlopen'ed). The ring fields are the v2 writer's private copies. */
struct ct_thread {
  struct ctp_ring *ring;   /* the ring this thread owns, or NULL */
  struct ctp_rec *recs;    /* its record area */
  uint64_t head;           /* records published (the ring's head, our copy) */
  uint64_t tail_room;      /* head may grow up to here: tail last seen + cap / 4 (then a look
                            * at tail, a nudge when past a quarter), or + cap */
  uint32_t mask;           /* cap - 1 */
  uint32_t ring_state;     /* CT_RING_* */
  uint32_t ring_idx;       /* ring's index in the file */
  uint32_t spare_skip;     /* default mode, ring full: drops left before the free rings are
                            * looked at again (ring.c ct_ring_spare_due) */
  uint32_t spare_blind;    /* default mode: spare rings taken in a row while the engine showed
                            * no progress (ring.c ct_ring_spare) */
  uint64_t claim_tail;     /* the ring's tail when this thread claimed it */
  uint64_t spare_qtail;    /* the free-ring queue's tail when progress was last seen */
  uint64_t tid;            /* gettid(), fetched once per thread */
  struct ctp_station *cur; /* coroutine running on this thread, or NULL */
  uint64_t cur_id;         /* its probe_id (0 when cur is NULL) */
  /* The open pack (CTP_MODE_PACK, docs/ROUTE1.md): our copy of its header
   * (nent 0: no pack open), the header's record in the ring and its entry
   * bytes there (records reserved beyond head when it opened, pk_room
   * bytes of them, contiguous; pk_room 0: no pack open), the running
   * station after its last entry (ctp_pk_cur), its obj state (ctp_pk_pobj),
   * whether it holds an ODELTA obj (CTP_PK_RESPELL), that entry's ticks. The engine may read what
   * is written before a counts store while the pack is open; one head store publishes it. */
  struct ctp_pack pk;
  struct ctp_pack *pk_ring;
  uint8_t *pk_out;
  uint32_t pk_room;
  uint32_t pk_cur;
  uint32_t pk_wide;
  uint64_t pk_obj;
  uint64_t pk_last;
};
/* ct_thread.ring_state. */
#define CT_RING_NONE 0    /* no ring claimed yet (first event claims one) */
#define CT_RING_MINE 1    /* ring is ours */
#define CT_RING_NOTFREE 2 /* none was free: events are lost until one is */
#define CT_RING_EXITED 3  /* the thread is exiting, its ring closed: events are lost */

extern _Thread_local struct ct_thread corotracer__tls __attribute__((tls_model("initial-exec")));

/* Attach once per process (thread-safe) and return corotracer__probe.state: CT_TRACED
 * or a negative errno. Cheap after the first call: one acquire load. */
int corotracer__ensure_attached(void);

/* Forget the calling thread's current coroutine and ring (fork child handler). */
void corotracer__forget_current(void);

/* The sleep protocol's probe half (docs/PROTOCOL.md "Write protocol" step 5):
 * when the engine sleeps, send it one byte. Keeps errno. */
void corotracer__kick_engine(struct ctp_header *h);
/* v2: a ring passed a quarter full: wake the engine if it is napping (its
 * `napping` flag), so a burst never waits out a long nap. A hint: a missed
 * one only leaves the engine to its timed wake-up. Keeps errno. */
void corotracer__nudge_engine(struct ctp_header *h);

/* The shared memory holds what cannot be true (`what`: which value): the
 * program, or someone, wrote over it. Tracing stops for the process (state
 * becomes -EBADMSG: every later call is a no-op, nothing waits again), the
 * event being written is counted dropped, and the first thread to find it
 * prints the probe's one notice. Never returns an error: the caller just
 * drops its event. */
void corotracer__corrupt(const char *what);

/* A v1 station whose claim cursor is this far ahead of what the engine
 * harvested cannot be true: 2^40 events claimed on one coroutine and not
 * harvested (18 minutes at one event per ns, hours at the probe's real
 * speed), where a lossless writer waits at most 8 events ahead. A scribbled
 * 64-bit word lands there with probability 1 - 2^-24. */
#define CT_COUNT_SANE (UINT64_C(1) << 40)

/* Lossless mode: wait until room(arg) holds, spinning, then sleeping on the
 * header's futex word, bounded by lossless_ms (docs/PROTOCOL.md "Lossless
 * mode"). room() is called with the waiter announced, so it must load with
 * seq_cst. Returns 1 when room holds, 0 when the wait gave up (timed out now,
 * or skipped because an earlier wait timed out and the engine has made no
 * progress since). Keeps errno. */
int corotracer__wait_room(int (*room)(const void *arg), const void *arg);

#endif
