// bench-asio.cpp - Asio echo round trips per second over loopback, for bench-asio.sh.
//
//   bench-asio [ROUND_TRIPS]
//
// One thread, one io_context: a server session echoes what a client sends,
// 64 bytes at a time, ROUND_TRIPS times (default 20000). Built twice: plain,
// and with -DASIO_CUSTOM_HANDLER_TRACKING='"corotracer/asio.hpp"'
// (bench-asio-tracked). Prints round trips per second by wall time, then by
// the process's CPU time (which other programs' load on the machine leaves
// alone: bench-asio.sh judges the untraced header by it).
#include <asio.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

using asio::ip::tcp;

namespace {

struct Echo {
  tcp::socket server, client;
  std::array<char, 64> sbuf{}, cbuf{}, reply{};
  long left;

  void serve() {
    server.async_read_some(asio::buffer(sbuf), [this](std::error_code ec, std::size_t n) {
      if (!ec)
        asio::async_write(server, asio::buffer(sbuf, n), [this](std::error_code ec2, std::size_t) {
          if (!ec2)
            serve();
        });
    });
  }
  void ask() {
    if (left-- == 0) {
      client.close();
      return;
    }
    asio::async_write(client, asio::buffer(cbuf), [this](std::error_code ec, std::size_t) {
      if (!ec)
        asio::async_read(client, asio::buffer(reply), [this](std::error_code ec2, std::size_t) {
          if (!ec2)
            ask();
        });
    });
  }
};

// The process's CPU time, in seconds.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

} // namespace

int main(int argc, char **argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 20000;
  asio::io_context io;
  tcp::acceptor acc(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  Echo e{tcp::socket(io), tcp::socket(io), {}, {}, {}, n};
  e.client.connect(acc.local_endpoint());
  acc.accept(e.server);
  e.client.set_option(tcp::no_delay(true));
  e.server.set_option(tcp::no_delay(true));
  auto t0 = std::chrono::steady_clock::now();
  double c0 = cpu_seconds();
  e.serve();
  e.ask();
  io.run();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double c = cpu_seconds() - c0;
  std::printf("%.0f %.0f\n", (double)n / s, (double)n / c);
  return 0;
}
