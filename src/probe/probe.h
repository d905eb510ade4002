/* probe.h - state shared by the probe's attach code and its event writers. */
#ifndef CT_PROBE_H
#define CT_PROBE_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/ctp.h"

/* corotracer__probe.state: CT_UNINIT until the first call tries to attach, then
 * CT_TRACED or the negative errno that left the process untraced. */
#define CT_UNINIT 0
#define CT_TRACED 1

/* Longest wait at attach for our engine's acknowledgement (module lines). */
#define CT_ACK_TIMEOUT_MS 1000

/* The process-wide probe. Written once by ct_attach (under pthread_once) before
 * state is release-stored as CT_TRACED; read-only afterwards, except by the
 * fork child handler, which runs alone in the child. */
struct ct_probe {
  _Atomic int state;
  struct ctp_header *hdr; /* the whole MAP_SHARED file */
  uint64_t map_len;
  uint32_t nstations;
  uint32_t pid; /* getpid() at attach: the pid stamped on our stations */
  /* Connected Unix stream socket, -1 when none. Atomic: the send path drops
   * it (stores -1) when the fd number no longer names our socket. */
  _Atomic int sock;
  uint64_t sock_dev, sock_ino; /* its identity, checked before each send */
  int lossless;                /* the engine set CTP_MODE_LOSSLESS */
  uint32_t lossless_ms;        /* its bound on one wait */
  /* Lossless waits are skipped while the engine shows no progress after a
   * wait timed out: stalled says so, stall_epoch is harvest_epoch then. */
  _Atomic int stalled;
  _Atomic uint32_t stall_epoch;
  /* Rare-path counter (see corotracer_stats), on its own cache line: a drop
   * storm must not slow every event's read of state. */
  _Alignas(64) _Atomic uint64_t dropped;
  _Atomic uint64_t timeouts; /* lossless waits that gave up */
};

extern struct ct_probe corotracer__probe;

/* Attach once per process (thread-safe) and return corotracer__probe.state: CT_TRACED
 * or a negative errno. Cheap after the first call: one acquire load. */
int corotracer__ensure_attached(void);

/* Forget the calling thread's current coroutine (fork child handler). */
void corotracer__forget_current(void);

#endif /* CT_PROBE_H */
