// pipeline.cpp - producers and consumers over a channel on a traced C++20 thread pool.
//
//   corotracer run -o trace.jsonl -- cpp-pipeline [--lost-wakeup]
//   corotracer report trace.jsonl
//
// Producers sleep a little (timer awaitable) and send numbers; the last one to
// finish closes the channel; consumers add up what they receive until the
// channel is closed. With --lost-wakeup the channel's close() wakes only one of
// the parked consumers: the others stay suspended forever at the co_await in
// consumer(), and the report names that line.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "coroTracer.h" // the reference's header name; same as corotracer.hpp
#include "sched.hpp"

namespace {

constexpr int kProducers = 4, kConsumers = 6, kItems = 50;
std::atomic<int> producers_left{kProducers};
std::atomic<long> total{0};

ex::Task producer(ex::Pool &pool, const char *, ex::Channel<int> &ch, int id) {
  for (int i = 1; i <= kItems; i++) {
    co_await pool.sleep(std::chrono::microseconds(50 * (id + 1)));
    ch.send(i);
  }
  if (producers_left.fetch_sub(1) == 1)
    ch.close();
}

ex::Task consumer(ex::Pool &, const char *, ex::Channel<int> &ch) {
  long sum = 0;
  while (std::optional<int> v = co_await ch.recv()) // parked here when a wakeup is lost
    sum += *v;
  total += sum;
}

} // namespace

int main(int argc, char **argv) {
  bool lose = argc > 1 && std::strcmp(argv[1], "--lost-wakeup") == 0;
  corotracer::InitTracer();
  unsigned stuck;
  {
    ex::Pool pool(3);
    ex::Channel<int> ch(pool, lose);
    // Consumers first, so they park before the first item arrives.
    for (int i = 0; i < kConsumers; i++)
      pool.spawn(consumer(pool, "consumer", ch));
    for (int i = 0; i < kProducers; i++)
      pool.spawn(producer(pool, "producer", ch, i));
    stuck = pool.wait_idle(std::chrono::milliseconds(lose ? 500 : 10000));
  }
  long want = (long)kProducers * kItems * (kItems + 1) / 2;
  std::printf("sum %ld (want %ld), %u coroutines never finished\n", total.load(), want, stuck);
  if (lose)
    return stuck > 0 ? 0 : 1; // the bug must show
  return total == want && stuck == 0 ? 0 : 1;
}
