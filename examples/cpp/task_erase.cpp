// task_erase.cpp - a user's own task type on corotracer::PromiseMixin, its
// tasks kept in a std::map by their owner, each waiting for a Reply. Half the
// replies come; on a timeout the owner erases every task. With --bug the
// tasks still waiting are erased as they are (destroyed while waiting: nobody
// ever sets their reply); the twin resumes each (cancelled) before erasing it.
// tests/test-cpp-task.sh checks the report names the wait's line, and the
// erase's as the destroyer, for the bug and nothing for the twin.
#include <chrono>
#include <coroutine>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>
#include <utility>

#include "corotracer.hpp"

namespace {

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

// A one-shot reply: one waiting task, resumed inline by set() with the value
// (-1: cancelled). The wake is recorded at set()'s caller.
struct Reply {
  std::coroutine_handle<Task::promise_type> waiter;
  int value = 0;
  bool is_set = false;

  [[gnu::noinline]] void set(int v) {
    value = v;
    is_set = true;
    if (auto h = std::exchange(waiter, nullptr)) {
      corotracer::wake(h, COROTRACER_CALLER);
      h.resume();
    }
  }
  struct Awaiter {
    Reply &r;
    bool await_ready() const noexcept {
      return r.is_set;
    }
    void await_suspend(std::coroutine_handle<Task::promise_type> h) noexcept {
      r.waiter = h;
    }
    int await_resume() const noexcept {
      return r.value;
    }
    corotracer::WaitOn corotracer_wait_on() const noexcept {
      return corotracer::WaitOn::ptr(&r);
    }
  };
  Awaiter operator co_await() noexcept {
    return {*this};
  }
};

struct Counts {
  int answered = 0, finished = 0;
};

Task request(Reply &reply, Counts &n) {
  int v = co_await reply; // the wait the report names
  n.answered += v >= 0;
  n.finished++;
}

} // namespace

int main(int argc, char **argv) {
  const bool bug = argc > 1 && std::strcmp(argv[1], "--bug") == 0;
  enum { N = 4 };
  Reply replies[N];
  Counts n;
  std::map<int, Task> pending;
  for (int i = 0; i < N; i++)
    pending.emplace(i, request(replies[i], n));
  for (int i = 0; i < N / 2; i++) // half the replies come
    replies[i].set(i);
  // The timeout for the others. Their waits last at least this long, whatever the load.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int i = 0; i < N; i++) {
    if (!bug && !replies[i].is_set)
      replies[i].set(-1); // the twin: resume the task, cancelled, before dropping it
    pending.erase(i);     // the bug: a task still waiting is destroyed here
  }
  std::printf("%d answered, %d of %d finished\n", n.answered, n.finished, N);
  return 0;
}
