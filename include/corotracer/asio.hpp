// corotracer/asio.hpp - trace Asio's pending operations: one compiler flag, no source change.
//
//   standalone Asio: c++ -DASIO_CUSTOM_HANDLER_TRACKING='"corotracer/asio.hpp"' ... -lcorotracer
//   Boost.Asio:      c++ -DBOOST_ASIO_CUSTOM_HANDLER_TRACKING='"corotracer/asio.hpp"' ...
//
// Pending operations are stand-in coroutines, one per object (a socket, an
// acceptor, a timer, an io_context for its posts; a second one for an
// operation started while the object's is pending elsewhere): an operation's
// start records a suspend, with the object as wait object (the socket's fd,
// else the address of the timer's or other object's implementation) and the
// user's line as site (corotracer/user_site.hpp; or, where Asio hands over
// the user's source location, as asio::use_awaitable_t<>() in a coroutine
// does, that location as a text site: corotracer_site); its handler's
// invocation records wake and resume (a submission, post and the like, is
// queued, not waiting: its start records the suspend and the wake at once,
// its invocation only the resume); when the handler returns without
// starting another operation on the same object, exit and destroy. A chain
// that goes on from its handler (an accept loop, a session's read then write
// then read) is thus one coroutine woken again and again, labelled with its
// first operation's name: an idle accept loop is parked where it was woken
// each time, which the report knows as likely idle. An operation destroyed
// without running (its io_context stopped and destroyed while it was
// pending, its handler dropped) is woken from the text site
// COROTRACER_DROPPED_FUNCTION names and left suspended: the report's
// lost_completion at the operation's start site, unless the stand-in was
// parked like an idle loop. One cancelled first (a timer's cancel(), a
// socket's close(): Asio's handler-tracking operation hook) was woken there
// and ends quietly: a clean stop. Untraced, each hook costs one branch.
// A thread waiting for a use_future operation's future is seen only through
// get(fut) below (std::future's wait has no Asio hook): a stand-in of its own,
// at the call's line, waiting for the operation's stand-in.
// docs/INTEGRATIONS.md has what it sees and what it does not.
#ifndef COROTRACER_ASIO_HPP
#define COROTRACER_ASIO_HPP

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <future>
#include <mutex>
#include <new>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "../corotracer.h"
#include "user_site.hpp"

// The function of the text site that wakes an operation destroyed without
// running (src/analysis/findings.h spells it again, CT_DROPPED_FUNCTION).
#define COROTRACER_DROPPED_FUNCTION "operation destroyed without running"

namespace corotracer::asio_tracking {

// Where a stand-in's current operation is: started and not yet completed,
// cancelled (it completes with operation_aborted, its handler queued), or its
// handler runs (or ran).
enum class OpState : unsigned char { pending, cancelled, running };

// A stand-in coroutine: the operations on one object, each started from the
// previous one's handler.
struct Op {
  corotracer_co *co = nullptr;
  const void *object;
  bool keyed; // in the table (else a one-off: another stand-in of the object is there)
  // The pending operation's wake site: a submission's start site (whoever
  // posted the function woke it), else COROTRACER_SITE_UNKNOWN (the
  // reactor or a timer completed it, in Asio's run loop).
  const void *waker = COROTRACER_SITE_UNKNOWN;
  // The pending operation is a submission, recorded at its start as queued:
  // its suspend and wake in one corotracer_switch (one stamp), so that its
  // handler's invocation records only the resume. wait and obj are its
  // suspend's, for a drop to suspend it again (dropped()).
  bool queued = false;
  corotracer_wait wait = COROTRACER_WAIT_NONE;
  std::uint64_t obj = 0;
  // The pending operation's site and kind (the tag of its operation's type,
  // handler included): the next step of an Asio composed operation, started
  // by this one's handler, has the same kind and takes this site (create()).
  const void *site = nullptr;
  const void *kind = nullptr;
  // Set by the start (pending), a cancel of the object (cancelled, with
  // cancel_site written under the table's lock before, read only by whoever
  // sees cancelled: release/acquire) and the handler's begin (running).
  std::atomic<OpState> state{OpState::pending};
  const void *cancel_site = nullptr;
};

// Base of Asio's operations (ASIO_INHERIT_TRACKED_HANDLER): which stand-in
// an operation belongs to. Asio owns the operation; the stand-in is the
// table's.
class tracked_handler {
public:
  Op *corotracer_op_ = nullptr;

protected:
  ~tracked_handler() = default;
};

namespace detail {

// The stand-ins of objects with an operation in flight or whose handler
// runs. Never freed: Asio may complete operations during exit. Built in
// static storage (an empty map allocates nothing), so that looking it up
// cannot throw in a noexcept hook.
struct Table {
  std::mutex mtx;
  std::unordered_map<const void *, Op *> ops;
};

inline Table &table() noexcept {
  alignas(Table) static unsigned char mem[sizeof(Table)];
  static Table *t = new (mem) Table;
  return *t;
}

// Traced: set by every io_context's construction (init()), on any thread,
// read by every hook on every thread. Stored with release and loaded with
// acquire, so that a thread that sees it set also sees the probe that
// corotracer_init() attached.
inline std::atomic<bool> &enabled() noexcept {
  static std::atomic<bool> on{false};
  return on;
}
inline bool traced() noexcept {
  return enabled().load(std::memory_order_acquire);
}

// The handler running on this thread: its stand-in, whose object's next
// operation it may start (then it goes on as that one: continued). Once
// continued, the stand-in is that operation's, which another thread may
// complete, even end, before the handler returns: not touched here again.
struct Running {
  Op *op;
  const void *object;
  bool continued;
};
// A plain pointer: nothing to destroy at thread exit.
inline thread_local Running *running = nullptr;

// The user's source location Asio passed for the operation being started on
// this thread (ASIO_HANDLER_LOCATION), or nullptr. A plain pointer: nothing
// to destroy at thread exit.
struct Loc {
  const char *file, *function;
  int line;
  const void *awaiting; // else: the awaiting coroutine's resume function, as a site
};
inline thread_local const Loc *current_loc = nullptr;

// How many of Asio's own location scopes are open on this thread: those its
// composed operations (async_read, async_write, async_read_until,
// async_connect over endpoints) open around each step they start, the first
// from the user's call, the next ones from the previous step's handler.
inline thread_local unsigned asio_steps = 0;
// The frame (__builtin_frame_address) of the composed operation's
// operator() that opened the outermost of those scopes, while asio_steps is
// not 0, and an address of its code: a first step's scan passes over it
// (user_site::find_first_step).
inline thread_local const void *asio_step_frame = nullptr;
inline thread_local const void *asio_step_pc = nullptr;

// Asio's own locations (its composed operations name their own header and
// function, "async_read"): the stack scan finds better.
inline bool user_file(const char *file) noexcept {
  return file && *file && !std::strstr(file, "/asio/") && !std::strstr(file, "/asio.hpp");
}

// s begins with prefix (a string literal): compared a character at a time,
// inline, reading no further than s's terminator (strncmp was a call per
// operation start, a strand pipeline's every stage).
template <std::size_t N> constexpr bool starts(const char *s, const char (&prefix)[N]) noexcept {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return ((s[I] == prefix[I]) && ...); // unrolled; stops at the first mismatch
  }
  (std::make_index_sequence<N - 1>{});
}

// A submission of a function to an executor (post, dispatch, defer,
// execute: io_context, strand, thread_pool), not an operation on an I/O
// object: its op_name says so (Asio's static strings).
inline bool submission(const char *op_name) noexcept {
  switch (op_name[0]) { // an I/O operation's name starts with "async_"
  case 'p':
    return starts(op_name, "post");
  case 'd':
    return starts(op_name, "dispatch") || starts(op_name, "defer");
  case 'e':
    return starts(op_name, "execute");
  case 'b':
    return starts(op_name, "bulk");
  default:
    return false;
  }
}

// claim()'s new stand-in for an operation on object: label, site: its
// create's; in the table unless sub, or object has one there. nullptr when no
// memory is left. Out of line: claim's common case (a handler going on) is a
// few loads inline in create.
[[gnu::noinline]] inline Op *claim_new(const void *object, const char *label, const void *site,
                                       bool sub) noexcept {
  Op *op = new (std::nothrow) Op{nullptr, object, false};
  if (!op) // no memory: that operation goes untraced
    return nullptr;
  Table &t = table();
  if (!sub) {
    try { // no memory for the map's node: a one-off
      std::lock_guard<std::mutex> lk(t.mtx);
      Op *&slot = t.ops[object];
      op->keyed = !slot;
      if (!slot)
        slot = op;
    } catch (...) {
    }
  }
  op->co = corotracer_create(0, label, site);
  return op;
}

// The stand-in for an operation on object, started now: the one whose
// handler runs on this thread when it is object's, or when the operation is a
// submission (sub: a handler that posts its next step goes on as that step:
// a strand pipeline is one stand-in per item, not one per stage), so that its
// chain goes on with no event but the start's; else a new one (label, site:
// its create's), in the table unless it is a submission (never cancelled by
// its object: no lock, no node per posted item) or object has one there
// (pending, or its handler runs on another thread: a one-off). nullptr when
// no memory is left.
inline Op *claim(const void *object, const char *label, const void *site, bool sub) noexcept {
  Running *run = running;
  if (run && !run->continued && (run->object == object || sub)) {
    run->continued = true;
    return run->op;
  }
  return claim_new(object, label, site, sub);
}

} // namespace detail

namespace detail {

// Frame is Asio's (or Boost.Asio's) awaitable_frame_base: the promise of an
// asio::awaitable coroutine. Known by the type's name, at compile time.
template <class Frame> constexpr bool awaitable_frame() noexcept {
  constexpr std::string_view name = __PRETTY_FUNCTION__;
  return name.find("asio::detail::awaitable_frame_base<") != std::string_view::npos;
}

// Reads the awaitable_frame_base members Asio keeps protected (the frame
// that awaits this one, and this one's coroutine), through the derived
// class's right to name them.
template <class Frame> struct frame_peek : Frame {
  static Frame *caller(Frame *f) noexcept {
    return f->*(&frame_peek::caller_);
  }
  static void *coroutine(Frame *f) noexcept {
    return (f->*(&frame_peek::coro_)).address();
  }
};

// The user's coroutine awaiting the operation that frame (the promise of
// Asio's initiating coroutine, in use_awaitable's do_init) starts: the
// resume function of the innermost awaiting coroutine that is neither
// Asio's nor ours (by the executable's symbol table, as the stack scan
// decides), plus one, since the report reads sites as return addresses; or
// nullptr. Both gcc and clang keep the resume function in a coroutine
// frame's first word. The report names that coroutine's function and the
// line of its definition: which of its co_awaits is waiting, the frame's
// suspend index, has no line the binary records.
template <class Frame> const void *awaiting(Frame *frame) noexcept {
  const user_site::detail::ExeMap &m = user_site::detail::exe();
  Frame *f = frame_peek<Frame>::caller(frame);
  for (int depth = 0; f && depth < 8; depth++, f = frame_peek<Frame>::caller(f)) {
    void *co = frame_peek<Frame>::coroutine(f);
    if (!co)
      return nullptr;
    std::uintptr_t fn;
    std::memcpy(&fn, co, sizeof fn);
    if (fn - m.lo < m.hi - m.lo && !user_site::detail::runtime_at(m, fn))
      return reinterpret_cast<const void *>(fn + 1);
  }
  return nullptr;
}

// What ASIO_HANDLER_LOCATION's `frame` names where it is not use_awaitable's
// do_init parameter (the macro's using-directive brings it in scope there
// only): nothing.
namespace lookup {
struct no_frame {};
inline constexpr no_frame frame{};
} // namespace lookup

} // namespace detail

// ASIO_HANDLER_LOCATION: the operation started in this scope was asked for
// at file:line in function (the use_awaitable_t's source_location); the
// operation's site is then that line, as a text site. Without a location
// (the plain use_awaitable object, redirect_error or as_tuple around it:
// Asio passes zeros) in use_awaitable's do_init, whose parameter `frame` is
// the initiating coroutine's promise, the site is the awaiting user
// coroutine (detail::awaiting). A location in Asio's own headers is a
// composed operation's step (detail::asio_steps). Scoped; nests: only a
// scope that set the thread's location puts the previous one back, which the
// scopes' nesting makes the same. Untraced (Asio's composed operations open
// one at every step), a branch and nothing else.
class location {
public:
  // Inlined, so that its frame address is the function's that opens it.
  template <class Frame>
  [[gnu::always_inline]] location(const char *file, int line, const char *function,
                                  const Frame &frame) noexcept {
    if (!detail::traced())
      return;
    const void *awaiting = nullptr;
    if constexpr (std::is_pointer_v<Frame>) {
      if constexpr (detail::awaitable_frame<std::remove_pointer_t<Frame>>())
        if (!detail::user_file(file) && frame)
          awaiting = detail::awaiting(frame);
    }
    if (detail::user_file(file) || awaiting) {
      loc_ = {file, function, line, awaiting};
      prev_ = detail::current_loc;
      detail::current_loc = &loc_;
      scope_ = Scope::loc;
    } else if (file && *file) {
      if (!detail::asio_steps++) {
        detail::asio_step_frame = __builtin_frame_address(0);
        detail::asio_step_pc = user_site::here();
      }
      scope_ = Scope::step;
    }
  }
  ~location() {
    if (scope_ == Scope::loc)
      detail::current_loc = prev_;
    else if (scope_ == Scope::step && !--detail::asio_steps)
      detail::asio_step_frame = nullptr;
  }
  location(const location &) = delete;
  location &operator=(const location &) = delete;

private:
  // loc: loc_ is the thread's location, prev_ the one before it; step: one
  // of Asio's, counted in asio_steps.
  enum class Scope : unsigned char { none, loc, step } scope_ = Scope::none;
  const detail::Loc *prev_ = nullptr; // (always set: spares gcc a maybe-uninitialized)
  detail::Loc loc_;
};

// ASIO_HANDLER_TRACKING_INIT (each io_context's construction): attach.
inline void init() noexcept {
  detail::enabled().store(corotracer_init() == 0, std::memory_order_release);
}

namespace detail {

// The past stack scans of this thread's operation starts (a handler that
// starts its next operation from one line leaves the same frames below
// create() each time). Trivially destructible: nothing to destroy at thread
// exit.
inline thread_local user_site::Memo<16> sites;

// An operation on a file descriptor (object_type: Asio's static string).
inline bool on_fd(const char *object_type) noexcept {
  return (object_type[0] == 's' && std::strcmp(object_type, "socket") == 0) ||
         (object_type[0] == 'd' && std::strcmp(object_type, "descriptor") == 0);
}

// The pending operation of the handler running on this thread, when the
// operation of kind on object started now is its next step: started in one
// of Asio's location scopes (a composed operation's step), on the same
// object, and of the same kind (the same composed operation and handler: the
// user's handler that a composed operation calls at its end starts an
// operation of another kind; one that starts the same kind again, as a read
// loop does, started the last one at the same line). Its site is then the
// composed operation's start, by the user's call, where a scan would find
// only Asio's completion of the previous step. nullptr otherwise.
inline const Op *composed_step(const void *object, const void *kind) noexcept {
  const Running *run = running;
  return asio_steps && run && !run->continued && run->object == object && run->op->kind == kind
             ? run->op
             : nullptr;
}

// Operation's handler is (or wraps) asio::use_future's promise_handler or
// packaged_handler (Asio's and Boost.Asio's spell them alike): its end sets a
// std::future the program may wait for in get(). Known by the type's name,
// at compile time, like strand_internal.
template <class Operation> constexpr bool future_op() noexcept {
  constexpr std::string_view name = __PRETTY_FUNCTION__;
  return name.find("asio::detail::promise_handler<") != std::string_view::npos ||
         name.find("asio::detail::packaged_handler<") != std::string_view::npos;
}

// The use_future operations this thread started by the user's call (not a
// composed operation's later step) since its last get(): how many, and the
// stand-in of the last one, by id (the Op may be gone by the time get()
// runs). Trivial: nothing to destroy at thread exit.
struct FutureStarts {
  std::uint64_t id;
  unsigned n;
};
inline thread_local FutureStarts future_starts = {0, 0};

// creation's traced part: records the start of the operation's stand-in and
// puts the stand-in in h (kind: the tag of the operation's type, kept with
// its site for composed_step). An I/O or timer operation is a suspend on its
// object, woken when it completes. A submission is queued to run, not
// waiting for anything: its suspend and its wake by the submitting line (the
// waker: the coroutine running here once the stand-in left, none when it was
// the handler's own) are one corotracer_switch, one stamp, written before
// Asio queues the function where another thread may run it; its invocation
// then records only the resume. Out of line: its frame is where the stack
// scan for the user's line starts. future: the operation's handler sets a
// use_future's future (future_op): a user's start is noted in future_starts.
[[gnu::noinline]] inline void create(tracked_handler &h, const void *kind, const char *object_type,
                                     void *object, std::uintmax_t native_handle,
                                     const char *op_name, bool future) noexcept {
  const Loc *loc = current_loc;
  const void *site = nullptr;
  const Op *step = nullptr;
  if (loc && loc->awaiting)
    site = loc->awaiting;
  else if (loc)
    site = corotracer_site(loc->file, loc->line > 0 ? (unsigned)loc->line : 0, loc->function);
  else if ((step = composed_step(object, kind)))
    site = step->site;
  else if (asio_steps) // a composed operation's first step: its operator() passed over
    site = user_site::find_first_step(__builtin_frame_address(0), asio_step_frame, asio_step_pc);
  if (!site)
    site = sites.find_on_thread(__builtin_frame_address(0));
  bool sub = submission(op_name);
  Op *op = claim(object, op_name, site, sub);
  if (!op)
    return;
  op->queued = sub;
  if (sub) {
    op->waker = site;
    op->wait = COROTRACER_WAIT_PTR;
    op->obj = reinterpret_cast<std::uintptr_t>(object);
    corotracer_switch(op->co, site, op->wait, op->obj, COROTRACER_SWITCH_RUNNABLE, nullptr);
  } else {
    op->waker = COROTRACER_SITE_UNKNOWN;
    // Release: whoever read cancel_site for the previous operation did so
    // before, and a cancel that sees pending (acquire) may write it again.
    op->state.store(OpState::pending, std::memory_order_release);
    bool fd = on_fd(object_type) && native_handle <= INT32_MAX;
    op->wait = fd ? COROTRACER_WAIT_FD : COROTRACER_WAIT_PTR;
    op->obj =
        fd ? static_cast<std::uint64_t>(native_handle) : reinterpret_cast<std::uintptr_t>(object);
    corotracer_suspend(op->co, site, op->wait, op->obj);
  }
  op->site = site;
  op->kind = kind;
  h.corotracer_op_ = op;
  if (future && !step && op->co) {
    future_starts.id = corotracer_id(op->co);
    future_starts.n += future_starts.n < 2;
  }
}

} // namespace detail

namespace detail {

// Operation is a strand's own: its invoker, which the strand submits to the
// executor beneath it to run the functions queued on it (each of those has
// its own operation, traced). Known by the type's name (Asio's and
// Boost.Asio's spell it alike), at compile time. Not traced: it would be a
// stand-in for every run of the strand's queue, beside the stand-ins of the
// functions it runs.
template <class Operation> constexpr bool strand_internal() noexcept {
  constexpr std::string_view name = __PRETTY_FUNCTION__;
  return name.find("strand_executor_service::invoker<") != std::string_view::npos;
}

// The tag of an operation type (its handler's type included), as a kind:
// one address per type.
template <class Operation> inline constexpr char kind_of = 0;

} // namespace detail

namespace detail {

// How many traced completions on this thread have not run their handler:
// one counts from its construction to its handler's begin or its drop, the
// scope in which Asio destroys the operation's handler when it destroys the
// operation instead of running it. Trivial: nothing to destroy at thread exit.
inline thread_local unsigned completing = 0;

} // namespace detail

// ASIO_HANDLER_CREATION: an operation starts (unless it is a strand's
// invoker: the macro asks strand_internal of the operation's type; or one
// started while Asio destroys an operation's handler, completing: the
// handler's own unwinding, such as the post by which an awaitable's frames
// are destroyed, is part of that drop). kind: the tag of the operation's
// type (detail::kind_of, from the macro); Context: the execution context
// (unused); object_type, op_name: Asio's static strings. Inline, so that
// untraced an operation's start pays a branch, not a call. (The operation's
// type stays out of this template: the name of an instantiation over a
// handler's lambda is past what the report's symbolizer recognises as ours,
// and this function is inlined into the user's code.)
template <bool Future, class Context>
inline void creation(const void *kind, Context &, tracked_handler &h, const char *object_type,
                     void *object, std::uintmax_t native_handle, const char *op_name) noexcept {
  if (detail::traced() && !detail::completing)
    detail::create(h, kind, object_type, object, native_handle, op_name, Future);
}

namespace detail {

// A cancel, cancel_one, close or release of object: its pending operation
// completes with operation_aborted (its handler queued). Marks the object's
// stand-in cancelled, by the user's line here, if its operation is pending
// and the program's own handler cancels it (its stop: a drainer closing the
// acceptor, a timer cancelled). Not a cancel by an object's destructor after
// the loop stopped (no handler runs), nor one while Asio drops an operation
// (its handler owned the object): those come after the stop that lost the
// operation.
[[gnu::noinline]] inline void cancel(const void *object) noexcept {
  if (!running || completing)
    return;
  const void *site = sites.find_on_thread(__builtin_frame_address(0));
  Table &t = table();
  std::lock_guard<std::mutex> lk(t.mtx);
  auto it = t.ops.find(object);
  if (it == t.ops.end() || it->second->state.load(std::memory_order_acquire) != OpState::pending)
    return;
  it->second->cancel_site = site ? site : COROTRACER_SITE_UNKNOWN;
  OpState want = OpState::pending; // the handler may have begun meanwhile: then not cancelled
  it->second->state.compare_exchange_strong(want, OpState::cancelled, std::memory_order_release,
                                            std::memory_order_relaxed);
}

} // namespace detail

// ASIO_HANDLER_OPERATION: an operation on an object that is not an
// asynchronous one (Asio's static strings); those that complete its pending
// operations with operation_aborted are recorded (detail::cancel).
template <class Context>
inline void operation(Context &, const char *, void *object, std::uintmax_t,
                      const char *op_name) noexcept {
  if (detail::traced() &&
      (std::strcmp(op_name, "cancel") == 0 || std::strcmp(op_name, "cancel_one") == 0 ||
       std::strcmp(op_name, "close") == 0 || std::strcmp(op_name, "release") == 0))
    detail::cancel(object);
}

// ASIO_HANDLER_COMPLETION: an operation's handler is about to run (its
// invocation follows), or the operation is being destroyed without running.
class completion {
public:
  explicit completion(const tracked_handler &h) noexcept : op_(h.corotracer_op_) {
    if (op_)
      detail::completing++;
  }
  completion(const completion &) = delete;
  completion &operator=(const completion &) = delete;
  // A handler that threw (the exception leaves Asio's run()): it ended as
  // much as one that returned, so it ends the same way (invocation_end): the
  // thread no longer runs it, and unless it went on, its stand-in exits and
  // leaves the table. An operation that never began was destroyed without
  // running (end() clears op_).
  ~completion() {
    if (begun_)
      end();
    else if (op_)
      dropped();
  }

  // ASIO_HANDLER_INVOCATION_BEGIN: the stand-in is woken and runs.
  template <class... Args> void invocation_begin(const Args &...) noexcept {
    if (op_)
      begin();
  }

  // ASIO_HANDLER_INVOCATION_END: the handler returned. Unless it started
  // another operation on the same object (a chain), the stand-in is done.
  void invocation_end() noexcept {
    if (op_)
      end();
  }

private:
  // The traced parts of invocation_begin and invocation_end, out of line:
  // untraced, each of those is a branch in Asio's completion.
  // A cancelled operation's wake is its cancel's line; a queued submission
  // was woken at its start.
  [[gnu::noinline]] void begin() noexcept {
    detail::completing--;
    run_ = {op_, op_->object, false};
    prev_ = detail::running;
    detail::running = &run_;
    begun_ = true;
    if (!op_->queued) {
      bool cancelled =
          op_->state.exchange(OpState::running, std::memory_order_acquire) == OpState::cancelled;
      corotracer_wake(op_->co, cancelled ? op_->cancel_site : op_->waker);
    }
    corotracer_resume(op_->co);
  }
  [[gnu::noinline]] void end() noexcept {
    detail::running = prev_;
    begun_ = false;
    Op *op = op_;
    op_ = nullptr; // ended: not dropped
    if (run_.continued)
      return;
    forget(op);
    corotracer_exit(op->co, nullptr);
    corotracer_destroy(op->co);
    delete op;
  }
  // The operation was destroyed without running. Cancelled first (a clean
  // stop: its cancel completed it, the stop dropped the handler that would
  // have seen operation_aborted), its stand-in is woken by the cancel and
  // ends. Else it is woken from the dropped text site and left suspended,
  // never destroyed: the report's lost_completion at its start site, unless
  // it was parked like an idle loop (an accept loop's pending accept). A
  // queued submission, woken at its start, is suspended there again first:
  // a second wake of a coroutine already runnable would tell the report
  // nothing.
  [[gnu::noinline]] void dropped() noexcept {
    detail::completing--;
    Op *op = op_;
    op_ = nullptr;
    forget(op);
    if (op->queued)
      corotracer_suspend(op->co, op->waker, op->wait, op->obj);
    if (!op->queued && op->state.load(std::memory_order_acquire) == OpState::cancelled) {
      corotracer_wake(op->co, op->cancel_site);
      corotracer_destroy(op->co);
    } else {
      corotracer_wake(op->co, corotracer_site("", 0, COROTRACER_DROPPED_FUNCTION));
    }
    delete op;
  }
  // op's object leaves the table, if op is its entry.
  static void forget(Op *op) noexcept {
    if (!op->keyed)
      return;
    detail::Table &t = detail::table();
    std::lock_guard<std::mutex> lk(t.mtx);
    t.ops.erase(op->object);
  }

  Op *op_; // until the handler ends or the operation is dropped
  // Set by invocation_begin (untraced, a completion writes only op_ and begun_).
  detail::Running run_;
  detail::Running *prev_; // the handler this one runs inside of, if any
  bool begun_ = false;    // running: prev_ to restore
};

namespace detail {

// The start of a wait in get() on fut: a stand-in of its own for the calling
// thread, created and suspended at the user's line (the first frame outside
// the runtimes and this header), waiting for the use_future operation this
// thread started last, when it started exactly one since its last get().
// That operation is named by its stand-in's id (a wait for a coroutine: the
// report's join chains lead from the thread to the operation's finding), not
// by the future's shared state: Asio's hooks are given the operation but not
// its handler, which holds the promise (a private member of each operation
// type), so the state cannot be learnt at the operation's start without
// patching Asio. With none started, or several (which of them fut is, nothing
// tells), it waits on fut's address: shown at its line, tied to nothing.
[[gnu::noinline]] inline corotracer_co *wait_begin(const void *fut, const void **site) noexcept {
  FutureStarts fs = future_starts;
  future_starts = {0, 0};
  *site = sites.find_on_thread(__builtin_frame_address(0));
  if (!*site)
    *site = COROTRACER_SITE_UNKNOWN;
  corotracer_co *co = corotracer_create(0, "future::get", *site);
  if (fs.n == 1)
    corotracer_suspend(co, *site, COROTRACER_WAIT_COROUTINE, fs.id);
  else
    corotracer_suspend(co, *site, COROTRACER_WAIT_PTR, reinterpret_cast<std::uintptr_t>(fut));
  return co;
}

// The end of wait_begin's wait: get() returned or threw; woken (by the
// operation's completion, on Asio's thread: no site), resumed, ended. A
// broken promise (the operation was destroyed without running, its handler
// and promise with it) did not complete the wait: the stand-in is left
// suspended like the operation's own, and the report lists it under the
// operation's lost completion.
[[gnu::noinline]] inline void wait_end(corotracer_co *co, const void *site, bool broken) noexcept {
  if (broken)
    return;
  corotracer_wake(co, COROTRACER_SITE_UNKNOWN);
  corotracer_resume(co);
  corotracer_exit(co, site);
  corotracer_destroy(co);
}

} // namespace detail

// fut.get(), with the calling thread recorded as waiting for the
// asio::use_future operation fut belongs to (detail::wait_begin: the one
// this thread started last), at this call's line, from the call until get()
// returns or throws (the exception is rethrown). A future already ready, or
// untraced, is a plain get(). For std::future<T> (T, T& or void) and
// std::shared_future, as an lvalue or an rvalue.
template <class Future> decltype(auto) get(Future &&fut) {
  if (!detail::traced() || !fut.valid() ||
      fut.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    // Its operation ended: the starts so far are this get()'s, not the next
    // one's (a future made ready first, e.g. by a wait_for, left them counted).
    detail::future_starts = {0, 0};
    return fut.get();
  }
  struct Waiting {
    const void *site = nullptr;
    corotracer_co *co = nullptr;
    bool broken = false;
    ~Waiting() {
      detail::wait_end(co, site, broken);
    }
  } w;
  w.co = detail::wait_begin(&fut, &w.site);
  try {
    return fut.get();
  } catch (const std::future_error &) {
    // After a wait, a use_future operation's get() throws a future_error only
    // for a broken promise (its handler, and the promise with it, destroyed):
    // the error's code is not read, as the thread that broke the promise may
    // free the error meanwhile through libstdc++'s exception_ptr, whose
    // count ThreadSanitizer does not see (a race report under TSan).
    w.broken = true;
    throw;
  }
}

} // namespace corotracer::asio_tracking

// The macros Asio's handler tracking expects (asio/detail/handler_tracking.hpp),
// for standalone Asio and for Boost.Asio.
#define ASIO_INHERIT_TRACKED_HANDLER : public ::corotracer::asio_tracking::tracked_handler
#define ASIO_ALSO_INHERIT_TRACKED_HANDLER , public ::corotracer::asio_tracking::tracked_handler
#define ASIO_HANDLER_TRACKING_INIT ::corotracer::asio_tracking::init()
// `frame`: use_awaitable's do_init parameter where there is one, else the
// lookup namespace's (a block-scope using-directive: its name is seen only
// in the rest of that block, and a name of the block's own comes first).
#define COROTRACER_ASIO_ARGS_(...) __VA_ARGS__
#define ASIO_HANDLER_LOCATION(args)                                                                \
  using namespace ::corotracer::asio_tracking::detail::lookup;                                     \
  ::corotracer::asio_tracking::location tracked_location(COROTRACER_ASIO_ARGS_ args, frame)
// The operation: the second of the macro's arguments.
#define COROTRACER_ASIO_OP_(context, op, ...) op
#define ASIO_HANDLER_CREATION(args)                                                                \
  do {                                                                                             \
    if constexpr (!::corotracer::asio_tracking::detail::strand_internal<                           \
                      decltype(COROTRACER_ASIO_OP_ args)>())                                       \
      ::corotracer::asio_tracking::creation<                                                       \
          ::corotracer::asio_tracking::detail::future_op<decltype(COROTRACER_ASIO_OP_ args)>()>(   \
          &::corotracer::asio_tracking::detail::kind_of<decltype(COROTRACER_ASIO_OP_ args)>,       \
          COROTRACER_ASIO_ARGS_ args);                                                             \
  } while (0)
#define ASIO_HANDLER_COMPLETION(args)                                                              \
  ::corotracer::asio_tracking::completion tracked_completion args
#define ASIO_HANDLER_INVOCATION_BEGIN(args) tracked_completion.invocation_begin args
#define ASIO_HANDLER_INVOCATION_END tracked_completion.invocation_end()
#define ASIO_HANDLER_OPERATION(args) ::corotracer::asio_tracking::operation args
#define ASIO_HANDLER_REACTOR_REGISTRATION(args) (void)0
#define ASIO_HANDLER_REACTOR_DEREGISTRATION(args) (void)0
#define ASIO_HANDLER_REACTOR_READ_EVENT 1
#define ASIO_HANDLER_REACTOR_WRITE_EVENT 2
#define ASIO_HANDLER_REACTOR_ERROR_EVENT 4
#define ASIO_HANDLER_REACTOR_EVENTS(args) (void)0
#define ASIO_HANDLER_REACTOR_OPERATION(args) (void)0
#define BOOST_ASIO_INHERIT_TRACKED_HANDLER ASIO_INHERIT_TRACKED_HANDLER
#define BOOST_ASIO_ALSO_INHERIT_TRACKED_HANDLER ASIO_ALSO_INHERIT_TRACKED_HANDLER
#define BOOST_ASIO_HANDLER_TRACKING_INIT ASIO_HANDLER_TRACKING_INIT
#define BOOST_ASIO_HANDLER_LOCATION(args) ASIO_HANDLER_LOCATION(args)
#define BOOST_ASIO_HANDLER_CREATION(args) ASIO_HANDLER_CREATION(args)
#define BOOST_ASIO_HANDLER_COMPLETION(args) ASIO_HANDLER_COMPLETION(args)
#define BOOST_ASIO_HANDLER_INVOCATION_BEGIN(args) ASIO_HANDLER_INVOCATION_BEGIN(args)
#define BOOST_ASIO_HANDLER_INVOCATION_END ASIO_HANDLER_INVOCATION_END
#define BOOST_ASIO_HANDLER_OPERATION(args) ASIO_HANDLER_OPERATION(args)
#define BOOST_ASIO_HANDLER_REACTOR_REGISTRATION(args) (void)0
#define BOOST_ASIO_HANDLER_REACTOR_DEREGISTRATION(args) (void)0
#define BOOST_ASIO_HANDLER_REACTOR_READ_EVENT 1
#define BOOST_ASIO_HANDLER_REACTOR_WRITE_EVENT 2
#define BOOST_ASIO_HANDLER_REACTOR_ERROR_EVENT 4
#define BOOST_ASIO_HANDLER_REACTOR_EVENTS(args) (void)0
#define BOOST_ASIO_HANDLER_REACTOR_OPERATION(args) (void)0

#endif // COROTRACER_ASIO_HPP
