// echo20.cpp - an Asio C++20 echo server (asio::awaitable, the plain use_awaitable token) and its
// clients in one process, traced by one compiler flag.
//
//   c++ -std=c++20 -DASIO_CUSTOM_HANDLER_TRACKING='"corotracer/asio.hpp"' echo20.cpp -lcorotracer
//   Boost.Asio: the same with -DECHO20_BOOST -DBOOST_ASIO_CUSTOM_HANDLER_TRACKING=...
//   corotracer run -o trace.ctrace -- asio-echo20 [--bug]
//   corotracer report trace.ctrace
//
// The server's accept loop spawns a session per connection; a drainer
// coroutine waits on a timer used as an event ("the clients are done"),
// then closes the acceptor. The clients each send a few messages and check
// the echoes; the last one to finish fires the event by cancelling the
// timer. With --bug it forgets to: the drainer waits forever, and the report
// names the drainer coroutine at its line of this file (an operation awaited
// with the plain use_awaitable or redirect_error carries no line of its
// own: docs/INTEGRATIONS.md).
#if defined(ECHO20_BOOST) // the same program on Boost.Asio (asio-echo20-boost)
#include <boost/asio.hpp>
namespace asio = boost::asio;
using error_code = boost::system::error_code;
#if defined(BOOST_ASIO_HAS_CO_AWAIT)
#define ECHO20_CO_AWAIT 1
#endif
#else
#include <asio.hpp>
using error_code = std::error_code;
#if defined(ASIO_HAS_CO_AWAIT)
#define ECHO20_CO_AWAIT 1
#endif
#endif

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#if defined(ECHO20_CO_AWAIT)
using asio::ip::tcp;

namespace {

constexpr int kClients = 4, kMessages = 20;
int clients_left = kClients, echoes = 0;

asio::awaitable<void> session(tcp::socket sock) {
  char buf[512];
  for (;;) {
    error_code ec;
    std::size_t n = co_await sock.async_read_some(asio::buffer(buf),
                                                  asio::redirect_error(asio::use_awaitable, ec));
    if (ec)
      co_return; // the client closed
    co_await asio::async_write(sock, asio::buffer(buf, n), asio::use_awaitable);
  }
}

asio::awaitable<void> accept_loop(tcp::acceptor &acc) {
  for (;;) {
    error_code ec;
    tcp::socket s = co_await acc.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec)
      co_return; // closed by the drainer
    asio::co_spawn(acc.get_executor(), session(std::move(s)), asio::detached);
  }
}

asio::awaitable<void> drainer(asio::steady_timer &done, tcp::acceptor &acc) { // the drainer
  error_code ec;
  co_await done.async_wait(asio::redirect_error(asio::use_awaitable, ec)); // fired by a cancel
  acc.close();
}

asio::awaitable<void> client(tcp::endpoint ep, asio::steady_timer &done, bool bug) {
  tcp::socket sock(co_await asio::this_coro::executor);
  co_await sock.async_connect(ep, asio::use_awaitable);
  for (int i = 1; i <= kMessages; i++) {
    std::string msg = "message " + std::to_string(i);
    char reply[64];
    co_await asio::async_write(sock, asio::buffer(msg), asio::use_awaitable);
    std::size_t n =
        co_await asio::async_read(sock, asio::buffer(reply, msg.size()), asio::use_awaitable);
    if (n == msg.size() && std::memcmp(reply, msg.data(), n) == 0)
      echoes++;
  }
  sock.close();
  if (--clients_left == 0 && !bug)
    done.cancel(); // the bug: without it, nobody tells the drainer
}

} // namespace

int main(int argc, char **argv) {
  const bool bug = argc == 2 && std::string(argv[1]) == "--bug";
  asio::io_context io;
  asio::steady_timer done(io, asio::steady_timer::time_point::max()); // an event, not a clock
  tcp::acceptor acc(io, {asio::ip::address_v4::loopback(), 0});
  asio::co_spawn(io, accept_loop(acc), asio::detached);
  asio::co_spawn(io, drainer(done, acc), asio::detached);
  for (int i = 0; i < kClients; i++)
    asio::co_spawn(io, client(acc.local_endpoint(), done, bug), asio::detached);
  // With the bug, 2 s: the report's stuck threshold is 1 s (as echo.cpp).
  io.run_for(std::chrono::seconds(bug ? 2 : 20));
  bool finished = io.stopped();
  std::printf("%d echoes (want %d), %s\n", echoes, kClients * kMessages,
              finished ? "finished" : "still running");
  std::fflush(stdout);
  // With the bug, leave the parked operations in the trace as they are.
  if (bug)
    std::_Exit(echoes == kClients * kMessages && !finished ? 0 : 1);
  return echoes == kClients * kMessages && finished ? 0 : 1;
}
#else
int main() {
  std::printf("no asio::awaitable in this build\n");
  return 77;
}
#endif
