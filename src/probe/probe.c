/* probe.c - the probe API: create, suspend, resume, wake, destroy write one
 * event each into the coroutine's station, per docs/PROTOCOL.md "Write
 * protocol"; plus init, enabled, current and stats. */
#define COROTRACER_NO_INLINE /* we define the exported plain names below */
#include "corotracer.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "probe/probe.h"
_Static_assert((int)COROTRACER_WAIT_NONE == CTP_WAIT_NONE &&
                   (int)COROTRACER_WAIT_FD == CTP_WAIT_FD &&
                   (int)COROTRACER_WAIT_PTR == CTP_WAIT_PTR,
               "the SDK's wait kinds are the protocol's");

/* Probe ids picked for id == 0: bit 63 keeps them clear of user-space
 * addresses (what callers usually pass), the station index + 1 keeps them
 * unique within the file and non-zero. */
#define CT_ANON_ID (UINT64_C(1) << 63)

/* Per-thread state. initial-exec: no __tls_get_addr call on the hot path
 * (the library is small enough for the static TLS surplus when dlopen'ed). */
struct ct_thread {
  uint64_t tid;            /* gettid(), fetched once per thread */
  struct ctp_station *cur; /* coroutine running on this thread, or NULL */
  uint64_t cur_id;         /* its probe_id (0 when cur is NULL) */
};
static _Thread_local struct ct_thread ct_tls __attribute__((tls_model("initial-exec")));

/* Contract: see probe.h. Touches only the calling thread's state. */
void corotracer__forget_current(void) {
  ct_tls.cur = NULL;
  ct_tls.cur_id = 0;
}

/* A non-NULL handle exists only after corotracer_create saw CT_TRACED with an
 * acquire load (in this thread, or in one that handed the handle over with
 * its own synchronization), and the only way back is the fork child handler,
 * which runs on this very thread: a relaxed load is enough. */
static inline int ct_live(void) {
  return atomic_load_explicit(&corotracer__probe.state, memory_order_relaxed) == CT_TRACED;
}

static inline uint64_t ct_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no syscall */
  return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ct_tid(void) {
  if (__builtin_expect(ct_tls.tid == 0, 0))
    ct_tls.tid = (uint64_t)syscall(SYS_gettid);
  return ct_tls.tid;
}

/* The sleep protocol's probe half: the seq_cst exchange that published the
 * event, then this seq_cst load, pair with the engine's store + rescan. Only
 * the thread that wins the 1 -> 0 CAS sends. MSG_NOSIGNAL: a dead engine must
 * not kill the target; MSG_DONTWAIT: a full socket must not block it. Without
 * a socket the flag is left set, so another process's probe can still wake
 * the engine. */
static void ct_kick_engine(struct ctp_header *h) {
  if (atomic_load_explicit(&h->tracer_sleeping, memory_order_seq_cst) != 1)
    return;
  int fd = atomic_load_explicit(&corotracer__probe.sock, memory_order_relaxed);
  if (fd < 0)
    return;
  int saved = errno; /* the scheduler calling us must not see our errno */
  /* The program may have closed our fd and reused its number for a stream
   * of its own: our byte must not land there. Checked here, on the rare path
   * (the engine asleep), not per event, and before taking the flag: once the
   * number is not ours it never will be again, so we stop sending and leave
   * tracer_sleeping set for another process's probe (or the engine's
   * fallback poll) to act on. */
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISSOCK(sb.st_mode) ||
      (uint64_t)sb.st_dev != corotracer__probe.sock_dev ||
      (uint64_t)sb.st_ino != corotracer__probe.sock_ino) {
    atomic_store_explicit(&corotracer__probe.sock, -1, memory_order_relaxed);
    goto out;
  }
  uint32_t one = 1;
  if (atomic_compare_exchange_strong_explicit(&h->tracer_sleeping, &one, 0, memory_order_seq_cst,
                                              memory_order_relaxed))
    (void)send(fd, "1", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
out:
  errno = saved;
}

/* Lossless mode (docs/PROTOCOL.md "Lossless mode"): event k goes to the slot
 * of event k - 8, which must have been harvested first (harvested_ev > k - 8).
 * Spin a little, then sleep on the header's futex word, which the engine bumps
 * after each scan that made progress and wakes when writers wait; give up
 * after lossless_ms (the event then overwrites k - 8, which the engine counts
 * lost) and wait no more until the engine makes progress again, so a stopped
 * or dead engine delays the target by one timeout, not one per event. */
static __attribute__((noinline, cold)) void ct_wait_room(struct ctp_station *st, uint64_t k) {
  struct ctp_header *h = corotracer__probe.hdr;
  uint64_t need = k - CTP_SLOTS + 1;
  for (int spin = 0; spin < 1000; spin++) {
    if (atomic_load_explicit(&st->harvested_ev, memory_order_acquire) >= need)
      return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  if (atomic_load_explicit(&corotracer__probe.stalled, memory_order_relaxed) &&
      atomic_load_explicit(&h->harvest_epoch, memory_order_relaxed) ==
          atomic_load_explicit(&corotracer__probe.stall_epoch, memory_order_relaxed))
    return;
  atomic_store_explicit(&corotracer__probe.stalled, 0, memory_order_relaxed);
  int saved = errno;
  uint64_t deadline = ct_now() + (uint64_t)corotracer__probe.lossless_ms * 1000000u;
  for (;;) {
    ct_kick_engine(h); /* it may be asleep: our ring being full woke nobody */
    uint32_t e0 = atomic_load_explicit(&h->harvest_epoch, memory_order_seq_cst);
    /* Dekker pair with the engine: its seq_cst store of harvested_ev, then
     * its load of waiters; our increment, then this load. */
    atomic_fetch_add_explicit(&h->waiters, 1, memory_order_seq_cst);
    int room = atomic_load_explicit(&st->harvested_ev, memory_order_seq_cst) >= need;
    uint64_t now = ct_now();
    if (!room && now < deadline) {
      /* At most 10 ms per sleep: a lost wake-up byte costs no more. */
      uint64_t left = deadline - now < 10000000u ? deadline - now : 10000000u;
      struct timespec ts = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
      /* Not FUTEX_PRIVATE: the word is in a mapping shared with the engine. */
      syscall(SYS_futex, &h->harvest_epoch, FUTEX_WAIT, e0, &ts, NULL, 0);
    }
    atomic_fetch_sub_explicit(&h->waiters, 1, memory_order_relaxed);
    if (room)
      break;
    if (now >= deadline) {
      atomic_store_explicit(&corotracer__probe.stall_epoch, e0, memory_order_relaxed);
      atomic_store_explicit(&corotracer__probe.stalled, 1, memory_order_relaxed);
      atomic_fetch_add_explicit(&corotracer__probe.timeouts, 1, memory_order_relaxed);
      break;
    }
  }
  errno = saved;
}

/* Write one event into station st (docs/PROTOCOL.md "Write protocol"). Any
 * number of threads may call it on one station at once. */
static void ct_emit(struct ctp_station *st, uint64_t ts, uint8_t kind, uint64_t addr, uint8_t wait,
                    uint64_t obj) {
  /* The tid (a syscall on a thread's first event) is fetched before the claim,
   * so nothing slow ever runs while the slot's seq is odd. */
  uint64_t tid = ct_tid();
  uint64_t k = atomic_fetch_add_explicit(&st->ev_claimed, 1, memory_order_relaxed);
  if (__builtin_expect(corotracer__probe.lossless, 0) && k >= CTP_SLOTS &&
      atomic_load_explicit(&st->harvested_ev, memory_order_acquire) < k - CTP_SLOTS + 1)
    ct_wait_room(st, k);
  struct ctp_slot *sl = &st->slots[k % CTP_SLOTS];
  uint64_t t = 2 * (k / CTP_SLOTS);
  uint64_t v = atomic_load_explicit(&sl->seq, memory_order_relaxed);
  do {
    /* Odd: another write holds the slot; above t: a later lap already took
     * it. Either way waiting could block behind a preempted thread, so the
     * event is dropped; its index stays unused and the engine counts it lost. */
    if ((v & 1) || v > t) {
      atomic_fetch_add_explicit(&corotracer__probe.dropped, 1, memory_order_relaxed);
      return;
    }
  } while (!atomic_compare_exchange_weak_explicit(&sl->seq, &v, t + 1, memory_order_acquire,
                                                  memory_order_relaxed));
  /* Keeps the payload stores below the odd seq on weakly ordered CPUs. */
  atomic_thread_fence(memory_order_release);
  __atomic_store_n(&sl->timestamp, ts, __ATOMIC_RELAXED);
  __atomic_store_n(&sl->tid, tid, __ATOMIC_RELAXED);
  __atomic_store_n(&sl->addr, addr, __ATOMIC_RELAXED);
  __atomic_store_n(&sl->kind, kind, __ATOMIC_RELAXED);
  __atomic_store_n(&sl->wait_kind, wait, __ATOMIC_RELAXED);
  __atomic_store_n(&sl->obj, obj, __ATOMIC_RELAXED);
  __atomic_store_n(&sl->is_active, (uint8_t)(kind == CTP_KIND_RESUME), __ATOMIC_RELAXED);
  atomic_exchange_explicit(&sl->seq, t + 2, memory_order_seq_cst);
  ct_kick_engine(corotracer__probe.hdr);
}

/* The station of a coroutine that stops running on this thread (suspend,
 * destroy), no longer this thread's current one; NULL when nothing is to be
 * recorded. */
static inline struct ctp_station *ct_leaving(corotracer_co *co) {
  struct ctp_station *st = (struct ctp_station *)co;
  if (!st || !ct_live())
    return NULL;
  if (ct_tls.cur == st)
    corotracer__forget_current();
  return st;
}

static inline uint64_t ct_site(const void *site, const void *ret) {
  return (uint64_t)(uintptr_t)(site ? site : ret);
}

/* Contract: see include/corotracer.h. */
int corotracer_init(void) {
  int s = corotracer__ensure_attached();
  return s == CT_TRACED ? 0 : s;
}

/* Contract: see include/corotracer.h. */
int corotracer_enabled(void) {
  return corotracer__ensure_attached() == CT_TRACED;
}

/* Contract: see include/corotracer.h. The handle is the station itself (no
 * allocation on any path); the station is taken for life (v1 has
 * no reuse); its fields are all written before ext_flags is release-stored,
 * and before the create event publishes anything. */
corotracer_co *corotracer_create(uint64_t id, const char *label, const void *site) {
  const void *ret = __builtin_extract_return_addr(__builtin_return_address(0));
  if (corotracer__ensure_attached() != CT_TRACED)
    return NULL;
  struct ctp_header *h = corotracer__probe.hdr;
  uint32_t n = corotracer__probe.nstations;
  uint32_t i = n;
  /* The load first keeps the cursor from wrapping around (and handing out
   * station 0 again) when a program keeps creating after overflow. */
  if (atomic_load_explicit(&h->allocated_count, memory_order_relaxed) < n)
    /* seq_cst: the engine's sleep re-scan reads allocated_count after its
     * seq_cst store of tracer_sleeping; a new station's first event must be
     * in that re-scan's range or see the flag (docs/PROTOCOL.md). */
    i = atomic_fetch_add_explicit(&h->allocated_count, 1, memory_order_seq_cst);
  if (i >= n) {
    atomic_fetch_add_explicit(&h->overflow, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&corotracer__probe.dropped, 1, memory_order_relaxed);
    return NULL;
  }
  struct ctp_station *st = ctp_station_at(h, i);
  uint64_t pid = id ? id : CT_ANON_ID | ((uint64_t)i + 1);
  uint64_t parent = ct_tls.cur_id;
  uint64_t where = ct_site(site, ret);
  uint32_t flags = CTP_STF_EXT;
  /* The engine may scan the station as soon as the cursor moved: atomic
   * stores keep its early reads defined; it trusts them after ext_flags. */
  __atomic_store_n(&st->probe_id, pid, __ATOMIC_RELAXED);
  uint64_t now = ct_now(); /* birth and the create event: one clock read */
  __atomic_store_n(&st->birth_ts, now, __ATOMIC_RELAXED);
  __atomic_store_n(&st->create_site, where, __ATOMIC_RELAXED);
  __atomic_store_n(&st->parent_id, parent, __ATOMIC_RELAXED);
  __atomic_store_n(&st->pid, corotracer__probe.pid, __ATOMIC_RELAXED);
  if (label) {
    size_t len = strnlen(label, CTP_LABEL_MAX - 1);
    memcpy(st->label, label, len);
    st->label[len] = '\0';
    flags |= CTP_STF_LABEL;
  }
  atomic_store_explicit(&st->ext_flags, flags, memory_order_release);
  ct_emit(st, now, CTP_KIND_CREATE, where, CTP_WAIT_NONE, parent);
  return (corotracer_co *)st;
}

/* Contract: see include/corotracer.h. */
void corotracer__suspend(corotracer_co *co, const void *site, enum corotracer_wait wait,
                         uint64_t obj) {
  const void *ret = __builtin_extract_return_addr(__builtin_return_address(0));
  struct ctp_station *st = ct_leaving(co);
  if (!st)
    return;
  /* An unknown wait kind would make obj meaningless to the reader. */
  if ((unsigned)wait >= CTP_WAIT_MAX_) {
    wait = COROTRACER_WAIT_NONE;
    obj = 0;
  }
  ct_emit(st, ct_now(), CTP_KIND_SUSPEND, ct_site(site, ret), (uint8_t)wait, obj);
}

/* Contract: see include/corotracer.h. */
void corotracer__resume(corotracer_co *co) {
  struct ctp_station *st = (struct ctp_station *)co;
  if (!st || !ct_live())
    return;
  ct_tls.cur = st;
  ct_tls.cur_id = __atomic_load_n(&st->probe_id, __ATOMIC_RELAXED);
  ct_emit(st, ct_now(), CTP_KIND_RESUME, 0, CTP_WAIT_NONE, 0);
}

/* Contract: see include/corotracer.h. Written into the wakee's station by the
 * waker's thread; obj names the waker. */
void corotracer__wake(corotracer_co *co, const void *site) {
  const void *ret = __builtin_extract_return_addr(__builtin_return_address(0));
  struct ctp_station *st = (struct ctp_station *)co;
  if (!st || !ct_live())
    return;
  ct_emit(st, ct_now(), CTP_KIND_WAKE, ct_site(site, ret), CTP_WAIT_NONE, ct_tls.cur_id);
}

/* Contract: see include/corotracer.h. is_dead follows the destroy event with
 * a release store, so a reader that sees it also sees the event's claim. */
void corotracer__destroy(corotracer_co *co) {
  const void *ret = __builtin_extract_return_addr(__builtin_return_address(0));
  struct ctp_station *st = ct_leaving(co);
  if (!st)
    return;
  ct_emit(st, ct_now(), CTP_KIND_DESTROY, (uint64_t)(uintptr_t)ret, CTP_WAIT_NONE, 0);
  __atomic_store_n(&st->is_dead, 1, __ATOMIC_RELEASE);
}

/* The plain names, for callers that do not use the header's inline wrappers
 * (dlsym, FFI, COROTRACER_NO_INLINE). Aliases, not wrappers: the default site
 * must stay the return address into the caller. */
COROTRACER_API void corotracer_suspend(corotracer_co *co, const void *site,
                                       enum corotracer_wait wait, uint64_t obj)
    __attribute__((alias("corotracer__suspend")));
COROTRACER_API void corotracer_resume(corotracer_co *co)
    __attribute__((alias("corotracer__resume")));
COROTRACER_API void corotracer_wake(corotracer_co *co, const void *site)
    __attribute__((alias("corotracer__wake")));
COROTRACER_API void corotracer_destroy(corotracer_co *co)
    __attribute__((alias("corotracer__destroy")));

/* Contract: see include/corotracer.h. */
corotracer_co *corotracer_current(void) {
  if (corotracer__ensure_attached() != CT_TRACED)
    return NULL;
  return (corotracer_co *)ct_tls.cur;
}

/* Contract: see include/corotracer.h. Computed on demand so the hot path
 * keeps no counter: our stations are the allocated ones stamped with our pid. */
void corotracer_stats(uint64_t *recorded, uint64_t *dropped) {
  uint64_t rec = 0;
  uint64_t drop = 0;
  if (corotracer__ensure_attached() == CT_TRACED) {
    struct ctp_header *h = corotracer__probe.hdr;
    uint32_t n = atomic_load_explicit(&h->allocated_count, memory_order_relaxed);
    if (n > corotracer__probe.nstations)
      n = corotracer__probe.nstations;
    for (uint32_t i = 0; i < n; i++) {
      struct ctp_station *st = ctp_station_at(h, i);
      if (__atomic_load_n(&st->pid, __ATOMIC_RELAXED) == corotracer__probe.pid)
        rec += atomic_load_explicit(&st->ev_claimed, memory_order_relaxed);
    }
    drop = atomic_load_explicit(&corotracer__probe.dropped, memory_order_relaxed);
  }
  if (recorded)
    *recorded = rec;
  if (dropped)
    *dropped = drop;
}
