/* rundir.c - runtime files of a run: the private directory, the shared memory
 * (a sealed memfd, or an explicit file) and the listening socket; removal of
 * everything we created, and only of what is still ours. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/ctp.h"
#include "engine/opts.h"
#include "engine/rundir.h"

/* Word the failure "what: strerror(err)" into why; return -err. */
static int fail(char *why, size_t whylen, const char *what, int err) {
  snprintf(why, whylen, "%s: %s", what, strerror(err));
  return -err;
}

/* mkdtemp under base; NULL when base is unset, unusable, or too long for a
 * socket path below it. */
static char *try_dir(const char *base) {
  if (!base || base[0] != '/')
    return NULL;
  struct sockaddr_un sa;
  /* base + "/corotracer-XXXXXX" + "/sock" must fit in sun_path. */
  if (strlen(base) + 18 + 5 + 1 > sizeof(sa.sun_path))
    return NULL;
  char *d = malloc(strlen(base) + 20);
  if (!d)
    return NULL;
  sprintf(d, "%s/corotracer-XXXXXX", base);
  if (!mkdtemp(d)) { /* mode 0700 */
    free(d);
    return NULL;
  }
  return d;
}

static int make_dir(struct ct_rt *rt, char *why, size_t whylen) {
  rt->dir = try_dir(getenv("XDG_RUNTIME_DIR"));
  if (!rt->dir)
    rt->dir = try_dir(getenv("TMPDIR"));
  if (!rt->dir)
    rt->dir = try_dir("/tmp");
  if (!rt->dir)
    return fail(why, whylen, "runtime directory (XDG_RUNTIME_DIR, TMPDIR, /tmp)",
                errno ? errno : ENOENT);
  return 0;
}

/* Reserve the pages of a --shm file now so a full file system is an error
 * here, not a SIGBUS in the target later. */
static int reserve(int fd, size_t len, const char *what, char *why, size_t whylen) {
  int e = posix_fallocate(fd, 0, (off_t)len);
  if (e == EINTR)
    e = posix_fallocate(fd, 0, (off_t)len);
  if (e)
    return fail(why, whylen, what, e);
  return 0;
}

static int make_memfd(struct ct_rt *rt, char *why, size_t whylen) {
  rt->shm_fd = memfd_create("corotracer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (rt->shm_fd < 0)
    return fail(why, whylen, "shared memory (memfd_create)", errno);
  if (ftruncate(rt->shm_fd, (off_t)rt->map_len) < 0)
    return fail(why, whylen, "shared memory (ftruncate)", errno);
  /* Not reserved: a memfd lives on the kernel's internal tmpfs, which has no
   * size limit to run into (no ENOSPC, so no SIGBUS); only the pages used
   * are allocated, and freed at the end. Reserving the default 192 MiB took
   * ~100 ms of every run, and freeing it ~20 ms more, though most stations
   * and rings are never touched. */
  /* The target reopens it through our fd table: no path anyone else can
   * reach, and our CLOEXEC does not matter. */
  snprintf(rt->shm_env, sizeof(rt->shm_env), "/proc/%ld/fd/%d", (long)getpid(), rt->shm_fd);
  return 0;
}

static int make_shm_file(struct ct_rt *rt, const char *path, char *why, size_t whylen) {
  rt->shm_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (rt->shm_fd < 0) {
    int e = errno;
    if (e == EEXIST) {
      snprintf(why, whylen, "%s: already exists; refusing to use a file we did not create", path);
      return -EEXIST;
    }
    return fail(why, whylen, path, e);
  }
  struct stat sb;
  if (fstat(rt->shm_fd, &sb) < 0)
    return fail(why, whylen, path, errno);
  rt->shm_path = strdup(path);
  if (!rt->shm_path)
    return fail(why, whylen, path, ENOMEM);
  rt->shm_dev = sb.st_dev;
  rt->shm_ino = sb.st_ino;
  return reserve(rt->shm_fd, rt->map_len, path, why, whylen);
}

static void write_header(struct ct_rt *rt, uint32_t n, const struct ct_opts *o) {
  struct ctp_header *h = rt->map;
  /* Written before the target exists: no ordering needed beyond exec. */
  h->magic = CTP_MAGIC;
  h->version = CTP_VERSION;
  h->max_stations = n;
  h->ext_magic = CTP_EXT_MAGIC;
  h->ext_version = CTP_EXT_VERSION;
  h->engine_pid = (uint64_t)getpid();
  /* A flight recorder keeps the newest events: a full ring drops its
   * oldest (docs/ENGINE.md "Flight recorder"); lossless waits instead. */
  h->mode = o->lossless ? CTP_MODE_LOSSLESS : o->flight && o->rings ? CTP_MODE_OVERWRITE : 0;
  h->mode |= o->pack ? CTP_MODE_PACK : 0; /* (ct_opts_parse checked what it needs) */
  h->lossless_ms = (uint32_t)o->lossless_ms;
  h->sites_off = ct_layout(o, h); /* the text-site area ends the file */
  h->sites_bytes = CTP_SITES_BYTES;
}

static int make_socket(struct ct_rt *rt, const char *path, char *why, size_t whylen) {
  struct sockaddr_un sa;
  memset(&sa, 0, sizeof(sa));
  sa.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof(sa.sun_path)) {
    snprintf(why, whylen, "%s: socket path too long (max %zu bytes)", path,
             sizeof(sa.sun_path) - 1);
    return -ENAMETOOLONG;
  }
  strcpy(sa.sun_path, path);
  rt->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (rt->listen_fd < 0)
    return fail(why, whylen, "socket", errno);
  /* umask makes the socket 0600 from its creation on (single-threaded here). */
  mode_t old = umask(0177);
  int rc = bind(rt->listen_fd, (struct sockaddr *)&sa, sizeof(sa));
  int e = errno;
  umask(old);
  if (rc < 0) {
    if (e == EADDRINUSE) {
      snprintf(why, whylen, "%s: already exists; refusing to replace it", path);
      return -EEXIST;
    }
    return fail(why, whylen, path, e);
  }
  struct stat sb;
  if (lstat(path, &sb) < 0)
    return fail(why, whylen, path, errno);
  rt->sock_path = strdup(path);
  if (!rt->sock_path) {
    unlink(path);
    return fail(why, whylen, path, ENOMEM);
  }
  rt->sock_dev = sb.st_dev;
  rt->sock_ino = sb.st_ino;
  if (listen(rt->listen_fd, 64) < 0)
    return fail(why, whylen, path, errno);
  return 0;
}

int ct_rt_create(struct ct_rt *rt, const struct ct_opts *o, char *why, size_t whylen) {
  memset(rt, 0, sizeof(*rt));
  rt->shm_fd = -1;
  rt->listen_fd = -1;
  rt->map_len = (size_t)ct_layout(o, NULL) + CTP_SITES_BYTES;
  int rc = 0;
  if (!o->sock_path && (rc = make_dir(rt, why, whylen)))
    goto out;
  rc = o->shm_path ? make_shm_file(rt, o->shm_path, why, whylen) : make_memfd(rt, why, whylen);
  if (rc)
    goto out;
  rt->map = mmap(NULL, rt->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, rt->shm_fd, 0);
  if (rt->map == MAP_FAILED) {
    rt->map = NULL;
    rc = fail(why, whylen, o->shm_path ? o->shm_path : "shared memory (mmap)", errno);
    goto out;
  }
  write_header(rt, o->stations, o);
  /* The target cannot truncate (or grow) a sealed memfd under our mapping. */
  if (!o->shm_path &&
      fcntl(rt->shm_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
    rc = fail(why, whylen, "shared memory (seal)", errno);
    goto out;
  }
  if (o->sock_path) {
    rc = make_socket(rt, o->sock_path, why, whylen);
  } else {
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    snprintf(path, sizeof(path), "%s/sock", rt->dir);
    rc = make_socket(rt, path, why, whylen);
  }
out:
  if (rc)
    ct_rt_destroy(rt);
  return rc;
}

const char *ct_rt_shm_env(const struct ct_rt *rt) {
  return rt->shm_path ? rt->shm_path : rt->shm_env;
}

/* Unlink path only if it is still the file we created (someone may have
 * replaced it: never remove theirs). */
static void unlink_ours(char **path, dev_t dev, ino_t ino) {
  struct stat sb;
  if (*path && lstat(*path, &sb) == 0 && sb.st_dev == dev && sb.st_ino == ino)
    unlink(*path);
  free(*path);
  *path = NULL;
}

void ct_rt_destroy(struct ct_rt *rt) {
  if (rt->map)
    munmap(rt->map, rt->map_len);
  rt->map = NULL;
  if (rt->shm_fd >= 0)
    close(rt->shm_fd);
  rt->shm_fd = -1;
  if (rt->listen_fd >= 0)
    close(rt->listen_fd);
  rt->listen_fd = -1;
  unlink_ours(&rt->shm_path, rt->shm_dev, rt->shm_ino);
  unlink_ours(&rt->sock_path, rt->sock_dev, rt->sock_ino);
  if (rt->dir)
    rmdir(rt->dir);
  free(rt->dir);
  rt->dir = NULL;
}
