/* resp_server.c - the demo's Redis-protocol server on the M:N scheduler: an
 * acceptor coroutine, one coroutine per connection, a cap on connections.
 * With --bug the reactor strands connection coroutines on hangups (see
 * reactor.c); once they hold every connection slot, throughput drops to zero. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "resp.h"
#include "scheduler.h"

static struct {
  int lfd;
  /* Connection slots: the acceptor waits for a free one (redis' maxclients,
   * but waiting instead of refusing). */
  pthread_mutex_t slot_mu;
  int slots_free;
  sch_co *slot_waiter;
  _Atomic unsigned long conns, commands, bytes_in, bytes_out;
} srv = {.lfd = -1, .slot_mu = PTHREAD_MUTEX_INITIALIZER};

/* The read every connection parks in: the trace (and the report) names this
 * function and line. noinline, and work after the call, so it stays a frame
 * of its own and is not turned into a tail call. */
static __attribute__((noinline)) ssize_t conn_read(int fd, char *buf, size_t n) {
  ssize_t r = sch_read(fd, buf, n);
  if (r > 0)
    atomic_fetch_add_explicit(&srv.bytes_in, (unsigned long)r, memory_order_relaxed);
  return r;
}

static __attribute__((noinline)) ssize_t conn_write(int fd, const char *buf, size_t n) {
  ssize_t r = sch_write(fd, buf, n);
  if (r > 0)
    atomic_fetch_add_explicit(&srv.bytes_out, (unsigned long)r, memory_order_relaxed);
  return r;
}

/* Take a connection slot, parking while none is free. */
static __attribute__((noinline)) void slot_acquire(void) {
  const void *site = COROTRACER_CALLER;
  pthread_mutex_lock(&srv.slot_mu);
  while (srv.slots_free == 0) {
    srv.slot_waiter = sch_self();
    sch_park_prepare(site, COROTRACER_WAIT_PTR, (uint64_t)(uintptr_t)&srv.slots_free);
    pthread_mutex_unlock(&srv.slot_mu);
    sch_park();
    pthread_mutex_lock(&srv.slot_mu);
  }
  srv.slots_free--;
  pthread_mutex_unlock(&srv.slot_mu);
}

static void slot_release(void) {
  pthread_mutex_lock(&srv.slot_mu);
  srv.slots_free++;
  sch_co *w = srv.slot_waiter;
  srv.slot_waiter = NULL;
  pthread_mutex_unlock(&srv.slot_mu);
  if (w)
    sch_wake(w);
}

/* One client: read requests, run them, write the replies, until EOF. */
static void conn_main(void *arg) {
  int fd = (int)(intptr_t)arg;
  char in[RESP_MAX_REQUEST];
  char reply[2 * RESP_REPLY_ROOM];
  struct resp_out out = {reply, 0, sizeof reply};
  size_t have = 0;
  int quit = 0;
  while (!quit) {
    ssize_t r = conn_read(fd, in + have, sizeof in - have);
    if (r <= 0)
      break; /* EOF, reset, or error */
    have += (size_t)r;
    unsigned long commands = 0;
    /* Run what is complete; flush whenever the reply buffer fills. */
    for (;;) {
      ssize_t used = resp_execute(in, have, &out, &quit, &commands);
      if (used > 0) {
        memmove(in, in + used, have - (size_t)used);
        have -= (size_t)used;
      }
      if (out.len > 0 && conn_write(fd, out.buf, out.len) < 0)
        quit = 1;
      out.len = 0;
      if (used < 0)
        quit = 1; /* protocol error, replied */
      if (used <= 0 || quit || have == 0)
        break;
    }
    atomic_fetch_add_explicit(&srv.commands, commands, memory_order_relaxed);
    if (have == sizeof in) { /* one request larger than the buffer */
      static const char err[] = "-ERR request too large\r\n";
      conn_write(fd, err, sizeof err - 1);
      break;
    }
  }
  close(fd);
  slot_release();
}

static void acceptor_main(void *unused) {
  (void)unused;
  for (;;) {
    slot_acquire();
    int fd = sch_accept(srv.lfd);
    if (fd < 0) {
      slot_release();
      if (fd == -EBADF || fd == -EINVAL)
        return;                       /* listener gone */
      sch_sleep_ns(10 * 1000 * 1000); /* EMFILE and friends: let connections drain */
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    atomic_fetch_add_explicit(&srv.conns, 1, memory_order_relaxed);
    if (!sch_spawn(conn_main, (void *)(intptr_t)fd, "conn", NULL)) {
      close(fd);
      slot_release();
    }
  }
}

/* The server's log of the bug at work: which fd it closed under which
 * coroutine (the tests hold the report against it). One write per line. */
static void log_bug_close(int fd, uint64_t coroutine_id) {
  dprintf(STDERR_FILENO,
          "resp_server: bug: reactor closed fd %d on hangup without waking coroutine %llu\n", fd,
          (unsigned long long)coroutine_id);
}

static int listen_on(int port, int *bound) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -errno;
  int one = 1, rc = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 1024) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
    rc = -errno;
    close(fd);
    return rc;
  }
  *bound = ntohs(a.sin_port);
  return fd;
}

/* Write the port to path atomically (temp file + rename), so a reader never
 * sees it half written. */
static int write_port_file(const char *path, int port) {
  char tmp[4096];
  int rc = 0;
  if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
    return -ENAMETOOLONG;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -errno;
  char buf[16];
  int n = snprintf(buf, sizeof buf, "%d\n", port);
  for (int off = 0; off < n;) {
    ssize_t w = write(fd, buf + off, (size_t)(n - off));
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0) {
      rc = -errno;
      break;
    }
    off += (int)w;
  }
  if (close(fd) != 0 && rc == 0)
    rc = -errno;
  if (rc == 0 && rename(tmp, path) != 0)
    rc = -errno;
  if (rc != 0)
    unlink(tmp);
  return rc;
}

static void usage(FILE *f) {
  fprintf(f, "usage: resp_server [--port N] [--port-file FILE] [--workers N] [--max-conns N]\n"
             "                   [--stack-kb N] [--bug] [--bug-storm N]\n"
             "  --port N       listen on 127.0.0.1:N (default 6399; 0 picks a free port)\n"
             "  --port-file F  write the port to F once listening\n"
             "  --workers N    scheduler worker threads (default 2)\n"
             "  --max-conns N  connections served at once; more wait (default 64)\n"
             "  --bug          inject the lost wakeup: on a storm of hangups the reactor\n"
             "                 closes the fds without waking their coroutines\n"
             "  --bug-storm N  hangups within 0.5 ms that make a storm (default 2)\n"
             "SIGTERM or SIGINT: stop accepting, let the coroutines finish (0.5 s at\n"
             "most), print a summary and exit 0.\n");
}

static int num_arg(const char *opt, const char *v, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long x = v ? strtol(v, &end, 10) : 0;
  if (!v || *end || errno || x < lo || x > hi) {
    fprintf(stderr, "resp_server: %s: expected a number in %ld..%ld\n", opt, lo, hi);
    return -1;
  }
  *out = x;
  return 0;
}

int main(int argc, char **argv) {
  long port = 6399, workers = 2, max_conns = 64, stack_kb = 128, storm = 2;
  int bug = 0, rc = 1, started = 0;
  const char *port_file = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0;
    if (strcmp(a, "--port") == 0)
      bad = num_arg(a, v, 0, 65535, &port), i++;
    else if (strcmp(a, "--port-file") == 0 && v)
      port_file = v, i++;
    else if (strcmp(a, "--workers") == 0)
      bad = num_arg(a, v, 1, 256, &workers), i++;
    else if (strcmp(a, "--max-conns") == 0)
      bad = num_arg(a, v, 1, 100000, &max_conns), i++;
    else if (strcmp(a, "--stack-kb") == 0)
      bad = num_arg(a, v, 16, 65536, &stack_kb), i++;
    else if (strcmp(a, "--bug-storm") == 0)
      bad = num_arg(a, v, 1, 128, &storm), i++;
    else if (strcmp(a, "--bug") == 0)
      bug = 1;
    else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "resp_server: unknown option %s\n", a);
      usage(stderr);
      return 2;
    }
    if (bad)
      return 2;
  }

  /* Signals: SIGTERM/SIGINT are taken by sigwait below, in this thread only
   * (the mask is inherited by every thread started afterwards). */
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);
  signal(SIGPIPE, SIG_IGN);

  int bound = 0;
  srv.lfd = listen_on((int)port, &bound);
  if (srv.lfd < 0) {
    fprintf(stderr, "resp_server: listen on 127.0.0.1:%ld: %s\n", port, strerror(-srv.lfd));
    goto out;
  }
  srv.slots_free = (int)max_conns;
  struct sch_opts o = {.workers = (int)workers,
                       .stack_size = (size_t)stack_kb * 1024,
                       .bug_close_on_hup = bug,
                       .bug_storm = (int)storm,
                       .bug_log = log_bug_close};
  int e = sch_start(&o);
  if (e != 0) {
    fprintf(stderr, "resp_server: scheduler: %s\n", strerror(-e));
    goto out;
  }
  started = 1;
  if (!sch_spawn(acceptor_main, NULL, "acceptor", &e)) {
    fprintf(stderr, "resp_server: spawn: %s\n", strerror(-e));
    goto out;
  }
  if (port_file && (e = write_port_file(port_file, bound)) != 0) {
    fprintf(stderr, "resp_server: %s: %s\n", port_file, strerror(-e));
    goto out;
  }
  printf("resp_server: listening on 127.0.0.1:%d (workers %ld, max-conns %ld, bug %s, traced %s)\n",
         bound, workers, max_conns, bug ? "ON" : "off", corotracer_enabled() ? "yes" : "no");
  fflush(stdout);

  int sig = 0;
  while (sigwait(&stop, &sig) != 0) {
  }
  /* Graceful stop: shutting the listener down hangs it up, the reactor wakes
   * the acceptor, accept fails and the acceptor returns. Idle connections are
   * gone once the clients left; whatever is still parked after a moment stays
   * parked, and the trace shows the program ran on past it. */
  shutdown(srv.lfd, SHUT_RDWR);
  long live = sch_wait_idle(500);
  struct sch_stats st;
  sch_get_stats(&st);
  fprintf(stderr,
          "resp_server: %s: %lu connections, %lu commands, %llu coroutines spawned, %llu finished, "
          "%ld still parked, %llu fds closed without waking their coroutine\n",
          strsignal(sig), atomic_load(&srv.conns), atomic_load(&srv.commands),
          (unsigned long long)st.spawned, (unsigned long long)st.finished, live,
          (unsigned long long)st.bug_closed);
  rc = 0;
out:
  if (started)
    sch_stop();
  if (srv.lfd >= 0)
    close(srv.lfd);
  return rc;
}
