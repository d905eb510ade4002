// test-cpp-forms.cpp - every awaiter form through PromiseMixin, on a one-thread loop.
//
// Alone it checks that tracing changes nothing a coroutine sees (values, exceptions,
// symmetric transfer). Under `corotracer run` it also checks the probe's totals;
// tests/test-cpp-trace.sh checks the events per coroutine, by label, in the trace:
// the expected list there must match the forms below. The coroutine labelled
// "parked" is left suspended on purpose at the line marked PARK-SITE.
#include "coroTracer.h" // the reference's header name

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <stdexcept>
#include <string>
#include <thread>

#include "lib/check.h"

namespace {

std::deque<std::coroutine_handle<>> ready; // the loop's run queue
std::coroutine_handle<> parked;            // never resumed; reachable, so not a leak
std::string log;                           // what the coroutines saw

// A lazy coroutine that can also be awaited: co_await runs it by symmetric
// transfer and its final_suspend transfers back (recording the wake).
template <class P> struct Co {
  using promise_type = P;
  std::coroutine_handle<P> h;
  explicit Co(std::coroutine_handle<P> hh) : h(hh) {
  }
  Co(Co &&o) noexcept : h(std::exchange(o.h, {})) {
  }
  ~Co() {
    if (h)
      h.destroy();
  }
  bool await_ready() {
    return false;
  }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> parent) {
    h.promise().parent = parent;
    return h;
  }
  int await_resume() {
    return h.promise().value;
  }
  // The parent waits for this coroutine to finish.
  corotracer::WaitOn corotracer_wait_on() const noexcept {
    return corotracer::WaitOn::coroutine(h);
  }
};

template <class Self> struct PromiseBase : corotracer::PromiseMixin {
  std::coroutine_handle<> parent;
  void (*wake_parent)(std::coroutine_handle<>) = nullptr;
  int value = 0;
  explicit PromiseBase(const char *label) : corotracer::PromiseMixin(label) {
  }
  Co<Self> get_return_object() {
    return Co<Self>(std::coroutine_handle<Self>::from_promise(static_cast<Self &>(*this)));
  }
  std::suspend_always initial_suspend() noexcept {
    return {};
  }
  struct Final {
    bool await_ready() noexcept {
      return false;
    }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Self> h) noexcept {
      if (!h.promise().parent)
        return std::noop_coroutine();
      if (h.promise().wake_parent)
        h.promise().wake_parent(h.promise().parent);
      return h.promise().parent;
    }
    void await_resume() noexcept {
    }
  };
  Final final_suspend() noexcept {
    return {};
  }
  void return_value(int v) {
    value = v;
  }
  void unhandled_exception() {
    std::abort();
  }
};

// The promise the reference's users write: derive, nothing else. Labels come from
// the coroutine's first argument (promises may take the coroutine's arguments).
struct Promise : PromiseBase<Promise> {
  template <class... A> explicit Promise(const char *label, A &&...) : PromiseBase(label) {
  }
};

// A promise with its own await_transform (ints become a "sleep"), composed with
// the mixin's: noinline + COROTRACER_CALLER keep the site on the co_await line.
struct OwnPromise : PromiseBase<OwnPromise> {
  OwnPromise() : PromiseBase("own") {
  }
  struct Sleep {
    int ticks;
    bool await_ready() {
      return ticks == 0;
    }
    void await_suspend(std::coroutine_handle<> h) {
      ready.push_back(h);
    }
    int await_resume() {
      return ticks;
    }
  };
  template <class A> [[gnu::noinline]] auto await_transform(A &&a) {
    if constexpr (std::is_same_v<std::remove_cvref_t<A>, int>)
      return traced(Sleep{a}, COROTRACER_CALLER);
    else
      return traced(static_cast<A &&>(a), COROTRACER_CALLER);
  }
};

struct VoidAw { // await_suspend returns void: queued, resumed by the loop
  bool await_ready() {
    return false;
  }
  void await_suspend(std::coroutine_handle<> h) {
    ready.push_back(h);
  }
  int await_resume() {
    return 1;
  }
};

struct BoolAw { // returns `suspend`: false means "not suspended after all"
  bool suspend;
  bool await_ready() {
    return false;
  }
  bool await_suspend(std::coroutine_handle<> h) {
    if (suspend)
      ready.push_back(h);
    return suspend;
  }
  int await_resume() {
    return 2;
  }
};

struct SelfAw { // returns the coroutine's own handle: resumes it at once
  bool await_ready() {
    return false;
  }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> h) {
    return h;
  }
  int await_resume() {
    return 3;
  }
};

struct ThrowAw { // throws from await_resume after a real suspension
  bool await_ready() {
    return false;
  }
  void await_suspend(std::coroutine_handle<> h) {
    ready.push_back(h);
  }
  int await_resume() {
    throw std::runtime_error("from await_resume");
  }
};

struct ThrowSuspendAw { // throws from await_suspend: the coroutine resumes with it
  bool await_ready() {
    return false;
  }
  void await_suspend(std::coroutine_handle<>) {
    throw std::runtime_error("from await_suspend");
  }
  int await_resume() {
    return 0;
  }
};

struct Pinned { // reached through operator co_await; neither copyable nor movable
  struct Aw : VoidAw {
    Aw() = default;
    Aw(const Aw &) = delete;
  };
  Aw operator co_await() {
    return {};
  }
};

struct ParkAw { // keeps the handle and never resumes it; says it waits on fd 42
  bool await_ready() {
    return false;
  }
  void await_suspend(std::coroutine_handle<> h) {
    parked = h;
  }
  void await_resume() {
  }
  corotracer::WaitOn corotracer_wait_on() const {
    return corotracer::WaitOn::fd(42);
  }
};

Co<Promise> child(const char *, int x) {
  co_await std::suspend_never{}; // await_ready: nothing recorded
  co_return x * 10;
}

// Each coroutine stays within the 8 slots of its station, so the engine never
// loses an event however late it harvests.
Co<Promise> void_form(const char *) {
  int sum = co_await VoidAw{};
  VoidAw lv;
  sum += co_await lv; // an lvalue awaiter
  log += "void " + std::to_string(sum) + ";";
  co_return sum;
}

Co<Promise> bool_form(const char *) {
  int sum = co_await BoolAw{true};
  sum += co_await BoolAw{false};
  log += "bool " + std::to_string(sum) + ";";
  co_return sum;
}

Co<Promise> other_forms(const char *) {
  int sum = co_await SelfAw{};
  co_await std::suspend_never{};
  sum += co_await Pinned{};
  log += "other " + std::to_string(sum) + ";";
  co_return sum;
}

Co<Promise> awaits_child(const char *) {
  auto c = child("child", 4);
  c.h.promise().wake_parent = [](std::coroutine_handle<> p) {
    corotracer::wake(std::coroutine_handle<Promise>::from_address(p.address()));
  };
  int v = co_await c; // symmetric transfer in both directions
  log += "child " + std::to_string(v) + ";";
  co_return v;
}

Co<Promise> throws(const char *) {
  try {
    co_await ThrowAw{};
  } catch (const std::runtime_error &e) {
    log += std::string(e.what()) + ";";
  }
  try {
    co_await ThrowSuspendAw{};
  } catch (const std::runtime_error &e) {
    log += std::string(e.what()) + ";";
  }
  co_return 0;
}

Co<OwnPromise> own() {
  int t = co_await 2;
  t += co_await 0; // await_ready: nothing recorded
  t += co_await VoidAw{};
  log += "own " + std::to_string(t) + ";";
  co_return t;
}

Co<Promise> park(const char *) {
  co_await ParkAw{}; // PARK-SITE
  co_return 0;
}

} // namespace

int main(int argc, char **argv) {
  int traced = corotracer::InitTracer() == 0;
  {
    Co<Promise> cs[] = {void_form("void"), bool_form("bool"), other_forms("other"),
                        awaits_child("awaits_child"), throws("throws")};
    Co<OwnPromise> o = own();
    Co<Promise> p = park("parked");
    for (auto &c : cs)
      ready.push_back(c.h);
    ready.push_back(o.h);
    ready.push_back(p.h);
    while (!ready.empty()) {
      auto h = ready.front();
      ready.pop_front();
      h.resume();
    }
    for (auto &c : cs)
      ASSERT(c.h.done());
    ASSERT(o.h.done());
    ASSERT(!p.h.done());
    ASSERT_PTR_EQ(parked.address(), p.h.address());
    p.h = {}; // stays suspended, never destroyed
  }
  for (int i = 0; i < 2; i++) { // the second frame takes the first one's memory: ids must differ
    Co<Promise> a = child("again", i);
    a.h.resume();
    ASSERT(a.h.done());
  }
  std::printf("%s\n", log.c_str());
  ASSERT_STR_EQ(log.c_str(),
                "child 40;bool 4;other 4;from await_resume;from await_suspend;void 2;own 3;");
  if (traced) {
    // The event lists of tests/test-cpp-trace.sh: 44 events.
    std::uint64_t recorded = 0, dropped = 0;
    corotracer_stats(&recorded, &dropped);
    std::printf("recorded %llu dropped %llu\n", (unsigned long long)recorded,
                (unsigned long long)dropped);
    ASSERT_UINT64_EQ(dropped, 0);
    ASSERT_UINT64_EQ(recorded, 44);
  }
  // argv[1]: ms to run on before exiting, so that the engine reads our module
  // map while we live (a program that ends within a millisecond can beat it)
  // and "parked" is seen abandoned by a live program, not caught by the exit.
  if (argc > 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(argv[1])));
  return 0;
}
