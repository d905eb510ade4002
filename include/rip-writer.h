/* rip-writer.h - the rip ring writer: map the ring file, write its module map
 * (included by rip.h; contracts there). Header-only, as librip was, so that a
 * program using rip.h or librip.h links nothing.
 *
 * The state the functions share across the program's translation units (and
 * its shared libraries that snap) lives in weak, default-visibility globals
 * defined here: the linker keeps one of each, and the dynamic linker binds
 * every module to the executable's. Uses POSIX and Linux calls that a strict
 * ISO C mode (-std=c11 without _GNU_SOURCE) leaves undeclared: they are
 * declared here then, as libc defines them. */
#ifndef RIP_WRITER_H
#define RIP_WRITER_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__STRICT_ANSI__) && !defined(__cplusplus)
/* Redeclarations are harmless where libc already declared them. */
extern long syscall(long number, ...);
extern char *realpath(const char *__restrict path, char *__restrict resolved);
extern ssize_t readlink(const char *__restrict path, char *__restrict buf, size_t len);
extern int ftruncate(int fd, off_t length);
#if !defined(O_CLOEXEC) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) ||    \
                            defined(__arm__) || defined(__riscv) || defined(__powerpc__) ||        \
                            defined(__s390__) || defined(__mips__) || defined(__loongarch__))
#define O_CLOEXEC 02000000 /* its value on these CPUs (Linux asm-generic) */
#elif !defined(O_CLOEXEC)
#error "rip.h: O_CLOEXEC unknown on this CPU in strict ISO mode: compile with -D_GNU_SOURCE"
#endif
#ifndef PATH_MAX
#define PATH_MAX 4096
#endif
#endif

/* Records of the current mapping (for rip_init's bounds check); relaxed: a
 * thread that snaps starts after rip_map_ring returned (its documented order). */
RIP_API __attribute__((weak)) uint64_t rip_records_;
/* Absolute path of the last ring's module map, for rip_update_maps(); guarded
 * by rip_maps_lock_, which also serializes writers of the module map. */
RIP_API __attribute__((weak)) char *rip_maps_path_;
RIP_API __attribute__((weak)) pthread_mutex_t rip_maps_lock_ = PTHREAD_MUTEX_INITIALIZER;

static inline pid_t rip_gettid(void) {
  return (pid_t)syscall(SYS_gettid);
}

static inline uint64_t rip_record_count(void) {
  return __atomic_load_n(&rip_records_, __ATOMIC_RELAXED);
}

/* Read all of path into a new NUL-terminated buffer (*out, freed by the
 * caller). Returns 0 or -1 with errno set. */
static inline int rip_read_file_(const char *path, char **out) {
  size_t cap = 8192, len = 0;
  char *buf = NULL, *bigger;
  ssize_t n;
  int saved, rc = -1, fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  buf = (char *)malloc(cap);
  if (buf == NULL)
    goto out;
  for (;;) {
    if (cap - len < 4096) {
      bigger = (char *)realloc(buf, cap * 2);
      if (bigger == NULL)
        goto out;
      buf = bigger;
      cap *= 2;
    }
    n = read(fd, buf + len, cap - len - 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      goto out;
    if (n == 0)
      break;
    len += (size_t)n;
  }
  buf[len] = '\0';
  *out = buf;
  buf = NULL;
  rc = 0;
out:
  saved = errno;
  free(buf);
  close(fd);
  errno = saved;
  return rc;
}

static inline int rip_write_all_(int fd, const char *buf, size_t len) {
  ssize_t n;
  while (len > 0) {
    n = write(fd, buf, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Records to size the file for: max_procs, or pid_max when it is 0. */
static inline int rip_size_records_(uint32_t max_procs, uint64_t *out) {
  char *text = NULL, *end;
  unsigned long long v;
  int bad;
  if (max_procs != 0) {
    *out = max_procs;
    return 0;
  }
  if (rip_read_file_("/proc/sys/kernel/pid_max", &text) != 0)
    return -1;
  errno = 0;
  v = strtoull(text, &end, 10);
  bad = errno != 0 || end == text || v == 0 || v > UINT32_MAX;
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
static inline size_t rip_keep_code_lines_(char *maps) {
  char *w = maps, *line = maps, *nl;
  size_t len;
  while (*line != '\0') {
    char perms[8] = "", path[2] = "";
    nl = strchr(line, '\n');
    len = nl != NULL ? (size_t)(nl - line) + 1 : strlen(line);
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

/* Write path's module map atomically (temporary file + rename): a header
 * naming the executable, then this process's code mappings. Caller holds
 * rip_maps_lock_. Returns 0 or -1 with errno set; never leaves the temporary
 * file behind. */
static inline int rip_write_maps_(const char *path) {
  char *maps = NULL, *tmp = NULL;
  char exe[PATH_MAX], header[PATH_MAX + 64];
  int fd = -1, rc = -1, hlen, saved;
  size_t mapslen, tmplen = strlen(path) + 32;
  ssize_t exelen = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (exelen < 0)
    goto out;
  exe[exelen] = '\0';
  if (rip_read_file_("/proc/self/maps", &maps) != 0)
    goto out;
  mapslen = rip_keep_code_lines_(maps);
  hlen = snprintf(header, sizeof header, "# corotracer rip maps 1\npid %ld\nexe %s\n",
                  (long)getpid(), exe);
  if (hlen < 0 || (size_t)hlen >= sizeof header) {
    errno = ENAMETOOLONG;
    goto out;
  }
  tmp = (char *)malloc(tmplen);
  if (tmp == NULL)
    goto out;
  snprintf(tmp, tmplen, "%s.%ld.tmp", path, (long)getpid());
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    goto out;
  if (rip_write_all_(fd, header, (size_t)hlen) != 0 || rip_write_all_(fd, maps, mapslen) != 0)
    goto out;
  hlen = close(fd); /* an error of close is one of the write */
  fd = -1;
  if (hlen != 0 && errno != EINTR)
    goto out;
  if (rename(tmp, path) != 0)
    goto out;
  rc = 0;
out:
  saved = errno;
  if (fd >= 0)
    close(fd);
  if (rc != 0 && tmp != NULL)
    unlink(tmp);
  free(tmp);
  free(maps);
  errno = saved;
  return rc;
}

/* "<file>.maps" with file made absolute, so that rip_update_maps() still finds
 * it after the program changes directory. NULL with errno set on failure. */
static inline char *rip_sidecar_path_(const char *file) {
  char *abs = realpath(file, NULL), *path;
  size_t len;
  if (abs == NULL)
    return NULL;
  len = strlen(abs) + sizeof ".maps";
  path = (char *)malloc(len);
  if (path != NULL)
    snprintf(path, len, "%s.maps", abs);
  free(abs);
  if (path == NULL)
    errno = ENOMEM;
  return path;
}

static inline struct rip_ring *rip_map_ring(const char *file, uint32_t max_procs) {
  void *map = MAP_FAILED;
  size_t size = 0;
  char *path = NULL;
  int fd = -1, ok = 0, r, saved;
  uint64_t count;
  if (rip_size_records_(max_procs, &count) != 0)
    goto out;
  if (count > SIZE_MAX / RIP_RECORD_SIZE) {
    errno = EOVERFLOW;
    goto out;
  }
  size = (size_t)count * RIP_RECORD_SIZE;
  fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    goto out;
  while ((r = ftruncate(fd, (off_t)size)) != 0 && errno == EINTR) {
  }
  if (r != 0)
    goto out;
  map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED)
    goto out;
  path = rip_sidecar_path_(file);
  if (path == NULL)
    goto out;
  pthread_mutex_lock(&rip_maps_lock_);
  r = rip_write_maps_(path);
  if (r == 0) {
    free(rip_maps_path_);
    rip_maps_path_ = path;
    path = NULL;
  }
  saved = errno;
  pthread_mutex_unlock(&rip_maps_lock_);
  errno = saved;
  ok = r == 0;
  if (ok)
    __atomic_store_n(&rip_records_, count, __ATOMIC_RELAXED);
out:
  saved = errno;
  if (fd >= 0)
    close(fd);
  if (!ok && map != MAP_FAILED)
    munmap(map, size);
  free(path);
  errno = saved;
  return ok ? (struct rip_ring *)map : NULL;
}

static inline bool rip_update_maps(void) {
  int rc = -1, saved;
  pthread_mutex_lock(&rip_maps_lock_);
  if (rip_maps_path_ == NULL)
    errno = ENOENT;
  else
    rc = rip_write_maps_(rip_maps_path_);
  saved = errno;
  pthread_mutex_unlock(&rip_maps_lock_);
  errno = saved;
  return rc == 0;
}

#endif
