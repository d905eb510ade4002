/* rundir.h - the runtime files: the shared memory, its layout (rings.c), the socket (rundir.c). */
#ifndef CT_ENGINE_RUNDIR_H
#define CT_ENGINE_RUNDIR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/ctp.h"
#include "engine/opts.h"

struct ct_rt {
  char *dir;       /* private directory we created, or NULL */
  char *shm_path;  /* explicit shm file we created, or NULL */
  char *sock_path; /* socket path we bound */
  dev_t shm_dev, sock_dev;
  ino_t shm_ino, sock_ino;
  int shm_fd; /* memfd or the explicit file; kept open for the run */
  int listen_fd;
  void *map; /* mapping of the whole file */
  size_t map_len;
  char shm_env[64]; /* CTP_SHM_PATH value when memfd (/proc/PID/fd/N) */
};

/* Create the shared memory, its header and the listening socket as o asks.
 * Returns 0, or -errno with a one-line reason in why (which file, what failed;
 * the caller prints it) after removing what it created. The caller owns rt
 * afterwards and must call ct_rt_destroy. */
int ct_rt_create(struct ct_rt *rt, const struct ct_opts *o, char *why, size_t whylen);
/* Value for CTP_SHM_PATH (the explicit path, or /proc/PID/fd/N). Owned by rt. */
const char *ct_rt_shm_env(const struct ct_rt *rt);
/* Unmap, close, and remove every file still ours (dev/inode checked). Safe on
 * a zeroed or partly created rt; idempotent. */
void ct_rt_destroy(struct ct_rt *rt);

/* ---- layout (rings.c) ----------------------------------------------------- */
/* Size of the file for these options, and with v2 the header's v2 fields
 * (hdr may be NULL to only size it). */
uint64_t ct_layout(const struct ct_opts *o, struct ctp_header *hdr);

#endif /* CT_ENGINE_RUNDIR_H */
