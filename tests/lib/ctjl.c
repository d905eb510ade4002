/* ctjl.c - print fields of JSONL trace lines for shell tests (no python, no jq).
 *
 *   ctjl [-e | -t TYPE] KEY... < trace.jsonl
 *
 * One output line per selected input line: the values of KEY... separated by
 * one space, strings without their quotes, "-" for an absent key. -e selects
 * event lines (no "type" key), -t TYPE the records of that type; default all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctlib.h"

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
