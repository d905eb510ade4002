// asio-faults.cpp - the Asio adapter (include/corotracer/asio.hpp) against what
// a program may do to it, for tests/test-asio-faults.sh: io_contexts built on
// one thread while another runs handlers (each construction sets the
// adapter's switch, which every hook reads: a data race for TSan when it was
// a plain bool), and handlers that throw out of run() (each must leave the
// adapter's table as a returning one does, not stay there forever).
// Prints "thrown N" (exceptions caught out of run()) and "table N" (stand-ins
// left in the adapter's table once every handler ran), then exits 0.
#include <asio.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace {

// Posts itself until told to stop: every post is an operation's start on
// the runner's thread, which reads the adapter's switch.
void chain(asio::io_context &io, const std::atomic<bool> &stop) {
  if (!stop.load(std::memory_order_acquire))
    asio::post(io, [&io, &stop] { chain(io, stop); });
}

std::size_t table_size() {
  auto &t = corotracer::asio_tracking::detail::table();
  std::lock_guard<std::mutex> lk(t.mtx);
  return t.ops.size();
}

} // namespace

int main() {
  {
    asio::io_context io;
    std::atomic<bool> stop{false};
    chain(io, stop);
    std::thread runner([&io] { io.run(); });
    for (int i = 0; i < 200; i++)
      asio::io_context other; // sets the switch while the runner reads it
    stop.store(true, std::memory_order_release);
    runner.join();
  }

  asio::io_context io;
  asio::post(io, [] { throw std::runtime_error("a posted handler throws"); });
  asio::steady_timer timer(io, std::chrono::milliseconds(1));
  timer.async_wait([](std::error_code) { throw std::runtime_error("a timer's handler throws"); });
  int thrown = 0;
  for (;;) {
    try {
      io.run();
      break;
    } catch (const std::runtime_error &) {
      thrown++;
    }
  }
  std::printf("thrown %d\ntable %zu\n", thrown, table_size());
  return 0;
}
