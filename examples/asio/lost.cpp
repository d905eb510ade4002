// lost.cpp - an Asio C++20 request/reply service (asio::awaitable, the plain use_awaitable token)
// whose client waits for a reply that is never written: a lost completion, traced by one flag.
//
//   c++ -std=c++20 -DASIO_CUSTOM_HANDLER_TRACKING='"corotracer/asio.hpp"' lost.cpp -lcorotracer
//   Boost.Asio: the same with -DLOST_BOOST -DBOOST_ASIO_CUSTOM_HANDLER_TRACKING=...
//   corotracer run -o trace.ctrace -- asio-lost [--bug]
//   corotracer report trace.ctrace
//
// A server on a loopback port (completion handlers) answers each request
// line with a reply line; kClients client coroutines each connect, send one request and read its
// reply. The program stops once the server has handled every request and
// every reply it began to write was read: it cancels its watchdog timer and
// stops the io_context, whose destruction drops what is still pending (the
// accept loop's next accept: idle, no finding; the watchdog: cancelled by
// the program, none). With --bug the server parks the connection of a
// request it cannot parse and never answers it: that client's read is still
// pending at the stop, which destroys it without running, and the report
// names the client coroutine, at its line of this file, as a lost completion
// (an operation awaited with the plain use_awaitable carries no line of its
// own: docs/INTEGRATIONS.md).
#if defined(LOST_BOOST) // the same program on Boost.Asio (asio-lost-boost)
#include <boost/asio.hpp>
namespace asio = boost::asio;
using error_code = boost::system::error_code;
#if defined(BOOST_ASIO_HAS_CO_AWAIT)
#define LOST_CO_AWAIT 1
#endif
#else
#include <asio.hpp>
using error_code = std::error_code;
#if defined(ASIO_HAS_CO_AWAIT)
#define LOST_CO_AWAIT 1
#endif
#endif

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#if defined(LOST_CO_AWAIT)
using asio::ip::tcp;

namespace {

constexpr int kClients = 8;

struct Service {
  Service(asio::io_context &io, bool bug)
      : io(io), acc(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0)), watchdog(io),
        bug(bug) {
  }

  // The server, with completion handlers: accept the next connection, serve this one.
  void accept() {
    acc.async_accept([this](error_code ec, tcp::socket s) {
      if (ec)
        return;
      accept();
      serve(std::make_shared<tcp::socket>(std::move(s)));
    });
  }

  void serve(std::shared_ptr<tcp::socket> s) {
    auto in = std::make_shared<std::string>();
    asio::async_read_until(
        *s, asio::dynamic_buffer(*in), '\n', [this, s, in](error_code ec, std::size_t) {
          handled++;
          if (ec || in->find('?') != std::string::npos) {
            if (bug) {
              parked.push_back(s); // the bug: kept for "later", never answered nor closed
              stop_when_done();
              return;
            }
            *in = "error\n";
          }
          answer(s, "re" + *in);
        });
  }

  void answer(std::shared_ptr<tcp::socket> s, std::string text) {
    auto out = std::make_shared<std::string>(std::move(text));
    answers++;
    asio::async_write(*s, asio::buffer(*out),
                      [this, s, out](error_code, std::size_t) { stop_when_done(); });
  }

  // A client, a coroutine.
  asio::awaitable<void> client(int i) { // the client waits for its reply in here
    tcp::socket sock(io);
    co_await sock.async_connect(acc.local_endpoint(), asio::use_awaitable);
    std::string req = "req " + std::to_string(i) + (i == kClients / 2 ? " ?\n" : "\n");
    co_await asio::async_write(sock, asio::buffer(req), asio::use_awaitable);
    std::string reply;
    co_await asio::async_read_until(sock, asio::dynamic_buffer(reply), '\n', asio::use_awaitable);
    replies++;
    stop_when_done();
  }

  // Every request handled and every answer begun read back: the clean stop.
  void stop_when_done() {
    if (handled == kClients && replies == answers) {
      watchdog.cancel();
      io.stop();
    }
  }

  asio::io_context &io;
  tcp::acceptor acc;
  asio::steady_timer watchdog;
  std::vector<std::shared_ptr<tcp::socket>> parked;
  int handled = 0, answers = 0, replies = 0;
  bool bug;
};

} // namespace

int main(int argc, char **argv) {
  bool bug = argc > 1 && std::strcmp(argv[1], "--bug") == 0;
  asio::io_context io;
  Service svc(io, bug);
  svc.accept();
  for (int i = 0; i < kClients; i++)
    asio::co_spawn(io, svc.client(i), asio::detached);
  svc.watchdog.expires_after(std::chrono::seconds(30));
  svc.watchdog.async_wait([&io](error_code ec) {
    if (!ec) {
      std::printf("watchdog: stopping\n");
      io.stop();
    }
  });
  io.run();
  std::printf("%d of %d replies read\n", svc.replies, kClients);
  return svc.replies == (bug ? kClients - 1 : kClients) ? 0 : 1;
}
#else
int main() {
  std::printf("no asio::awaitable in this build\n");
  return 77;
}
#endif
