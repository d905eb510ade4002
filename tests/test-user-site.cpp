// test-user-site.cpp - include/corotracer/user_site.hpp's verdict on a symbol: the runtimes'
// functions and the names reserved to the implementation (a sanitizer's runtime, linked into
// the executable) are not the user's code, whose scan would stop there; the user's are. Asio's
// composed operations' operator()s (and range_connect_op's process()) are told apart. A scan
// along a frame-pointer chain passes over a stale return address off the chain.
#include <corotracer/user_site.hpp>

#include "lib/check.h"

using corotracer::user_site::detail::find_word;
using corotracer::user_site::detail::is_composed;
using corotracer::user_site::detail::is_runtime;

namespace {

// Its caller's return address: a code address of main's, after a call.
[[gnu::noinline]] std::uintptr_t return_address() {
  return reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
}

// A made-up stack (words): frame records at 0, 4, 8 and 12, each a saved frame pointer then a
// return address (user code: each stops a scan); word 2, below the record at 4, holds a stale
// return address of main's, as a frame's unwritten slot does (under ASan, Asio's
// range_connect_op named for a server's accept). The scan along the chain from record 0 takes
// word 5; without the chain (no record given, or a chain of one link: not trusted), word 2.
void chain_scan(std::uintptr_t stale, std::uintptr_t ra) {
  std::uintptr_t st[32] = {};
  for (int r = 0; r < 16; r += 4) {
    st[r] = reinterpret_cast<std::uintptr_t>(&st[r + 4]);
    st[r + 1] = ra;
  }
  st[1] = 0; // the hook's own return address: not the user's
  st[2] = stale;
  ASSERT(find_word(st, st + 32, corotracer::user_site::Skip::runtime, nullptr, st) == &st[5]);
  ASSERT(find_word(st, st + 32) == &st[2]);
  st[4] = 0; // the chain ends at the record at 4: not trusted
  ASSERT(find_word(st, st + 32, corotracer::user_site::Skip::runtime, nullptr, st) == &st[2]);
}

} // namespace

int main() {
  chain_scan(return_address(), return_address());
  // The runtimes' namespaces, and ours.
  ASSERT(is_runtime("_ZN4asio6detail9scheduler3runERSt10error_code"));
  ASSERT(is_runtime("_ZNK5boost6fibers7context2idEv"));
  ASSERT(is_runtime("_ZN10corotracer13asio_tracking6detail6createEv"));
  // The global operator new and delete (a sanitizer's, linked into the executable).
  ASSERT(is_runtime("_ZdlPvm"));
  ASSERT(is_runtime("_Znwm"));
  // Reserved names: C ones, and C++ ones whose first namespace starts "__".
  ASSERT(is_runtime("__tsan_read8"));
  ASSERT(is_runtime("__interceptor_pthread_create"));
  ASSERT(is_runtime("_ZN11__sanitizer13InternalAllocEmPNS_28SizeClassAllocatorLocalCacheE"));
  ASSERT(is_runtime("_ZN6__tsan10ThreadPollEv"));
  ASSERT(is_runtime("_ZNK9__gnu_cxx17__normal_iteratorIPiSt6vectorIiSaIiEEEdeEv"));
  ASSERT(is_runtime("_ZZN6__tsan10ThreadPollEvE4seen"));
  // The user's: plain, in a namespace (anonymous too), a lambda, a one-letter namespace "_".
  ASSERT(!is_runtime("main"));
  ASSERT(!is_runtime("_Z6workerv"));
  ASSERT(!is_runtime("_ZN3app7Service6acceptEv"));
  ASSERT(!is_runtime("_ZN12_GLOBAL__N_17Service6acceptEv"));
  ASSERT(!is_runtime("_ZZ4mainENKUlvE_clEv"));
  ASSERT(!is_runtime("_ZN1_1fEv"));
  ASSERT(!is_runtime("_ZN"));
  // Composed operations (Asio, Boost.Asio): operator() and process(), a clone of one too; not
  // their constructors, an operation's do_complete, nor a user's *_op.
  ASSERT(is_composed("_ZN4asio6detail7read_opINS_19basic_stream_socketIiEEiE"
                     "EclESt10error_codemi"));
  ASSERT(is_composed("_ZN4asio6detail8write_opIiEclESt10error_codemi.isra.0"));
  ASSERT(
      is_composed("_ZN5boost4asio6detail16range_connect_opIiE7processIPiEEvSt10error_codeiT_S6_"));
  ASSERT(!is_composed("_ZN4asio6detail7read_opIiEC2EOS2_"));
  ASSERT(!is_composed("_ZN4asio6detail23reactive_socket_recv_opIiE11do_completeEPvS2_m"));
  ASSERT(!is_composed("_ZN3app7read_opIiEclEv"));
  ASSERT(!is_composed("_ZN4asio6detail"));
  return 0;
}
