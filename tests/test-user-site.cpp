// test-user-site.cpp - include/corotracer/user_site.hpp's verdict on a symbol: the runtimes'
// functions and the names reserved to the implementation (a sanitizer's runtime, linked into
// the executable) are not the user's code, whose scan would stop there; the user's are. Asio's
// composed operations' operator()s (and range_connect_op's process()) are told apart.
#include <corotracer/user_site.hpp>

#include "lib/check.h"

using corotracer::user_site::detail::is_composed;
using corotracer::user_site::detail::is_runtime;

int main() {
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
