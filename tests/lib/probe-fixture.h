/* probe-fixture.h - what the probe tests share to stand in for the engine: a temp dir, its
 * listening socket, the env. */
#ifndef CT_PROBE_FIXTURE_H
#define CT_PROBE_FIXTURE_H

#include <stddef.h>

/* Make a fresh private dir "$TMPDIR/<prefix>-XXXXXX" (TMPDIR default /tmp)
 * into dir; 0, or -1 with the error printed. */
int ct_make_tmpdir(char *dir, size_t len, const char *prefix);

/* Bind and listen on a Unix stream socket at path (close-on-exec, as the
 * engine's): the fd, or -1 with the failing step printed. */
int ct_listen_unix(const char *path, int backlog);

/* Set the three CTP_* variables the probe reads; NULL leaves one unset, so a
 * case sees exactly the environment it names. */
void ct_set_env(const char *shm, const char *sock, const char *count);

/* Run body() in a forked child with the three CTP_* variables set as
 * ct_set_env does and, when errpath is not NULL, its stderr sent to that
 * file; the child exits with body's result. Returns the child's wait status,
 * or -1 with the failing step printed. */
int ct_run_forked(int (*body)(void), const char *shm, const char *sock, const char *count,
                  const char *errpath);

#endif
