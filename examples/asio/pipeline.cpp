// pipeline.cpp - an Asio strand pipeline whose completion is lost, traced by one compiler flag.
//
//   c++ -DASIO_CUSTOM_HANDLER_TRACKING='"corotracer/asio.hpp"' ... -lcorotracer
//   corotracer run -o trace.ctrace -- asio-pipeline [--bug]
//   corotracer report trace.ctrace
//
// Items go through three stages, each on its own strand, handed on with
// post(); the last stage counts them out, and the last one out fires an
// event (a steady_timer that never expires, cancelled) that the coordinator
// waits on. With --bug the work stage's error path drops one item without
// posting its next stage: that completion is never posted, the event never
// fires, and the coordinator waits at its async_wait line of this file,
// which the report names. Without --bug every item comes out and the
// program ends by itself.
#include <asio.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

namespace {

constexpr int kItems = 1000;

using strand = asio::strand<asio::io_context::executor_type>;

struct Pipeline {
  Pipeline(asio::io_context &io, bool bug)
      : parse(io.get_executor()), work(io.get_executor()), emit(io.get_executor()),
        all_out(io, asio::steady_timer::time_point::max()), bug(bug) {
  }
  void start(int item) {
    asio::post(parse, [this, item] { parsed(item); });
  }
  void parsed(int item) {
    asio::post(work, [this, item] { worked(item); });
  }
  void worked(int item) {
    if (bug && item == kItems / 2)
      return; // the bug: the error path drops the item, its next stage is never posted
    asio::post(emit, [this, item] { emitted(item); });
  }
  void emitted(int) {
    if (++out == kItems)
      all_out.cancel(); // the event: every item is out
  }
  strand parse, work, emit;
  asio::steady_timer all_out;
  int out = 0; // on the emit strand only
  bool bug;
};

} // namespace

int main(int argc, char **argv) {
  bool bug = argc > 1 && std::strcmp(argv[1], "--bug") == 0;
  asio::io_context io;
  Pipeline p(io, bug);
  bool done = false;
  p.all_out.async_wait([&done](std::error_code) { done = true; }); // the coordinator waits here
  for (int i = 0; i < kItems; i++)
    p.start(i);
  std::thread other([&io] { io.run_for(std::chrono::milliseconds(1500)); });
  io.run_for(std::chrono::milliseconds(1500)); // returns at once when all is done; else "forever"
  other.join();
  std::printf("%d of %d items out%s\n", p.out, kItems, done ? "" : ", the coordinator still waits");
  return done == !bug ? 0 : 1;
}
