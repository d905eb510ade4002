// lost.cpp - an Asio request/reply service whose client waits for a reply that is never written:
// a lost completion, traced by one compiler flag.
//
//   c++ -DASIO_CUSTOM_HANDLER_TRACKING='"corotracer/asio.hpp"' lost.cpp -lcorotracer
//   Boost.Asio: the same with -DLOST_BOOST -DBOOST_ASIO_CUSTOM_HANDLER_TRACKING=...
//   corotracer run -o trace.ctrace -- asio-lost [--bug]
//   corotracer report trace.ctrace
//
// A server on a loopback port answers each request line with a reply line;
// kClients clients each connect, send one request and read its reply. The
// program stops once the server has handled every request and every reply it
// began to write was read: it cancels its watchdog timer and stops the
// io_context, whose destruction drops what is still pending (the accept
// loop's next accept: idle, no finding; the watchdog: cancelled, none). With
// --bug the server parks the connection of a request it cannot parse, and
// never answers it: that client's read is still pending at the stop, which
// destroys it without running, and the report names that read's line of this
// file as a lost completion.
#if defined(LOST_BOOST) // the same program on Boost.Asio (asio-lost-boost)
#include <boost/asio.hpp>
namespace asio = boost::asio;
using error_code = boost::system::error_code;
#else
#include <asio.hpp>
using error_code = std::error_code;
#endif

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using asio::ip::tcp;

namespace {

constexpr int kClients = 8;

struct Client {
  explicit Client(asio::io_context &io, int i) : sock(io), request("req " + std::to_string(i)) {
    request += i == kClients / 2 ? " ?\n" : "\n"; // one request the server cannot parse
  }
  tcp::socket sock;
  std::string request;
  asio::streambuf reply;
};

struct Service {
  Service(asio::io_context &io, bool bug)
      : io(io), acc(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0)), watchdog(io),
        bug(bug) {
  }

  void accept() {
    acc.async_accept([this](error_code ec, tcp::socket s) {
      if (ec)
        return;
      serve(std::make_shared<tcp::socket>(std::move(s)));
      accept();
    });
  }

  void serve(std::shared_ptr<tcp::socket> s) {
    auto in = std::make_shared<asio::streambuf>();
    asio::async_read_until(*s, *in, '\n', [this, s, in](error_code ec, std::size_t) {
      handled++;
      std::string req(asio::buffers_begin(in->data()), asio::buffers_end(in->data()));
      if (ec || req.find('?') != std::string::npos) {
        if (bug)
          parked.push_back(s); // the bug: kept for "later", never answered nor closed
        else
          answer(s, "error\n");
        stop_when_done();
        return;
      }
      answer(s, "re" + req);
    });
  }

  void answer(std::shared_ptr<tcp::socket> s, std::string text) {
    auto out = std::make_shared<std::string>(std::move(text));
    answers++;
    asio::async_write(*s, asio::buffer(*out), [this, s, out](error_code, std::size_t) {
      stop_when_done();
    });
  }

  void client(int i) {
    auto c = std::make_shared<Client>(io, i);
    c->sock.async_connect(acc.local_endpoint(), [this, c](error_code ec) {
      if (!ec)
        send(c);
    });
  }

  void send(std::shared_ptr<Client> c) {
    asio::async_write(c->sock, asio::buffer(c->request), [this, c](error_code ec, std::size_t) {
      if (!ec)
        receive(c);
    });
  }

  void receive(std::shared_ptr<Client> c) {
    asio::async_read_until(c->sock, c->reply, '\n', [this, c](error_code ec, std::size_t) {
      replies += !ec; // the client waits for its reply here
      stop_when_done();
    });
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
    svc.client(i);
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
