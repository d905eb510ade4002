// test-cpp-sym.cpp - print "file line function" for a site of a trace, through the shared symbolizer.
//
//   test-cpp-sym TRACE SITE      (SITE as in the trace: "0x...")
//
// A tool for tests/test-cpp-*.sh: it maps SITE - 1 (a return address) through
// the trace's module lines exactly as the report does, so the tests can check
// that the C++ SDK's co_await sites name the right source line.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" {
#include "common/symbolize.h"
}

namespace {

// The value of "key" in one JSON line: a number, or a string without quotes
// (module paths with escapes are not expected here). Empty when absent.
std::string field(const char *line, const char *key) {
  std::string pat = std::string("\"") + key + "\":";
  const char *p = std::strstr(line, pat.c_str());
  if (!p)
    return {};
  p += pat.size();
  if (*p == '"')
    return std::string(p + 1, std::strcspn(p + 1, "\""));
  return std::string(p, std::strcspn(p, ",}"));
}

std::uint64_t num(const std::string &s) { return std::strtoull(s.c_str(), nullptr, 0); }

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: test-cpp-sym TRACE SITE\n");
    return 2;
  }
  FILE *f = std::fopen(argv[1], "r");
  ct_symbolizer *s = nullptr;
  if (!f || ct_symbolizer_new(&s) != 0) {
    std::fprintf(stderr, "test-cpp-sym: %s: %s\n", argv[1], std::strerror(errno));
    return 1;
  }
  char line[8192];
  std::uint32_t pid = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (field(line, "type") != "module")
      continue;
    pid = static_cast<std::uint32_t>(num(field(line, "pid")));
    ct_symbolizer_add_module(s, pid, num(field(line, "start")), num(field(line, "end")),
                             num(field(line, "offset")), field(line, "path").c_str());
  }
  std::fclose(f);
  ct_sym sym{};
  int rc = ct_symbolize(s, pid, num(argv[2]), 1, &sym);
  if (rc == 0)
    std::printf("%s %d %s\n", sym.file ? sym.file : "-", sym.line, sym.function ? sym.function : "-");
  ct_symbolizer_free(s);
  return rc == 0 ? 0 : 1;
}
