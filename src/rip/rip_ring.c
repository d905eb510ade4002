/* rip_ring.c - writer side of the rip rings: map the ring file, write its module map. */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rip.h"

/* Absolute path of the last ring's sidecar, for rip_update_maps(); guarded by
 * maps_lock, which also serializes writers of the sidecar. */
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static char *maps_path;

/* Contract in rip.h. */
pid_t rip_gettid(void) { return (pid_t)syscall(SYS_gettid); }

/* Size of the current mapping, for rip_init's bounds check. Relaxed: a thread
 * that snaps was started after rip_map_ring returned (its documented order). */
static _Atomic uint64_t ring_records;

/* Contract: see include/rip.h. */
uint64_t rip_record_count(void) { return atomic_load_explicit(&ring_records, memory_order_relaxed); }

/* Read all of fd into a new NUL-terminated buffer (*out, freed by the caller).
 * Returns 0 or -1 with errno set. */
static int read_all(int fd, char **out) {
  size_t cap = 8192, len = 0;
  char *buf = malloc(cap);
  if (buf == NULL) return -1;
  for (;;) {
    if (cap - len < 4096) {
      char *bigger = realloc(buf, cap * 2);
      if (bigger == NULL) goto fail;
      buf = bigger;
      cap *= 2;
    }
    ssize_t n = read(fd, buf + len, cap - len - 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) goto fail;
    if (n == 0) break;
    len += (size_t)n;
  }
  buf[len] = '\0';
  *out = buf;
  return 0;
fail:;
  int saved = errno;
  free(buf);
  errno = saved;
  return -1;
}

static int read_file(const char *path, char **out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = read_all(fd, out);
  int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

static int write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Records to size the file for: max_procs, or pid_max when it is 0. */
static int record_count(uint32_t max_procs, uint64_t *out) {
  if (max_procs != 0) {
    *out = max_procs;
    return 0;
  }
  char *text = NULL;
  if (read_file("/proc/sys/kernel/pid_max", &text) != 0) return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  int bad = errno != 0 || end == text || v == 0 || v > UINT32_MAX;
  free(text);
  if (bad) {
    errno = EINVAL;
    return -1;
  }
  *out = v;
  return 0;
}

/* Keep the executable, file-backed lines of /proc/self/maps (start-end perms
 * offset dev inode path), the ones that can hold a snapshot address; in place. */
static size_t keep_code_lines(char *maps) {
  char *w = maps;
  for (char *line = maps; *line != '\0';) {
    char *nl = strchr(line, '\n');
    size_t len = nl != NULL ? (size_t)(nl - line) + 1 : strlen(line);
    char perms[8] = "", path[2] = "";
    if (sscanf(line, "%*x-%*x %7s %*x %*s %*u %1s", perms, path) == 2 && perms[2] == 'x' &&
        path[0] == '/') {
      memmove(w, line, len);
      w += len;
    }
    line += len;
  }
  *w = '\0';
  return (size_t)(w - maps);
}

/* Write path's sidecar atomically (temporary file + rename): a header naming
 * the executable, then this process's code mappings. Caller holds maps_lock.
 * Returns 0 or -1 with errno set; never leaves the temporary file behind. */
static int write_maps(const char *path) {
  char *maps = NULL, *tmp = NULL;
  int fd = -1, rc = -1;
  char exe[PATH_MAX];
  ssize_t exelen = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (exelen < 0) goto out;
  exe[exelen] = '\0';
  if (read_file("/proc/self/maps", &maps) != 0) goto out;
  size_t mapslen = keep_code_lines(maps);
  char header[PATH_MAX + 64];
  int hlen = snprintf(header, sizeof header, "# corotracer rip maps 1\npid %ld\nexe %s\n",
                      (long)getpid(), exe);
  if (hlen < 0 || (size_t)hlen >= sizeof header) {
    errno = ENAMETOOLONG;
    goto out;
  }
  if (asprintf(&tmp, "%s.%ld.tmp", path, (long)getpid()) < 0) {
    tmp = NULL;
    errno = ENOMEM;
    goto out;
  }
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) goto out;
  if (write_all(fd, header, (size_t)hlen) != 0 || write_all(fd, maps, mapslen) != 0) goto out;
  int cfd = fd;
  fd = -1;
  if (close(cfd) != 0 && errno != EINTR) goto out;
  if (rename(tmp, path) != 0) goto out;
  rc = 0;
out:;
  int saved = errno;
  if (fd >= 0) close(fd);
  if (rc != 0 && tmp != NULL) unlink(tmp);
  free(tmp);
  free(maps);
  errno = saved;
  return rc;
}

/* "<file>.maps" with file made absolute, so that rip_update_maps() still finds
 * it after the program changes directory. NULL with errno set on failure. */
static char *sidecar_path(const char *file) {
  char *abs = realpath(file, NULL), *path = NULL;
  if (abs == NULL) return NULL;
  if (asprintf(&path, "%s.maps", abs) < 0) {
    path = NULL;
    errno = ENOMEM;
  }
  free(abs);
  return path;
}

/* Contract in rip.h. */
struct rip_ring *rip_map_ring(const char *file, uint32_t max_procs) {
  struct rip_ring *map = MAP_FAILED;
  size_t size = 0;
  char *path = NULL;
  int fd = -1, ok = 0, r, saved;
  uint64_t count;
  if (record_count(max_procs, &count) != 0) goto out;
  if (count > SIZE_MAX / RIP_RECORD_SIZE) {
    errno = EOVERFLOW;
    goto out;
  }
  size = (size_t)count * RIP_RECORD_SIZE;
  fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) goto out;
  while ((r = ftruncate(fd, (off_t)size)) != 0 && errno == EINTR) {
  }
  if (r != 0) goto out;
  map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) goto out;
  path = sidecar_path(file);
  if (path == NULL) goto out;
  pthread_mutex_lock(&maps_lock);
  r = write_maps(path);
  if (r == 0) {
    free(maps_path);
    maps_path = path;
    path = NULL;
  }
  saved = errno;
  pthread_mutex_unlock(&maps_lock);
  errno = saved;
  ok = r == 0;
  if (ok) atomic_store_explicit(&ring_records, count, memory_order_relaxed);
out:;
  saved = errno;
  if (fd >= 0) close(fd);
  if (!ok && map != MAP_FAILED) munmap(map, size);
  free(path);
  errno = saved;
  return ok ? map : NULL;
}

/* Contract in rip.h. */
bool rip_update_maps(void) {
  pthread_mutex_lock(&maps_lock);
  int rc = -1;
  if (maps_path == NULL)
    errno = ENOENT;
  else
    rc = write_maps(maps_path);
  int saved = errno;
  pthread_mutex_unlock(&maps_lock);
  errno = saved;
  return rc == 0;
}
