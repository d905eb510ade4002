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
// the plain promise measured in the same process: by wall time, and by the
// thread's CPU time (what tracing costs the program itself, apart from the
// engine's threads and other load taking the cores). The traced child also
// measures one read of the probe's clock (rdtsc on x86-64): the probe stamps
// each of the two records with one, so the verdict states the co_await in
// clock reads of the same run, which load on a shared machine cannot skew.
// Then a coroutine's create + destroy (thread CPU, plain promise and
// PromiseMixin, both processes), and the stack scan that names a traced
// destroy's line (corotracer::detail::destroyer_site, from a destructor: it
// goes past one teardown frame, as past a task's destructor).
#include <algorithm>
#include <chrono>
#include <coroutine>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

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
double thread_cpu_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

// Values one measure_all call yields (and the traced child prints).
constexpr int NVAL = 12;

// Its wall time and the thread's CPU time, ns per co_await.
struct Cost {
  double wall, cpu;
};

template <class Base, class Aw> [[gnu::noinline]] Cost measure(long n) {
  double c0 = thread_cpu_ns();
  auto t0 = std::chrono::steady_clock::now();
  void *frame = loop<Base, Aw>(n).h.address();
  asm volatile("" : "+r"(frame) : : "memory");
  auto h = std::coroutine_handle<>::from_address(frame);
  while (!h.done())
    h.resume();
  h.destroy();
  auto t1 = std::chrono::steady_clock::now();
  double c1 = thread_cpu_ns();
  return {std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(n),
          (c1 - c0) / static_cast<double>(n)};
}

// Thread CPU ns of one read of the counter the probe stamps records with
// (src/common/ticks.h: rdtsc, cntvct_el0, else CLOCK_MONOTONIC), n reads.
[[gnu::noinline]] double clock_read_ns(long n) {
  std::uint64_t sum = 0;
  double c0 = thread_cpu_ns();
  for (long i = 0; i < n; i++) {
#if defined(__x86_64__)
    sum += __rdtsc();
#elif defined(__aarch64__)
    std::uint64_t v;
    asm volatile("mrs %0, cntvct_el0" : "=r"(v));
    sum += v;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    sum += static_cast<std::uint64_t>(ts.tv_nsec);
#endif
  }
  double c1 = thread_cpu_ns();
  sink = static_cast<long>(sum);
  return (c1 - c0) / static_cast<double>(n);
}

// Thread CPU ns per create + destroy of a Co<Base> that never runs (its
// initial suspend), n of them; the destroy from a noinline frame, as an
// owner's erase would.
template <class Base> [[gnu::noinline]] double lifetime_ns(long n) {
  double c0 = thread_cpu_ns();
  for (long i = 0; i < n; i++) {
    void *frame = loop<Base, std::suspend_always>(1).h.address();
    asm volatile("" : "+r"(frame) : : "memory");
    std::coroutine_handle<>::from_address(frame).destroy();
  }
  return (thread_cpu_ns() - c0) / static_cast<double>(n);
}

// A destructor that runs the destroy's scan, as ~PromiseMixin does below a
// task's destructor.
struct ScanInDtor {
  [[gnu::noinline]] ~ScanInDtor() {
    sink = reinterpret_cast<long>(corotracer::detail::destroyer_site());
  }
};

// Thread CPU ns per destroyer_site() scan, n of them.
[[gnu::noinline]] double scan_ns(long n) {
  double c0 = thread_cpu_ns();
  for (long i = 0; i < n; i++) {
    ScanInDtor scan;
    (void)scan;
  }
  return (thread_cpu_ns() - c0) / static_cast<double>(n);
}

// One measurement of each of the four, in this order: wall in out[0..3],
// CPU in out[4..7]; then one clock read's CPU in out[8]; create + destroy,
// plain and PromiseMixin, in out[9..10] (n / 10 of each); one scan in out[11].
void measure_all(long n, double out[NVAL]) {
  Cost c[4] = {measure<NoBase, std::suspend_always>(n),
               measure<corotracer::PromiseMixin, std::suspend_always>(n),
               measure<NoBase, std::suspend_never>(n),
               measure<corotracer::PromiseMixin, std::suspend_never>(n)};
  for (int k = 0; k < 4; k++) {
    out[k] = c[k].wall;
    out[4 + k] = c[k].cpu;
  }
  out[8] = clock_read_ns(n);
  out[9] = lifetime_ns<NoBase>(n / 10);
  out[10] = lifetime_ns<corotracer::PromiseMixin>(n / 10);
  out[11] = scan_ns(n / 10);
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

// x - base, 0 when noise puts x below its baseline (not a gain).
double over(double x, double base) {
  return x > base ? x - base : 0;
}

// Run `corotracer run -- self --child n` and read its NVAL numbers.
bool run_traced(const std::string &tracer, const std::string &self, long n, double out[NVAL]) {
  std::string trace = "/tmp/bench-cpp-" + std::to_string(getpid()) + ".ctrace";
  std::string cmd = "'" + tracer + "' run --quiet -o " + trace + " -- '" + self + "' --child " +
                    std::to_string(n);
  FILE *p = popen(cmd.c_str(), "r");
  if (!p)
    return false;
  int got = 0;
  for (int k = 0; k < NVAL; k++)
    got += std::fscanf(p, "%lf", &out[k]);
  int st = pclose(p);
  unlink(trace.c_str());
  return got == NVAL && WIFEXITED(st) && WEXITSTATUS(st) == 0;
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
    double r[NVAL];
    measure_all(std::atol(argv[2]), r);
    for (int k = 0; k < NVAL; k++)
      std::printf("%f%c", r[k], k < NVAL - 1 ? ' ' : '\n');
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
  // v[t * NVAL + c * 4 + k]: t 0 here (untraced), 1 in the traced child; c 0
  // wall, 1 CPU; k as measure_all's; v[t * NVAL + 8] the clock read.
  std::vector<double> v[2 * NVAL];
  for (int r = 0; r < rounds; r++) {
    double a[NVAL], b[NVAL];
    measure_all(n, a);
    if (!run_traced(tracer, self, n, b)) {
      std::fprintf(stderr, "bench-cpp: traced run through %s failed\n", tracer.c_str());
      return 1;
    }
    for (int k = 0; k < NVAL; k++) {
      v[k].push_back(a[k]);
      v[NVAL + k].push_back(b[k]);
    }
  }
  double m[2 * NVAL];
  for (int k = 0; k < 2 * NVAL; k++)
    m[k] = median(v[k]);
  const char *names[2] = {"suspend+resume", "ready (no suspend)"};
  for (int c = 0; c < 2; c++) {
    std::printf("bench-cpp: %ld co_awaits x %d rounds, median ns per co_await, %s\n", n, rounds,
                c ? "thread CPU time" : "wall time");
    std::printf("%-20s %7s %8s %6s %6s   %7s %7s %6s %6s\n", "", "plain", "untraced", "+ns",
                "ratio", "plain*", "traced", "+ns", "ratio");
    for (int k = 0; k < 2; k++) {
      const double *u = &m[c * 4 + 2 * k], *t = &m[NVAL + c * 4 + 2 * k];
      std::printf("%-20s %7.2f %8.2f %6.2f %6s   %7.2f %7.2f %6.2f %6s\n", names[k], u[0], u[1],
                  over(u[1], u[0]), ratio(u[1], u[0]).c_str(), t[0], t[1], over(t[1], t[0]),
                  ratio(t[1], t[0]).c_str());
    }
  }
  std::printf("plain* = plain promise measured in the traced process; +ns: over plain, 0 when\n"
              "noise put it below\n");
  std::printf("create + destroy, thread CPU ns per coroutine: plain %.1f, PromiseMixin "
              "untraced %.1f (+%.1f); traced: plain* %.1f, PromiseMixin %.1f (+%.1f), of which "
              "the destroy's scan %.1f (%.0f%% of the traced lifetime); untraced, no scan\n",
              m[9], m[10], over(m[10], m[9]), m[NVAL + 9], m[NVAL + 10],
              over(m[NVAL + 10], m[NVAL + 9]), m[NVAL + 11], 100 * m[NVAL + 11] / m[NVAL + 10]);
  // Issue #32's target: a traced suspend + resume <= 15 ns of the program's
  // CPU, with a clock read of 9.5 ns: one read + 5.5 ns, stated here in this
  // run's clock reads (a loaded VM makes rdtsc itself 2x slower).
  double traced = m[NVAL + 4 + 1], clk = m[NVAL + 8];
  std::printf("clock read (the probe's stamp), traced child: %.2f ns of thread CPU; the "
              "traced suspend + resume is %.2f clock reads, %.2f ns beyond two\n",
              clk, traced / clk, traced - 2 * clk);
  std::printf("verdict: C++ co_await traced, suspend + resume: target <= one clock read + 5.5 "
              "ns (15 ns at 9.5), here <= %.2f ns; measured %.2f ns: %s\n",
              clk + 5.5, traced, traced <= clk + 5.5 ? "met" : "not met");
  return 0;
}
