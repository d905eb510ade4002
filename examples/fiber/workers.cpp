// workers.cpp - Boost.Fiber workers fed through a condition variable, traced by one include.
//
//   corotracer run -o trace.jsonl -- fiber-workers [--bug [--join]]
//   corotracer report trace.jsonl
//
// main produces numbers into a queue, workers add them up; when the queue is
// done, main tells the workers to stop. With --bug it wakes only one of them
// (notify_one where notify_all is needed): the others stay parked forever in
// cv.wait() in worker(), and the report names that line. With --join too,
// main joins them as a correct program would, and is stuck behind them: the
// report puts it in their finding (it waits for a stuck fiber to finish), and
// a watchdog thread ends the program.
#include <boost/fiber/all.hpp>
#include <corotracer/boost_fiber.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>
#include <vector>

namespace {

constexpr int kWorkers = 4, kItems = 200;

struct Queue {
  boost::fibers::mutex mtx;
  boost::fibers::condition_variable cv;
  std::deque<int> items;
  bool done = false;
};

long total = 0;
int finished = 0;

void worker(Queue &q) {
  for (;;) {
    std::unique_lock<boost::fibers::mutex> lk(q.mtx);
    q.cv.wait(lk, [&] { return !q.items.empty() || q.done; }); // workers park here
    if (q.items.empty())
      break;
    total += q.items.front();
    q.items.pop_front();
  }
  finished++;
}

} // namespace

int main(int argc, char **argv) {
  bool bug = argc > 1 && std::strcmp(argv[1], "--bug") == 0;
  bool join = bug && argc > 2 && std::strcmp(argv[2], "--join") == 0;
  corotracer::fiber::install<boost::fibers::algo::round_robin>();
  Queue q;
  std::vector<boost::fibers::fiber> workers;
  for (int i = 0; i < kWorkers; i++)
    workers.emplace_back([&q] { worker(q); });
  for (int i = 1; i <= kItems; i++) {
    {
      std::lock_guard<boost::fibers::mutex> lk(q.mtx);
      q.items.push_back(i);
    }
    q.cv.notify_one();
    if (i % 16 == 0 || i == kItems) // let the workers drain the queue and park
      boost::this_fiber::sleep_for(std::chrono::microseconds(200));
  }
  {
    std::lock_guard<boost::fibers::mutex> lk(q.mtx);
    q.done = true;
  }
  if (bug)
    q.cv.notify_one(); // the bug: only one worker hears that the queue is done
  else
    q.cv.notify_all();
  if (join) { // wait for the workers as a correct program does; a watchdog ends the hang
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      std::printf("main never returned from join\n");
      std::fflush(stdout);
      std::_Exit(0);
    }).detach();
    for (auto &w : workers)
      w.join();
  }
  for (int i = 0; i < 300 && finished < kWorkers; i++) // 1.5 s: "forever" to the report
    boost::this_fiber::sleep_for(std::chrono::milliseconds(5));
  long want = (long)kItems * (kItems + 1) / 2;
  std::printf("sum %ld (want %ld), %d fibers never finished\n", total, want, kWorkers - finished);
  if (finished < kWorkers) {
    // Parked fibers cannot be joined, and Boost's scheduler would wait for
    // them at thread exit: leave at once.
    std::fflush(stdout);
    std::_Exit(bug ? 0 : 1);
  }
  for (auto &w : workers)
    w.join();
  return total == want ? 0 : 1;
}
