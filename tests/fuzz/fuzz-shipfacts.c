/* fuzz-shipfacts.c - libFuzzer target: what `corotracer ship` reads of a
 * file before exporting it (src/ship/ship_facts.c: the hash, the meta line's
 * run id, host and command, scanned as written, the first module's path) on
 * arbitrary bytes: it returns 0 or -errno, and what it keeps is valid UTF-8. */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "ship/ship.h"

/* Traps unless s is valid UTF-8 (ct_utf8_len's rule). */
static void check_utf8(const char *s) {
  size_t n = s ? strlen(s) : 0, k;
  for (size_t i = 0; i < n; i += k)
    if (!(k = ct_utf8_len(s + i, n - i)))
      __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = fuzz_memfd("shipfacts", data, size);
  if (fd < 0)
    return 0;
  char path[64], why[256] = "";
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  struct ct_ship_facts f;
  int rc = ct_ship_facts_read(path, &f, why, sizeof why);
  if (rc > 0)
    __builtin_trap(); /* 0 or -errno */
  if (!rc) {
    if (strlen(f.dump_id) != 16 || f.file_bytes != size)
      __builtin_trap();
    check_utf8(f.command);
    check_utf8(f.executable);
    check_utf8(f.trace_run_id);
    check_utf8(f.host);
  }
  ct_ship_facts_free(&f);
  close(fd);
  return 0;
}
