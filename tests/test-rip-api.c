/* test-rip-api.c - the writer API of rip.h: layout of what rip_init, rip_snap and
 * rip_exit store, the module map, and rip_create_ring's failures (errno kept,
 * no descriptor or mapping left behind). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/check.h"
#include "librip.h" /* librip's own header name; it includes rip.h */

RIP_DEFINE_STORAGE;

static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  if (d == NULL)
    return -1;
  while (readdir(d) != NULL)
    n++;
  closedir(d);
  return n;
}

/* Whole contents of path (NUL-terminated, caller frees), or NULL. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "re");
  if (f == NULL)
    return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strdup(buf);
}

int main(void) {
  char dir[] = "/tmp/test-rip-api.XXXXXX", ring[64], maps[80], longname[100];
  ASSERT_NOT_NULL(mkdtemp(dir));
  snprintf(ring, sizeof ring, "%s/ring", dir);
  snprintf(maps, sizeof maps, "%s/ring.maps", dir);
  int fds = open_fds();

  /* Failures: false, errno of the cause, nothing left open. */
  errno = 0;
  ASSERT(!rip_create_ring("/nonexistent-dir/ring", 4));
  ASSERT_EQ(errno, ENOENT);
  ASSERT(!rip_create_ring(dir, 4));
  ASSERT_EQ(errno, EISDIR);
  ASSERT_NULL(rip_ring);
  ASSERT(!rip_update_maps()); /* no ring yet */
  ASSERT_EQ(errno, ENOENT);
  ASSERT_EQ(open_fds(), fds);

  ASSERT(rip_create_ring(ring, 4));
  ASSERT_EQ(open_fds(), fds); /* the ring's descriptor is closed once mapped */
  char *m = slurp(maps);
  ASSERT_NOT_NULL(m);
  ASSERT_EQ(strncmp(m, "# corotracer rip maps 1\npid ", 28), 0);
  ASSERT_NOT_NULL(strstr(m, "\nexe /"));
  ASSERT_NOT_NULL(strstr(m, " r-xp "));
  free(m);
  ASSERT_EQ(unlink(maps), 0);
  ASSERT(rip_update_maps());
  ASSERT_EQ(access(maps, F_OK), 0);

  /* rip_init clears the record and truncates the name to 63 bytes. */
  memset(longname, 'n', sizeof longname);
  rip_ring[2].rip[5] = 42;
  rip_init(2, longname, sizeof longname, 0, 0);
  ASSERT_UINT64_EQ(rip_ring[2].rip[5], 0);
  ASSERT_EQ(strlen(rip_ring[2].name), 63);
  /* rip_snap: (counter << 56) | address, in slot idx; rip_exit: all ones. */
  uintptr_t a = rip_snap();
  uintptr_t b = rip_snap();
  ASSERT_UINT64_NE(a, 0);
  ASSERT_UINT64_NE(a, b);
  ASSERT_UINT64_EQ(rip_ring[2].rip[0], a);
  ASSERT_UINT64_EQ(rip_ring[2].rip[1], (1ull << 56) | b);
  rip_exit();
  ASSERT_UINT64_EQ(rip_ring[2].rip[2], RIP_EXIT_MARKER);
  ASSERT_EQ(rip_idx, 3);
  ASSERT_EQ(rip_ctr, 2);
  /* A resumed numbering wraps slots at 32 and counters at 256. */
  rip_init(3, "co", 2, 31, 255);
  uintptr_t c = rip_snap();
  rip_snap();
  ASSERT_UINT64_EQ(rip_ring[3].rip[31], (255ull << 56) | c);
  ASSERT_UINT64_EQ(rip_ring[3].rip[0] >> 56, 0);
  ASSERT_STR_EQ(rip_ring[3].name, "co");
  /* An id beyond the ring's 4 records snaps into record 0, never past the map. */
  ASSERT_UINT64_EQ(rip_record_count(), 4);
  rip_init(4, "late", 4, 0, 0);
  uintptr_t d = rip_snap();
  ASSERT_EQ(rip_tid, 0);
  ASSERT_UINT64_EQ(rip_ring[0].rip[0], d);
  ASSERT_EQ(rip_ring[0].name[0], '\0');
  rip_init(-7, "neg", 3, 0, 0);
  ASSERT_EQ(rip_tid, 0);

  unlink(maps);
  unlink(ring);
  rmdir(dir);
  puts("ok");
  return 0;
}
