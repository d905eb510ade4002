// corotracer/boost_fiber.hpp - trace Boost.Fiber's fibers: one include, one call per scheduling
// thread.
//
//   #include <corotracer/boost_fiber.hpp>   // link -lcorotracer -lboost_fiber -lboost_context
//   corotracer::fiber::install<boost::fibers::algo::round_robin>();   // on each scheduling thread
//
// install<Algo>() makes this thread's scheduler use Algo wrapped in
// corotracer::fiber::traced<Algo>, which records, for every worker fiber and
// for the thread's main fiber: create (first seen by the scheduler), wake
// (awakened), the switch out and in (pick_next: suspend with its wait object,
// a yield as suspend+wake, then the resume of the next fiber), exit and
// destroy (at the fiber's termination). Sites are the user's lines, found on
// the fiber's stack (corotracer/user_site.hpp). The wait object of a fiber
// blocked on a mutex, condition variable or channel is the address of that
// primitive's wait queue (inside the object); a fiber blocked in join() waits
// for the joined fiber (COROTRACER_WAIT_COROUTINE, its id). The scheduler's own
// dispatcher fiber is not traced (it is the thread's loop, not user work).
// Untraced (not run under corotracer), install() puts Algo itself in place:
// nothing to pay; a traced<Algo> built by hand costs one branch per hook.
// docs/INTEGRATIONS.md has what it sees and what it does not.
#ifndef COROTRACER_BOOST_FIBER_HPP
#define COROTRACER_BOOST_FIBER_HPP

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/context.hpp>
#include <boost/fiber/operations.hpp>
#include <boost/fiber/properties.hpp>

#include "../corotracer.h"
#include "user_site.hpp"

namespace corotracer::fiber {
namespace detail {

namespace bf = boost::fibers;

// What the adapter keeps per traced fiber. Under an algorithm without fiber
// properties (round_robin, shared_work, work_stealing) it is the fiber's
// properties object, found in O(1) (context::get_properties, inline) and
// deleted with the context; under one with properties (which are the
// algorithm's), it sits in fiber-specific storage (a std::map lookup) and goes
// at the fiber's termination.
struct FiberData final : bf::fiber_properties {
  explicit FiberData(bf::context *ctx) noexcept : bf::fiber_properties(ctx) {
  }
  corotracer_co *co = nullptr;
  bool in_props = false;     // owned by its context, as its properties
  std::uintptr_t join_q = 0; // its join queue, in the JoinTable (0: not there)
  bool yielded = false;      // switched out runnable: its wake is already recorded
  bool parked = false;       // main fiber: switched out, not yet switched back in
};

// The fiber-specific-storage key of FiberData.
inline const void *fss_key() noexcept {
  static const char key = 0;
  return &key;
}

// Which wait queues are fibers' join queues, and whose: a fiber blocked in
// join() waits in the joined fiber's context's own wait queue. Filled when a
// fiber is first seen, emptied at its termination; shared by every thread
// (a fiber may join one another thread runs). The filter (per hash bucket,
// how many queues are in the table) keeps the lookup off a blocking switch
// whose queue cannot be there: one relaxed load.
struct JoinTable {
  static constexpr unsigned kBits = 12;
  std::atomic<std::uint32_t> filter[1u << kBits] = {};
  std::mutex mtx;
  std::unordered_map<std::uintptr_t, std::uint64_t> ids;
  static unsigned bucket(std::uintptr_t q) noexcept {
    return static_cast<unsigned>((q * 0x9e3779b97f4a7c15ull) >> (64 - kBits));
  }
};
// Never destroyed: fibers may terminate in thread-exit destructors. Built in
// static storage (an empty map allocates nothing): looking it up cannot throw.
inline JoinTable &joins() noexcept {
  alignas(JoinTable) static unsigned char mem[sizeof(JoinTable)];
  static JoinTable *t = new (mem) JoinTable;
  return *t;
}
// The address of ctx's join queue: Boost (1.6x-1.8x) declares it right before
// the public wait_hook_. Were that ever not so, no blocking switch would match
// (the address is inside the context, where no other queue is): joins would
// read as waits on a pointer, nothing worse.
inline std::uintptr_t join_queue(bf::context *ctx) noexcept {
  static_assert(sizeof(bf::context::wait_queue_t) == 2 * sizeof(void *), "a list header");
  return reinterpret_cast<std::uintptr_t>(&ctx->wait_hook_) - sizeof(bf::context::wait_queue_t);
}
inline void join_add(FiberData *d, bf::context *ctx) {
  std::uint64_t id = corotracer_id(d->co);
  if (!id)
    return;
  JoinTable &t = joins();
  d->join_q = join_queue(ctx);
  {
    std::lock_guard<std::mutex> lk(t.mtx);
    t.ids[d->join_q] = id;
  }
  t.filter[JoinTable::bucket(d->join_q)].fetch_add(1, std::memory_order_release);
}
inline void join_remove(FiberData *d) noexcept {
  if (!d->join_q)
    return;
  JoinTable &t = joins();
  t.filter[JoinTable::bucket(d->join_q)].fetch_sub(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lk(t.mtx);
  t.ids.erase(d->join_q);
}
// The id of the fiber whose join queue q is, or 0.
inline std::uint64_t join_lookup(std::uintptr_t q) noexcept {
  JoinTable &t = joins();
  if (!t.filter[JoinTable::bucket(q)].load(std::memory_order_acquire))
    return 0;
  std::lock_guard<std::mutex> lk(t.mtx);
  auto it = t.ids.find(q);
  return it == t.ids.end() ? 0 : it->second;
}

// The fiber terminating on this thread: its pick_next() is no switch out
// (a plain pointer: nothing to destroy when the thread's storage goes).
inline thread_local bf::context *terminating = nullptr;

// Runs in context::terminate(), on the terminating fiber: its exit and its
// end. (Boost frees the context later, maybe never for a detached fiber the
// program outlives; the trace needs no more of it.)
struct Release final : bf::detail::fss_cleanup_function {
  void operator()(void *p) override {
    auto *d = static_cast<FiberData *>(p);
    terminating = bf::context::active();
    join_remove(d);
    corotracer_exit(d->co, nullptr);
    corotracer_destroy(d->co);
    d->co = nullptr;
    if (!d->in_props)
      delete d;
  }
};

} // namespace detail

// Algo with every scheduling decision recorded. Owned by Boost's scheduler
// (an intrusive_ptr); its state lives here, none in thread_local storage that
// has a destructor (only detail::terminating, a plain pointer), since Boost
// destroys the scheduler from its own thread_local destructor.
// Construct it on the thread whose scheduler it serves (install() does).
template <class Algo> class traced final : public Algo {
  static_assert(std::is_base_of_v<boost::fibers::algo::algorithm, Algo>,
                "Algo must be a Boost.Fiber scheduling algorithm");

public:
  template <class... Args> explicit traced(Args &&...args) : Algo(std::forward<Args>(args)...) {
    enabled_ = corotracer_init() == 0;
    if (!enabled_)
      return;
    // The main fiber exists before any hook sees it: recorded now as created
    // and running, so its first wake is never taken for a wake before a suspend.
    main_ = running_ = boost::fibers::context::active();
    stack_end_ = corotracer::user_site::thread_stack().end;
    main_data_.co = corotracer_create(
        0, "main", corotracer::user_site::find(__builtin_frame_address(0), stack_end_));
    corotracer_resume(main_data_.co);
  }

  // The scheduler's teardown (the main fiber joins the dispatcher) switches
  // back to the main fiber without awakened() or pick_next(): record that
  // wake and resume, then the main fiber's end.
  ~traced() override {
    flush(); // a switch out to the dispatcher, whose teardown comes next
    if (main_data_.parked) {
      // Woken by the dispatcher's teardown: no user line to name.
      corotracer_wake(main_data_.co, COROTRACER_SITE_UNKNOWN);
      corotracer_resume(main_data_.co);
    }
    corotracer_exit(main_data_.co, nullptr);
    corotracer_destroy(main_data_.co);
  }

  // The hooks scan for the user's line from their own frame (their callers'
  // frames are Boost's, then the user's): the adapter's frames below are
  // never the user's, so they are not scanned.
  void awakened(boost::fibers::context *ctx) noexcept override {
    if (enabled_)
      note_wake(ctx, __builtin_frame_address(0));
    Algo::awakened(ctx);
  }

  boost::fibers::context *pick_next() noexcept override {
    boost::fibers::context *next = Algo::pick_next();
    if (enabled_)
      note_switch(next, __builtin_frame_address(0));
    return next;
  }

private:
  using context = boost::fibers::context;
  using type = boost::fibers::type;
  // The fibers' properties are free for the adapter's data (see FiberData).
  static constexpr bool kProps =
      !std::is_base_of_v<boost::fibers::algo::algorithm_with_properties_base, Algo>;

  // The user's line on the stack of the running fiber cur, from the frame at
  // `from` (a hook's, on cur's stack) outwards.
  const void *site_of(context *cur, const void *from) noexcept {
    const void *end = cur == main_ ? stack_end_ : cur; // a worker's context sits atop its stack
    return sites_.find(from, end);
  }

  // ctx's data; a worker first seen is created (site: where the running
  // fiber is, scanned from `from`, a hook's frame). None for the dispatcher,
  // nor for a fiber that terminated (its data went with its fiber-specific
  // storage, or, as its properties, has no handle left). Inline up to the
  // properties (five calls a handoff).
  [[gnu::always_inline]] detail::FiberData *data(context *ctx, const void *from) noexcept {
    if (ctx == main_)
      return &main_data_;
    if (!ctx)
      return nullptr;
    if constexpr (kProps) { // only ours: Boost sets none under such an algorithm
      if (auto *d = static_cast<detail::FiberData *>(ctx->get_properties()))
        return d;
    }
    return ctx->is_context(type::worker_context) ? data_slow(ctx, from) : nullptr;
  }

  // data() for a worker without properties: its fiber-specific storage, else
  // created. Out of memory, nullptr: the fiber goes untraced (asked again at
  // its next event), the program never sees a bad_alloc.
  [[gnu::noinline]] detail::FiberData *data_slow(context *ctx, const void *from) noexcept {
    if (ctx == detail::terminating)
      return nullptr;
    detail::FiberData *d = nullptr;
    if constexpr (!kProps) {
      d = static_cast<detail::FiberData *>(ctx->get_fss_data(detail::fss_key()));
      if (d)
        return d;
    }
    d = new (std::nothrow) detail::FiberData(ctx);
    if (!d)
      return nullptr;
    try { // the termination's hook first: without it the fiber would never end in the trace
      static const boost::fibers::detail::fss_cleanup_function::ptr_t release{new detail::Release};
      ctx->set_fss_data(detail::fss_key(), release, d, true);
    } catch (...) {
      delete d;
      return nullptr;
    }
    if constexpr (kProps) {
      ctx->set_properties(d);
      d->in_props = true;
    }
    context *cur = running_;
    const void *site = cur && (cur == main_ || cur->is_context(type::worker_context))
                           ? site_of(cur, from)
                           : nullptr;
    d->co = corotracer_create(0, "fiber", site);
    try {
      detail::join_add(d, ctx);
    } catch (...) { // no memory: its joiners read as waits on a pointer
      d->join_q = 0;
    }
    return d;
  }

  // COROTRACER_FIBER_CHECK (examples/fiber builds with it): abort when
  // running_ is not what Boost says runs, so a Boost whose switches bypass
  // pick_next() fails the adapter's test instead of misplacing events.
  void check_running() const noexcept {
#ifdef COROTRACER_FIBER_CHECK
    context *a = context::active();
    if (a != running_ && !(running_ == nullptr && a->is_context(type::dispatcher_context))) {
      std::fputs("corotracer/boost_fiber.hpp: a switch bypassed pick_next()\n", stderr);
      std::abort();
    }
#endif
  }

  void note_wake(context *ctx, const void *from) noexcept {
    check_running();
    if (pending_.from) {
      // The dispatcher puts back the fiber that yielded to it: that wake is
      // in the pending switch (and the switch waits for the next fiber).
      if (ctx == pending_.ctx && pending_.from->yielded) {
        pending_.from->yielded = false;
        return;
      }
      flush(); // the dispatcher wakes another: the switch out comes first (and
               // a fiber first seen here is not taken for the pending one's child)
    }
    detail::FiberData *d = data(ctx, from);
    if (!d)
      return;
    if (d->yielded) { // recorded with its switch
      d->yielded = false;
      return;
    }
    // Woken from a fiber: its line. From the dispatcher (a remote wake, whose
    // notifier's thread queued ctx and left, or a timer): no user line is on
    // this stack and the caller is the adapter, so the site is unknown (as
    // when the scan finds no user line).
    context *cur = running_;
    bool user = cur && (cur == main_ || cur->is_context(type::worker_context));
    const void *site = user ? site_of(cur, from) : nullptr;
    corotracer_wake(d->co, site ? site : COROTRACER_SITE_UNKNOWN);
  }

  // A fiber's switch out to the dispatcher (Boost's round_robin keeps the
  // dispatcher in the ready queue, so every other switch is one), not yet
  // recorded: the dispatcher's own pick_next() writes it with the resume of
  // the fiber it picks, one stamp and one publish instead of two (~15 ns of
  // the traced cv handoff's ~60). The suspend is thus stamped after the
  // dispatcher's loop (release, remote and sleep queues: ~50 ns); anything
  // else first records it on its own: a wake (note_wake), the dispatcher
  // finding nothing to run (it goes to sleep), the teardown (~traced).
  struct Pending {
    detail::FiberData *from = nullptr; // nullptr: nothing pending
    context *ctx = nullptr;            // from's fiber
    const void *site = nullptr;
    corotracer_wait wait = COROTRACER_WAIT_NONE;
    std::uint64_t obj = 0;
    unsigned flags = 0;
  };

  // Record the pending switch out, if any, on its own.
  void flush() noexcept {
    if (!pending_.from)
      return;
    const Pending p = pending_;
    pending_.from = nullptr;
    corotracer_switch(p.from->co, p.site, p.wait, p.obj, p.flags, nullptr);
  }

  void note_switch(context *next, const void *fa) noexcept {
    check_running();
    context *cur = running_;
    // The fiber that called pick_next() hands the thread to next, or to the
    // dispatcher when there is none (nullptr here: not traced either way).
    running_ = next;
    if (cur == detail::terminating) // its exit is recorded: only the resume of next
      cur = detail::terminating = nullptr;
    detail::FiberData *from = cur && cur != next ? data(cur, fa) : nullptr;
    detail::FiberData *to = cur != next ? data(next, fa) : nullptr;
    if (pending_.from && !from) {
      // The dispatcher picks (it has no data): the switch out that ended in
      // it and the resume of next as one; the switch out alone when it found
      // nothing to run (the thread goes to sleep).
      const Pending p = pending_;
      pending_.from = nullptr;
      if (to)
        to->parked = false;
      corotracer_switch(p.from->co, p.site, p.wait, p.obj, p.flags, to ? to->co : nullptr);
      return;
    }
    flush(); // none is pending when a fiber picks: only the dispatcher runs after one
    Pending p;
    if (from) {
      p.from = from;
      p.ctx = cur;
      p.site = site_of(cur, fa);
      if (cur->wait_hook_.is_linked()) { // wait_is_linked(), inline
        // wait_link() has just pushed it at the back of a circular list: its
        // next node is the list's header, the wait queue inside the primitive.
        using traits = boost::intrusive::list_node_traits<void *>;
        p.obj = reinterpret_cast<std::uintptr_t>(traits::get_next(cur->wait_hook_.this_ptr()));
        p.wait = COROTRACER_WAIT_PTR;
        if (std::uint64_t id = detail::join_lookup(p.obj)) { // a join: waits for that fiber
          p.obj = id;
          p.wait = COROTRACER_WAIT_COROUTINE;
        }
      } else if (!cur->sleep_is_linked()) { // neither waiting nor sleeping: a yield
        p.flags = COROTRACER_SWITCH_RUNNABLE;
        from->yielded = true;
      }
      from->parked = true;
      if (!to && next != cur) { // to the dispatcher: recorded when it picks
        pending_ = p;
        return;
      }
    }
    if (to)
      to->parked = false;
    corotracer_switch(from ? from->co : nullptr, p.site, p.wait, p.obj, p.flags,
                      to ? to->co : nullptr);
  }

  bool enabled_ = false;
  context *main_ = nullptr;
  // The fiber running on this thread, as Boost's context::active() would say
  // (an exported call and a __tls_get_addr, ~8 ns, twice a handoff): every
  // switch while the scheduler lives goes through pick_next(), whose caller
  // is the running fiber and whose result (or the dispatcher, for nullptr)
  // runs next. Only the teardown switches without it (see ~traced).
  context *running_ = nullptr;
  const void *stack_end_ = nullptr;
  detail::FiberData main_data_{nullptr};
  Pending pending_;
  // The hooks' past scans (fibers blocking at one line block the same way).
  corotracer::user_site::Memo<16> sites_;
};

// Make this thread's Boost.Fiber scheduler use traced<Algo>(args...), or,
// when the process is not traced (no engine), Algo(args...) itself: an
// untraced run pays nothing, not even traced<>'s branch and extra call per
// hook (1.04x of plain in CPU per cv handoff, bench/bench-fiber.cpp). Call it
// once on each thread that runs fibers, before it starts any (Boost hands
// fibers already queued to the new algorithm). Boost owns the algorithm.
template <class Algo, class... Args> void install(Args &&...args) {
  if (corotracer_init() == 0)
    boost::fibers::use_scheduling_algorithm<traced<Algo>>(std::forward<Args>(args)...);
  else
    boost::fibers::use_scheduling_algorithm<Algo>(std::forward<Args>(args)...);
}

} // namespace corotracer::fiber

#endif // COROTRACER_BOOST_FIBER_HPP
