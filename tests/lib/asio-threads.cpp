// asio-threads.cpp - echo sessions on one io_context run by four threads, for
// tests/test-asio-threads.sh: a handler's next operation on its socket may
// complete, and its handler run, on another thread before the first handler
// has returned; the adapter must hand the stand-in on without touching it
// afterwards. Prints "done N" (N clients finished) and exits 0 when all did.
#include <asio.hpp>

#include <array>
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

using asio::ip::tcp;

namespace {

constexpr int kClients = 8, kTrips = 2000, kThreads = 4;
std::atomic<int> done{0};

// The server's side of a connection: echo until the client closes.
struct Session : std::enable_shared_from_this<Session> {
  explicit Session(tcp::socket s) : sock(std::move(s)) {
  }
  void read() {
    auto self = shared_from_this();
    sock.async_read_some(asio::buffer(buf), [self](std::error_code ec, std::size_t n) {
      if (!ec)
        self->write(n);
    });
  }
  void write(std::size_t n) {
    auto self = shared_from_this();
    asio::async_write(sock, asio::buffer(buf, n), [self](std::error_code ec, std::size_t) {
      if (!ec)
        self->read();
    });
  }
  tcp::socket sock;
  std::array<char, 64> buf{};
};

// A client: kTrips round trips, then close.
struct Client : std::enable_shared_from_this<Client> {
  explicit Client(asio::io_context &io) : sock(io) {
  }
  void start(const tcp::endpoint &ep) {
    auto self = shared_from_this();
    sock.async_connect(ep, [self](std::error_code ec) {
      if (!ec)
        self->ask();
    });
  }
  void ask() {
    if (left-- == 0) {
      sock.close();
      done++;
      return;
    }
    auto self = shared_from_this();
    asio::async_write(sock, asio::buffer(msg), [self](std::error_code ec, std::size_t) {
      if (!ec)
        asio::async_read(self->sock, asio::buffer(self->reply),
                         [self](std::error_code ec2, std::size_t) {
                           if (!ec2)
                             self->ask();
                         });
    });
  }
  tcp::socket sock;
  std::array<char, 64> msg{}, reply{};
  int left = kTrips;
};

} // namespace

int main() {
  asio::io_context io;
  tcp::acceptor acc(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  std::function<void()> accept = [&] {
    acc.async_accept([&](std::error_code ec, tcp::socket s) {
      if (ec)
        return; // closed: all clients are done
      std::make_shared<Session>(std::move(s))->read();
      accept();
    });
  };
  accept();
  for (int i = 0; i < kClients; i++)
    std::make_shared<Client>(io)->start(acc.local_endpoint());
  asio::steady_timer poll(io);
  std::function<void()> check = [&] {
    poll.expires_after(std::chrono::milliseconds(5));
    poll.async_wait([&](std::error_code) {
      if (done == kClients)
        acc.close();
      else
        check();
    });
  };
  check();
  std::vector<std::thread> threads;
  for (int i = 1; i < kThreads; i++)
    threads.emplace_back([&] { io.run(); });
  io.run();
  for (std::thread &t : threads)
    t.join();
  std::printf("done %d\n", done.load());
  return done == kClients ? 0 : 1;
}
