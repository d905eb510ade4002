/* fuzz-rip.c - libFuzzer target: the rip ring reader (src/rip/rip_load.c) on
 * arbitrary files, raw (mapped, or streamed from a pipe) or compressed, and
 * the ring ordering on arbitrary rings. The first byte picks the way the file
 * is read; the rest is the file. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "rip/rip_load.h"

/* What a successful load promises: ids increasing, rings ordered and short. */
static void check_threads(const struct ct_rip_threads *t) {
  for (size_t i = 0; i < t->n; i++) {
    const struct ct_rip_thread *th = &t->v[i];
    if (th->n > RIP_RING_SIZE || th->name[RIP_NAME_SIZE] != '\0')
      __builtin_trap();
    if (i > 0 && th->id <= t->v[i - 1].id)
      __builtin_trap();
    for (int k = 0; k < th->n; k++)
      if (th->e[k] == 0 || th->e[k] == RIP_EXIT_MARKER)
        __builtin_trap();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  int mode = data[0] & 1;
  data++;
  size--;

  /* Any 32 words as one ring. */
  if (size >= RIP_RING_SIZE * 8) {
    uint64_t ring[RIP_RING_SIZE];
    struct ct_rip_thread t;
    char why[160];
    memcpy(ring, data, sizeof ring);
    if (ct_rip_order(ring, &t, why, sizeof why) == 0 && t.n > RIP_RING_SIZE)
      __builtin_trap();
  }

  char path[64];
  int fd = -1, pfd[2] = {-1, -1};
  if (mode == 0 || size > 60000) { /* a regular file: mapped, or inflated */
    if ((fd = fuzz_memfd("fuzz-rip", data, size)) < 0)
      goto out;
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  } else { /* a pipe: read as a stream (fits in the pipe's buffer) */
    if (pipe2(pfd, O_CLOEXEC) != 0)
      return 0;
    if (fcntl(pfd[1], F_SETPIPE_SZ, 65536) < 0 || fuzz_write_all(pfd[1], data, size) != 0)
      goto out;
    close(pfd[1]);
    pfd[1] = -1;
    snprintf(path, sizeof path, "/proc/self/fd/%d", pfd[0]);
  }
  struct ct_rip_threads t;
  char why[256];
  why[0] = '\0';
  int rc = ct_rip_load(path, &t, why, sizeof why);
  if (rc == 0) {
    check_threads(&t);
    ct_rip_threads_free(&t);
  } else if (rc > 0 || why[0] == '\0' || t.v != NULL || t.n != 0) {
    __builtin_trap(); /* a failure is -errno with a reason, and leaves nothing */
  }
out:
  if (fd >= 0)
    close(fd);
  if (pfd[0] >= 0)
    close(pfd[0]);
  if (pfd[1] >= 0)
    close(pfd[1]);
  return 0;
}
