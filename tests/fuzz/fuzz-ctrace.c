/* fuzz-ctrace.c - libFuzzer target: the binary trace's reader
 * (src/format/ctrace_dec.c through trace_read.c) on arbitrary bytes, twice:
 * as the chunks after a valid file header (the framing, the checksum), and
 * as the payload of one chunk whose header and checksum are made right (the
 * entry decoder). Line, run (ct_trace_read_runs) and entry readings must
 * agree on what they deliver, a reason must name an offset inside the
 * file, and a line entry given out must be one JSON object of UTF-8. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/trace.h"
#include "fuzz.h"

static int on_line(void *ctx, uint64_t lineno, enum ct_line_err err, const struct ct_line *l) {
  uint64_t *n = ctx;
  if (lineno != *n + 1 || (err == CT_LINE_OK && l->type > CT_LINE_OTHER))
    __builtin_trap();
  *n = lineno;
  return 0;
}

/* A run: events of one coroutine that parsed, numbered on from the last line. */
static int on_run(void *ctx, const struct ct_event *ev, size_t n) {
  uint64_t *count = ctx;
  for (size_t i = 0; i < n; i++) {
    if (ev[i].line != *count + 1 || ev[i].probe_id != ev[0].probe_id || ev[i].probe_id == 0 ||
        ev[i].kind < CT_EV_CREATE || ev[i].kind > CT_EV_DESTROY)
      __builtin_trap();
    *count = ev[i].line;
  }
  return 0;
}

static void on_peek(void *ctx, const struct ct_line *l) {
  (void)ctx;
  if (l->type > CT_LINE_OTHER)
    __builtin_trap();
}

static int on_entry(void *ctx, const struct ct_ev_item *ev, const struct ct_coro_item *co,
                    const char *line, size_t n) {
  uint64_t *count = ctx;
  if (!ev && !co && !line)
    __builtin_trap();
  /* A line entry given out is one JSON object of UTF-8 on one line (an
   * export copies its bytes as a JSONL line). */
  if (line && (memchr(line, '\n', n) || !ct_line_valid(line, n)))
    __builtin_trap();
  ++*count;
  return 0;
}

/* The file f (n bytes) through every reading. */
static void read_all(const uint8_t *f, size_t n) {
  int fd = fuzz_memfd("fuzz-ctrace", f, n);
  if (fd < 0)
    return;
  uint64_t lines = 0, ahead = 0, entries = 0, runs = 0, bytes = 0;
  struct ct_read_diag d, d2, d3, d4;
  if (lseek(fd, 0, SEEK_SET) != 0 || ct_trace_read_diag(fd, 0, on_line, NULL, &lines, &bytes, &d))
    __builtin_trap();
  if (lseek(fd, 0, SEEK_SET) != 0 ||
      ct_trace_read_diag(fd, 0, on_line, on_peek, &ahead, &bytes, &d2))
    __builtin_trap();
  if (lseek(fd, 0, SEEK_SET) != 0 || ct_trace_read_entries(fd, 0, on_entry, &entries, &bytes, &d3))
    __builtin_trap();
  if (lseek(fd, 0, SEEK_SET) != 0 ||
      ct_trace_read_runs(fd, 0, on_line, on_run, on_peek, &runs, &bytes, &d4))
    __builtin_trap();
  if (lines != ahead || lines != entries || lines != runs || strcmp(d.why, d2.why) ||
      strcmp(d.why, d3.why) || strcmp(d.why, d4.why))
    __builtin_trap();
  if (d.why[0] && d.offset > n)
    __builtin_trap();
  close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *f = malloc(size + 32);
  for (int chunk = 0; f && chunk < 2; chunk++)
    read_all(f, fuzz_ctrace_file(data, size, chunk, f));
  free(f);
  return 0;
}
