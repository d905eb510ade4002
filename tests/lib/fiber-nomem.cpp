// fiber-nomem.cpp - the Boost.Fiber adapter (include/corotracer/boost_fiber.hpp)
// out of memory, for tests/test-fiber-nomem.sh: the global operator new is
// replaced by one that fails the Nth allocation after arm(N) on this thread,
// and fibers are launched with N = 0, 1, ... so that each of the adapter's
// allocations at a fiber's first sight (its data, its termination hook, its
// fiber-specific storage, its join entry) fails in turn. The adapter traces
// less then; it must never let bad_alloc out of its noexcept hooks (which
// terminates the program). Prints "launched L of N" and exits 0.
#include <boost/fiber/all.hpp>
#include <corotracer/boost_fiber.hpp>

#include <cstdio>
#include <cstdlib>
#include <new>

namespace {

constexpr int kRounds = 24;
thread_local long countdown = -1; // allocations left before the one that fails; -1: none fails

void arm(long n) {
  countdown = n;
}

} // namespace

void *operator new(std::size_t n) {
  if (countdown >= 0 && countdown-- == 0)
    throw std::bad_alloc();
  if (void *p = std::malloc(n ? n : 1))
    return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept {
  std::free(p);
}
void operator delete(void *p, std::size_t) noexcept {
  std::free(p);
}

int main() {
  corotracer::fiber::install<boost::fibers::algo::round_robin>();
  int launched = 0;
  for (int i = 0; i < kRounds; i++) {
    arm(i);
    try {
      boost::fibers::fiber f([] { boost::this_fiber::yield(); });
      arm(-1);
      f.join();
      launched++;
    } catch (const std::bad_alloc &) { // Boost's own allocation failed: not launched
      arm(-1);
    }
  }
  std::printf("launched %d of %d\n", launched, kRounds);
  return 0;
}
