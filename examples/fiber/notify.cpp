// notify.cpp - a Boost.Fiber condition_variable notified before its state is visible, on
// shared_work over two threads, traced by one include.
//
//   corotracer run -o trace.ctrace -- fiber-notify [--bug]
//   corotracer report trace.ctrace
//
// Sixteen waiter fibers wait for `ready`. With --bug main notifies first and
// publishes `ready` after: the waiters wake, re-check, find it false and
// sleep again, and no notify follows; the report names the waiters' cv.wait
// line of this file, and main's join. Without --bug main sets `ready` under
// the lock, then notifies: everything finishes.
#include <boost/fiber/all.hpp>
#include <corotracer/boost_fiber.hpp>

#include "watchdog.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kWaiters = 16;

boost::fibers::mutex mtx;
boost::fibers::condition_variable cv;
bool ready = false;
int waiting = 0, rechecked = 0, finished = 0;

void waiter() {
  std::unique_lock<boost::fibers::mutex> lk(mtx);
  waiting++;
  while (!ready) {
    cv.wait(lk); // waiters park here
    rechecked++;
  }
  finished++;
}

// Yield until pred() holds, under the lock.
template <class Pred> void yield_until(Pred pred) {
  for (;;) {
    {
      std::lock_guard<boost::fibers::mutex> lk(mtx);
      if (pred())
        return;
    }
    boost::this_fiber::yield();
  }
}

} // namespace

int main(int argc, char **argv) {
  bool bug = argc > 1 && std::strcmp(argv[1], "--bug") == 0;
  boost::fibers::mutex done_mtx;
  boost::fibers::condition_variable done_cv;
  bool done = false;
  std::thread helper([&] { // lends its scheduler until main is done
    corotracer::fiber::install<boost::fibers::algo::shared_work>();
    std::unique_lock<boost::fibers::mutex> lk(done_mtx);
    done_cv.wait(lk, [&] { return done; }); // the helper parks here
  });
  corotracer::fiber::install<boost::fibers::algo::shared_work>();
  std::vector<boost::fibers::fiber> waiters;
  for (int i = 0; i < kWaiters; i++)
    waiters.emplace_back(waiter);
  yield_until([] { return waiting == kWaiters; });
  if (bug) {
    cv.notify_all(); // the bug: the notify comes before the state it announces
    // (every waiter re-checks before `ready` is set, so that the bug shows on
    // every run; in the wild the waiters lose that race now and then)
    yield_until([] { return rechecked == kWaiters; });
    std::lock_guard<boost::fibers::mutex> lk(mtx);
    ready = true;
  } else {
    {
      std::lock_guard<boost::fibers::mutex> lk(mtx);
      ready = true;
    }
    cv.notify_all();
  }
  if (bug) // main now hangs in join(): the watchdog ends the program
    watchdog([] { return std::to_string(kWaiters - finished) + " waiters never finished"; });
  for (auto &w : waiters)
    w.join(); // main parks here
  {
    std::lock_guard<boost::fibers::mutex> lk(done_mtx);
    done = true;
  }
  done_cv.notify_all();
  helper.join();
  std::printf("%d waiters finished\n", finished);
  return finished == kWaiters ? 0 : 1;
}
