/* probe.c - the probe API: create, suspend, resume, wake, destroy write one
 * event each, switch up to three (one stamp, one publish under v2): into the
 * calling thread's ring when our engine offered v2 (ring.h, docs/PROTOCOL.md
 * "v2"), else into the coroutine's station (docs/PROTOCOL.md "Write
 * protocol"); plus init, enabled, current and stats. */
#define COROTRACER_NO_INLINE /* we define the exported plain names below */
#include "corotracer.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe/ring.h"
_Static_assert((int)COROTRACER_WAIT_NONE == CTP_WAIT_NONE &&
                   (int)COROTRACER_WAIT_FD == CTP_WAIT_FD &&
                   (int)COROTRACER_WAIT_PTR == CTP_WAIT_PTR &&
                   (int)COROTRACER_WAIT_EXIT == CTP_WAIT_EXIT &&
                   (int)COROTRACER_WAIT_COROUTINE == CTP_WAIT_COROUTINE,
               "the SDK's wait kinds are the protocol's");

/* Probe ids picked for id == 0: bit 63 keeps them clear of user-space
 * addresses (what callers usually pass), the station index + 1 (21 bits)
 * keeps them unique within the file and non-zero, and the station's gen
 * (v2, 32 bits above it; 0 under v1) unique across its incarnations. */
#define CT_ANON_ID (UINT64_C(1) << 63)
#define CT_ANON_GEN_SHIFT 21
_Static_assert(CTP_STATIONS_MAX < (1u << CT_ANON_GEN_SHIFT), "index + 1 fits below the gen");

_Thread_local struct ct_thread corotracer__tls __attribute__((tls_model("initial-exec")));
#define ct_tls corotracer__tls

/* Contract: see probe.h. Touches only the calling thread's state. The ring
 * is forgotten too: in a fork child it belongs to the parent. */
void corotracer__forget_current(void) {
  ct_tls.cur = NULL;
  ct_tls.cur_id = 0;
  ct_tls.ring = NULL;
  ct_tls.recs = NULL;
  ct_tls.head = 0;
  ct_tls.tail_room = 0;
  ct_tls.spare_skip = 0;
  ct_tls.spare_blind = 0;
  ct_tls.spare_qtail = 0;
  ct_tls.pk.nent = 0; /* the parent's open pack: the parent publishes it */
  ct_tls.pk_room = 0;
  ct_tls.ring_state = CT_RING_EXITED;
}

/* A non-NULL handle exists only after corotracer_create saw CT_TRACED with an
 * acquire load (in this thread, or in one that handed the handle over with
 * its own synchronization), and the only way back is the fork child handler,
 * which runs on this very thread: a relaxed load is enough. */
static inline int ct_live(void) {
  return atomic_load_explicit(&corotracer__probe.state, memory_order_relaxed) == CT_TRACED;
}

static inline uint64_t ct_tid(void) {
  if (__builtin_expect(ct_tls.tid == 0, 0))
    ct_tls.tid = (uint64_t)syscall(SYS_gettid);
  return ct_tls.tid;
}

/* CAS attempts on a slot's seq before its event is dropped. */
#define CT_CAS_TRIES 64

/* Lossless wait predicate (v1): the slot of event k - 8 is harvested. */
struct ct_slot_need {
  struct ctp_station *st;
  uint64_t need;
};
static int ct_slot_harvested(const void *arg) {
  const struct ct_slot_need *n = arg;
  return atomic_load_explicit(&n->st->harvested_ev, memory_order_seq_cst) >= n->need;
}

/* Write one event into station st (docs/PROTOCOL.md "Write protocol"). Any
 * number of threads may call it on one station at once. */
static __attribute__((noinline)) void ct_emit(struct ctp_station *st, uint64_t ts, uint8_t kind,
                                              uint64_t addr, uint8_t wait, uint64_t obj) {
  /* The tid (a syscall on a thread's first event) is fetched before the claim,
   * so nothing slow ever runs while the slot's seq is odd. */
  uint64_t tid = ct_tid();
  uint64_t k = atomic_fetch_add_explicit(&st->ev_claimed, 1, memory_order_relaxed);
  /* Lossless mode: event k goes to the slot of event k - 8, which must have
   * been harvested first. When the wait gives up, the event overwrites it
   * (the engine counts k - 8 lost). */
  if (__builtin_expect(corotracer__probe.lossless, 0) && k >= CTP_SLOTS) {
    uint64_t done = atomic_load_explicit(&st->harvested_ev, memory_order_acquire);
    if (done < k - CTP_SLOTS + 1) {
      /* A claim this far ahead of the harvest is no real run's: the
       * station was written over. Waiting would only time out. */
      if (k - done > CT_COUNT_SANE) {
        corotracer__corrupt("a station claimed far beyond its harvest");
        return;
      }
      struct ct_slot_need need = {st, k - CTP_SLOTS + 1};
      (void)corotracer__wait_room(ct_slot_harvested, &need);
    }
  }
  struct ctp_slot *sl = &st->slots[k % CTP_SLOTS];
  uint64_t t = 2 * (k / CTP_SLOTS);
  uint64_t v = atomic_load_explicit(&sl->seq, memory_order_relaxed);
  int tries = 0;
  do {
    /* Odd: another write holds the slot; above t: a later lap already took
     * it. Either way waiting could block behind a preempted thread, so the
     * event is dropped; its index stays unused and the engine counts it lost.
     * A seq that keeps changing without either (a scribbler; writers of one
     * slot settle in a few tries) drops it too: the loop is bounded. */
    if ((v & 1) || v > t || ++tries > CT_CAS_TRIES) {
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
  corotracer__kick_engine(corotracer__probe.hdr);
}

/* One event of st: into this thread's ring under v2, else into the station. */
static inline void ct_event(struct ctp_station *st, uint8_t kind, uint64_t site, uint8_t wait,
                            uint64_t obj) {
  if (__builtin_expect(corotracer__probe.rings, 1))
    ct_ring_emit(st, kind, site, wait, obj);
  else
    ct_emit(st, ct_mono_ns(), kind, site, wait, obj);
}

/* st stops running on this thread: no longer its current coroutine. */
static inline void ct_not_current(struct ctp_station *st) {
  if (ct_tls.cur == st) {
    ct_tls.cur = NULL;
    ct_tls.cur_id = 0;
  }
}

/* The station of a coroutine that stops running on this thread (suspend,
 * destroy), no longer this thread's current one; NULL when nothing is to be
 * recorded. */
static inline struct ctp_station *ct_leaving(corotracer_co *co) {
  struct ctp_station *st = (struct ctp_station *)co;
  if (!st || !ct_live())
    return NULL;
  ct_not_current(st);
  return st;
}

/* The site an event records: the caller's (ret) for NULL, 0 for
 * COROTRACER_SITE_UNKNOWN (no code address is 1), else site as given. */
static inline uint64_t ct_site(const void *site, const void *ret) {
  if (site == COROTRACER_SITE_UNKNOWN)
    return 0;
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

/* v1: a station for a new coroutine from allocated_count, for life. Returns
 * its index, or n when none is left. */
static uint32_t ct_station_take_v1(struct ctp_header *h, uint32_t n) {
  /* The load first keeps the cursor from wrapping around (and handing out
   * station 0 again) when a program keeps creating after overflow. */
  if (atomic_load_explicit(&h->allocated_count, memory_order_relaxed) >= n)
    return n;
  /* seq_cst: the engine's sleep re-scan reads allocated_count after its
   * seq_cst store of tracer_sleeping; a new station's first event must be
   * in that re-scan's range or see the flag (docs/PROTOCOL.md). */
  return atomic_fetch_add_explicit(&h->allocated_count, 1, memory_order_seq_cst);
}

/* Contract: see include/corotracer.h. The handle is the station itself (no
 * allocation on any path). v1: the station is taken for life. v2: it may be
 * one the engine freed (docs/PROTOCOL.md "Station reuse"): gen counts its
 * incarnations. Every field is written before ext_flags is release-stored,
 * and before the create event publishes anything. */
corotracer_co *corotracer_create(uint64_t id, const char *label, const void *site) {
  const void *ret = __builtin_extract_return_addr(__builtin_return_address(0));
  if (corotracer__ensure_attached() != CT_TRACED)
    return NULL;
  struct ctp_header *h = corotracer__probe.hdr;
  uint32_t n = corotracer__probe.nstations;
  int rings = corotracer__probe.rings;
  uint32_t i = rings ? corotracer__station_claim() : ct_station_take_v1(h, n);
  if (i >= n) {
    if (!ct_live())
      return NULL; /* the shared memory was found corrupt: counted there */
    atomic_fetch_add_explicit(&h->overflow, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&corotracer__probe.dropped, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&corotracer__probe.no_station, 1, memory_order_relaxed);
    return NULL;
  }
  struct ctp_station *st = ctp_station_at(h, i);
  uint32_t gen = 0;
  uint32_t flags = CTP_STF_EXT;
  if (rings) {
    /* A reused station's last incarnation ended with its destroy's release
     * store of is_dead; the hand-over came through the engine's queue (another
     * process, which no in-process checker sees). Acquiring it orders our
     * writes (the label's plain ones) after the last owner's, for
     * ThreadSanitizer too, as ct_ring_claim does for rings. An exchange
     * rather than a load: the line, last written on the destroyer's core,
     * comes for writing in one transfer instead of a shared read and then an
     * upgrade at our first store. No v2 reader looks at is_dead (the
     * engine's are v1's), so clearing it here, before the identity fields,
     * tells nobody anything early. */
    (void)__atomic_exchange_n(&st->is_dead, 0, __ATOMIC_ACQUIRE);
    gen = __atomic_load_n(&st->gen, __ATOMIC_RELAXED) + 1;
    gen += gen == 0; /* 0 means "v1": skipped when 2^32 incarnations wrap */
    flags |= CTP_STF_RINGS;
  }
  uint64_t pid = id ? id : CT_ANON_ID | (uint64_t)gen << CT_ANON_GEN_SHIFT | ((uint64_t)i + 1);
  uint64_t parent = ct_tls.cur_id;
  uint64_t where = ct_site(site, ret);
  /* The engine may scan the station as soon as the cursor moved: atomic
   * stores keep its early reads defined; it trusts them after ext_flags. */
  __atomic_store_n(&st->probe_id, pid, __ATOMIC_RELAXED);
  /* v1: birth and the create event, one clock read. v2: the create record's
   * stamp is the birth and no v2 reader looks at birth_ts; 0 (unknown)
   * rather than a clock read, and rather than the last incarnation's. */
  uint64_t now = rings ? 0 : ct_mono_ns();
  __atomic_store_n(&st->birth_ts, now, __ATOMIC_RELAXED);
  __atomic_store_n(&st->create_site, where, __ATOMIC_RELAXED);
  __atomic_store_n(&st->parent_id, parent, __ATOMIC_RELAXED);
  __atomic_store_n(&st->pid, corotracer__probe.pid, __ATOMIC_RELAXED);
  __atomic_store_n(&st->gen, gen, __ATOMIC_RELAXED);
  if (!rings)
    __atomic_store_n(&st->is_dead, 0, __ATOMIC_RELAXED);
  if (label) {
    size_t len = strnlen(label, CTP_LABEL_MAX - 1);
    memcpy(st->label, label, len);
    st->label[len] = '\0';
    flags |= CTP_STF_LABEL;
  } else {
    st->label[0] = '\0'; /* a reused station's old name */
  }
  atomic_store_explicit(&st->ext_flags, flags, memory_order_release);
  if (rings)
    ct_ring_emit(st, CTP_KIND_CREATE, where, CTP_WAIT_NONE, parent);
  else
    ct_emit(st, now, CTP_KIND_CREATE, where, CTP_WAIT_NONE, parent);
  return (corotracer_co *)st;
}

/* Contract: see include/corotracer.h. The station's probe_id, stored by
 * create on this handle before it was returned. */
uint64_t corotracer_id(const corotracer_co *co) {
  return co ? __atomic_load_n(&((const struct ctp_station *)co)->probe_id, __ATOMIC_RELAXED) : 0;
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
  ct_event(st, CTP_KIND_SUSPEND, ct_site(site, ret), (uint8_t)wait, obj);
}

/* Contract: see include/corotracer.h. */
void corotracer__resume(corotracer_co *co) {
  struct ctp_station *st = (struct ctp_station *)co;
  if (!st || !ct_live())
    return;
  ct_tls.cur = st;
  ct_tls.cur_id = __atomic_load_n(&st->probe_id, __ATOMIC_RELAXED);
  ct_event(st, CTP_KIND_RESUME, 0, CTP_WAIT_NONE, 0);
}

/* Contract: see include/corotracer.h. Written by the waker's thread; obj
 * names the waker. Under packs, a wake by this thread's running coroutine is
 * an entry of its open pack (CTP_PK_SOLO, docs/ROUTE1.md "Entries"), with a
 * clock read of its own: a wake stamped with a switch's time could order
 * before the wakee's suspend on another thread and fake a lost wakeup. */
void corotracer__wake(corotracer_co *co, const void *site) {
  const void *ret = __builtin_extract_return_addr(__builtin_return_address(0));
  struct ctp_station *st = (struct ctp_station *)co;
  struct ct_thread *t = &ct_tls;
  if (!st || !ct_live())
    return;
  if (corotracer__probe.pack && t->cur && t->cur_id) {
    ct_pack_any(0, t->cur, st, ct_site(site, ret), 0, CT_PK_WW_SOLO);
    return;
  }
  ct_event(st, CTP_KIND_WAKE, ct_site(site, ret), CTP_WAIT_NONE, t->cur_id);
}

/* The destroy of co recorded at site `where`, for both entry points below.
 * v1: is_dead follows the destroy event with a release store, so a reader
 * that sees it also sees the event's claim (the engine retires a dead
 * station with nothing new). v2: is_dead comes first. The engine gives the
 * station to the next create once it has the destroy record; a store after
 * the record could land on that next incarnation (marking it dead), and its
 * create's acquire of is_dead would not order its writes after ours. */
static inline void ct_destroy(corotracer_co *co, uint64_t where) {
  struct ctp_station *st = ct_leaving(co);
  if (!st)
    return;
  if (__builtin_expect(corotracer__probe.rings, 1)) {
    __atomic_store_n(&st->is_dead, 1, __ATOMIC_RELEASE);
    ct_ring_emit(st, CTP_KIND_DESTROY, where, CTP_WAIT_NONE, 0);
  } else {
    ct_emit(st, ct_mono_ns(), CTP_KIND_DESTROY, where, CTP_WAIT_NONE, 0);
    __atomic_store_n(&st->is_dead, 1, __ATOMIC_RELEASE);
  }
}

/* Contract: see include/corotracer.h. The site is the caller's. */
void corotracer__destroy(corotracer_co *co) {
  ct_destroy(co, (uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)));
}

/* Contract: see include/corotracer.h. */
void corotracer__destroy_at(corotracer_co *co, const void *site) {
  const void *ret = __builtin_extract_return_addr(__builtin_return_address(0));
  ct_destroy(co, ct_site(site, ret));
}

/* corotracer__switch under v1 stations: the three calls' events, each on
 * its own. Out of line, so the v2 path saves no registers for it. */
static __attribute__((noinline)) void ct_switch_v1(struct ctp_station *from, uint64_t site,
                                                   uint8_t wait, uint64_t obj, int wake,
                                                   uint64_t waker, struct ctp_station *to) {
  if (from) {
    ct_emit(from, ct_mono_ns(), CTP_KIND_SUSPEND, site, wait, obj);
    if (wake)
      ct_emit(from, ct_mono_ns(), CTP_KIND_WAKE, site, CTP_WAIT_NONE, waker);
  }
  if (to)
    ct_emit(to, ct_mono_ns(), CTP_KIND_RESUME, 0, CTP_WAIT_NONE, 0);
}

/* corotracer__switch for all but a pack's hot case (ct_pack_hot under
 * CTP_MODE_PACK, which corotracer__switch takes itself): the
 * current-coroutine bookkeeping and the records are the separate calls'
 * (suspend, wake, resume); under v2 one stamp and one publish
 * (ct_ring_switch). Out of line: its registers are not the hot path's. */
static __attribute__((noinline)) void ct_switch_any(struct ctp_station *fs, uint64_t where,
                                                    enum corotracer_wait wait, uint64_t obj,
                                                    unsigned flags, struct ctp_station *ts) {
  /* Nothing to record (the plain name skips no NULL test): the ring path
   * would publish no record, into a ring the thread may not have. */
  if ((!fs && !ts) || !ct_live())
    return;
  if (fs)
    ct_not_current(fs);
  if ((unsigned)wait >= CTP_WAIT_MAX_) {
    wait = COROTRACER_WAIT_NONE;
    obj = 0;
  }
  int wake = (flags & COROTRACER_SWITCH_RUNNABLE) != 0;
  uint64_t waker = ct_tls.cur_id; /* after `from` left, as a wake after the suspend */
  if (ts) {
    ct_tls.cur = ts;
    ct_tls.cur_id = __atomic_load_n(&ts->probe_id, __ATOMIC_RELAXED);
  }
  if (__builtin_expect(corotracer__probe.rings, 1))
    ct_ring_switch(fs, where, (uint8_t)wait, obj, wake, waker, ts);
  else
    ct_switch_v1(fs, where, (uint8_t)wait, obj, wake, waker, ts);
}

/* Contract: see include/corotracer.h. The hot case (both coroutines, wait
 * none or ptr, any obj, no waker: a scheduler's yield or park) goes
 * straight to the open pack; ct_switch_any does the rest, as its
 * conditions are ct_pack_hot's. */
void corotracer__switch(corotracer_co *from, const void *site, enum corotracer_wait wait,
                        uint64_t obj, unsigned flags, corotracer_co *to) {
  const void *ret = __builtin_extract_return_addr(__builtin_return_address(0));
  struct ctp_station *fs = (struct ctp_station *)from;
  struct ctp_station *ts = (struct ctp_station *)to;
  struct ct_thread *t = &ct_tls;
  int wake = (flags & COROTRACER_SWITCH_RUNNABLE) != 0;
  if (__builtin_expect(fs && ts && corotracer__probe.pack && ct_live() &&
                           ((unsigned)wait == CTP_WAIT_NONE || (unsigned)wait == CTP_WAIT_PTR),
                       1)) {
    /* The waker: the thread's coroutine once `from` left (ct_switch_any). */
    if (!wake || t->cur == fs || !t->cur_id) {
      t->cur = ts;
      t->cur_id = __atomic_load_n(&ts->probe_id, __ATOMIC_RELAXED);
      ct_pack_put(fs, ts, ct_site(site, ret), (uint8_t)wait, obj, wake);
      return;
    }
  }
  ct_switch_any(fs, ct_site(site, ret), wait, obj, flags, ts);
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
COROTRACER_API void corotracer_destroy_at(corotracer_co *co, const void *site)
    __attribute__((alias("corotracer__destroy_at")));
COROTRACER_API void corotracer_switch(corotracer_co *from, const void *site,
                                      enum corotracer_wait wait, uint64_t obj, unsigned flags,
                                      corotracer_co *to)
    __attribute__((alias("corotracer__switch")));

/* Contract: see include/corotracer.h. */
corotracer_co *corotracer_current(void) {
  if (corotracer__ensure_attached() != CT_TRACED)
    return NULL;
  return (corotracer_co *)ct_tls.cur;
}

/* Contract: see include/corotracer.h. Computed on demand so the hot path
 * keeps no counter: v1, our stations are the allocated ones stamped with our
 * pid; v2, the heads of the rings our threads own or owned. */
void corotracer_stats(uint64_t *recorded, uint64_t *dropped) {
  uint64_t rec = 0;
  uint64_t drop = 0;
  int s = corotracer__ensure_attached();
  if (s == -EBADMSG) /* stopped on corrupt memory: only our own count */
    drop = atomic_load_explicit(&corotracer__probe.dropped, memory_order_relaxed);
  if (s == CT_TRACED) {
    struct ctp_header *h = corotracer__probe.hdr;
    drop = atomic_load_explicit(&corotracer__probe.dropped, memory_order_relaxed);
    if (corotracer__probe.rings) {
      /* Written, plus dropped after a station was had: what v1's ev_claimed
       * counts. The rings' lost holds the events of a full ring, never
       * written, and in overwrite mode those written then taken back,
       * already in written. */
      uint64_t written, full;
      corotracer__ring_counts(&written, &full);
      drop += full;
      rec = written + drop -
            atomic_load_explicit(&corotracer__probe.no_station, memory_order_relaxed) -
            atomic_load_explicit(&corotracer__probe.overwritten, memory_order_relaxed);
    } else {
      uint32_t n = atomic_load_explicit(&h->allocated_count, memory_order_relaxed);
      if (n > corotracer__probe.nstations)
        n = corotracer__probe.nstations;
      for (uint32_t i = 0; i < n; i++) {
        struct ctp_station *st = ctp_station_at(h, i);
        if (__atomic_load_n(&st->pid, __ATOMIC_RELAXED) == corotracer__probe.pid)
          rec += atomic_load_explicit(&st->ev_claimed, memory_order_relaxed);
      }
    }
  }
  if (recorded)
    *recorded = rec;
  if (dropped)
    *dropped = drop;
}
