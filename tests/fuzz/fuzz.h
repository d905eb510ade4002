/* fuzz.h - what the libFuzzer targets (tests/fuzz/fuzz-*.c) share: the input
 * written to an fd, as the readers under test get their bytes; a binary
 * trace made of it. Header-only. */
#ifndef CT_TESTS_FUZZ_H
#define CT_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/ctrace.h"

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

/* A binary trace made of data[0..size) into f (room for size + 32 bytes):
 * chunk 0, the file header then the bytes (the chunks' framing under test);
 * chunk 1, the file header then one chunk whose header and checksum are made
 * right around the bytes, its count the first byte (the entry decoder under
 * test). Returns the file's length. */
static inline size_t fuzz_ctrace_file(const uint8_t *data, size_t size, int chunk, uint8_t *f) {
  struct ctr_file_hdr fh = {.version = CTR_VERSION};
  uint32_t count = size ? data[0] : 0;
  struct ctr_chunk_hdr ch = {.tag = CTR_CHUNK_TAG,
                             .len = (uint32_t)size,
                             .count = count <= size ? count : (uint32_t)size,
                             .check = ctr_check(data, size)};
  size_t n = sizeof fh;
  memcpy(fh.magic, CTR_MAGIC, CTR_MAGIC_LEN);
  memcpy(f, &fh, sizeof fh);
  if (chunk) {
    memcpy(f + n, &ch, sizeof ch);
    n += sizeof ch;
  }
  memcpy(f + n, data, size);
  return n + size;
}

#endif
