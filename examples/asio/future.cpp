// future.cpp - an Asio service with two clients, one on asio::use_future and one on plain
// callbacks, each through Asio's composed operations; traced by one compiler flag.
//
//   c++ -std=c++20 -DASIO_CUSTOM_HANDLER_TRACKING='"corotracer/asio.hpp"' future.cpp -lcorotracer
//   Boost.Asio: the same with -DFUTURE_BOOST -DBOOST_ASIO_CUSTOM_HANDLER_TRACKING=...
//   corotracer run -o trace.ctrace -- asio-future [--bug]
//   corotracer report trace.ctrace
//
// A server on a loopback port reads each client's request and writes back a
// reply of kReply bytes. Both clients are given two addresses, the first a
// stale one where nothing listens (async_connect over the range tries it,
// then the next one), send a request large enough to take several writes
// and read the reply whole (async_read): Asio's composed operations start
// their next step from the previous step's completion, in Asio's code. One
// client runs on a thread of its own with use_future (async_connect,
// async_write, async_read) and waits in future::get() through the adapter's
// get(), which records the waiting thread at its line; the other connects,
// writes and reads with completion handlers on the io_context's thread, each
// started by the previous one's handler (which the compiler may inline into
// Asio's composed operation that calls it). With --bug the server writes only half of each
// reply (a length in the wrong unit): each client's read has its next step pending for ever. Once
// both clients have read their half (and the future client waits for its read), the program closes
// its acceptor and stops its io_context (as its user would stop it), whose destruction drops the
// two reads without running them, and the report names each one's async_read line of this file as a
// lost completion (not Asio's line of the step before), with the future client's thread, waiting in
// get() at its line of this file, under it. The correct twin ends by itself: the last client to
// finish closes the acceptor.
#if defined(FUTURE_BOOST) // the same program on Boost.Asio (asio-future-boost)
#include <boost/asio.hpp>
#include <boost/asio/use_future.hpp>
namespace asio = boost::asio;
using error_code = boost::system::error_code;
#else
#include <asio.hpp>
#include <asio/use_future.hpp>
using error_code = std::error_code;
#endif

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

using asio::ip::tcp;

namespace {

// fut.get(): through the adapter's wrapper when traced by its header (the
// waiting thread recorded at the caller's line), else plain.
#if defined(COROTRACER_ASIO_HPP)
using corotracer::asio_tracking::get;
#else
template <class Future> decltype(auto) get(Future &&fut) {
  return fut.get();
}
#endif

constexpr int kClients = 2;
constexpr std::size_t kRequest = 1 << 20, kReply = 1 << 16;

struct Service {
  Service(asio::io_context &io, bool bug)
      : io(io), acc(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0)), stale(io), fsock(io),
        work(io.get_executor()), bug(bug) {
    stale.open(tcp::v4()); // bound, not listening: a connect there is refused
    stale.bind(tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    addrs = {stale.local_endpoint(), acc.local_endpoint()};
  }

  // The server, with completion handlers: accept the next connection, read
  // this one's request, write its reply, keep the connection open (for the
  // client's next request).
  struct Conn {
    explicit Conn(asio::io_context &io) : sock(io), in(4096), out(kReply, 'r') {
    }
    tcp::socket sock;
    std::vector<char> in, out;
    std::size_t got = 0;
  };
  void accept() {
    acc.async_accept([this](error_code ec, tcp::socket s) {
      if (ec)
        return; // closed by the last client
      auto c = std::make_shared<Conn>(io);
      c->sock = std::move(s);
      serve(c);
      accept();
    });
  }
  void serve(std::shared_ptr<Conn> c) {
    c->sock.async_read_some(asio::buffer(c->in), [this, c](error_code ec, std::size_t n) {
      if (ec)
        return;
      c->got += n;
      if (c->got < kRequest)
        return serve(c);
      std::size_t len = bug ? c->out.size() / 2 : c->out.size(); // the bug: half the reply
      asio::async_write(c->sock, asio::buffer(c->out.data(), len),
                        [this, c](error_code, std::size_t) { kept.push_back(c); });
    });
  }

  // A read's completion condition: read all, and count the reads that got
  // exactly half a reply; with --bug, once every client's has, stop (their
  // next steps, just started, will never complete).
  struct Progress {
    Service &svc;
    std::size_t operator()(const error_code &ec, std::size_t n) const {
      if (svc.bug && !ec && n == kReply / 2 && ++svc.halves == kClients)
        svc.stop_when_waiting();
      return ec ? 0 : kReply - n;
    }
  };

  // The callback client, on the io_context's thread: connects over the two
  // addresses, writes its request and reads the reply, each started by the
  // previous one's completion handler, which Asio's composed operation calls
  // at its end (and the compiler may inline there).
  struct Client {
    explicit Client(Service &svc) : svc(svc), sock(svc.io), req(kRequest, 'q'), reply(kReply) {
    }
    void start() {
      asio::async_connect(sock, svc.addrs, [this](error_code ec, const tcp::endpoint &) {
        if (!ec)
          asio::async_write(sock, asio::buffer(req), [this](error_code ec, std::size_t) {
            if (!ec)
              receive();
          });
      });
    }
    void receive() {
      auto on_reply = [this](error_code ec, std::size_t n) {
        if (!ec && n == kReply)
          svc.done();
      };
      asio::async_read(sock, asio::buffer(reply), Progress{svc}, on_reply);
    }
    Service &svc;
    tcp::socket sock;
    std::vector<char> req, reply;
  };

  // The use_future client, on a thread of its own: each operation's future
  // waited for in get() (the adapter's, above). Touches nothing of the service once its read failed
  // (the service is gone by then).
  void future_client() {
    std::vector<char> req(kRequest, 'f'), reply(kReply);
    // The connect and the write each bounded by a timeout, as a client
    // should: waited for with wait_for, then taken with get(), ready by then.
    auto within = [](auto &&fut) {
      if (fut.wait_for(std::chrono::seconds(30)) != std::future_status::ready)
        throw std::runtime_error("timed out");
      return get(fut);
    };
    try {
      within(asio::async_connect(fsock, addrs, asio::use_future));
      within(asio::async_write(fsock, asio::buffer(req), asio::use_future));
      Progress cond{*this};
      auto got = asio::async_read(fsock, asio::buffer(reply), cond, asio::use_future);
      waiting = true;
      if (get(got) == kReply)
        asio::post(io, [this] { done(); });
    } catch (const std::exception &) { // the read dropped at the stop: a broken promise
      // (Its message not read: libstdc++'s exception_ptr, which the stop's
      // thread frees, is not instrumented, so ThreadSanitizer would see a race.)
      std::printf("future client: no reply\n");
    }
  }

  // Stop as the program's user would: close the acceptor, stop the loop;
  // once the future client is in its last get() (the flag it sets just
  // before, then 50 ms), so that it waits there and is not told of the
  // dropped read before it calls get().
  void stop_when_waiting() {
    bool seen = waiting;
    pause.expires_after(std::chrono::milliseconds(seen ? 50 : 10));
    pause.async_wait([this, seen](error_code) {
      if (!seen)
        return stop_when_waiting();
      acc.close();
      io.stop();
    });
  }

  // A client got its whole reply (on the io_context's thread): the last one
  // closes the acceptor and lets run() end.
  void done() {
    if (++finished == kClients) {
      acc.close();
      work.reset();
    }
  }

  asio::io_context &io;
  tcp::acceptor acc;
  tcp::socket stale, fsock;
  asio::steady_timer pause{io};
  std::atomic<bool> waiting{false}; // the future client is about to call its last get()
  std::vector<tcp::endpoint> addrs;
  std::vector<std::shared_ptr<Conn>> kept;
  asio::executor_work_guard<asio::io_context::executor_type> work; // the future client's
  int halves = 0, finished = 0;
  bool bug;
};

} // namespace

int main(int argc, char **argv) {
  bool bug = argc > 1 && std::strcmp(argv[1], "--bug") == 0;
  std::thread waiter;
  int finished;
  {
    asio::io_context io;
    Service svc(io, bug);
    svc.accept();
    waiter = std::thread([&svc] { svc.future_client(); });
    Service::Client client(svc);
    client.start();
    io.run();
    finished = svc.finished;
  } // the service, then the io_context: what is still pending is dropped
  waiter.join();
  std::printf("%d of %d clients got their reply\n", finished, kClients);
  return finished == (bug ? 0 : kClients) ? 0 : 1;
}
