/* outfile.c - creating output files safely (outfile.h, docs/SECURITY.md "Outputs"). */
#include "common/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

enum { NEW_NAME, IN_PLACE };

/* A link or file is trusted when it belongs to us or to root: another
 * user's link is never followed (the rule of fs.protected_symlinks, kept
 * whatever the sysctl says). */
static int trusted(const struct stat *st) {
  return st->st_uid == geteuid() || st->st_uid == 0;
}

static int open_retry(int dfd, const char *name, int flags, mode_t mode) {
  int fd;
  do
    fd = openat(dfd, name, flags, mode);
  while (fd < 0 && errno == EINTR);
  return fd;
}

/* Splits path into its directory, opened (O_PATH) relative to dirfd into
 * *dfd, and its last component, strdup'ed into *base. The directory's own
 * links are followed: the caller named it. 0 or -errno. */
static int split(int dirfd, const char *path, int *dfd, char **base) {
  const char *slash = strrchr(path, '/'), *b = slash ? slash + 1 : path;
  char *dir = NULL;
  int rc = 0;
  *dfd = -1;
  *base = NULL;
  if (!*b || !strcmp(b, ".") || !strcmp(b, ".."))
    return -EISDIR;
  if (!slash)
    dir = strdup(".");
  else if (slash == path)
    dir = strdup("/");
  else
    dir = strndup(path, (size_t)(slash - path));
  if (!dir || !(*base = strdup(b))) {
    rc = -ENOMEM;
    goto out;
  }
  if ((*dfd = open_retry(dirfd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0)) < 0)
    rc = -errno;
out:
  if (rc) {
    free(*base);
    *base = NULL;
  }
  free(dir);
  return rc;
}

/* Creates a new file under a random hidden name beside base in dfd
 * (O_CREAT|O_EXCL|O_NOFOLLOW: nothing there is reused or followed); its
 * name in tmp. Returns the fd or -errno. */
static int make_temp(int dfd, const char *base, char *tmp, size_t tmpn) {
  int rc = -EEXIST;
  for (int tries = 0; tries < 16 && rc == -EEXIST; tries++) {
    unsigned long long r;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
      return -EIO;
    snprintf(tmp, tmpn, ".%.200s.%016llx.tmp", base, r);
    int fd = open_retry(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                        CT_OUT_MODE);
    rc = fd < 0 ? -errno : fd;
  }
  if (rc < 0)
    tmp[0] = 0;
  return rc;
}

/* What to do with the final name base in dfd: NEW_NAME (write a temporary
 * file, rename it over base) or IN_PLACE (*dev: what to open there).
 * -EISDIR / -EINVAL / -errno otherwise. */
static int decide(int dfd, const char *base, struct stat *dev) {
  struct stat l;
  if (fstatat(dfd, base, &l, AT_SYMLINK_NOFOLLOW))
    return errno == ENOENT ? NEW_NAME : -errno;
  if (S_ISLNK(l.st_mode)) {
    /* Another user's link is replaced, never followed. Ours (or root's, as
     * /dev/stdout) was named so by the user: followed, and what it leads to
     * is written in place (a dangling one is replaced). */
    if (!trusted(&l) || fstatat(dfd, base, dev, 0))
      return NEW_NAME;
    if (S_ISDIR(dev->st_mode))
      return -EISDIR;
    if (S_ISREG(dev->st_mode) || S_ISCHR(dev->st_mode) || S_ISFIFO(dev->st_mode))
      return IN_PLACE;
    return -EINVAL;
  }
  *dev = l;
  if (S_ISDIR(l.st_mode))
    return -EISDIR;
  if (S_ISREG(l.st_mode))
    return NEW_NAME;
  if (S_ISCHR(l.st_mode) || S_ISFIFO(l.st_mode))
    return trusted(&l) ? IN_PLACE : NEW_NAME;
  return -EINVAL; /* a block device, a socket */
}

int ct_outfile_open(struct ct_outfile *o, int dirfd, const char *path) {
  struct stat dev, st;
  int dfd = -1, rc;
  char *base = NULL;
  *o = (struct ct_outfile){.fd = -1, .dirfd = -1};
  if ((rc = split(dirfd, path, &dfd, &base)))
    goto out;
  if ((rc = decide(dfd, base, &dev)) < 0)
    goto out;
  if (rc == IN_PLACE) {
    o->fd = open_retry(dfd, base, O_WRONLY | O_NOCTTY | O_CLOEXEC, 0);
    rc = o->fd < 0 ? -errno : 0;
    /* What was opened must be what was checked; a file is emptied only then. */
    if (!rc && (fstat(o->fd, &st) || st.st_dev != dev.st_dev || st.st_ino != dev.st_ino))
      rc = -EAGAIN;
    if (!rc && S_ISREG(st.st_mode) && ftruncate(o->fd, 0))
      rc = -errno;
    goto out;
  }
  rc = make_temp(dfd, base, o->tmp, sizeof o->tmp);
  if (rc >= 0) {
    o->fd = rc;
    o->dirfd = dfd;
    o->name = base;
    dfd = -1;
    base = NULL;
    rc = 0;
  }
out:
  if (rc && o->fd >= 0) {
    close(o->fd);
    o->fd = -1;
  }
  if (dfd >= 0)
    close(dfd);
  free(base);
  return rc;
}

FILE *ct_outfile_stream(struct ct_outfile *o) {
  FILE *f = fdopen(o->fd, "we");
  if (f) {
    o->f = f;
    o->fd = -1;
  }
  return f;
}

int ct_outfile_close(struct ct_outfile *o) {
  int e = 0;
  if (o->f) {
    errno = 0; /* a stream's earlier write error left no errno of its own */
    int bad = fflush(o->f) || ferror(o->f);
    if (bad)
      e = errno ? errno : EIO;
    if (fclose(o->f) && !e)
      e = errno ? errno : EIO;
    o->f = NULL;
  } else if (o->fd >= 0) {
    /* close() can report a delayed write error; EINTR must not be retried. */
    if (close(o->fd) && errno != EINTR)
      e = errno;
  }
  o->fd = -1;
  if (e && !o->err)
    o->err = e;
  return e ? -e : 0;
}

int ct_outfile_commit(struct ct_outfile *o) {
  int rc;
  (void)ct_outfile_close(o);
  rc = -o->err;
  if (!rc && o->tmp[0] && renameat(o->dirfd, o->tmp, o->dirfd, o->name))
    rc = -errno;
  if (!rc)
    o->tmp[0] = 0; /* in place: nothing to remove */
  ct_outfile_abort(o);
  return rc;
}

void ct_outfile_abort(struct ct_outfile *o) {
  (void)ct_outfile_close(o);
  if (o->tmp[0] && o->dirfd >= 0)
    (void)unlinkat(o->dirfd, o->tmp, 0);
  o->tmp[0] = 0;
  if (o->dirfd >= 0)
    close(o->dirfd);
  o->dirfd = -1;
  free(o->name);
  o->name = NULL;
  o->err = 0;
}

int ct_outdir_open(const char *path, int *dirfd) {
  struct stat l;
  int follow = 0;
  *dirfd = -1;
  if (mkdir(path, CT_OUT_DIR_MODE) && errno != EEXIST)
    return -errno;
  if (lstat(path, &l))
    return -errno;
  if (S_ISLNK(l.st_mode)) {
    if (!trusted(&l))
      return -ELOOP;
    follow = 1;
  }
  int fd =
      open_retry(AT_FDCWD, path, O_PATH | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW), 0);
  if (fd < 0)
    return -errno;
  *dirfd = fd;
  return 0;
}

/* An existing file that we are to write into (append, a database): a
 * regular file with one name, ours; or, with devices, a device or FIFO of
 * ours or root's. 0, -EINVAL, -EMLINK, -EPERM or -errno. */
static int check_existing(int fd, int devices) {
  struct stat st;
  if (fstat(fd, &st))
    return -errno;
  if ((S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) && devices && trusted(&st))
    return 0; /* /dev/null, a pipe: no name to protect */
  if (!S_ISREG(st.st_mode))
    return -EINVAL;
  if (st.st_nlink > 1)
    return -EMLINK;
  if (st.st_uid != geteuid())
    return -EPERM;
  return 0;
}

/* The trace with append: see outfile.h. */
static int trace_append(int dfd, const char *base, int *fd) {
  int rc = 0, f = -1;
  for (int tries = 0; tries < 4 && f < 0; tries++) {
    f = open_retry(dfd, base, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                   0);
    if (f < 0 && errno == ENOENT)
      f = open_retry(dfd, base, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     CT_OUT_MODE);
    if (f < 0 && errno != EEXIST && errno != ENOENT) {
      rc = errno == ENXIO ? -EINVAL : -errno; /* ENXIO: a FIFO nobody reads */
      goto out;
    }
  }
  if (f < 0) {
    rc = -EAGAIN;
    goto out;
  }
  rc = check_existing(f, 1);
  if (!rc && fcntl(f, F_SETFL, O_APPEND) < 0)
    rc = -errno;
out:
  if (rc && f >= 0)
    close(f);
  else if (!rc)
    *fd = f;
  return rc;
}

int ct_outfile_trace(const char *path, int append, int *fd) {
  struct ct_outfile o = {.fd = -1, .dirfd = -1};
  char *base = NULL;
  int dfd = -1, rc;
  *fd = -1;
  if (append) {
    if ((rc = split(AT_FDCWD, path, &dfd, &base)) == 0)
      rc = trace_append(dfd, base, fd);
    goto out;
  }
  /* A new file renamed over path now, not at the end: the trace is read
   * (live view, tail) while it is written. */
  if ((rc = ct_outfile_open(&o, AT_FDCWD, path)))
    goto out;
  if (o.tmp[0] && renameat(o.dirfd, o.tmp, o.dirfd, o.name)) {
    rc = -errno;
    goto out;
  }
  o.tmp[0] = 0; /* in place now: nothing to remove */
  *fd = o.fd;
  o.fd = -1;
out:
  ct_outfile_abort(&o);
  if (dfd >= 0)
    close(dfd);
  free(base);
  return rc;
}

int ct_outfile_precreate(const char *path) {
  int fd =
      open_retry(AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, CT_OUT_MODE);
  if (fd < 0 && errno == EEXIST) /* it exists: written into, so checked as for append */
    fd = open_retry(AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0);
  int rc = fd < 0 ? -errno : check_existing(fd, 0);
  if (fd >= 0)
    close(fd);
  return rc;
}
