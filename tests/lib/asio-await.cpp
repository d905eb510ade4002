// asio-await.cpp - an asio::awaitable coroutine parked on a timer nobody fires,
// for tests/test-asio-await.sh: built with the tracking header, the operation
// it awaits carries its source location (asio::use_awaitable_t<>()), which the
// adapter records as a text site, so the report names this file's line though
// the user's frame is not on the stack when Asio starts the operation.
#include <asio.hpp>

#include <chrono>
#include <cstdio>

// Asio's coroutines and its source locations need a compiler and library it
// knows have them (not clang 14 with libstdc++ 12): else this says so.
#if defined(ASIO_HAS_CO_AWAIT) && defined(ASIO_HAS_SOURCE_LOCATION)
namespace {

asio::awaitable<void> waiter(asio::steady_timer &t) {
  co_await t.async_wait(asio::use_awaitable_t<>()); // the waiter parks here
}

asio::awaitable<void> ticker(asio::steady_timer &t) {
  for (int i = 0; i < 5; i++) { // healthy waits, woken
    t.expires_after(std::chrono::milliseconds(1));
    co_await t.async_wait(asio::use_awaitable_t<>());
  }
}

} // namespace

int main() {
  asio::io_context io;
  asio::steady_timer never(io, asio::steady_timer::time_point::max());
  asio::steady_timer tick(io);
  asio::co_spawn(io, waiter(never), asio::detached);
  asio::co_spawn(io, ticker(tick), asio::detached);
  io.run_for(std::chrono::milliseconds(1300)); // "forever" to the report
  std::printf("done\n");
  std::fflush(stdout);
  std::_Exit(0); // leave the parked operation in the trace as it is
}
#else
int main() {
  std::printf("no asio::awaitable with source locations in this build\n");
  return 77;
}
#endif
