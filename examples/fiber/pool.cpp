// pool.cpp - a Boost.Fiber worker pool fed through a buffered_channel, on work_stealing
// over three threads, traced by one include.
//
//   corotracer run -o trace.ctrace -- fiber-pool [--bug]
//   corotracer report trace.ctrace
//
// A producer fiber pushes items into a channel; worker fibers pop them until
// the channel is closed. The two helper threads lend their schedulers to the
// pool, their main fibers parked on a condition variable until the pool is
// done. With --bug the producer gives up halfway on an error and returns
// without close(): the workers wait in pop() forever, main in join(), the
// helpers in done_cv.wait(); the report names each of those lines of this
// file (the helpers' too, though their main fibers are plain threads').
// Without --bug, the same pool closes the channel: everything finishes.
#include <boost/fiber/all.hpp>
#include <corotracer/boost_fiber.hpp>

#include "watchdog.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 3, kWorkers = 6, kItems = 2000;

boost::fibers::buffered_channel<int> chan(16);
std::atomic<long> total{0};

boost::fibers::mutex done_mtx;
boost::fibers::condition_variable done_cv;
bool done = false;

void worker() {
  int v;
  while (chan.pop(v) == boost::fibers::channel_op_status::success) // workers park here
    total += v;
}

void produce(bool bug) {
  for (int i = 1; i <= kItems; i++) {
    if (bug && i == kItems / 2)
      return; // the bug: the error path returns without chan.close()
    chan.push(i);
  }
  chan.close();
}

} // namespace

int main(int argc, char **argv) {
  bool bug = argc > 1 && std::strcmp(argv[1], "--bug") == 0;
  std::vector<std::thread> helpers;
  for (int i = 1; i < kThreads; i++) // threads lending their schedulers until the pool is done
    helpers.emplace_back([] {
      corotracer::fiber::install<boost::fibers::algo::work_stealing>(kThreads);
      std::unique_lock<boost::fibers::mutex> lk(done_mtx);
      done_cv.wait(lk, [] { return done; }); // helpers park here
    });
  corotracer::fiber::install<boost::fibers::algo::work_stealing>(kThreads);
  std::vector<boost::fibers::fiber> workers;
  for (int i = 0; i < kWorkers; i++)
    workers.emplace_back(worker);
  boost::fibers::fiber(produce, bug).join();
  if (bug) // main now hangs in join(): the watchdog ends the program
    watchdog([] { return "sum " + std::to_string(total.load()) + ", the pool never finished"; });
  for (auto &w : workers)
    w.join(); // main parks here
  {
    std::lock_guard<boost::fibers::mutex> lk(done_mtx);
    done = true;
  }
  done_cv.notify_all();
  for (auto &h : helpers)
    h.join();
  long want = (long)kItems * (kItems + 1) / 2;
  std::printf("sum %ld (want %ld)\n", total.load(), want);
  return total == want ? 0 : 1;
}
