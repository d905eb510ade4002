// bench-asio.cpp - Asio echo round trips per second over loopback, or items per second
// through a strand pipeline, for bench-asio.sh.
//
//   bench-asio [ROUND_TRIPS [strand]]
//
// One thread, one io_context: a server session echoes what a client sends,
// 64 bytes at a time, ROUND_TRIPS times (default 20000). With `strand`, the
// busy shape instead: ROUND_TRIPS items through three strands, each stage
// handing the item on with a post (four items in flight; an item's last
// stage starts the next one): no system call at all, every operation a post.
// Built twice: plain,
// and with -DASIO_CUSTOM_HANDLER_TRACKING='"corotracer/asio.hpp"'
// (bench-asio-tracked). Prints round trips per second by wall time, then by
// the process's CPU time (which other programs' load on the machine leaves
// alone: bench-asio.sh judges the untraced header by it).
#include <asio.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// ROUND_TRIPS echo round trips on io.
void echo(asio::io_context &io, long n) {
  tcp::acceptor acc(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  Echo e{tcp::socket(io), tcp::socket(io), {}, {}, {}, n};
  e.client.connect(acc.local_endpoint());
  acc.accept(e.server);
  e.client.set_option(tcp::no_delay(true));
  e.server.set_option(tcp::no_delay(true));
  e.serve();
  e.ask();
  io.run();
}

// Items through three strands by post, four at a time.
struct Pipeline {
  using strand = asio::strand<asio::io_context::executor_type>;
  strand stage[3];
  long left;
  void start() {
    if (left-- > 0)
      asio::post(stage[0], [this] { next(1); });
  }
  void next(int k) {
    if (k == 3)
      start();
    else
      asio::post(stage[k], [this, k] { next(k + 1); });
  }
};

void pipeline(asio::io_context &io, long n) {
  auto ex = io.get_executor();
  Pipeline p{{asio::make_strand(ex), asio::make_strand(ex), asio::make_strand(ex)}, n};
  for (int i = 0; i < 4; i++)
    p.start();
  io.run();
}

} // namespace

int main(int argc, char **argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 20000;
  bool strand = argc > 2 && std::strcmp(argv[2], "strand") == 0;
  asio::io_context io;
  auto t0 = std::chrono::steady_clock::now();
  double c0 = cpu_seconds();
  if (strand)
    pipeline(io, n);
  else
    echo(io, n); // the connection's setup is timed too: a few system calls in 20000 round trips
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double c = cpu_seconds() - c0;
  std::printf("%.0f %.0f\n", (double)n / s, (double)n / c);
  return 0;
}
