// asio-dropped.cpp - posted functions that never run, for tests/test-asio-dropped.sh:
// the adapter (include/corotracer/asio.hpp) records a submission as queued at
// its post (suspend and wake at once); one Asio destroys without running must
// still be the report's lost completion at its post line, whether it was a
// new stand-in (posted from outside any handler) or a chain's next step
// (posted by a handler, which goes on as it).
//
//   asio-dropped --bug   two posts dropped by their io_context's destruction
//   asio-dropped         the same posts, run before the destruction
//
// Prints "ran N" (posted functions that ran).
#include <asio.hpp>

#include <cstdio>
#include <cstring>

int main(int argc, char **argv) {
  bool bug = argc > 1 && std::strcmp(argv[1], "--bug") == 0;
  int ran = 0;
  {
    asio::io_context io;
    auto strand = asio::make_strand(io);
    asio::post(strand, [&ran] { ran++; }); // a new stand-in, posted here
    if (!bug)
      io.run();
  } // --bug: destroyed with the post queued
  {
    asio::io_context io;
    asio::post(io, [&io, &ran, bug] {
      ran++;
      asio::post(io, [&ran] { ran++; }); // the chain's next step, posted here
      if (bug)
        io.stop();
    });
    io.run();
  } // --bug: stopped and destroyed with the next step queued
  std::printf("ran %d\n", ran);
  return 0;
}
