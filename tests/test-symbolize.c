/* test-symbolize.c - the symbolizer on this very program (built -g as a PIE):
 * maps from /proc/self/maps, own functions, a return address, a library, a
 * missing file, pid filtering and a map-less (static) module.
 * With `--trace FILE` it instead writes a trace whose module lines are its own
 * maps and whose sites are its own code, and prints the expected symbols
 * (tests/test-report-pie.sh checks `corotracer report` against them). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/check.h"
#include "symbolize/symbolize.h"

/* Each function on one physical line, so any of its addresses has that line;
 * and each site's line recorded on the site's own line: kept as written. */
// clang-format off
enum { F1_LINE = __LINE__ }; __attribute__((noinline)) static int f1(int x) { __asm__ volatile("" ::: "memory"); return x * 3 + 1; }

/* The memory clobber keeps it impure, so the caller's code after it stays after it. */
__attribute__((noinline)) static uintptr_t get_ra(void) {
  uintptr_t r = (uintptr_t)__builtin_return_address(0);
  __asm__ volatile("" ::: "memory");
  return r;
}

static int call_line;
__attribute__((noinline)) static uintptr_t caller(void) {
  uintptr_t ra = get_ra(); call_line = __LINE__;
  return ra;
}

/* Inlined into caller2: the site must be named after it, with its line. */
static int inl_line;
__attribute__((always_inline)) static inline uintptr_t inlined_ra(void) {
  uintptr_t ra = get_ra(); inl_line = __LINE__;
  return ra;
}
__attribute__((noinline)) static uintptr_t caller2(void) {
  uintptr_t ra = inlined_ra();
  __asm__ volatile("" ::: "memory");
  return ra;
}

/* C functions under C++ symbol names, for the demangler: each pair is the
 * symbol and what the report must show. */
#define NAMED(fn, sym) __attribute__((noinline, used)) static int fn(void) __asm__(sym); \
  __attribute__((noinline, used)) static int fn(void) { __asm__ volatile("" ::: "memory"); return __LINE__; }
NAMED(m1, "_ZN2ns3fooEv")
NAMED(m2, "_ZN12_GLOBAL__N_18consumerEv.actor")
NAMED(m3, "_ZN2ex4TaskC2IJiEEEv")
NAMED(m4, "_ZNK2ns3BarD1Ev")
NAMED(m5, "_ZSt4moveIRiEONSt16remove_referenceIT_E4typeEOS2_")
NAMED(m6, "_ZL5localv")
NAMED(m7, "_ZN2nsplERKS_S1_")
NAMED(m8, "_ZN2ns3bazEv.part.0")
NAMED(m9, "_ZThn40_N4asio6detail13epoll_reactor9interruptEv")
NAMED(m10, "_ZTv0_n24_N2ns4Base3runEv")
NAMED(m11, "_ZZ4mainENKUlvE0_clEv.constprop.0")
NAMED(m12, "_ZN27asio_handler_invoke_helpers6invokeIN4asio6detail7binder1IZ4mainEUlSt10error_codeE_S4_EES6_EEvRT_RT0_")
NAMED(m13, "_ZN4asio6detail23strand_executor_service10do_executeINS_10io_context19basic_executor_typeISaIvELm0EEEKNS0_17executor_functionESaIvEEEvRKSt10shared_ptrINS1_11strand_implEERKT_OT0_RKT1_")
NAMED(m14, "_ZNK4asio6detail15system_category7messageB5cxx11Ei")
NAMED(m15, "_ZNSt23_Sp_counted_ptr_inplaceIN12_GLOBAL__N_16ClientESaIvELN9__gnu_cxx12_Lock_policyE2EE10_M_disposeEv.cold")
NAMED(m16, "_ZN5boost6fibersL19make_worker_contextINS_7context21basic_fixedsize_stackINS2_12stack_traitsEEEZ4mainEUlvE_JEEENS_13intrusive_ptrINS0_7contextEEENS0_6launchEOT_OT0_DpT1_.constprop.0.cold")
NAMED(m17, "accept_wait.isra.0")
// clang-format on
static const struct {
  int (*fn)(void);
  const char *want;
} named[] = {
    {m1, "ns::foo"},
    {m2, "(anonymous namespace)::consumer"}, /* a GCC coroutine body */
    {m3, "ex::Task::Task<...>"},
    {m4, "ns::Bar::~Bar"},
    {m5, "std::move<...>"},
    {m6, "local"},
    {m7, "ns::operator+"},
    {m8, "ns::baz"},                                /* numbered clone suffix dropped */
    {m9, "asio::detail::epoll_reactor::interrupt"}, /* thunks: the function they enter */
    {m10, "ns::Base::run"},
    {m11, "main::{lambda()#2}::operator()"},
    {m12, "asio_handler_invoke_helpers::invoke<...>"}, /* a local lambda in the arguments */
    {m13, "asio::detail::strand_executor_service::do_execute<...>"},
    {m14, "asio::detail::system_category::message"},             /* the ABI tag not shown */
    {m15, "std::_Sp_counted_ptr_inplace<...>::_M_dispose.cold"}, /* an enum literal */
    {m16, "boost::fibers::make_worker_context<...>.cold"},
    {m17, "accept_wait"}, /* a C clone's suffix too */
};

/* Feeds every executable file mapping of this process to s (or, with s NULL,
 * writes them as module lines to out); returns how many. */
static int add_self_maps(ct_symbolizer *s, FILE *out, uint32_t pid, char *exe, size_t exesz) {
  FILE *f = fopen("/proc/self/maps", "re");
  if (!f)
    return -errno;
  char line[4096];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    uint64_t start, end, off;
    char perms[8], path[4096] = "";
    if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4095[^\n]", &start, &end,
               perms, &off, path) < 4)
      continue;
    if (perms[2] != 'x' || path[0] != '/')
      continue;
    if (out)
      n += fprintf(out,
                   "{\"type\":\"module\",\"pid\":%u,\"start\":\"0x%016" PRIx64
                   "\",\"end\":\"0x%016" PRIx64 "\",\"offset\":\"0x%016" PRIx64
                   "\",\"path\":\"%s\"}\n",
                   pid, start, end, off, path) > 0;
    else if (ct_symbolizer_add_module(s, pid, start, end, off, path) == 0)
      n++;
    if (strstr(path, "test-symbolize"))
      snprintf(exe, exesz, "%s", path);
  }
  fclose(f);
  return n;
}

/* The file name of path (after its last '/'). */
static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* A trace of one coroutine created in f1 and parked for good in caller()
 * (a lost wakeup), and one created in f1 that never ends (a leak, listed by
 * its creation site). */
static int write_trace(const char *path) {
  FILE *f = fopen(path, "we");
  if (!f)
    return 1;
  uint32_t pid = (uint32_t)getpid();
  char exe[4096] = "";
  uintptr_t ra = caller(), create = (uintptr_t)&f1 + 1; /* "returns" into f1 */
  const uint64_t t0 = (uint64_t)5000 * 1000000000u;
  fprintf(
      f,
      "{\"type\":\"meta\",\"format\":\"corotracer-trace\",\"format_version\":1,\"target_pid\":%u,"
      "\"clock\":{\"mono_ns\":%" PRIu64 ",\"wall_ns\":1}}\n",
      pid, t0);
  add_self_maps(NULL, f, pid, exe, sizeof exe);
  fprintf(f,
          "{\"type\":\"coroutine\",\"probe_id\":7,\"station\":0,\"pid\":%u,\"label\":\"pie\","
          "\"create_site\":\"0x%016" PRIxPTR "\"}\n",
          pid, create);
  const char *ev =
      "{\"probe_id\":7,\"tid\":%u,\"addr\":\"0x%016" PRIxPTR "\",\"seq\":%d,\"is_active\":%s,"
      "\"ts\":%" PRIu64 ",\"kind\":\"%s\",\"ev\":%d,\"site\":\"0x%016" PRIxPTR "\"%s}\n";
  fprintf(f, ev, pid, create, 2, "false", t0 + 1000, "create", 0, create, "");
  fprintf(f, ev, pid, (uintptr_t)0, 4, "true", t0 + 2000, "resume", 1, (uintptr_t)0, "");
  fprintf(f, ev, pid, ra, 6, "false", t0 + 3000, "suspend", 2, ra, ",\"wait\":\"fd\",\"obj\":9");
  fprintf(f,
          "{\"type\":\"coroutine\",\"probe_id\":9,\"station\":1,\"pid\":%u,\"label\":\"pie\","
          "\"create_site\":\"0x%016" PRIxPTR "\"}\n",
          pid, create);
  const char *ev9 =
      "{\"probe_id\":9,\"tid\":%u,\"addr\":\"0x%016" PRIxPTR "\",\"seq\":%d,\"is_active\":%s,"
      "\"ts\":%" PRIu64 ",\"kind\":\"%s\",\"ev\":%d,\"site\":\"0x%016" PRIxPTR "\"}\n";
  fprintf(f, ev9, pid, create, 2, "false", t0 + 1500, "create", 0, create);
  fprintf(f, ev9, pid, (uintptr_t)0, 4, "true", t0 + 2500, "resume", 1, (uintptr_t)0);
  fprintf(
      f,
      "{\"probe_id\":8,\"tid\":%u,\"addr\":\"0x0\",\"seq\":2,\"is_active\":false,\"ts\":%" PRIu64
      ",\"kind\":\"wake\",\"ev\":0,\"from\":0}\n",
      pid, t0 + 4000);
  fprintf(f, "{\"type\":\"end\",\"ts\":%" PRIu64 ",\"exit\":{\"code\":0}}\n",
          t0 + (uint64_t)5000000000u);
  if (fclose(f))
    return 1;
  printf("suspend caller %d\ncreate f1 %d\n", call_line, F1_LINE);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--trace") == 0)
    return write_trace(argv[2]);
  ct_symbolizer *s = NULL;
  uint32_t pid = (uint32_t)getpid();
  char exe[4096] = "";
  ASSERT_OK(ct_symbolizer_new(&s));
  int nmaps = add_self_maps(s, NULL, pid, exe, sizeof exe);
  ASSERT_GE(nmaps, 2);    /* executable mappings */
  ASSERT_EQ(exe[0], '/'); /* own executable in /proc/self/maps */

  /* A function's own address (not a return address). */
  struct ct_sym sym;
  uintptr_t pf1 = (uintptr_t)&f1;
  ASSERT_EQ(f1(1), 4);
  ASSERT_OK(ct_symbolize(s, pid, pf1, 0, &sym));
  ASSERT_STR_EQ(sym.function, "f1");
  ASSERT_EQ(sym.line, F1_LINE);
  ASSERT_NOT_NULL(sym.file);
  ASSERT_STR_EQ(base_name(sym.file), "test-symbolize.c");
  ASSERT_STR_EQ(sym.module, exe);
  uint64_t f1_vaddr = sym.offset;

  /* A return address: the call's line, in the calling function. */
  uintptr_t ra = caller();
  ASSERT_OK(ct_symbolize(s, pid, ra, 1, &sym));
  ASSERT_STR_EQ(sym.function, "caller");
  ASSERT_EQ(sym.line, call_line);

  /* Code inlined into another function: the inlined function and its line. */
  ra = caller2();
  ASSERT_OK(ct_symbolize(s, pid, ra, 1, &sym));
  ASSERT_STR_EQ(sym.function, "inlined_ra");
  ASSERT_EQ(sym.line, inl_line);

  /* Cached: the same answer, the same strings. */
  struct ct_sym again;
  ASSERT_OK(ct_symbolize(s, pid, ra, 1, &again));
  ASSERT_PTR_EQ(again.function, sym.function);
  ASSERT_EQ(again.line, sym.line);

  /* C++ names demangled, with thunks, lambdas, clones: the names libdw gives. */
  for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
    ASSERT_OK(ct_symbolize(s, pid, (uintptr_t)named[i].fn, 0, &sym));
    ASSERT_STR_EQ(sym.function, named[i].want);
  }

  /* A shared library through its own mapping. */
  /* (getpid: the sanitizers intercept fopen and friends, not getpid.) */
  ASSERT_OK(ct_symbolize(s, pid, (uintptr_t)&getpid, 0, &sym));
  ASSERT_NOT_NULL(sym.module);
  ASSERT_NOT_NULL(strstr(sym.module, "/libc"));
  ASSERT_NOT_NULL(sym.function);
  ASSERT_NOT_NULL(strstr(sym.function, "getpid"));

  /* Another process, or an address nobody maps: not found. */
  ASSERT_EQ(ct_symbolize(s, pid + 1, pf1, 0, &sym), -ENOENT); /* another pid */
  ASSERT_EQ(ct_symbolize(s, pid, 16, 0, &sym), -ENOENT);      /* unmapped */
  ct_symbolizer_free(s);

  /* A file that is gone: module + file offset, no names. */
  ASSERT_OK(ct_symbolizer_new(&s));
  ASSERT_OK(ct_symbolizer_add_module(s, 0, 0x10000, 0x20000, 0x3000, "/nonexistent/app"));
  ASSERT_OK(ct_symbolize(s, 7, 0x10010, 1, &sym));
  ASSERT_NULL(sym.function);
  ASSERT_EQ(sym.line, 0);
  ASSERT_UINT64_EQ(sym.offset, 0x3010);
  ASSERT_EQ(ct_symbolizer_add_module(s, 0, 5, 5, 0, "/x"), -EINVAL); /* empty range */
  ct_symbolizer_free(s);

  /* No map: the ELF's own addresses. */
  ASSERT_OK(ct_symbolizer_new(&s));
  ASSERT_OK(ct_symbolizer_add_static(s, exe));
  ASSERT_OK(ct_symbolize(s, 0, f1_vaddr, 0, &sym));
  ASSERT_STR_EQ(sym.function, "f1");
  ASSERT_EQ(sym.line, F1_LINE);
  ct_symbolizer_free(s);

  printf("test-symbolize: ok\n");
  return 0;
}
