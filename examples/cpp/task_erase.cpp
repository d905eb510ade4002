// task_erase.cpp - a user's own task type on corotracer::PromiseMixin, its
// tasks kept in a std::map by their owner, each waiting on an Event. On a
// timeout the owner erases them. With --bug the waiting tasks are erased as
// they are (destroyed while waiting: nobody ever sets their event); without
// it each event is set first, so every task finishes before it is erased.
// tests/test-cpp-task.sh checks the report names the wait's line for the bug
// and nothing for the twin.
#include <chrono>
#include <coroutine>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>
#include <utility>

#include "corotracer.hpp"

namespace {

// A one-shot event: one waiter, resumed inline by set().
struct Event {
  std::coroutine_handle<> waiter;
  bool is_set = false;

  void set() {
    is_set = true;
    if (auto h = std::exchange(waiter, nullptr))
      h.resume();
  }
  struct Awaiter {
    Event &ev;
    bool await_ready() const noexcept {
      return ev.is_set;
    }
    void await_suspend(std::coroutine_handle<> h) noexcept {
      ev.waiter = h;
    }
    void await_resume() const noexcept {
    }
    corotracer::WaitOn corotracer_wait_on() const noexcept {
      return corotracer::WaitOn::ptr(&ev);
    }
  };
  Awaiter operator co_await() noexcept {
    return {*this};
  }
};

// The user's task: starts at once, owns its frame, destroys it with itself.
struct Task {
  struct promise_type : corotracer::PromiseMixin {
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
    }
  };
  explicit Task(std::coroutine_handle<promise_type> h) : h_(h) {
  }
  Task(Task &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {
  }
  Task &operator=(Task &&) = delete;
  ~Task() {
    if (h_)
      h_.destroy();
  }

private:
  std::coroutine_handle<promise_type> h_;
};

Task request(Event &reply, int &answered) {
  co_await reply; // the wait the report names
  answered++;
}

} // namespace

int main(int argc, char **argv) {
  const bool bug = argc > 1 && std::strcmp(argv[1], "--bug") == 0;
  enum { N = 4 };
  Event replies[N];
  int answered = 0;
  std::map<int, Task> pending;
  for (int i = 0; i < N; i++)
    pending.emplace(i, request(replies[i], answered));
  // The timeout: no reply came. The waits last at least this long, whatever the load.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int i = 0; i < N; i++) {
    if (!bug)
      replies[i].set(); // the twin: resume the task (as with a timeout error) before dropping it
    pending.erase(i);   // the bug: the task is destroyed while it waits
  }
  std::printf("%d of %d requests answered\n", answered, N);
  return 0;
}
