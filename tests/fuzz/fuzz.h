/* fuzz.h - what the libFuzzer targets (tests/fuzz/fuzz-*.c) share: the input
 * written to an fd, as the readers under test get their bytes. Header-only. */
#ifndef CT_TESTS_FUZZ_H
#define CT_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes p[0..n) to fd, over short writes: 0, or -1 (the write failed). */
static inline int fuzz_write_all(int fd, const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0)
      return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* A memory file (close-on-exec) holding data[0..size), its offset at the end:
 * the fd, which the caller closes, or -1. */
static inline int fuzz_memfd(const char *name, const uint8_t *data, size_t size) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd >= 0 && fuzz_write_all(fd, data, size) != 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

#endif
