/* ctjl.c - print fields of JSONL trace lines for shell tests (no python, no jq).
 *
 *   ctjl [-e | -t TYPE] KEY... < trace.jsonl
 *
 * One output line per selected input line: the values of KEY... separated by
 * one space, strings without their quotes, "-" for an absent key. -e selects
 * event lines (no "type" key), -t TYPE the records of that type; default all.
 * A binary trace on stdin is read as the JSONL it converts to (export
 * export jsonl), so the tests' checks apply to both formats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctlib.h"
#include "export/export.h"

/* stdin, when it holds a binary trace, replaced by its JSONL. */
static int binary_stdin(void) {
  int c = getc(stdin);
  if (c == EOF)
    return 0;
  ungetc(c, stdin);
  if (c != (unsigned char)CTR_MAGIC[0])
    return 0;
  FILE *raw = tmpfile(), *text = tmpfile();
  char buf[65536];
  size_t n;
  uint64_t rows;
  struct ct_read_diag d;
  if (!raw || !text)
    return -1;
  while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
    fwrite(buf, 1, n, raw);
  if (fflush(raw) || lseek(fileno(raw), 0, SEEK_SET) < 0 ||
      cx_write_jsonl_trace(fileno(raw), fileno(text), &rows, &d) ||
      lseek(fileno(text), 0, SEEK_SET) < 0 || dup2(fileno(text), STDIN_FILENO) < 0)
    return -1;
  if (d.why[0])
    fprintf(stderr, "ctjl: %s\n", d.why);
  clearerr(stdin);
  return 0;
}

int main(int argc, char **argv) {
  int events_only = 0;
  const char *type = NULL;
  int i = 1;
  if (i < argc && strcmp(argv[i], "-e") == 0) {
    events_only = 1;
    i++;
  } else if (i + 1 < argc && strcmp(argv[i], "-t") == 0) {
    type = argv[i + 1];
    i += 2;
  }
  if (i >= argc) {
    fprintf(stderr, "usage: ctjl [-e | -t TYPE] KEY... < trace.jsonl\n");
    return 2;
  }
  if (binary_stdin()) {
    fprintf(stderr, "ctjl: cannot convert the binary trace on stdin\n");
    return 2;
  }
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, stdin) > 0) {
    if (events_only && !ct_json_is(line, NULL))
      continue;
    if (type != NULL && !ct_json_is(line, type))
      continue;
    for (int k = i; k < argc; k++) {
      size_t len;
      const char *v = ct_json_raw(line, argv[k], &len);
      if (k > i)
        putchar(' ');
      if (v == NULL)
        putchar('-');
      else
        fwrite(v, 1, len, stdout);
    }
    putchar('\n');
  }
  free(line);
  return ferror(stdout) ? 1 : 0;
}
