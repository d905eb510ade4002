/* wait.c - the probe's side of the engine's sleep: the wake-up byte, and the
 * lossless-mode wait for room (slots, rings or stations) on the futex word. */
#include <errno.h>
#include <linux/futex.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/ticks.h"
#include "probe/probe.h"

/* Looks at the room before a lossless writer sleeps: an engine that keeps up
 * makes room within a pass, a few microseconds. */
#define CT_WAIT_SPINS 1000

/* Send the wake-up byte if we take *word from 1 to 0. Only the thread that
 * wins the CAS sends. MSG_NOSIGNAL: a dead engine must not kill the target;
 * MSG_DONTWAIT: a full socket must not block it. Without a socket the flag is
 * left set, so another process's probe can still wake the engine. */
static void kick(_Atomic uint32_t *word) {
  if (atomic_load_explicit(word, memory_order_seq_cst) != 1)
    return;
  int fd = atomic_load_explicit(&corotracer__probe.sock, memory_order_relaxed);
  if (fd < 0)
    return;
  int saved = errno; /* the scheduler calling us must not see our errno */
  /* The program may have closed our fd and reused its number for a stream
   * of its own: our byte must not land there. Checked here, on the rare path
   * (the engine asleep), not per event, and before taking the flag: once the
   * number is not ours it never will be again, so we stop sending and leave
   * the flag set for another process's probe (or the engine's fallback poll)
   * to act on. */
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISSOCK(sb.st_mode) ||
      (uint64_t)sb.st_dev != corotracer__probe.sock_dev ||
      (uint64_t)sb.st_ino != corotracer__probe.sock_ino) {
    atomic_store_explicit(&corotracer__probe.sock, -1, memory_order_relaxed);
    goto out;
  }
  uint32_t one = 1;
  if (atomic_compare_exchange_strong_explicit(word, &one, 0, memory_order_seq_cst,
                                              memory_order_relaxed))
    (void)send(fd, "1", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
out:
  errno = saved;
}

/* Contract: see probe.h. The caller made its event visible with a seq_cst
 * operation (v1: the publishing exchange) or accepts a delay up to the
 * engine's timed wake (v2: a release store; docs/PROTOCOL.md step 4). */
void corotracer__kick_engine(struct ctp_header *h) {
  kick(&h->tracer_sleeping);
}

/* Contract: see probe.h. */
void corotracer__nudge_engine(struct ctp_header *h) {
  kick(&h->napping);
}

/* Contract: see probe.h. Spin a little, then sleep on harvest_epoch, which
 * the engine bumps after each pass that made room and wakes when writers
 * wait; give up after lossless_ms and wait no more until the engine makes
 * progress again, so a stopped or dead engine delays the target by one
 * timeout, not one per event. No lost wake-up: we load e0, announce
 * ourselves (seq_cst), then re-check room (seq_cst); the engine makes room,
 * bumps the epoch (seq_cst) and then reads waiters. Either it sees us, or our
 * e0 already reads its bump (and with it the room), or FUTEX_WAIT finds the
 * word changed and returns at once. */
int corotracer__wait_room(int (*room)(const void *arg), const void *arg) {
  struct ctp_header *h = corotracer__probe.hdr;
  if (atomic_load_explicit(&corotracer__probe.state, memory_order_relaxed) != CT_TRACED)
    return 0; /* tracing stopped (corrupt shared memory): nothing to wait for */
  /* Known stalled, checked first: while the engine shows no progress every
   * event after the timeout costs two loads here, not a spin (issue #24). */
  if (atomic_load_explicit(&corotracer__probe.stalled, memory_order_relaxed)) {
    if (atomic_load_explicit(&h->harvest_epoch, memory_order_relaxed) ==
        atomic_load_explicit(&corotracer__probe.stall_epoch, memory_order_relaxed))
      return room(arg);
    atomic_store_explicit(&corotracer__probe.stalled, 0, memory_order_relaxed);
  }
  for (int spin = 0; spin < CT_WAIT_SPINS; spin++) {
    if (room(arg))
      return 1;
    ct_cpu_relax();
  }
  int saved = errno;
  int ok;
  uint64_t deadline = ct_mono_ns() + (uint64_t)corotracer__probe.lossless_ms * 1000000u;
  for (;;) {
    corotracer__kick_engine(h);  /* it may be asleep: a full ring woke nobody */
    corotracer__nudge_engine(h); /* or napping: a writer waiting has nothing to write */
    uint32_t e0 = atomic_load_explicit(&h->harvest_epoch, memory_order_seq_cst);
    atomic_fetch_add_explicit(&h->waiters, 1, memory_order_seq_cst);
    ok = room(arg);
    uint64_t now = ct_mono_ns();
    if (!ok && now < deadline) {
      /* At most 10 ms per sleep: a lost wake-up byte costs no more. */
      uint64_t left = deadline - now < 10000000u ? deadline - now : 10000000u;
      struct timespec ts = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
      /* Not FUTEX_PRIVATE: the word is in a mapping shared with the engine. */
      syscall(SYS_futex, &h->harvest_epoch, FUTEX_WAIT, e0, &ts, NULL, 0);
    }
    atomic_fetch_sub_explicit(&h->waiters, 1, memory_order_relaxed);
    if (ok)
      break;
    if (atomic_load_explicit(&corotracer__probe.state, memory_order_relaxed) != CT_TRACED)
      break; /* another thread found the shared memory corrupt */
    if (now >= deadline) {
      atomic_store_explicit(&corotracer__probe.stall_epoch, e0, memory_order_relaxed);
      atomic_store_explicit(&corotracer__probe.stalled, 1, memory_order_relaxed);
      atomic_fetch_add_explicit(&corotracer__probe.timeouts, 1, memory_order_relaxed);
      break;
    }
  }
  errno = saved;
  return ok;
}
