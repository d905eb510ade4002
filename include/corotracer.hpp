// corotracer.hpp - the C++20 SDK: trace coroutines by deriving their promise from PromiseMixin.
//
//   #include "corotracer.hpp"                  // or the reference's "coroTracer.h"
//   int main() { corotracer::InitTracer(); ... }
//   struct promise_type : corotracer::PromiseMixin { ... };
//
// Header-only over the C probe (include/corotracer.h, link -lcorotracer). Every
// co_await in a coroutine whose promise derives from PromiseMixin records a
// suspend (site = the co_await expression) and a resume; the promise's
// lifetime records create and destroy. Untraced, about 1 ns per co_await
// (the out-of-line await_transform call; docs/BENCHMARKS.md).
// docs/CPP_SDK.md has the rules for each awaiter form and how to compose with a
// promise's own await_transform.
#ifndef COROTRACER_HPP
#define COROTRACER_HPP

#include <atomic>
#include <concepts>
#include <coroutine>
#include <cstdint>
#include <source_location>
#include <type_traits>
#include <utility>

#include "corotracer.h"
#include "corotracer/user_site.hpp"

namespace corotracer {

// Attach to the engine (optional: the first traced call attaches). Returns 0
// when tracing, a negative errno otherwise (see corotracer_init); the
// reference returned void, so ignoring the result is fine.
inline int InitTracer() noexcept {
  return corotracer_init();
}

// A text site (corotracer_site) naming the caller's line, file and function:
// pass it wherever a site is taken (corotracer::wake, the C calls). The probe
// hands out one token per call site (its cache keys on the literals the
// compiler passes); NULL when untraced. noexcept; owns nothing.
inline const void *site(const char *file = __builtin_FILE(), unsigned line = __builtin_LINE(),
                        const char *function = __builtin_FUNCTION()) noexcept {
  return corotracer_site(file, line, function);
}
#if defined(__cpp_lib_source_location)
// The same for a std::source_location (where the library has it).
inline const void *site(const std::source_location &loc) noexcept {
  return corotracer_site(loc.file_name(), loc.line(), loc.function_name());
}
#endif

// What a suspension waits for. An awaiter that defines
//   corotracer::WaitOn corotracer_wait_on() const;
// has it recorded with each suspend, so the report can name the fd or object.
struct WaitOn {
  corotracer_wait kind = COROTRACER_WAIT_NONE;
  std::uint64_t obj = 0;
  static WaitOn fd(int fd) noexcept {
    return {COROTRACER_WAIT_FD, static_cast<std::uint64_t>(fd)};
  }
  static WaitOn ptr(const void *p) noexcept {
    return {COROTRACER_WAIT_PTR, reinterpret_cast<std::uintptr_t>(p)};
  }
  // Waits for another coroutine to finish (an awaited child task, a join):
  // the report then puts a coroutine stuck behind a stuck one in that one's
  // finding, with the chain. Its handle from corotracer_create (NULL: none).
  static WaitOn coroutine(const corotracer_co *co) noexcept {
    std::uint64_t id = corotracer_id(co);
    return {id ? COROTRACER_WAIT_COROUTINE : COROTRACER_WAIT_NONE, id};
  }
  // The same for a coroutine whose promise derives from PromiseMixin.
  template <class P> static WaitOn coroutine(std::coroutine_handle<P> h) noexcept {
    return coroutine(h ? h.promise().tracer_co() : nullptr);
  }
};

namespace detail {

template <class A>
concept member_co_await = requires(A &&a) {
  static_cast<A &&>(a).operator co_await();
};
template <class A>
concept free_co_await = requires(A &&a) {
  operator co_await(static_cast<A &&>(a));
};

// The awaiter `co_await a` would use: the result of operator co_await, or a
// itself (as a reference, so the caller decides whether to copy).
template <class A> decltype(auto) get_awaiter(A &&a) {
  if constexpr (member_co_await<A>)
    return static_cast<A &&>(a).operator co_await();
  else if constexpr (free_co_await<A>)
    return operator co_await(static_cast<A &&>(a));
  else
    return static_cast<A &&>(a);
}

template <class A> using awaiter_t = decltype(get_awaiter(std::declval<A>()));

// Wraps an awaiter so that its suspension is recorded. Inner is a value type
// or an lvalue reference. Lives in the coroutine frame for the whole co_await.
template <class Inner> struct Traced {
  Inner inner;
  corotracer_co *co;
  const void *site;
  bool suspended = false; // await_suspend ran: await_resume owes a resume

  bool await_ready() noexcept(noexcept(inner.await_ready())) {
    return inner.await_ready();
  }

  template <class P> auto await_suspend(std::coroutine_handle<P> h) {
    using R = decltype(inner.await_suspend(h));
    // Copy what we need first: once the inner awaiter has the handle, another
    // thread may resume and even destroy the frame that holds *this.
    corotracer_co *c = co;
    const void *s = site;
    WaitOn w;
    if constexpr (requires { inner.corotracer_wait_on(); })
      w = inner.corotracer_wait_on();
    suspended = true;
    // Recorded before the handle escapes, so it always precedes the resume.
    corotracer_suspend(c, s, w.kind, w.obj);
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    try {
#endif
      if constexpr (std::is_same_v<R, bool>) {
        if (inner.await_suspend(h))
          return true;
        // Not suspended after all: the awaiter found what it waited for. Its
        // suspend is already on record, so record that it woke itself; the
        // resume follows in await_resume, as for any other suspension.
        corotracer_wake(c, s);
        return false;
      } else {
        return inner.await_suspend(h);
      }
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    } catch (...) {
      // The coroutine resumes here with the exception: keep the trace honest.
      corotracer_resume(c);
      throw;
    }
#endif
  }

  // The resume is recorded before the inner await_resume runs, so a throwing
  // await_resume leaves the coroutine recorded as running (as it is).
  decltype(auto) await_resume() noexcept(noexcept(inner.await_resume())) {
    if (suspended)
      corotracer_resume(co);
    return inner.await_resume();
  }
};

// Probe id of a new coroutine: its promise's address in bits 0-47, a creation
// count in bits 48-62. malloc hands a destroyed frame's memory to the next
// coroutine at once, and two coroutines sharing an id would merge in the
// trace; bit 63 stays clear (the probe's own ids have it set).
inline std::uint64_t coroutine_id(const void *promise) noexcept {
  static std::atomic<std::uint64_t> created{0};
  std::uint64_t n = created.fetch_add(1, std::memory_order_relaxed) & 0x7fff;
  return (reinterpret_cast<std::uintptr_t>(promise) & ((std::uint64_t{1} << 48) - 1)) | n << 48;
}

// The site that destroyed a traced coroutine: on this thread's stack, the
// innermost frame of the user's that is not teardown code (the promise's and
// the task's destructors, the coroutine's destroy clone: user_site::Skip), so
// the owner's line that erased or reset the task; nullptr when not found (on
// a stack of the runtime's own, or kMaxWords words without one): the probe
// then names ~PromiseMixin's caller. Called only when traced; the first call
// reads the executable's symbol table. noinline: its frame starts the scan.
[[gnu::noinline]] inline const void *destroyer_site() noexcept {
  return user_site::find_on_thread(__builtin_frame_address(0), user_site::Skip::teardown);
}

// Binds an xvalue whose object is known to outlive the reference.
template <class T> constexpr T &lref(T &&t) noexcept {
  return t;
}

// Store an awaiter held as A&&: a prvalue result (of operator co_await) by
// value, an lvalue by reference, an xvalue by value (moved) when it may not
// outlive the caller, by reference when it does (operand of co_await).
template <class Aw, bool operand_lives>
using stored_t = std::conditional_t<
    std::is_rvalue_reference_v<Aw>,
    std::conditional_t<operand_lives, std::remove_reference_t<Aw> &, std::remove_cvref_t<Aw>>, Aw>;

// The Traced awaiter over a, holding the awaiter as Inner (see stored_t).
template <class Inner, class A>
Traced<Inner> make_traced(A &&a, corotracer_co *co, const void *site) {
  if constexpr (std::is_lvalue_reference_v<Inner>)
    return {lref(get_awaiter(static_cast<A &&>(a))), co, site};
  else
    return {get_awaiter(static_cast<A &&>(a)), co, site};
}

} // namespace detail

// Base of a traced promise_type. Records the coroutine's creation (id: the
// promise's address in the low 48 bits, see detail::coroutine_id; label
// optional, copied by the probe) and destruction (site: the destroyer's line,
// past the task's destructors), and through await_transform
// every co_await's suspend and resume. The probe owns the handle it returns;
// this object releases it on destruction. Not copyable: a promise lives in
// its frame.
class PromiseMixin {
public:
  // noinline: the creation site is the return address, inside the coroutine's
  // ramp (or the promise's constructor when that is not inlined, e.g. -O0).
  [[gnu::noinline]] PromiseMixin() noexcept
      : co_(corotracer_create(detail::coroutine_id(this), nullptr, COROTRACER_CALLER)) {
  }
  [[gnu::noinline]] explicit PromiseMixin(const char *label) noexcept
      : co_(corotracer_create(detail::coroutine_id(this), label, COROTRACER_CALLER)) {
  }
  // Records the destroy at the line that caused it (detail::destroyer_site).
  ~PromiseMixin() {
    if (co_)
      corotracer_destroy_at(co_, detail::destroyer_site());
  }
  PromiseMixin(const PromiseMixin &) = delete;
  PromiseMixin &operator=(const PromiseMixin &) = delete;

  // Called by the compiler for `co_await a`. noinline on purpose: its return
  // address lies on the co_await line of the coroutine body, which is the site
  // the report prints. The operand lives until the end of the full
  // expression, so it is held by reference (non-movable awaitables work).
  template <class A>
  [[gnu::noinline]] detail::Traced<detail::stored_t<detail::awaiter_t<A>, true>>
  await_transform(A &&a) {
    return detail::make_traced<detail::stored_t<detail::awaiter_t<A>, true>>(
        static_cast<A &&>(a), co_, COROTRACER_CALLER);
  }

  // For a promise with its own await_transform: wrap the awaitable it returns.
  // site: pass COROTRACER_CALLER from a [[gnu::noinline]] await_transform
  // (docs/CPP_SDK.md). An rvalue awaitable is moved into the result; with an
  // operator co_await, its awaiter is kept instead, which must not refer to
  // the (temporary) awaitable.
  template <class A>
  detail::Traced<detail::stored_t<detail::awaiter_t<A>, false>> traced(A &&a, const void *site) {
    return detail::make_traced<detail::stored_t<detail::awaiter_t<A>, false>>(static_cast<A &&>(a),
                                                                              co_, site);
  }

  // Record that the coroutine returned: call it from your final_suspend (the
  // promise type defines that itself). A finished coroutine then never reads
  // as parked (a lost wakeup) in the report; not destroyed, it is a leak only.
  // noinline: the site is the caller, i.e. final_suspend.
  [[gnu::noinline]] void returned(const void *site = nullptr) noexcept {
    corotracer_exit(co_, site ? site : COROTRACER_CALLER);
  }

  // The probe's handle (NULL when untraced), for calls to the C API.
  corotracer_co *tracer_co() const noexcept {
    return co_;
  }

private:
  corotracer_co *co_;
};

// Record that the scheduler made h's coroutine runnable: call it where the
// wake decision is taken, before h is queued or resumed. site: NULL for the
// caller (noinline so the caller is the user's code); pass COROTRACER_CALLER
// from inside a scheduler primitive to name its caller.
template <class P>
requires std::derived_from<P, PromiseMixin>
[[gnu::noinline]] void wake(std::coroutine_handle<P> h, const void *site = nullptr) noexcept {
  corotracer_wake(h.promise().tracer_co(), site ? site : COROTRACER_CALLER);
}

} // namespace corotracer

#endif // COROTRACER_HPP
