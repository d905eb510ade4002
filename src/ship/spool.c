/* spool.c - the local queue of dumps waiting for the database: a private
 * directory (0700, ours) of hard links to the dumps (copies across file
 * systems), named by when they came so they ship oldest first; bounded in
 * entries, the refused ones counted in its `dropped` file. An entry is removed
 * only after its export committed, so a shipper killed at any point leaves it
 * for the next (which finds it shipped and only removes it). */
#include "ship/ship.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/grow.h"

int ct_spool_open(const char *dir, int *dirfd) {
  struct stat st;
  if (mkdir(dir, 0700) < 0 && errno != EEXIST)
    return -errno;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
    close(fd); /* another user's, or others may enter it: not a private spool */
    return -EPERM;
  }
  *dirfd = fd;
  return 0;
}

/* 1 for an entry's name (not its NAME.path, a temporary copy, the counter or the lock). */
static int is_entry(const char *name) {
  return name[0] >= '0' && name[0] <= '9' && !strchr(name, '.');
}

/* NAME.path: the dump's own path, which its `dumps` row records. */
static int write_path(int dirfd, const char *name, const char *path) {
  char side[96], abs[PATH_MAX];
  snprintf(side, sizeof side, "%s.path", name);
  if (!realpath(path, abs))
    return -errno;
  int fd = openat(dirfd, side, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), rc = 0;
  if (fd < 0)
    return -errno;
  size_t n = strlen(abs);
  abs[n++] = '\n';
  if (write(fd, abs, n) != (ssize_t)n)
    rc = errno ? -errno : -EIO;
  close(fd);
  return rc;
}

/* Copies path into dirfd/tmp (a dump on another file system). */
static int copy_in(int dirfd, const char *path, const char *tmp) {
  static char buf[1 << 16];
  int in = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
  if (in < 0)
    return -errno;
  int out = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0)
    rc = -errno;
  while (!rc) {
    ssize_t k = read(in, buf, sizeof buf), w = 0;
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      rc = k < 0 ? -errno : fsync(out) < 0 ? -errno : 0;
      break;
    }
    while (!rc && w < k) {
      ssize_t d = write(out, buf + w, (size_t)(k - w));
      if (d < 0 && errno != EINTR)
        rc = -errno;
      w += d > 0 ? d : 0;
    }
  }
  if (out >= 0)
    close(out);
  close(in);
  if (rc)
    unlinkat(dirfd, tmp, 0);
  return rc;
}

/* Adds one to the count of refused dumps. */
static void count_dropped(int dirfd) {
  uint64_t n = ct_spool_dropped(dirfd) + 1;
  char buf[24];
  int fd = openat(dirfd, ".dropped.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  int k = snprintf(buf, sizeof buf, "%" PRIu64 "\n", n);
  int ok = write(fd, buf, (size_t)k) == k;
  close(fd);
  if (ok)
    renameat(dirfd, ".dropped.tmp", dirfd, "dropped");
}

int ct_spool_add(int dirfd, const char *path, unsigned max) {
  char **names, name[64], tmp[80];
  size_t n;
  int rc = ct_spool_list(dirfd, &names, &n);
  if (rc)
    return rc;
  ct_spool_list_free(names, n);
  if (n >= max) {
    count_dropped(dirfd);
    return -ENOSPC;
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  /* sorts by arrival: 20 digits of ns, then the pid (two engines in one ns) */
  snprintf(name, sizeof name, "%020" PRIu64 "-%d",
           (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, (int)getpid());
  snprintf(tmp, sizeof tmp, ".%s", name);
  if (linkat(AT_FDCWD, path, dirfd, tmp, 0) < 0) {
    if (errno != EXDEV && errno != EPERM)
      return -errno;
    if ((rc = copy_in(dirfd, path, tmp)))
      return rc;
  }
  if ((rc = write_path(dirfd, name, path)) || renameat(dirfd, tmp, dirfd, name) < 0) {
    rc = rc ? rc : -errno;
    unlinkat(dirfd, tmp, 0);
  }
  return rc;
}

uint64_t ct_spool_dropped(int dirfd) {
  char buf[24] = "";
  int fd = openat(dirfd, "dropped", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t k = read(fd, buf, sizeof buf - 1);
  close(fd);
  return k > 0 ? strtoull(buf, NULL, 10) : 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int ct_spool_list(int dirfd, char ***names, size_t *n) {
  int fd = dup(dirfd), rc = 0;
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  size_t cap = 0;
  struct dirent *de;
  char **v = NULL;
  *names = NULL, *n = 0;
  if (!d) {
    rc = -errno;
    if (fd >= 0)
      close(fd);
    return rc;
  }
  rewinddir(d);
  while (!rc && (de = readdir(d))) {
    char *s;
    if (!is_entry(de->d_name))
      continue;
    if (!(s = strdup(de->d_name)) || ct_grow((void **)&v, &cap, *n + 1, sizeof *v, 16)) {
      free(s);
      rc = -ENOMEM;
      break;
    }
    v[(*n)++] = s;
  }
  closedir(d);
  if (rc) {
    ct_spool_list_free(v, *n);
    *n = 0;
    return rc;
  }
  if (*n)
    qsort(v, *n, sizeof *v, by_name);
  *names = v;
  return 0;
}

void ct_spool_list_free(char **names, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
}
