// echo.cpp - an Asio echo server and its clients in one process, traced by one compiler flag.
//
//   c++ -DASIO_CUSTOM_HANDLER_TRACKING='"corotracer/asio.hpp"' echo.cpp -lcorotracer
//   corotracer run -o trace.jsonl -- asio-echo [--bug]
//   corotracer report trace.jsonl
//
// The server accepts connections in a loop and echoes what each client
// sends; a drainer waits on a timer used as an event ("the clients are done")
// before it closes the acceptor. The clients each send a few messages and
// check the echoes; the last one to finish fires the event by cancelling the
// timer. With --bug it forgets to: the drainer waits at its async_wait until
// the io_context is destroyed, which drops that wait unrun (the report's lost
// completion names that line); the accept loop's accept, dropped the same
// way, is idle: no finding.
#include <asio.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

using asio::ip::tcp;

namespace {

constexpr int kClients = 4, kMessages = 20;
int clients_left = kClients, echoes = 0;

class Session : public std::enable_shared_from_this<Session> {
public:
  explicit Session(tcp::socket s) : sock_(std::move(s)) {
  }
  void read() {
    auto self = shared_from_this();
    sock_.async_read_some(asio::buffer(buf_), [self](std::error_code ec, std::size_t n) {
      if (!ec)
        self->write(n);
    });
  }

private:
  void write(std::size_t n) {
    auto self = shared_from_this();
    asio::async_write(sock_, asio::buffer(buf_, n), [self](std::error_code ec, std::size_t) {
      if (!ec)
        self->read();
    });
  }
  tcp::socket sock_;
  std::array<char, 512> buf_;
};

void accept(tcp::acceptor &acc) {
  acc.async_accept([&acc](std::error_code ec, tcp::socket s) {
    if (ec)
      return; // closed by the drainer
    std::make_shared<Session>(std::move(s))->read();
    accept(acc);
  });
}

void drain(asio::steady_timer &done, tcp::acceptor &acc) {
  done.async_wait([&acc](std::error_code) { acc.close(); }); // the drainer waits here
}

class Client : public std::enable_shared_from_this<Client> {
public:
  Client(asio::io_context &io, asio::steady_timer &done, bool bug)
      : sock_(io), done_(done), bug_(bug) {
  }
  void start(const tcp::endpoint &ep) {
    auto self = shared_from_this();
    sock_.async_connect(ep, [self](std::error_code ec) {
      if (!ec)
        self->send();
    });
  }

private:
  void send() {
    if (sent_ == kMessages)
      return finish();
    msg_ = "message " + std::to_string(++sent_);
    auto self = shared_from_this();
    asio::async_write(sock_, asio::buffer(msg_), [self](std::error_code ec, std::size_t) {
      if (!ec)
        self->receive();
    });
  }
  void receive() {
    auto self = shared_from_this();
    asio::async_read(sock_, asio::buffer(reply_, msg_.size()),
                     [self](std::error_code ec, std::size_t n) {
                       if (ec || std::memcmp(self->reply_.data(), self->msg_.data(), n) != 0)
                         return;
                       echoes++;
                       self->send();
                     });
  }
  void finish() {
    sock_.close();
    if (--clients_left == 0 && !bug_)
      done_.cancel(); // the bug: without it, nobody tells the drainer
  }
  tcp::socket sock_;
  asio::steady_timer &done_;
  bool bug_;
  int sent_ = 0;
  std::string msg_;
  std::array<char, 64> reply_;
};

} // namespace

int main(int argc, char **argv) {
  bool bug = argc > 1 && std::strcmp(argv[1], "--bug") == 0;
  asio::io_context io;
  tcp::acceptor acc(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  asio::steady_timer done(io, asio::steady_timer::time_point::max());
  accept(acc);
  drain(done, acc);
  for (int i = 0; i < kClients; i++)
    std::make_shared<Client>(io, done, bug)->start(acc.local_endpoint());
  // With the bug, 2 s: the report's stuck threshold is 1 s, and the accept
  // loop's last park (after the last client connected, late on a loaded
  // machine) must lie that far before the end to be judged "ran on" (idle).
  io.run_for(std::chrono::seconds(bug ? 2 : 20));
  bool finished = io.stopped();
  std::printf("%d echoes (want %d), %s\n", echoes, kClients * kMessages,
              finished ? "finished" : "still running");
  return echoes == kClients * kMessages && finished != bug ? 0 : 1;
}
