/* fuzz-ripmaps.c - libFuzzer target: the module map of a rip ring
 * ("<ring>.maps", src/rip/rip_syms.c) on arbitrary bytes. Only the parsing:
 * the map's paths are never opened (the symbolizer loads files on lookup). */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "rip/rip_syms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = fuzz_memfd("fuzz-ripmaps", data, size);
  if (fd < 0)
    return 0;
  char path[64], why[256];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  ct_symbolizer *s = NULL;
  const char *warn, *err_file;
  why[0] = '\0';
  int rc = ct_rip_symbolizer("/proc/self/exe", path, &s, &warn, &err_file, why, sizeof why);
  if (rc == 0)
    ct_symbolizer_free(s);
  else if (rc > 0 || why[0] == '\0' || s != NULL)
    __builtin_trap(); /* a failure is -errno with a reason, and leaves nothing */
  close(fd);
  return 0;
}
