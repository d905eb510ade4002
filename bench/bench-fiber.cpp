// bench-fiber.cpp - ns per Boost.Fiber condition-variable handoff: plain round_robin, traced<>,
// traced under the engine.
//
//   bench-fiber [-n HANDOFFS] [-r ROUNDS] [COROTRACER]
//
// Two fibers pass a token back and forth through one mutex and condition
// variable (each handoff: notify, wait, switch). Each round measures plain
// round_robin and corotracer::fiber::traced<round_robin> installed but
// untraced, each on a fresh thread; then runs itself under `COROTRACER run`
// (default: ../bin/corotracer next to this program) for traced<> traced.
// Prints the median ns per handoff and the ratios to plain.
#include <boost/fiber/all.hpp>
#include <corotracer/boost_fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// ns per handoff of n handoffs between two fibers on this thread.
double pingpong(long n) {
  boost::fibers::mutex mtx;
  boost::fibers::condition_variable cv;
  long turn = 0;
  auto player = [&](long me) {
    std::unique_lock<boost::fibers::mutex> lk(mtx);
    while (turn < n) {
      cv.wait(lk, [&] { return turn >= n || turn % 2 == me; });
      if (turn < n)
        turn++;
      cv.notify_one();
    }
  };
  auto t0 = std::chrono::steady_clock::now();
  boost::fibers::fiber a(player, 0), b(player, 1);
  a.join();
  b.join();
  auto t1 = std::chrono::steady_clock::now();
  return (double)std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count() / (double)n;
}

// pingpong on a fresh thread whose scheduler is Algo (plain) or traced<Algo>.
double measure(bool adapter, long n) {
  double r = 0;
  std::thread t([&] {
    if (adapter)
      corotracer::fiber::install<boost::fibers::algo::round_robin>();
    r = pingpong(n);
  });
  t.join();
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  long n = 200000;
  int rounds = 5;
  const char *tracer = nullptr;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "-n") == 0 && i + 1 < argc)
      n = std::atol(argv[++i]);
    else if (std::strcmp(argv[i], "-r") == 0 && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--child") == 0) { // under the engine: traced only
      std::printf("%.1f\n", measure(true, n));
      return 0;
    } else
      tracer = argv[i];
  }
  std::string self = argv[0], dflt = self.substr(0, self.rfind('/') + 1) + "../bin/corotracer";
  std::string cmd = std::string(tracer ? tracer : dflt.c_str()) + " run --quiet -o /dev/null -- " +
                    self + " -n " + std::to_string(n) + " --child";
  std::vector<double> plain, untraced, traced;
  for (int r = 0; r < rounds; r++) {
    plain.push_back(measure(false, n));
    untraced.push_back(measure(true, n));
    FILE *p = popen(cmd.c_str(), "r");
    double t = 0;
    if (!p || std::fscanf(p, "%lf", &t) != 1 || pclose(p) != 0) {
      std::fprintf(stderr, "bench-fiber: %s failed\n", cmd.c_str());
      return 1;
    }
    traced.push_back(t);
  }
  double pl = median(plain), un = median(untraced), tr = median(traced);
  std::printf("ns per handoff (median of %d rounds of %ld): plain %.1f, traced<> untraced %.1f "
              "(%.2fx), traced %.1f (%.2fx)\n",
              rounds, n, pl, un, un / pl, tr, tr / pl);
  return 0;
}
