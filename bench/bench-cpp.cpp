// bench-cpp.cpp - cost of one co_await through corotracer::PromiseMixin: traced, untraced, plain
// promise.
//
//   bench-cpp [-n CO_AWAITS] [-r ROUNDS] [COROTRACER]
//
// Each round measures, in this process (not traced), a coroutine with a plain
// promise and one whose promise derives from PromiseMixin; then runs itself
// under `COROTRACER run` (default: ../bin/corotracer next to this program) to
// measure the same two there, traced. Two awaits: one that suspends (the
// driver resumes it at once: records suspend + resume) and one that is ready
// (records nothing). Prints the median ns per co_await of each, and ratios to
// the plain promise measured in the same process.
#include <algorithm>
#include <chrono>
#include <coroutine>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "corotracer.hpp"

namespace {

template <class Base> struct Co {
  struct promise_type : Base {
    Co get_return_object() {
      return {std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_always initial_suspend() noexcept {
      return {};
    }
    std::suspend_always final_suspend() noexcept {
      return {};
    }
    void return_void() {
    }
    void unhandled_exception() {
      std::abort();
    }
  };
  std::coroutine_handle<promise_type> h;
};
struct NoBase {};

volatile long sink;

template <class Base, class Aw> Co<Base> loop(long n) {
  long x = 0;
  for (long i = 0; i < n; i++) {
    co_await Aw{};
    x += i;
  }
  sink = x;
}

// ns per co_await of loop<Base, Aw>(n), driven to completion by resume().
// The frame's address escapes (as it does into any real scheduler's queue), so
// the compiler can neither elide the frame nor inline the body into the loop.
template <class Base, class Aw> [[gnu::noinline]] double measure(long n) {
  auto t0 = std::chrono::steady_clock::now();
  void *frame = loop<Base, Aw>(n).h.address();
  asm volatile("" : "+r"(frame) : : "memory");
  auto h = std::coroutine_handle<>::from_address(frame);
  while (!h.done())
    h.resume();
  h.destroy();
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(n);
}

// One measurement of each of the four, in this order.
void measure_all(long n, double out[4]) {
  out[0] = measure<NoBase, std::suspend_always>(n);
  out[1] = measure<corotracer::PromiseMixin, std::suspend_always>(n);
  out[2] = measure<NoBase, std::suspend_never>(n);
  out[3] = measure<corotracer::PromiseMixin, std::suspend_never>(n);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// x / base, or "-" when the baseline is ~0 (the compiler removed the plain loop).
std::string ratio(double x, double base) {
  if (base < 0.05)
    return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", x / base);
  return b;
}

// Run `corotracer run -- self --child n` and read its four numbers.
bool run_traced(const std::string &tracer, const std::string &self, long n, double out[4]) {
  std::string trace = "/tmp/bench-cpp-" + std::to_string(getpid()) + ".ctrace";
  std::string cmd = "'" + tracer + "' run --quiet -o " + trace + " -- '" + self + "' --child " +
                    std::to_string(n);
  FILE *p = popen(cmd.c_str(), "r");
  if (!p)
    return false;
  int got = std::fscanf(p, "%lf %lf %lf %lf", &out[0], &out[1], &out[2], &out[3]);
  int st = pclose(p);
  unlink(trace.c_str());
  return got == 4 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

} // namespace

int main(int argc, char **argv) {
  long n = 2000000;
  int rounds = 7;
  std::string self = "/proc/self/exe";
  char buf[4096];
  ssize_t len = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (len > 0)
    self.assign(buf, static_cast<size_t>(len));
  if (argc == 3 && std::strcmp(argv[1], "--child") == 0) {
    if (corotracer::InitTracer() != 0)
      return 1;
    double r[4];
    measure_all(std::atol(argv[2]), r);
    std::printf("%f %f %f %f\n", r[0], r[1], r[2], r[3]);
    return 0;
  }
  std::string tracer = self.substr(0, self.rfind('/')) + "/../bin/corotracer";
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "-n") == 0 && i + 1 < argc)
      n = std::atol(argv[++i]);
    else if (std::strcmp(argv[i], "-r") == 0 && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else
      tracer = argv[i];
  }
  if (corotracer::InitTracer() == 0) {
    std::fprintf(stderr, "bench-cpp: run me untraced; I start the traced half myself\n");
    return 2;
  }
  std::vector<double> v[8]; // 0-3 here (untraced), 4-7 in the traced child
  for (int r = 0; r < rounds; r++) {
    double a[4], b[4];
    measure_all(n, a);
    if (!run_traced(tracer, self, n, b)) {
      std::fprintf(stderr, "bench-cpp: traced run through %s failed\n", tracer.c_str());
      return 1;
    }
    for (int k = 0; k < 4; k++) {
      v[k].push_back(a[k]);
      v[4 + k].push_back(b[k]);
    }
  }
  double m[8];
  for (int k = 0; k < 8; k++)
    m[k] = median(v[k]);
  std::printf("bench-cpp: %ld co_awaits x %d rounds, median ns per co_await\n", n, rounds);
  std::printf("%-20s %7s %8s %6s %6s   %7s %7s %6s %6s\n", "", "plain", "untraced", "+ns", "ratio",
              "plain*", "traced", "+ns", "ratio");
  const char *names[2] = {"suspend+resume", "ready (no suspend)"};
  for (int k = 0; k < 2; k++) {
    int i = 2 * k;
    std::printf("%-20s %7.2f %8.2f %6.2f %6s   %7.2f %7.2f %6.2f %6s\n", names[k], m[i], m[i + 1],
                m[i + 1] - m[i], ratio(m[i + 1], m[i]).c_str(), m[4 + i], m[4 + i + 1],
                m[4 + i + 1] - m[4 + i], ratio(m[4 + i + 1], m[4 + i]).c_str());
  }
  std::printf("plain* = plain promise measured in the traced process\n");
  return 0;
}
