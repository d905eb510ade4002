// bench-fiber.cpp - ns per Boost.Fiber handoff: plain round_robin, the adapter installed but
// untraced, traced under the engine.
//
//   bench-fiber [-n HANDOFFS] [-r ROUNDS] [--channel] [--lossless] [--pack] [COROTRACER]
//
// Two fibers pass a token back and forth through one mutex and condition
// variable (each handoff: notify, wait, switch); with --channel, the busy
// shape instead: a producer pushes HANDOFFS items into a buffered_channel of
// capacity 4 that a consumer pops (a switch every few items, when the
// channel is full or empty, and the channel's own spinning). 500000 handoffs a run by
// default (~75 ms; runs of 200000, of code identical to plain, read 0.94-1.06x
// of it by wall time on a VM others load). Each round measures plain
// round_robin and corotracer::fiber::install<round_robin>() untraced, each on
// a fresh thread, in the order plain, untraced, traced, untraced, plain (a
// load that rises or falls through the round weighs on both sides alike); the
// traced run is this program run under `COROTRACER run` (default:
// ../bin/corotracer next to this program; --lossless, --pack: run with them) for
// install<round_robin>() traced.
// Prints the median ns per handoff (a round's plain and untraced: the mean of
// its two runs) and the ratios to plain, each the median of the rounds' own
// ratios (a round's runs see the same machine): wall time, and the thread's
// CPU time (what the adapter and the probe cost the program, apart from the
// engine's threads and other load taking the cores); then the CPU the engine
// took per handoff (the traced run's processes less the program's thread and
// less a traced run of one handoff, the start and end of both processes: on
// two cores that is what a third busy process makes the program wait for)
// and the load average before and after.
// With bench-fiber-floor beside it (the same program linked with
// bench/floor-probe.c: one clock read an adapter call, no engine), each round
// also runs that program's installed shape between its traced and untraced
// runs: the floor any tracer that stamps every call reaches, and the traced
// run's ratio to it (issue #33: "within 1.1x of one stamp a switch").
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

#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

namespace {

struct Cost {
  double wall, cpu; // ns per handoff
};

double thread_cpu_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

// ns per handoff of n handoffs between two fibers on this thread.
Cost pingpong(long n) {
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
  double c0 = thread_cpu_ns();
  auto t0 = std::chrono::steady_clock::now();
  boost::fibers::fiber a(player, 0), b(player, 1);
  a.join();
  b.join();
  auto t1 = std::chrono::steady_clock::now();
  double c1 = thread_cpu_ns();
  return {std::chrono::duration<double, std::nano>(t1 - t0).count() / (double)n,
          (c1 - c0) / (double)n};
}

// ns per item of n items through a buffered_channel of capacity 4.
Cost channel(long n) {
  boost::fibers::buffered_channel<long> ch(4);
  double c0 = thread_cpu_ns();
  auto t0 = std::chrono::steady_clock::now();
  boost::fibers::fiber producer([&] {
    for (long i = 0; i < n; i++)
      ch.push(i);
    ch.close();
  });
  long v, sum = 0;
  boost::fibers::fiber consumer([&] {
    while (ch.pop(v) == boost::fibers::channel_op_status::success)
      sum += v;
  });
  producer.join();
  consumer.join();
  auto t1 = std::chrono::steady_clock::now();
  double c1 = thread_cpu_ns();
  if (sum != n * (n - 1) / 2)
    std::abort(); // an item lost: nothing measured is worth printing
  return {std::chrono::duration<double, std::nano>(t1 - t0).count() / (double)n,
          (c1 - c0) / (double)n};
}

bool use_channel = false; // --channel: channel() instead of pingpong()

// The shape on a fresh thread whose scheduler is Algo (plain) or traced<Algo>.
Cost measure(bool adapter, long n) {
  Cost r{};
  std::thread t([&] {
    if (adapter)
      corotracer::fiber::install<boost::fibers::algo::round_robin>();
    r = use_channel ? channel(n) : pingpong(n);
  });
  t.join();
  return r;
}

// CPU time of the waited-for children so far, ns.
double children_cpu_ns() {
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  return ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
         ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  long n = 500000;
  int rounds = 9;
  const char *tracer = nullptr;
  std::string mode; // the engine's options: " --lossless", " --pack"
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "-n") == 0 && i + 1 < argc)
      n = std::atol(argv[++i]);
    else if (std::strcmp(argv[i], "-r") == 0 && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--lossless") == 0 || std::strcmp(argv[i], "--pack") == 0)
      mode = mode + " " + argv[i];
    else if (std::strcmp(argv[i], "--channel") == 0)
      use_channel = true;
    else if (std::strcmp(argv[i], "--child") == 0) { // under the engine: traced only
      Cost c = measure(true, n);
      std::printf("%.1f %.1f\n", c.wall, c.cpu);
      return 0;
    } else
      tracer = argv[i];
  }
  std::string self = argv[0], dflt = self.substr(0, self.rfind('/') + 1) + "../bin/corotracer";
  char dir[] = "/tmp/bench-fiber.XXXXXX"; // the traced runs' trace: its size per handoff
  if (!mkdtemp(dir)) {
    std::perror("bench-fiber: mkdtemp");
    return 1;
  }
  std::string trace = std::string(dir) + "/t.ctrace";
  std::string run = std::string(tracer ? tracer : dflt.c_str()) + " run" + mode + " --quiet -o " +
                    trace + " -- " + self + (use_channel ? " --channel" : "") + " -n ";
  std::string cmd = run + std::to_string(n) + " --child", cmd1 = run + "1 --child";
  std::string floor_bin = self + "-floor", floor_cmd = floor_bin +
                                                       (use_channel ? " --channel" : "") + " -n " +
                                                       std::to_string(n) + " --child";
  bool with_floor = access(floor_bin.c_str(), X_OK) == 0; // none beside bench-fiber-floor
  // [0] wall, [1] CPU: ns per handoff, and the ratios to the round's plain
  // (the floor's: to the round's plain, and the traced run's to the floor).
  std::vector<double> plain[2], untraced[2], traced[2], un_ratio[2], tr_ratio[2];
  std::vector<double> fl_ns[2], fl_ratio[2], tr_floor[2];
  std::vector<double> engine, bytes, mbps; // trace bytes per handoff, MB/s of traced wall
  struct stat sb;
  double load0[3] = {0, 0, 0}, load1[3] = {0, 0, 0};
  getloadavg(load0, 3);
  for (int r = 0; r < rounds; r++) {
    Cost p1 = measure(false, n), u1 = measure(true, n);
    double e0 = children_cpu_ns(), e1 = 0, e2 = 0;
    Cost t{}, one{};
    for (const std::string *line : {&cmd1, &cmd}) {
      FILE *p = popen(line->c_str(), "r");
      Cost &got = line == &cmd ? t : one;
      if (!p || std::fscanf(p, "%lf %lf", &got.wall, &got.cpu) != 2 || pclose(p) != 0) {
        std::fprintf(stderr, "bench-fiber: %s failed\n", line->c_str());
        return 1;
      }
      (line == &cmd ? e2 : e1) = children_cpu_ns();
    }
    if (stat(trace.c_str(), &sb) == 0) {
      bytes.push_back((double)sb.st_size / (double)n);
      mbps.push_back((double)sb.st_size / (t.wall * (double)n / 1e9) / 1e6);
    }
    Cost f{};
    if (with_floor) {
      FILE *p = popen(floor_cmd.c_str(), "r");
      if (!p || std::fscanf(p, "%lf %lf", &f.wall, &f.cpu) != 2 || pclose(p) != 0) {
        std::fprintf(stderr, "bench-fiber: %s failed\n", floor_cmd.c_str());
        return 1;
      }
    }
    Cost u2 = measure(true, n), p2 = measure(false, n);
    for (int k = 0; k < 2; k++) {
      double pl = k ? (p1.cpu + p2.cpu) / 2 : (p1.wall + p2.wall) / 2;
      double un = k ? (u1.cpu + u2.cpu) / 2 : (u1.wall + u2.wall) / 2;
      double tr = k ? t.cpu : t.wall, fl = k ? f.cpu : f.wall;
      plain[k].push_back(pl), untraced[k].push_back(un), traced[k].push_back(tr);
      un_ratio[k].push_back(un / pl), tr_ratio[k].push_back(tr / pl);
      if (with_floor)
        fl_ns[k].push_back(fl), fl_ratio[k].push_back(fl / pl), tr_floor[k].push_back(tr / fl);
    }
    engine.push_back(((e2 - e1) - (e1 - e0)) / (double)(n - 1) - t.cpu);
  }
  getloadavg(load1, 3);
  for (int k = 0; k < 2; k++)
    std::printf("ns per handoff, %s (median of %d rounds of %ld): plain %.1f, installed untraced "
                "%.1f (%.2fx), traced %.1f (%.2fx)\n",
                k ? "thread CPU" : "wall", rounds, n, median(plain[k]), median(untraced[k]),
                median(un_ratio[k]), median(traced[k]), median(tr_ratio[k]));
  if (with_floor)
    for (int k = 0; k < 2; k++)
      std::printf("the floor (one clock read an adapter call, no engine), %s: %.1f (%.2fx of "
                  "plain); traced over the floor %.2fx\n",
                  k ? "thread CPU" : "wall", median(fl_ns[k]), median(fl_ratio[k]),
                  median(tr_floor[k]));
  std::printf("traced%s: the engine's CPU %.1f ns per handoff; trace %.1f B per handoff, %.1f "
              "MB/s; load average %.2f before, %.2f after\n",
              mode.c_str(), median(engine), bytes.empty() ? 0.0 : median(bytes),
              mbps.empty() ? 0.0 : median(mbps), load0[0], load1[0]);
  unlink(trace.c_str());
  rmdir(dir);
  return 0;
}
