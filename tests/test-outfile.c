/* test-outfile.c - unit test of the safe output files (src/common/outfile.c):
 * commit and abort, no temporary file left, links of ours followed, devices in
 * place, directories refused, the CSV directory, the trace and --append, the
 * database file. The planted-link scenarios run end to end in
 * tests/test-outputs-safe.sh. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/outfile.h"
#include "lib/check.h"

static char dir[PATH_MAX];

static void cleanup(void) {
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd)) {
  }
}

/* The content of path (at most 63 bytes), "" when it cannot be read. */
static const char *slurp(const char *path) {
  static char b[64];
  FILE *f = fopen(path, "re");
  size_t n = f ? fread(b, 1, sizeof b - 1, f) : 0;
  if (f)
    fclose(f);
  b[n] = 0;
  return b;
}

static int mode_of(const char *path) {
  struct stat st;
  return lstat(path, &st) ? -1 : (int)(st.st_mode & 07777);
}

/* Entries of the test directory (not . and ..). */
static int entries(void) {
  char cmd[PATH_MAX + 32];
  snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
  FILE *p = popen(cmd, "r");
  int n = -1;
  if (p && fscanf(p, "%d", &n) != 1)
    n = -1;
  if (p)
    pclose(p);
  return n;
}

static void put(int fd, const char *s) {
  ASSERT_EQ(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

int main(void) {
  struct ct_outfile o;
  int fd, dfd;
  umask(0);
  snprintf(dir, sizeof dir, "%s/test-outfile.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  ASSERT_NOT_NULL(mkdtemp(dir));
  CHECK_ATFAIL(cleanup);
  ASSERT_EQ(chdir(dir), 0);

  /* A new file: written under a hidden random name, 0600, renamed at commit. */
  ASSERT_OK(ct_outfile_open(&o, AT_FDCWD, "a"));
  ASSERT_NE(o.tmp[0], 0);
  ASSERT_EQ(o.tmp[0], '.');
  ASSERT_EQ(mode_of(o.tmp), 0600);
  ASSERT_EQ(access("a", F_OK), -1);
  put(o.fd, "one");
  ASSERT_OK(ct_outfile_commit(&o));
  ASSERT_STR_EQ(slurp("a"), "one");
  ASSERT_EQ(mode_of("a"), 0600);
  ASSERT_EQ(entries(), 1);
  ASSERT_EQ(o.fd, -1);
  ASSERT_EQ(o.dirfd, -1);

  /* Abort: the old file stays, the temporary one goes. */
  ASSERT_OK(ct_outfile_open(&o, AT_FDCWD, "a"));
  put(o.fd, "two");
  ct_outfile_abort(&o);
  ASSERT_STR_EQ(slurp("a"), "one");
  ASSERT_EQ(entries(), 1);
  ct_outfile_abort(&o); /* twice: a no-op */

  /* A stream, committed over a file of mode 0644: a new 0600 file. */
  ASSERT_EQ(chmod("a", 0644), 0);
  ASSERT_OK(ct_outfile_open(&o, AT_FDCWD, "a"));
  FILE *f = ct_outfile_stream(&o);
  ASSERT_NOT_NULL(f);
  ASSERT_EQ(o.fd, -1);
  fputs("three", f);
  ASSERT_OK(ct_outfile_commit(&o));
  ASSERT_STR_EQ(slurp("a"), "three");
  ASSERT_EQ(mode_of("a"), 0600);

  /* A link of ours is followed: the file it leads to is written in place. */
  ASSERT_EQ(symlink("a", "l"), 0);
  ASSERT_OK(ct_outfile_open(&o, AT_FDCWD, "l"));
  ASSERT_EQ(o.tmp[0], 0);
  put(o.fd, "four");
  ASSERT_OK(ct_outfile_commit(&o));
  ASSERT_STR_EQ(slurp("a"), "four");
  struct stat st;
  ASSERT_EQ(lstat("l", &st), 0);
  ASSERT(S_ISLNK(st.st_mode));
  /* A dangling link of ours is replaced. */
  ASSERT_EQ(symlink("nowhere", "dl"), 0);
  ASSERT_OK(ct_outfile_open(&o, AT_FDCWD, "dl"));
  ASSERT_OK(ct_outfile_commit(&o));
  ASSERT_EQ(lstat("dl", &st), 0);
  ASSERT(S_ISREG(st.st_mode));

  /* Devices in place; directories refused. */
  ASSERT_OK(ct_outfile_open(&o, AT_FDCWD, "/dev/null"));
  ASSERT_EQ(o.tmp[0], 0);
  put(o.fd, "x");
  ASSERT_OK(ct_outfile_commit(&o));
  ASSERT_EQ(mkdir("d", 0700), 0);
  ASSERT_EQ(ct_outfile_open(&o, AT_FDCWD, "d"), -EISDIR);
  ASSERT_EQ(ct_outfile_open(&o, AT_FDCWD, "d/"), -EISDIR);
  ASSERT_EQ(ct_outfile_open(&o, AT_FDCWD, "d/.."), -EISDIR);
  ASSERT_EQ(ct_outfile_open(&o, AT_FDCWD, "nodir/x"), -ENOENT);
  ASSERT_EQ(o.fd, -1);

  /* The CSV directory: made 0700, files created in it through its fd. */
  ASSERT_OK(ct_outdir_open("csv", &dfd));
  ASSERT_EQ(mode_of("csv"), 0700);
  ASSERT_OK(ct_outfile_open(&o, dfd, "t.csv"));
  put(o.fd, "a,b");
  ASSERT_OK(ct_outfile_commit(&o));
  ASSERT_STR_EQ(slurp("csv/t.csv"), "a,b");
  close(dfd);
  ASSERT_OK(ct_outdir_open("csv", &dfd)); /* an existing one is used */
  close(dfd);
  ASSERT_EQ(symlink("csv", "csvlink"), 0); /* ours: followed */
  ASSERT_OK(ct_outdir_open("csvlink", &dfd));
  close(dfd);

  /* The trace: in place at once; append to it; no link, no hard link. */
  ASSERT_OK(ct_outfile_trace("tr", 0, &fd));
  ASSERT_EQ(access("tr", F_OK), 0);
  put(fd, "run1\n");
  close(fd);
  ASSERT_EQ(mode_of("tr"), 0600);
  ASSERT_OK(ct_outfile_trace("tr", 1, &fd));
  put(fd, "run2\n");
  close(fd);
  ASSERT_STR_EQ(slurp("tr"), "run1\nrun2\n");
  ASSERT_EQ(symlink("tr", "trlink"), 0);
  ASSERT_EQ(ct_outfile_trace("trlink", 1, &fd), -ELOOP);
  ASSERT_EQ(fd, -1);
  ASSERT_EQ(link("tr", "trhard"), 0);
  ASSERT_EQ(ct_outfile_trace("trhard", 1, &fd), -EMLINK);
  ASSERT_OK(ct_outfile_trace("trhard", 0, &fd)); /* replaced, not written into */
  close(fd);
  ASSERT_STR_EQ(slurp("tr"), "run1\nrun2\n");
  ASSERT_OK(ct_outfile_trace("new", 1, &fd)); /* append to a missing file creates it */
  close(fd);
  ASSERT_EQ(mode_of("new"), 0600);
  ASSERT_OK(ct_outfile_trace("/dev/null", 1, &fd));
  close(fd);
  ASSERT_EQ(ct_outfile_trace("d", 0, &fd), -EISDIR);

  /* A database file: created 0600, an existing one of ours kept, a link refused. */
  ASSERT_OK(ct_outfile_precreate("db"));
  ASSERT_EQ(mode_of("db"), 0600);
  ASSERT_OK(ct_outfile_precreate("db"));
  ASSERT_EQ(symlink("db", "dblink"), 0);
  ASSERT_EQ(ct_outfile_precreate("dblink"), -ELOOP);

  cleanup();
  printf("outfile: ok\n");
  return 0;
}
