/* fuzz-trace.c - libFuzzer target: the JSONL trace reader (src/format/parse.c)
 * on arbitrary bytes, as a whole stream (line splitting, long lines, a last
 * line without '\n') and as single lines, decoding every string it accepts;
 * its fast path for event lines checked against the general scanner, and the
 * read-ahead streamer against the plain one. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/trace.h"
#include "fuzz.h"

/* Decode the string fields of an accepted line into a small buffer, as the
 * report does, so the escape decoder sees what the scanner let through. */
static void copy_strings(const struct ct_line *l) {
  /* Only fields whose key bit is in l->have are set. */
  const struct {
    int key;
    const struct ct_str *s;
  } f[] = {{CT_K_PATH, &l->path},     {CT_K_LABEL, &l->label},   {CT_K_RUN_ID, &l->run_id},
           {CT_K_HOST, &l->host},     {CT_K_FORMAT, &l->format}, {CT_K_EVENT, &l->event},
           {CT_K_NAME, &l->exit_name}};
  char buf[16];
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    if (!CT_HAS(l, f[i].key))
      continue;
    size_t n = ct_str_copy(f[i].s, buf, sizeof buf);
    if (n >= sizeof buf || buf[n] != '\0')
      __builtin_trap();
  }
}

static int on_line(void *ctx, uint64_t lineno, enum ct_line_err err, const struct ct_line *line) {
  uint64_t *lines = ctx;
  if (lineno != *lines + 1)
    __builtin_trap(); /* lines are numbered 1, 2, ... */
  *lines = lineno;
  if (err == CT_LINE_OK)
    copy_strings(line);
  return 0;
}

/* A peek sees only lines that parsed. */
static void on_peek(void *ctx, const struct ct_line *line) {
  (void)ctx;
  if (line->type > CT_LINE_OTHER)
    __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* One line: the scanner must stay inside [data, data + size), and its fast
   * path for event lines must decide as the general scanner does. */
  struct ct_line l, g;
  enum ct_line_err err = ct_parse_line((const char *)data, size, &l);
  if (err != ct_parse_line_general((const char *)data, size, &g))
    __builtin_trap();
  if (err == CT_LINE_OK && memcmp(&l, &g, offsetof(struct ct_line, exit_code)) != 0)
    __builtin_trap();
  if (err == CT_LINE_OK)
    copy_strings(&l);

  /* The stream, from a memory file, with the smallest buffer (4 KiB) so lines
   * straddle refills. */
  int fd = fuzz_memfd("fuzz-trace", data, size);
  if (fd < 0)
    return 0;
  if (lseek(fd, 0, SEEK_SET) != 0)
    goto out;
  uint64_t lines = 0, bytes = 0;
  struct ct_read_diag d; /* a binary trace's bad chunk: read up to it */
  if (ct_trace_read_diag(fd, 0, on_line, NULL, &lines, &bytes, &d) != 0)
    __builtin_trap();             /* on_line never stops it */
  if (bytes != size && !d.why[0]) /* a bad chunk ends the reading early */
    __builtin_trap();
  /* The same stream through the read-ahead reader: the same lines. */
  uint64_t lines2 = 0, bytes2 = 0;
  if (lseek(fd, 0, SEEK_SET) != 0)
    goto out;
  if (ct_trace_read_diag(fd, 0, on_line, on_peek, &lines2, &bytes2, &d) != 0)
    __builtin_trap();
  if (bytes2 != bytes || lines2 != lines)
    __builtin_trap();
out:
  close(fd);
  return 0;
}
