// sched.hpp - a small multi-threaded C++20 coroutine scheduler traced through corotracer.hpp.
//
// Pool: worker threads resuming coroutines from one queue, plus a timer thread
// for co_await pool.sleep(d). Channel<T>: co_await ch.recv() parks a receiver
// until send() or close(). Task: a fire-and-forget coroutine whose promise
// derives from corotracer::PromiseMixin; that one line traces every co_await.
// The scheduler's own part is to record wakes (Pool::wake), so the report can
// tell a coroutine nobody woke from one that was woken and never ran.
#ifndef EX_SCHED_HPP
#define EX_SCHED_HPP

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "corotracer.hpp"

namespace ex {

class Pool;

// A coroutine `Task f(Pool &, const char *label, ...)`: the promise takes the
// pool and label from its first two parameters. It starts when spawned and its
// frame frees itself when it ends.
struct Task {
  struct promise_type : corotracer::PromiseMixin {
    Pool &pool;
    template <class... A> promise_type(Pool &p, const char *label, A &...) noexcept;
    ~promise_type();
    Task get_return_object() noexcept {
      return Task{std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_always initial_suspend() noexcept {
      return {};
    }
    std::suspend_never final_suspend() noexcept {
      returned(); // finished: the report must not take it for a parked one
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
};

class Pool {
public:
  explicit Pool(unsigned workers) {
    for (unsigned i = 0; i < workers; i++)
      threads_.emplace_back([this] { work(); });
    threads_.emplace_back([this] { time(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    timer_cv_.notify_all();
    for (auto &t : threads_)
      t.join();
  }
  Pool(const Pool &) = delete;
  Pool &operator=(const Pool &) = delete;

  void spawn(Task t) {
    wake(t.h);
  }

  // Make h runnable: record the wake where the decision is taken (noinline:
  // the site is our caller, the primitive that decided), then queue it.
  [[gnu::noinline]] void wake(Task::Handle h) {
    corotracer::wake(h, COROTRACER_CALLER);
    {
      std::lock_guard<std::mutex> g(mu_);
      ready_.push_back(h);
    }
    cv_.notify_one();
  }

  // co_await pool.sleep(d): resumed on a worker after d.
  struct Sleep {
    Pool &pool;
    std::chrono::steady_clock::time_point until;
    bool await_ready() const noexcept {
      return false;
    }
    void await_suspend(Task::Handle h) {
      // Once h is in the timer queue the coroutine may run on a worker and
      // reuse this awaiter's storage: nothing of *this is read after that.
      Pool &p = pool;
      {
        std::lock_guard<std::mutex> g(p.mu_);
        p.timers_.emplace(until, h);
      }
      p.timer_cv_.notify_one(); // it may need an earlier deadline
    }
    void await_resume() const noexcept {
    }
  };
  Sleep sleep(std::chrono::microseconds d) {
    return {*this, std::chrono::steady_clock::now() + d};
  }

  // Until every task has ended or timeout passed; returns the tasks left.
  unsigned wait_idle(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> l(mu_);
    idle_.wait_for(l, timeout, [this] { return live_ == 0; });
    return live_;
  }

private:
  friend struct Task::promise_type;

  void work() {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      cv_.wait(l, [this] { return stop_ || !ready_.empty(); });
      if (ready_.empty())
        return;
      Task::Handle h = ready_.front();
      ready_.pop_front();
      l.unlock();
      h.resume();
      l.lock();
    }
  }

  void time() {
    std::unique_lock<std::mutex> l(mu_);
    while (!stop_) {
      if (timers_.empty()) {
        timer_cv_.wait(l);
        continue;
      }
      auto first = timers_.begin();
      if (first->first > std::chrono::steady_clock::now()) {
        timer_cv_.wait_until(l, first->first);
        continue;
      }
      Task::Handle h = first->second;
      timers_.erase(first);
      l.unlock();
      wake(h);
      l.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;       // workers
  std::condition_variable timer_cv_; // the timer thread
  std::condition_variable idle_;     // wait_idle
  std::deque<Task::Handle> ready_;
  std::multimap<std::chrono::steady_clock::time_point, Task::Handle> timers_;
  std::vector<std::thread> threads_;
  unsigned live_ = 0;
  bool stop_ = false;
};

template <class... A>
Task::promise_type::promise_type(Pool &p, const char *label, A &...) noexcept
    : corotracer::PromiseMixin(label), pool(p) {
  std::lock_guard<std::mutex> g(pool.mu_);
  pool.live_++;
}

inline Task::promise_type::~promise_type() {
  std::lock_guard<std::mutex> g(pool.mu_);
  if (--pool.live_ == 0)
    pool.idle_.notify_all();
}

// An unbounded multi-producer multi-consumer channel.
template <class T> class Channel {
public:
  // lose_wakeups: close() wakes only the first parked receiver (the bug the
  // example lets corotracer find).
  Channel(Pool &pool, bool lose_wakeups = false) : pool_(pool), buggy_(lose_wakeups) {
  }

  void send(T v) {
    std::unique_lock<std::mutex> l(mu_);
    if (waiters_.empty()) {
      items_.push_back(std::move(v));
      return;
    }
    Recv *w = waiters_.front();
    waiters_.pop_front();
    w->value = std::move(v);
    Task::Handle h = w->h;
    l.unlock();
    pool_.wake(h);
  }

  // Receivers parked now get std::nullopt; later ones too, once items are gone.
  void close() {
    std::deque<Recv *> ws;
    {
      std::lock_guard<std::mutex> g(mu_);
      closed_ = true;
      ws.swap(waiters_);
    }
    if (buggy_ && ws.size() > 1)
      ws.resize(1);
    for (Recv *w : ws)
      pool_.wake(w->h);
  }

  // co_await ch.recv(): the next item, or std::nullopt once closed and empty.
  // await_suspend returns false when an item (or the close) is already there.
  struct Recv {
    Channel &ch;
    std::optional<T> value;
    Task::Handle h;
    bool await_ready() const noexcept {
      return false;
    }
    bool await_suspend(Task::Handle hh) {
      std::lock_guard<std::mutex> g(ch.mu_);
      if (!ch.items_.empty()) {
        value = std::move(ch.items_.front());
        ch.items_.pop_front();
        return false;
      }
      if (ch.closed_)
        return false;
      h = hh;
      ch.waiters_.push_back(this);
      return true;
    }
    std::optional<T> await_resume() {
      return std::move(value);
    }
    corotracer::WaitOn corotracer_wait_on() const noexcept {
      return corotracer::WaitOn::ptr(&ch);
    }
  };
  Recv recv() {
    return Recv{*this, std::nullopt, {}};
  }

private:
  Pool &pool_;
  bool buggy_;
  std::mutex mu_;
  std::deque<T> items_;
  std::deque<Recv *> waiters_;
  bool closed_ = false;
};

} // namespace ex

#endif // EX_SCHED_HPP
