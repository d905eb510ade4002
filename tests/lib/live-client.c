/* live-client.c - hostile clients of the live view, for tests/test-live-limits.sh:
 * silent connections and slowloris ones, watched until the server drops them;
 * and for tests/test-live-request.sh, one raw request and its reply. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXC 256

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Usage: live-client PORT SILENT SLOW SECONDS. Opens SILENT connections to
 * 127.0.0.1:PORT that send nothing and SLOW ones that send a request line,
 * then one header line every 500 ms, never the blank line that ends it;
 * prints "ready" once all are connected, then watches them for SECONDS.
 * Prints how many the server closed and when the last was; exits 0 when it
 * closed them all, 1 otherwise, 2 on a usage or connect error. */
/* live-client PORT --raw: sends what stdin holds as a request (the
 * connection left open for writing, as a client waiting for its answer),
 * prints the reply until the server closes, at most 10 s; exits 0 when a
 * reply came, 1 when none did, 2 on an error. */
static int raw(struct sockaddr_in *sa) {
  char req[8192], b[4096];
  size_t n = fread(req, 1, sizeof req, stdin), got = 0;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)sa, sizeof *sa) ||
      send(fd, req, n, MSG_NOSIGNAL) != (ssize_t)n) {
    perror("live-client: raw");
    return 2;
  }
  for (double t0 = now_s(); now_s() - t0 < 10;) {
    struct pollfd pf = {fd, POLLIN, 0};
    if (poll(&pf, 1, 100) <= 0)
      continue;
    ssize_t k = recv(fd, b, sizeof b, 0);
    if (k <= 0)
      break;
    fwrite(b, 1, (size_t)k, stdout);
    got += (size_t)k;
  }
  close(fd);
  return got ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[2], "--raw")) {
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    return raw(&sa);
  }
  if (argc != 5) {
    fprintf(stderr, "usage: live-client PORT SILENT SLOW SECONDS\n");
    return 2;
  }
  int port = atoi(argv[1]), silent = atoi(argv[2]), slow = atoi(argv[3]), n = silent + slow;
  double secs = atof(argv[4]), t0 = now_s(), last = 0, next_dribble = t0;
  int fds[MAXC], open_n = 0, rc = 1;
  if (n <= 0 || n > MAXC)
    return 2;
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  for (int i = 0; i < n; i++) {
    fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&sa, sizeof sa)) {
      perror("live-client: connect");
      return 2;
    }
    open_n++;
    if (i >= silent) {
      static const char line[] = "GET /?token=0 HTTP/1.1\r\n";
      (void)send(fds[i], line, sizeof line - 1, MSG_NOSIGNAL);
    }
  }
  printf("ready\n");
  fflush(stdout);
  while (open_n > 0 && now_s() - t0 < secs) {
    struct pollfd pf[MAXC];
    for (int i = 0; i < n; i++)
      pf[i] = (struct pollfd){fds[i], POLLIN, 0};
    if (poll(pf, (nfds_t)n, 100) < 0 && errno != EINTR)
      break;
    double t = now_s();
    int dribble = t >= next_dribble;
    if (dribble)
      next_dribble = t + 0.5;
    for (int i = 0; i < n; i++) {
      if (fds[i] < 0)
        continue;
      int gone = 0;
      if (pf[i].revents) {
        char b[4096];
        ssize_t k = recv(fds[i], b, sizeof b, MSG_DONTWAIT);
        gone = k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR);
      }
      if (!gone && dribble && i >= silent) {
        static const char hdr[] = "X-Slow: 1\r\n";
        gone =
            send(fds[i], hdr, sizeof hdr - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN;
      }
      if (gone) {
        close(fds[i]);
        fds[i] = -1;
        open_n--;
        last = t - t0;
      }
    }
  }
  printf("closed %d of %d, the last after %.1f s\n", n - open_n, n, last);
  rc = open_n == 0 ? 0 : 1;
  for (int i = 0; i < n; i++)
    if (fds[i] >= 0)
      close(fds[i]);
  return rc;
}
