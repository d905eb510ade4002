/* outfile.h - creating output files safely (docs/SECURITY.md "Outputs"): new
 * files under random O_EXCL names renamed into place, never written through
 * another user's link. Module code: returns 0 / -errno, never prints. */
#ifndef CT_COMMON_OUTFILE_H
#define CT_COMMON_OUTFILE_H

#include <stdio.h>

/* The mode of every output the corotracer binary creates (the umask can
 * only take bits away). */
#define CT_OUT_MODE 0600
#define CT_OUT_DIR_MODE 0700

/* One output being written. Fill it with ct_outfile_open; end it with
 * ct_outfile_commit (into place) or ct_outfile_abort (gone). */
struct ct_outfile {
  int fd;        /* where to write; -1 once a FILE owns it, or when closed */
  FILE *f;       /* set by ct_outfile_stream: owns fd until closed */
  int dirfd;     /* the final name's directory (owned), -1 when in place or ended */
  int err;       /* the first error of ct_outfile_close, reported by commit */
  char *name;    /* the final name in dirfd (owned) */
  char tmp[288]; /* the temporary name in dirfd; "" when in place */
};

/* Opens an output for path, relative to dirfd (AT_FDCWD, or the directory
 * of ct_outdir_open). A regular file, a new name or another user's link is
 * written under a random temporary name (O_CREAT|O_EXCL, CT_OUT_MODE) in
 * path's directory, and commit renames it over path: that link or file is
 * replaced, never written through. Written in place: what a link of ours or
 * root's leads to (/dev/stdout; a regular file is truncated), and a
 * character device or FIFO of ours or root's (/dev/null). A directory:
 * -EISDIR; a block device or socket: -EINVAL. On success o owns an fd
 * (o->fd); on failure o owns nothing. */
int ct_outfile_open(struct ct_outfile *o, int dirfd, const char *path);

/* A stdio stream over o->fd ("w"), which it then owns; NULL and errno on
 * failure (o still owns the fd). */
FILE *ct_outfile_stream(struct ct_outfile *o);

/* Closes o's fd or stream (flushing it); the temporary file stays until
 * commit or abort. Returns 0 or the first write/close error (kept for commit). */
int ct_outfile_close(struct ct_outfile *o);

/* Closes o if still open, then renames the temporary file over the final
 * name. Returns 0, or the close's or rename's error, the temporary file
 * then removed. o owns nothing afterwards, in either case. */
int ct_outfile_commit(struct ct_outfile *o);

/* Closes o if still open and removes the temporary file: the final name is
 * left as it was. Safe on an ended or zeroed-then-failed o (fd -1). */
void ct_outfile_abort(struct ct_outfile *o);

/* Makes the directory path (CT_OUT_DIR_MODE) unless it exists, and opens
 * it: a link there is followed only when it belongs to us or to root
 * (-ELOOP otherwise). *dirfd is the caller's to close. 0 or -errno. */
int ct_outdir_open(const char *path, int *dirfd);

/* The trace, written while the run goes (and followed by the live view by
 * its path). Without append: as ct_outfile_open, but the new file is
 * renamed over path at once, so an existing file is never written into (a
 * hard link or another user's file or link there is replaced); what
 * ct_outfile_open writes in place is written in place. With append, path
 * is opened O_APPEND|O_NOFOLLOW (a link: -ELOOP); it must be a regular file
 * with one name (-EMLINK) owned by us (-EPERM), or a device or FIFO of ours
 * or root's; a missing one is created (O_EXCL). New files get CT_OUT_MODE.
 * *fd is the caller's. 0 or -errno. */
int ct_outfile_trace(const char *path, int append, int *fd);

/* A database file that a library opens by name (SQLite), to be opened by it
 * without following a link: created empty with CT_OUT_MODE (O_EXCL) when
 * path does not exist; an existing one must be as for append (a link:
 * -ELOOP; not a regular file: -EINVAL; -EMLINK; -EPERM). 0 or -errno. */
int ct_outfile_precreate(const char *path);

#endif
