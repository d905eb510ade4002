// switches.cpp - every path by which Boost.Fiber switches fibers, for the adapter's test
// (tests/test-fiber-switches.sh): the report must find nothing and see each switch at its time.
//
//   corotracer run -o trace.jsonl -- fiber-switches
//   corotracer report trace.jsonl
//
// Two fibers yield to each other (a yield is a switch out through the
// dispatcher that keeps the fiber runnable); one sleeps while nothing else
// can run (the dispatcher finds no fiber and puts the thread to sleep); one
// waits on a condition variable that another thread notifies (a wake the
// dispatcher brings in from the remote queue).
#include <boost/fiber/all.hpp>
#include <corotracer/boost_fiber.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace {

constexpr int kYields = 100;
int yields = 0;

void yielder() {
  for (int i = 0; i < kYields; i++) {
    yields++;
    boost::this_fiber::yield(); // the yields
  }
}

} // namespace

int main() {
  corotracer::fiber::install<boost::fibers::algo::round_robin>();
  boost::fibers::fiber a(yielder), b(yielder);
  a.join();
  b.join();
  boost::fibers::fiber s([] {
    boost::this_fiber::sleep_for(std::chrono::milliseconds(20)); // the sleep
  });
  s.join();
  boost::fibers::mutex mtx;
  boost::fibers::condition_variable cv;
  bool ready = false;
  std::atomic<bool> waiting{false};
  boost::fibers::fiber r([&] {
    std::unique_lock<boost::fibers::mutex> lk(mtx);
    waiting = true; // parked a few instructions later, and 20 ms before the notify
    cv.wait(lk, [&] { return ready; }); // the remote wake
  });
  std::thread t([&] {
    while (!waiting)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    {
      std::unique_lock<boost::fibers::mutex> lk(mtx);
      ready = true;
    }
    cv.notify_one();
  });
  r.join();
  t.join();
  std::printf("%d yields\n", yields);
  return yields == 2 * kYields ? 0 : 1;
}
