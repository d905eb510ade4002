/* test-probe-fd.c - the wake-up byte never lands in the program's own data.
 * A program that closes fds it does not own and reuses the number of the
 * probe's socket for a stream socket of its own (send(2) would fail on a pipe;
 * on a TCP or Unix socket it succeeds) must not receive our "1" there.
 *
 * Steps: attach (v1-style header: no acknowledgement wait) to a memfd and a
 * listening socket made here; check the probe parked its socket at a high fd
 * number; with tracer_sleeping = 1, an event must send the byte (the control:
 * the check below could not fail otherwise); then close the probe's fd behind
 * its back, dup one end of a socketpair onto the same number, set tracer_sleeping = 1 again and
 * write events: they must be recorded, and nothing may arrive at the pair's other
 * end or on the engine's side. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ctp.h"
#include "corotracer.h"
#include "lib/check.h"
#include "lib/probe-fixture.h"

#define NSTATIONS 2

static char dir[256], sock_path[300];

/* A byte readable on fd within ms milliseconds? 1 yes, 0 no, -1 error. */
static int byte_within(int fd, int ms) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  int r;
  while ((r = poll(&p, 1, ms)) < 0 && errno == EINTR) {
  }
  if (r <= 0)
    return r;
  char c;
  return read(fd, &c, 1) == 1 && c == '1';
}

/* The one socket of this process that is neither of ours: the probe's. */
static int probe_socket(int listen_fd, int conn) {
  struct rlimit rl;
  int max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 65536;
  for (int fd = 0; fd < max; fd++) {
    struct stat sb;
    if (fd != listen_fd && fd != conn && fstat(fd, &sb) == 0 && S_ISSOCK(sb.st_mode))
      return fd;
  }
  return -1;
}

static int run(void) {
  int mfd = memfd_create("ctp", MFD_CLOEXEC);
  ASSERT_GE(mfd, 0);
  ASSERT_EQ(ftruncate(mfd, (off_t)CTP_FILE_SIZE(NSTATIONS)), 0);
  struct ctp_header *h =
      mmap(NULL, CTP_FILE_SIZE(NSTATIONS), PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
  ASSERT_PTR_NE(h, MAP_FAILED);
  h->magic = CTP_MAGIC;
  h->version = CTP_VERSION;
  h->max_stations = NSTATIONS;
  char shm[64], count[16];
  snprintf(shm, sizeof shm, "/proc/%d/fd/%d", (int)getpid(), mfd);
  snprintf(count, sizeof count, "%u", NSTATIONS);

  int listen_fd = ct_listen_unix(sock_path, 4);
  ASSERT_GE(listen_fd, 0);
  ct_set_env(shm, sock_path, count);
  ASSERT_OK(corotracer_init());
  int conn = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
  ASSERT_GE(conn, 0);

  int pfd = probe_socket(listen_fd, conn);
  ASSERT_GE(pfd, 0);
  struct rlimit rl;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
  if (rl.rlim_cur > 1000)
    ASSERT_GE(pfd, 900); /* parked out of the way of the program's low fds */
  printf("probe socket at fd %d\n", pfd);

  /* Control: the engine asleep, an event wakes it through the socket. */
  atomic_store(&h->tracer_sleeping, 1);
  corotracer_co *co = corotracer_create(1, "fd", NULL);
  ASSERT_NOT_NULL(co);
  ASSERT_EQ(atomic_load(&h->tracer_sleeping), 0);
  ASSERT_EQ(byte_within(conn, 1000), 1);

  /* The program closes our fd and its next socket gets the number. */
  int p[2];
  ASSERT_EQ(close(pfd), 0);
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, p), 0);
  if (p[1] != pfd) {
    ASSERT_EQ(dup3(p[1], pfd, O_CLOEXEC), pfd);
    ASSERT_EQ(close(p[1]), 0);
  }
  atomic_store(&h->tracer_sleeping, 1);
  corotracer_suspend(co, NULL, COROTRACER_WAIT_NONE, 0);
  /* The probe gave the socket up without taking the flag: it stays set for
   * another process's probe (or the engine's fallback poll). */
  ASSERT_EQ(atomic_load(&h->tracer_sleeping), 1);
  corotracer_resume(co);
  ASSERT_EQ(atomic_load(&h->tracer_sleeping), 1);
  struct ctp_station *st = ctp_station_at(h, 0);
  ASSERT_UINT64_EQ(atomic_load(&st->ev_claimed), 3); /* create, suspend, resume: all recorded */
  char c;
  ASSERT_LT(read(p[0], &c, 1), 0);
  ASSERT_EQ(errno, EAGAIN); /* nothing in the program's stream */
  ASSERT_EQ(byte_within(conn, 100), 0);
  printf("ok   a reused fd number gets no wake-up byte; events still recorded\n");

  close(p[0]);
  close(pfd);
  close(conn);
  close(listen_fd);
  munmap(h, CTP_FILE_SIZE(NSTATIONS));
  close(mfd);
  return 0;
}

int main(void) {
  ASSERT_EQ(ct_make_tmpdir(dir, sizeof dir, "ct-probe-fd"), 0); /* it says why */
  snprintf(sock_path, sizeof sock_path, "%s/sock", dir);
  int rc = run();
  unlink(sock_path);
  rmdir(dir);
  return rc;
}
