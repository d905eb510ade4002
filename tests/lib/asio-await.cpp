// asio-await.cpp - asio::awaitable coroutines parked on operations nobody
// completes, for tests/test-asio-await.sh: built with the tracking header, an
// operation awaited with asio::use_awaitable_t<>() carries its source
// location, which the adapter records as a text site (this file's co_await
// line); one awaited with the plain use_awaitable, redirect_error or as_tuple
// carries none, and the adapter names the awaiting coroutine (this file's
// line of its definition), though no user frame is on the stack when Asio
// starts the operation.
#include <asio.hpp>
#include <asio/experimental/as_tuple.hpp>

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
    co_await t.async_wait(asio::use_awaitable); // done at once: the timer expired
  }
}

// The everyday spellings carry no location: the awaiting coroutine is
// named, at its definition's line (each "parks in" line below).
using usock = asio::local::stream_protocol::socket;

asio::awaitable<void> plain_waiter(asio::steady_timer &t) { // parks in plain_waiter
  co_await t.async_wait(asio::use_awaitable);
}

asio::awaitable<void> plain_reader(usock &s) { // parks in plain_reader
  char buf[16];
  co_await s.async_read_some(asio::buffer(buf), asio::use_awaitable);
}

asio::awaitable<void> read_step(usock &s) { // parks in read_step
  char buf[16];
  std::error_code ec;
  co_await s.async_read_some(asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
}

asio::awaitable<void> redirect_reader(usock &s) {
  co_await read_step(s); // the innermost awaiting coroutine is named: read_step
}

asio::awaitable<void> tuple_reader(usock &s) { // parks in tuple_reader
  char buf[16];
  co_await s.async_read_some(asio::buffer(buf), asio::experimental::as_tuple(asio::use_awaitable));
}

} // namespace

int main() {
  asio::io_context io;
  asio::steady_timer never(io, asio::steady_timer::time_point::max());
  asio::steady_timer tick(io);
  asio::co_spawn(io, waiter(never), asio::detached);
  asio::co_spawn(io, ticker(tick), asio::detached);
  asio::co_spawn(io, plain_waiter(never), asio::detached);
  usock a(io), b(io), c(io), pa(io), pb(io), pc(io); // nobody writes to a, b or c
  asio::local::connect_pair(a, pa);
  asio::local::connect_pair(b, pb);
  asio::local::connect_pair(c, pc);
  asio::co_spawn(io, plain_reader(a), asio::detached);
  asio::co_spawn(io, redirect_reader(b), asio::detached);
  asio::co_spawn(io, tuple_reader(c), asio::detached);
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
