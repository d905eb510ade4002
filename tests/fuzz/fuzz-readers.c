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
#include "fuzz.h"

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
  static const char *const as[2] = {"the chunks after a file header",
                                    "one chunk made valid around the bytes"};
  uint8_t *f = malloc(size + 32);
  if (!h.dir[0]) {
    rh_open(&h);
    CHECK_ATFAIL(failed);
    atexit(cleanup);
  }
  for (int chunk = 0; f && chunk < 2; chunk++)
    rh_check(&h, f, fuzz_ctrace_file(data, size, chunk, f), as[chunk]);
  free(f);
  return 0;
}
