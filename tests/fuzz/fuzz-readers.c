/* fuzz-readers.c - libFuzzer target: every reader of a trace (report, html,
 * export csv/sqlite/jsonl/perfetto, called as the binary calls them) on
 * arbitrary bytes, as fuzz-ctrace frames them: the chunks after a valid file
 * header, then the payload of one chunk whose header and checksum are made
 * right (the entry decoder, line entries included). What must hold is
 * tests/lib/readers-hostile.h's (the same exit status, one damage line with
 * its offset, export jsonl one valid line per entry): the long run of
 * tests/test-reader-hostile.c's 500 crafted traces. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/readers-hostile.h"

static struct rh h;

static void cleanup(void) {
  rh_close(&h);
}

/* A failed check (check.h's FAIL, which would _exit): a crash for libFuzzer,
 * which then keeps the input. */
static void failed(void) {
  rh_close(&h);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct ctr_file_hdr fh = {.version = CTR_VERSION};
  size_t hn = sizeof fh, cn = sizeof(struct ctr_chunk_hdr);
  if (!h.dir[0]) {
    rh_open(&h);
    CHECK_ATFAIL(failed);
    atexit(cleanup);
  }
  memcpy(fh.magic, CTR_MAGIC, CTR_MAGIC_LEN);
  uint8_t *f = malloc(hn + cn + size + 1);
  if (!f)
    return 0;
  memcpy(f, &fh, hn);
  memcpy(f + hn, data, size);
  rh_check(&h, f, hn + size, "the chunks after a file header");
  uint32_t count = size ? data[0] : 0;
  struct ctr_chunk_hdr ch = {.tag = CTR_CHUNK_TAG,
                             .len = (uint32_t)size,
                             .count = count <= size ? count : (uint32_t)size,
                             .check = ctr_check(data, size)};
  memcpy(f + hn, &ch, cn);
  memcpy(f + hn + cn, data, size);
  rh_check(&h, f, hn + cn + size, "one chunk made valid around the bytes");
  free(f);
  return 0;
}
