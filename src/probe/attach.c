/* attach.c - the probe's attach: validate the CTP_* environment strictly, map
 * the cTP file, connect the wakeup socket; and the fork child handler. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/ticks.h"
#include "probe/ring.h"

struct ct_probe corotracer__probe = {.state = CT_UNINIT, .sock = -1};

static pthread_once_t ct_once = PTHREAD_ONCE_INIT;

/* The probe's single permitted output: one line, one write(2), so lines of
 * several processes never interleave. fmt names the variable and the problem. */
static void ct_vcomplain(const char *fmt, va_list ap) {
  char line[1024];
  int n = vsnprintf(line, sizeof line - 20, fmt, ap);
  if (n < 0)
    return;
  if ((size_t)n > sizeof line - 21)
    n = (int)(sizeof line - 21);
  /* The values come from the environment: a newline or escape in them must
   * not break the one line or drive the terminal. */
  for (int i = 0; i < n; i++)
    if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
      line[i] = '?';
  n += snprintf(line + n, sizeof line - (size_t)n, ", running untraced\n");
  const char *p = line;
  size_t left = (size_t)n;
  while (left > 0) {
    ssize_t w = write(STDERR_FILENO, p, left);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    p += w;
    left -= (size_t)w;
  }
}

static void ct_complain(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ct_vcomplain(fmt, ap);
  va_end(ap);
}

static const char *ct_strerror(int err, char *buf, size_t len) {
  return strerror_r(err, buf, len); /* GNU variant: may return a static string */
}

/* Parse CTP_MAX_STATIONS: decimal digits only, 1..CTP_STATIONS_MAX. */
static int ct_parse_count(const char *s, uint32_t *out) {
  uint64_t v = 0;
  if (*s == '\0')
    return -EINVAL;
  for (; *s; s++) {
    if (*s < '0' || *s > '9')
      return -EINVAL;
    v = v * 10 + (uint64_t)(*s - '0');
    if (v > CTP_STATIONS_MAX)
      return -ERANGE;
  }
  if (v == 0)
    return -ERANGE;
  *out = (uint32_t)v;
  return 0;
}

/* Read exactly len bytes at offset 0; -EIO on a premature end of file. */
static int ct_read_header(int fd, void *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -errno;
    if (r == 0)
      return -EIO;
    got += (size_t)r;
  }
  return 0;
}

/* An area of len bytes at off lies in [start, end), 64-byte aligned. */
static int ct_area_ok(uint64_t off, uint64_t len, uint64_t start, uint64_t end) {
  return off % 64 == 0 && off >= start && off <= end && len <= end - off;
}

/* Does header h (of a file of size bytes, n stations) offer v2 that we can
 * use? Every check of docs/PROTOCOL.md "Negotiation"; any failure means the
 * v1 stations, silently (the engine sees stations without CTP_STF_RINGS). */
static int ct_v2_offered(const struct ctp_header *h, uint32_t n, uint64_t size) {
  uint64_t stations_end = CTP_FILE_SIZE(n);
  uint64_t end = h->v2_size;
  if (h->ext_magic != CTP_EXT_MAGIC || !(h->mode & CTP_MODE_RINGS))
    return 0;
  if (end > size || end < stations_end)
    return 0;
  if (h->ring_bytes < CTP_RING_BYTES_MIN || h->ring_bytes > CTP_RING_BYTES_MAX ||
      (h->ring_bytes & (h->ring_bytes - 1)) != 0)
    return 0;
  if (h->ring_count < 1 || h->ring_count > CTP_RINGS_MAX)
    return 0;
  if (!ct_area_ok(h->station_q_off, CTP_QUEUE_SIZE(n), stations_end, end) ||
      !ct_area_ok(h->ring_q_off, CTP_QUEUE_SIZE(h->ring_count), stations_end, end) ||
      !ct_area_ok(h->rings_off, h->ring_count * CTP_RING_SIZE(h->ring_bytes), stations_end, end))
    return 0;
  /* Only a counter this CPU reads; CLOCK_MONOTONIC everywhere. */
  return h->clock == CTP_CLOCK_MONO || h->clock == (uint32_t)CT_TICKS_CLOCK;
}

/* Validate the file named by CTP_SHM_PATH for n stations and map it. On
 * success *hdr is a MAP_SHARED mapping of *len bytes owned by the caller:
 * v2_size when the engine offers v2 and *v2 is set, else CTP_FILE_SIZE(n);
 * *seen is the header as checked. Complains (one line) on every failure. */
static int ct_map_file(const char *path, uint32_t n, struct ctp_header **hdr, uint64_t *len,
                       int *v2, struct ctp_header *seen) {
  char eb[128];
  struct ctp_header h;
  struct stat stbuf;
  int rc;
  /* No O_NOFOLLOW: the engine may hand us /proc/PID/fd/N of a sealed memfd. */
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    rc = -errno;
    ct_complain("corotracer: %s=%s: cannot open: %s", CTP_ENV_SHM, path,
                ct_strerror(-rc, eb, sizeof eb));
    goto out;
  }
  if (fstat(fd, &stbuf) != 0) {
    rc = -errno;
    ct_complain("corotracer: %s=%s: cannot stat: %s", CTP_ENV_SHM, path,
                ct_strerror(-rc, eb, sizeof eb));
    goto out;
  }
  if (!S_ISREG(stbuf.st_mode)) {
    rc = -EINVAL;
    ct_complain("corotracer: %s=%s: not a regular file", CTP_ENV_SHM, path);
    goto out;
  }
  if ((uint64_t)stbuf.st_size < CTP_FILE_SIZE(n)) {
    rc = -EINVAL;
    ct_complain("corotracer: %s=%s: file is %lld bytes, %s=%u needs %llu", CTP_ENV_SHM, path,
                (long long)stbuf.st_size, CTP_ENV_STATIONS, n,
                (unsigned long long)CTP_FILE_SIZE(n));
    goto out;
  }
  rc = ct_read_header(fd, &h, sizeof h);
  if (rc < 0) {
    ct_complain("corotracer: %s=%s: cannot read the header: %s", CTP_ENV_SHM, path,
                ct_strerror(-rc, eb, sizeof eb));
    goto out;
  }
  if (h.magic != CTP_MAGIC) {
    rc = -EPROTO;
    ct_complain("corotracer: %s=%s: bad magic 0x%016llx (want 0x%016llx)", CTP_ENV_SHM, path,
                (unsigned long long)h.magic, (unsigned long long)CTP_MAGIC);
    goto out;
  }
  if (h.version != CTP_VERSION) {
    rc = -EPROTONOSUPPORT;
    ct_complain("corotracer: %s=%s: unsupported cTP version %u (want %u)", CTP_ENV_SHM, path,
                h.version, CTP_VERSION);
    goto out;
  }
  /* Both directions matter: a smaller env count than the file's would let
   * the allocation cursor index past our mapping. */
  if (h.max_stations != n) {
    rc = -EINVAL;
    ct_complain("corotracer: %s=%u: the header of %s says %u stations", CTP_ENV_STATIONS, n, path,
                h.max_stations);
    goto out;
  }
  *v2 = ct_v2_offered(&h, n, (uint64_t)stbuf.st_size);
  *len = *v2 ? h.v2_size : CTP_FILE_SIZE(n);
  /* Our engine's text-site area (corotracer_site), after the others, in the
   * file: mapped too. Otherwise corotracer_site finds none. */
  if (h.ext_magic == CTP_EXT_MAGIC && h.sites_bytes && h.sites_off % 8 == 0 &&
      h.sites_off >= *len && h.sites_off <= (uint64_t)stbuf.st_size &&
      h.sites_bytes <= (uint64_t)stbuf.st_size - h.sites_off)
    *len = h.sites_off + h.sites_bytes;
  void *base = mmap(NULL, (size_t)*len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    rc = -errno;
    ct_complain("corotracer: %s=%s: cannot map: %s", CTP_ENV_SHM, path,
                ct_strerror(-rc, eb, sizeof eb));
    goto out;
  }
  *hdr = base;
  *seen = h;
  rc = 0;
out:
  if (fd >= 0)
    close(fd);
  return rc;
}

/* Connect to the engine's wakeup socket; on success *out is the fd, owned by
 * the caller. The socket is non-blocking: connect gives up after ~1 s when the
 * engine's backlog stays full, and a wakeup send can never block anyway. */
static int ct_connect(const char *path, int *out) {
  char eb[128];
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  int rc;
  int fd = -1;
  size_t len = strlen(path);
  if (len == 0 || len >= sizeof sa.sun_path) {
    rc = -ENAMETOOLONG;
    ct_complain("corotracer: %s=%s: %s", CTP_ENV_SOCK, path, len ? "path too long" : "empty path");
    goto out;
  }
  memcpy(sa.sun_path, path, len + 1);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    rc = -errno;
    ct_complain("corotracer: %s=%s: socket: %s", CTP_ENV_SOCK, path,
                ct_strerror(-rc, eb, sizeof eb));
    goto out;
  }
  for (int tries = 0;; tries++) {
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 || errno == EISCONN)
      break;
    /* AF_UNIX: EAGAIN = backlog full, EINTR = interrupted; neither leaves a
     * half-open connection, so retrying connect is correct. */
    if ((errno == EAGAIN || errno == EINTR) && tries < 100) {
      struct timespec ts = {0, 10 * 1000 * 1000};
      nanosleep(&ts, NULL);
      continue;
    }
    rc = -errno;
    ct_complain("corotracer: %s=%s: cannot connect: %s", CTP_ENV_SOCK, path,
                ct_strerror(-rc, eb, sizeof eb));
    goto out;
  }
  *out = fd;
  fd = -1;
  rc = 0;
out:
  if (fd >= 0)
    close(fd);
  return rc;
}

/* Move the socket out of the way of the program's own fds: a program that
 * closes fds it does not own (daemonizing, closefrom) and opens its own would
 * otherwise get our number, and a wake-up byte would land in its stream. A
 * high number makes that unlikely; the identity kept in *dev and *ino lets the
 * send path notice it anyway. Keeps the original number when no high one is
 * free (a low RLIMIT_NOFILE). */
#define CT_SOCK_FD_MIN 900
static int ct_park_socket(int fd, uint64_t *dev, uint64_t *ino) {
  struct stat sb;
  int hi = fcntl(fd, F_DUPFD_CLOEXEC, CT_SOCK_FD_MIN);
  if (hi >= 0) {
    close(fd);
    fd = hi;
  }
  if (fstat(fd, &sb) != 0) {
    close(fd); /* no identity to check: no wake-ups, the engine's poll harvests */
    return -1;
  }
  *dev = (uint64_t)sb.st_dev;
  *ino = (uint64_t)sb.st_ino;
  return fd;
}

/* Our engine (ext_version >= 2) answers a connection with one byte once it has
 * written this process's module lines: waiting for it lets a process that
 * exits right after attaching still have its sites symbolized (its
 * /proc/PID/maps is gone with it). Once per process, never on the hot path;
 * bounded, so a stopped or overloaded engine delays the program by at most
 * ~1 s and then it runs traced anyway. A v1 engine sends nothing: not asked. */
static void ct_await_ack(int fd) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (long)(now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (ms >= CT_ACK_TIMEOUT_MS)
      return;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r = poll(&p, 1, (int)(CT_ACK_TIMEOUT_MS - ms));
    if (r < 0 && errno == EINTR)
      continue; /* the deadline stays where it was */
    if (r <= 0)
      return;
    char c;
    ssize_t k = recv(fd, &c, 1, MSG_DONTWAIT);
    if (k < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    return; /* the byte, EOF (engine gone) or an error: nothing more to wait for */
  }
}

/* Runs in the child of a fork, alone. The stations belong to the parent:
 * turn the probe off before anything can write them, and drop our copy of the
 * socket so the engine sees EOF when the parent goes. A child whose parent was
 * untraced keeps the parent's verdict. */
static void ct_atfork_child(void) {
  int s = atomic_load_explicit(&corotracer__probe.state, memory_order_relaxed);
  corotracer__forget_current();
  if (s != CT_TRACED && s != CT_UNINIT)
    return;
  /* CT_UNINIT here means another parent thread was attaching during fork():
   * its pthread_once would never complete in the child. */
  atomic_store_explicit(&corotracer__probe.state, -ECHILD, memory_order_relaxed);
  if (s == CT_TRACED) {
    munmap(corotracer__probe.hdr, (size_t)corotracer__probe.map_len);
    int fd = atomic_exchange_explicit(&corotracer__probe.sock, -1, memory_order_relaxed);
    if (fd >= 0)
      close(fd);
    corotracer__probe.hdr = NULL;
  }
}

/* v2 negotiated: keep the layout as checked (h, read before the mapping;
 * the probe never re-reads it from the shared header) and the clock. */
static void ct_use_rings(struct ctp_header *base, const struct ctp_header *h) {
  struct ct_probe *p = &corotracer__probe;
  p->rings = 1;
  p->use_ticks = h->clock != CTP_CLOCK_MONO;
  p->ring_count = h->ring_count;
  p->ring_cap = h->ring_bytes / (uint32_t)sizeof(struct ctp_rec);
  p->ring_base = (char *)base + h->rings_off;
  p->ring_stride = CTP_RING_SIZE(h->ring_bytes);
  p->station_q = ctp_queue_at(base, h->station_q_off);
  p->ring_q = ctp_queue_at(base, h->ring_q_off);
}

static int ct_attach(void) {
  char eb[128];
  const char *shm = getenv(CTP_ENV_SHM);
  const char *sock = getenv(CTP_ENV_SOCK);
  const char *count = getenv(CTP_ENV_STATIONS);
  struct ctp_header *hdr = NULL;
  struct ctp_header seen = {0};
  uint64_t len = 0;
  uint32_t n = 0;
  int v2 = 0;
  int fd = -1;
  int rc;
  if (!shm || !sock || !count) {
    rc = -ENOENT;
    goto out;
  }
  /* Before mapping anything, so a fork racing with the rest of the attach is
   * covered; without the handler a child would write the parent's stations. */
  rc = -pthread_atfork(NULL, NULL, ct_atfork_child);
  if (rc < 0) {
    ct_complain("corotracer: pthread_atfork: %s", ct_strerror(-rc, eb, sizeof eb));
    goto out;
  }
  rc = ct_parse_count(count, &n);
  if (rc < 0) {
    ct_complain("corotracer: %s=%s: not a decimal number in 1..%u", CTP_ENV_STATIONS, count,
                CTP_STATIONS_MAX);
    goto out;
  }
  rc = ct_map_file(shm, n, &hdr, &len, &v2, &seen);
  if (rc < 0)
    goto out;
  rc = ct_connect(sock, &fd);
  if (rc < 0)
    goto out;
  fd = ct_park_socket(fd, &corotracer__probe.sock_dev, &corotracer__probe.sock_ino);
  if (fd >= 0 && hdr->ext_magic == CTP_EXT_MAGIC && hdr->ext_version >= CTP_EXT_VERSION)
    ct_await_ack(fd);
  corotracer__probe.hdr = hdr;
  corotracer__probe.map_len = len;
  corotracer__probe.nstations = n;
  corotracer__probe.pid = (uint32_t)getpid();
  if (v2 && corotracer__ring_init() == 0)
    ct_use_rings(hdr, &seen);
  /* Overwrite only with rings and never with lossless (either alone, not both). */
  corotracer__probe.overwrite =
      v2 && hdr->ext_magic == CTP_EXT_MAGIC &&
      (hdr->mode & (CTP_MODE_OVERWRITE | CTP_MODE_LOSSLESS)) == CTP_MODE_OVERWRITE;
  /* Packs only with rings (docs/ROUTE1.md); in overwrite mode too, where a
   * take-back steps over whole packs (ring.c ct_ring_overwrite). */
  corotracer__probe.pack =
      corotracer__probe.rings && hdr->ext_magic == CTP_EXT_MAGIC && (hdr->mode & CTP_MODE_PACK);
  /* Only our engine sets mode (a v1 engine leaves the word zero). */
  if (hdr->ext_magic == CTP_EXT_MAGIC && (hdr->mode & CTP_MODE_LOSSLESS)) {
    corotracer__probe.lossless = 1;
    /* Read from the mapping, which a process of the program may have
     * written over before we attached: the engine's own bound caps it. */
    uint32_t ms = hdr->lossless_ms;
    corotracer__probe.lossless_ms = ms == 0                   ? 1000
                                    : ms > CT_LOSSLESS_MS_MAX ? CT_LOSSLESS_MS_MAX
                                                              : ms;
  }
  atomic_store_explicit(&corotracer__probe.sock, fd, memory_order_relaxed);
  atomic_fetch_add_explicit(&hdr->attached, 1, memory_order_relaxed);
  hdr = NULL;
  rc = CT_TRACED;
out:
  if (hdr)
    munmap(hdr, (size_t)len);
  return rc;
}

static void ct_attach_once(void) {
  atomic_store_explicit(&corotracer__probe.state, ct_attach(), memory_order_release);
}

/* Contract: see probe.h. The acquire load pairs with the release store in
 * ct_attach_once, so a caller that sees CT_TRACED sees every ct_probe field. */
int corotracer__ensure_attached(void) {
  int s = atomic_load_explicit(&corotracer__probe.state, memory_order_acquire);
  if (s != CT_UNINIT)
    return s;
  pthread_once(&ct_once, ct_attach_once);
  return atomic_load_explicit(&corotracer__probe.state, memory_order_acquire);
}

/* Contract: see probe.h. Only the thread that takes the state from
 * CT_TRACED prints; a racing thread still counts its own event. */
void corotracer__corrupt(const char *what) {
  struct ct_probe *p = &corotracer__probe;
  atomic_fetch_add_explicit(&p->corrupt, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&p->dropped, 1, memory_order_relaxed);
  int traced = CT_TRACED;
  if (!atomic_compare_exchange_strong_explicit(&p->state, &traced, -EBADMSG, memory_order_relaxed,
                                               memory_order_relaxed))
    return;
  int saved = errno;
  ct_complain("corotracer: the shared memory holds %s (written over by the program?); "
              "tracing stopped",
              what);
  errno = saved;
}
