/* readers-hostile.h - every reader of a trace (report, html, export
 * csv/sqlite/jsonl/perfetto) on one file, called in the caller's process as
 * the binary calls it (its ct_*_main), and what must hold of them whatever
 * the file holds: the same exit status (0, or 2 when nothing came before the
 * damage: then no output), the decoder's one damage line (naming a byte
 * offset inside the file) said once by each, export jsonl one valid JSONL
 * line per entry. Shared by tests/test-reader-hostile.c (crafted traces) and
 * tests/fuzz/fuzz-readers.c (the long run). A failure is check.h's FAIL, with
 * the caller's label. Header-only. */
#ifndef CT_TESTS_READERS_HOSTILE_H
#define CT_TESTS_READERS_HOSTILE_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/trace.h"
#include "check.h"
#include "common/commands.h"

/* Where the readers work: the trace file, their output, their stderr. */
struct rh {
  char dir[64], path[96], out[96], log[96];
};

/* Removes p: a file, or a directory of files (export csv's). */
static void rh_rm_out(const char *p) {
  DIR *d = opendir(p);
  struct dirent *e;
  char q[320];
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      snprintf(q, sizeof q, "%s/%s", p, e->d_name), unlink(q);
  if (d)
    closedir(d), rmdir(p);
  else
    unlink(p);
}

/* A private directory, on tmpfs when there is one (the exports' fsyncs cost
 * nothing there). */
static void rh_open(struct rh *h) {
  snprintf(h->dir, sizeof h->dir, "%s/ct-readers-hostile.XXXXXX",
           access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
  ASSERT_PTR_NE(mkdtemp(h->dir), NULL);
  snprintf(h->path, sizeof h->path, "%s/t.ctrace", h->dir);
  snprintf(h->out, sizeof h->out, "%s/out", h->dir);
  snprintf(h->log, sizeof h->log, "%s/stderr", h->dir);
}

static void rh_close(const struct rh *h) {
  unlink(h->log);
  rh_rm_out(h->out);
  unlink(h->path);
  rmdir(h->dir);
}

static int rh_count_entry(void *ctx, const struct ct_ev_item *ev, const struct ct_coro_item *co,
                          const char *line, size_t n) {
  (void)ev, (void)co, (void)line, (void)n;
  ++*(uint64_t *)ctx;
  return 0;
}

/* The reader's status (fn, called as the binary calls it); what it said, in
 * said (the whole of its stderr). */
static int rh_run(const struct rh *h, int (*fn)(int, char **), char **argv, char *said,
                  size_t cap) {
  int argc = 0;
  while (argv[argc])
    argc++;
  int fd = open(h->log, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), saved = dup(2);
  ASSERT_GE(fd, 0);
  ASSERT_GE(saved, 0);
  fflush(stderr);
  dup2(fd, 2);
  alarm(60); /* a hang is a failure: SIGALRM ends the process */
  int rc = fn(argc, argv);
  alarm(0);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ssize_t k = pread(fd, said, cap - 1, 0);
  said[k > 0 ? k : 0] = 0;
  close(fd);
  return rc;
}

/* The lines of the file at p; each must be one JSON object of valid UTF-8. */
static uint64_t rh_jsonl_lines(const char *p, int *bad) {
  FILE *f = fopen(p, "re");
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  uint64_t count = 0;
  ASSERT_PTR_NE(f, NULL);
  while ((n = getline(&line, &cap, f)) > 0) {
    count++;
    if (line[n - 1] != '\n' || !ct_line_valid(line, (size_t)n - 1))
      *bad = 1;
  }
  free(line);
  fclose(f);
  return count;
}

/* Every reader on the file p (n bytes), what must hold checked (label names
 * the case in a failure). Returns 0 when the file read clean, 1 damaged
 * after records (exit 0), 2 with nothing before the damage (exit 2). */
static int rh_check(const struct rh *h, const void *p, size_t n, const char *label) {
  static char said[4096], want[512];
  int fd = open(h->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, p, n), (ssize_t)n);
  close(fd);
  /* The decoder's verdict: the entries before any damage, its line. */
  struct ct_read_diag d;
  uint64_t entries = 0, bytes = 0;
  fd = open(h->path, O_RDONLY | O_CLOEXEC);
  ASSERT_OK(ct_trace_read_entries(fd, 0, rh_count_entry, &entries, &bytes, &d));
  close(fd);
  if (d.why[0])
    ASSERT_UINT64_LE(d.offset, n);
  snprintf(want, sizeof want, "corotracer: %s: %s\n", h->path, d.why);
  char *path = (char *)h->path, *out = (char *)h->out;
  struct {
    const char *name;
    int (*fn)(int, char **);
    char *argv[8];
  } rd[] = {
      {"report", ct_report_main, {"report", path, "-o", out, NULL}},
      {"html", ct_html_main, {"html", path, "-o", out, NULL}},
      {"export csv", ct_export_main, {"export", "csv", path, "-o", out, "-q", NULL}},
      {"export sqlite", ct_export_main, {"export", "sqlite", path, "-o", out, "-q", NULL}},
      {"export jsonl", ct_export_main, {"export", "jsonl", path, "-o", out, "-q", NULL}},
      {"export perfetto", ct_export_main, {"export", "perfetto", path, "-o", out, "-q", NULL}},
  };
  int first = -1;
  for (size_t i = 0; i < sizeof rd / sizeof rd[0]; i++) {
    rh_rm_out(out);
    int rc = rh_run(h, rd[i].fn, rd[i].argv, said, sizeof said);
    struct stat st;
    int wrote = stat(out, &st) == 0;
    if (first < 0)
      first = rc;
    if (rc != first || (rc != 0 && rc != 2))
      FAIL("%s: %s exits %d, report %d: %s", label, rd[i].name, rc, first, said);
    if (rc == 2 && (wrote || !said[0] || strchr(said, '\n') != said + strlen(said) - 1))
      FAIL("%s: %s exits 2 but wrote %s or said more than a line: %s", label, rd[i].name,
           wrote ? "its output" : "nothing", said);
    if (d.why[0] && !strstr(said, want))
      FAIL("%s: %s does not say '%s' but: %s", label, rd[i].name, want, said);
    if (d.why[0] && strstr(strstr(said, want) + strlen(want), "offset "))
      FAIL("%s: %s says the damage twice: %s", label, rd[i].name, said);
    if (rc == 0 && !strcmp(rd[i].name, "export jsonl")) {
      int bad = 0;
      ASSERT_UINT64_EQ(rh_jsonl_lines(out, &bad), entries);
      if (bad)
        FAIL("%s: export jsonl wrote a line that is not one JSON object of UTF-8", label);
    }
  }
  return first == 2 ? 2 : d.why[0] ? 1 : 0;
}

#endif
