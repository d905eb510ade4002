// cpp-dwait.cpp - a C++20 program (PromiseMixin, include/corotracer.hpp) whose owner destroys
// its coroutine frames at shutdown, as RAII code does (tests/test-report-sched.sh).
//
//   cpp-dwait bug | ok
//
// An event is set before anyone waits on it. The waiter co_awaits it: in bug, the awaiter does
// not check whether it is already set, so the waiter parks and is never woken (set() woke
// nobody); in ok, it checks and goes on. A second coroutine waits on another event that main
// sets later, which wakes it. 1.5 s later main returns and the Task objects destroy the frames.
// Exit 3 when not traced.
#include "corotracer.hpp"

#include <chrono>
#include <cstring>
#include <exception>
#include <thread>
#include <utility>

namespace {

struct Task {
  struct promise_type : corotracer::PromiseMixin {
    template <class... A> explicit promise_type(const char *label, A &...) : PromiseMixin(label) {
    }
    Task get_return_object() {
      return Task{std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_never initial_suspend() noexcept {
      return {};
    }
    std::suspend_always final_suspend() noexcept {
      returned();
      return {};
    }
    void return_void() noexcept {
    }
    void unhandled_exception() noexcept {
      std::terminate();
    }
  };
  using Handle = std::coroutine_handle<promise_type>;
  Handle h;
  explicit Task(Handle hh) : h(hh) {
  }
  Task(Task &&o) noexcept : h(std::exchange(o.h, {})) {
  }
  ~Task() { // the owner frees the frame, suspended or finished
    if (h)
      h.destroy();
  }
};

// A one-shot event: set() wakes the coroutine waiting on it, if any.
struct Event {
  bool is_set = false;
  Task::Handle waiter;
  void set() {
    is_set = true;
    if (Task::Handle h = std::exchange(waiter, {})) {
      corotracer::wake(h);
      h.resume();
    }
  }
  struct Awaiter {
    Event &ev;
    bool check; // false: the bug, an event set before the wait is missed
    bool await_ready() const noexcept {
      return check && ev.is_set;
    }
    void await_suspend(Task::Handle h) const noexcept {
      ev.waiter = h;
    }
    void await_resume() const noexcept {
    }
    corotracer::WaitOn corotracer_wait_on() const noexcept {
      return corotracer::WaitOn::ptr(&ev);
    }
  };
  Awaiter wait(bool check) {
    return {*this, check};
  }
};

Task waiter(const char *, Event &ev, bool check) {
  co_await ev.wait(check); // WAIT-SITE
}

} // namespace

int main(int argc, char **argv) {
  bool ok = argc == 2 && !std::strcmp(argv[1], "ok");
  if (!ok && (argc != 2 || std::strcmp(argv[1], "bug")))
    return 2;
  if (corotracer::InitTracer() != 0)
    return 3;
  Event ready, tick;
  ready.set(); // before anyone waits
  Task w = waiter("waiter", ready, ok);
  Task t = waiter("ticker", tick, true);
  tick.set(); // wakes the ticker
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  return 0; // t and w destroy their frames
}
