/* live.c - the live dashboard's server thread (live.h): a small HTTP/1.1
 * server (one request per connection, Server-Sent Events for the counters),
 * guarded by a random token and a Host check, that tails the trace file.
 * Silent and slow clients cannot hold it (docs/SECURITY.md "The live view"):
 * a request must be whole within HEADER_NS of the connect, at most
 * PENDING_MAX connections (PENDING_PER_PEER per address) may be sending
 * theirs, a new one pushes out the oldest, and a reply that makes no
 * progress for STALL_NS is dropped. */
#include "html/live.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/model.h"
#include "common/buf.h"
#include "html/live_int.h"
#include "html/model.h"
#include "html/page.h"

#define PENDING_MAX 8           /* connections still sending their request, in all ... */
#define PENDING_PER_PEER 4      /* ... and from one address */
#define HEADER_NS 5000000000ull /* a request must be whole within 5 s of the connect */
#define STALL_NS 30000000000ull /* a reply that makes no progress for 30 s is dropped */
#define REQ_MAX 8192
#define SSE_LIMIT (1u << 20)        /* pending bytes per event stream: beyond, ticks are dropped */
#define TICK_NS 500000000ull        /* counters pushed every 500 ms */
#define SNAP_MIN_NS 2000000000ull   /* the full data at most every 2 s ... */
#define SNAP_COST_FACTOR 4          /* ... and at most 1/4 of the time */
#define FINAL_WAIT_NS 3000000000ull /* pages get this long to fetch the final data */

struct snap {
  int refs;
  uint64_t version;
  int partial; /* built from a trace still being read: findings "analysing" */
  int final;   /* built from the whole of a trace that has its end line */
  struct ct_buf z;
};

struct client {
  int fd, sse, done, counted;
  int waits;               /* for its /detail answer from the worker (live_detail.c) */
  uint64_t id;             /* the detail worker's name for it */
  uint32_t peer;           /* the IPv4 address, network order */
  uint64_t born, progress; /* connected at; last bytes sent (mono_ns) */
  char in[REQ_MAX];
  size_t nin;
  struct ct_buf out;
  size_t off;
  struct snap *snap; /* a /data body after out */
  size_t soff;
  uint64_t drops;
};

int ct_live_parse_addr(const char *spec, char *ip, size_t ipn, int *port) {
  const char *colon = strrchr(spec, ':'), *ps = colon ? colon + 1 : spec;
  char host[64] = "127.0.0.1";
  if (colon) {
    size_t n = (size_t)(colon - spec);
    if (n == 0 || n >= sizeof host)
      return -EINVAL;
    memcpy(host, spec, n);
    host[n] = 0;
    if (!strcmp(host, "localhost"))
      strcpy(host, "127.0.0.1");
  }
  struct in_addr a;
  if (inet_pton(AF_INET, host, &a) != 1)
    return -EINVAL;
  char *end;
  errno = 0;
  long p = strtol(ps, &end, 10);
  if (!*ps || *end || errno || p < 0 || p > 65535)
    return -EINVAL;
  if ((size_t)snprintf(ip, ipn, "%s", host) >= ipn)
    return -EINVAL;
  *port = (int)p;
  return 0;
}

/* ---- clients ---------------------------------------------------------------- */
static void snap_put(struct snap *s) {
  if (s && --s->refs == 0) {
    ct_buf_free(&s->z);
    free(s);
  }
}

static void client_free(struct client *c) {
  close(c->fd);
  ct_buf_free(&c->out);
  snap_put(c->snap);
  free(c);
}

/* A whole reply; location: a redirect's target (our own URL), or empty. */
static void respond_to(struct client *c, const char *status, const char *type, const char *location,
                       const void *body, size_t n) {
  ct_buf_printf(
      &c->out,
      "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
      "X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\nX-Frame-Options: DENY\r\n"
      "%s%s%sConnection: close\r\n\r\n",
      status, type, n, *location ? "Location: " : "", location, *location ? "\r\n" : "");
  ct_buf_put(&c->out, body, n);
  c->done = 1;
}

static void respond(struct client *c, const char *status, const char *type, const void *body,
                    size_t n) {
  respond_to(c, status, type, "", body, n);
}

static void refuse(struct client *c, const char *status, const char *why) {
  respond(c, status, "text/plain; charset=utf-8", why, strlen(why));
}

/* The query's token against ours, in constant time: exactly one token
 * parameter, its value exactly ours. Any other count of them (none, or a
 * repeated one such as `token=bad&token=GOOD`, which two parsers could read
 * as two different tokens) is refused. */
static int token_ok(const struct ct_live *l, const char *q, size_t qn) {
  const char *val = NULL;
  size_t vn = 0;
  int count = 0;
  for (const char *p = q; p && p < q + qn;) {
    const char *amp = memchr(p, '&', (size_t)(q + qn - p)), *e = amp ? amp : q + qn;
    const char *eq = memchr(p, '=', (size_t)(e - p));
    if ((size_t)((eq ? eq : e) - p) == 5 && !memcmp(p, "token", 5)) {
      count++;
      val = eq ? eq + 1 : e;
      vn = (size_t)(e - val);
    }
    p = amp ? amp + 1 : NULL;
  }
  if (count != 1 || vn != 32)
    return 0;
  unsigned diff = 0;
  for (int i = 0; i < 32; i++)
    diff |= (unsigned char)(val[i] ^ l->token[i]);
  return diff == 0;
}

/* What the bytes a client sent so far (in, n) are: -1 the start of no HTTP
 * request (answered 400 at once, not left to the request timeout), 0 a
 * request line and headers still coming, 1 a whole request head. The
 * request line is METHOD (capitals) SP target (visible ASCII) SP
 * HTTP/d.d CRLF; header lines are text (no control byte but a tab), each
 * ended by CRLF, the last one empty. */
static int request_shape(const char *in, size_t n) {
  static const char ver[] = "HTTP/0.0\r\n"; /* '0': any digit */
  size_t i = 0, k = 0;
  while (i < n && i < 16 && in[i] >= 'A' && in[i] <= 'Z')
    i++;
  if (i == n)
    return 0;
  if (i == 0 || in[i] != ' ')
    return -1;
  for (i++; i < n && in[i] > ' ' && in[i] < 0x7f; i++)
    k++;
  if (i == n)
    return 0;
  if (k == 0 || in[i] != ' ')
    return -1;
  for (i++, k = 0; i < n && k < sizeof ver - 1; i++, k++)
    if (ver[k] == '0' ? in[i] < '0' || in[i] > '9' : in[i] != ver[k])
      return -1;
  for (; i < n; i++) {
    unsigned char c = (unsigned char)in[i];
    if (c == '\n' && in[i - 1] != '\r')
      return -1;
    if (c == '\n' && !memcmp(in + i - 3, "\r\n\r\n", 4))
      return 1;
    if ((c == '\r' && i + 1 < n && in[i + 1] != '\n') ||
        (c < ' ' && c != '\t' && c != '\r' && c != '\n') || c == 0x7f)
      return -1;
  }
  return 0;
}

static void tick_json(struct ct_live *l, struct ct_buf *b, const struct client *c, int ended);
static void snapshot(struct ct_live *l);

/* A complete request in c->in: answer it. */
static void handle(struct ct_live *l, struct client *c) {
  c->in[c->nin] = 0;
  /* (request_shape: the request line holds two spaces) */
  char *sp1 = strchr(c->in, ' '), *sp2 = strchr(sp1 + 1, ' ');
  if ((size_t)(sp1 - c->in) != 3 || memcmp(c->in, "GET", 3))
    return refuse(c, "405 Method Not Allowed", "GET only\n");
  /* The Host header must name the address we bound: a page of another site
   * that rebinds its DNS name to 127.0.0.1 sends its own name. */
  const char *host = NULL;
  size_t hn = 0;
  for (char *h = strstr(c->in, "\r\n"); h; h = strstr(h + 2, "\r\n")) {
    if (strncasecmp(h + 2, "Host:", 5))
      continue;
    host = h + 7;
    while (*host == ' ' || *host == '\t')
      host++;
    hn = strcspn(host, "\r\n");
    while (hn && (host[hn - 1] == ' ' || host[hn - 1] == '\t'))
      hn--;
    break;
  }
  int host_ok =
      host && ((hn == strlen(l->host1) && !strncasecmp(host, l->host1, hn)) ||
               (l->host2[0] && hn == strlen(l->host2) && !strncasecmp(host, l->host2, hn)));
  if (!host_ok)
    return refuse(c, "403 Forbidden",
                  "forbidden: Host must name the address the dashboard listens on\n");
  char *path = sp1 + 1, *q = memchr(path, '?', (size_t)(sp2 - path));
  size_t pn = (size_t)((q ? q : sp2) - path);
  if (!q || !token_ok(l, q + 1, (size_t)(sp2 - q - 1)))
    return refuse(c, "403 Forbidden", "forbidden: the URL needs the token printed at start\n");
  if (l->route) {
    struct ct_live_reply r = {"404 Not Found", "text/plain; charset=utf-8", "", {0}};
    l->route(l->route_ctx, l->token, path, pn, q + 1, (size_t)(sp2 - q - 1), &r);
    if (r.body.err)
      refuse(c, "503 Service Unavailable", "out of memory\n");
    else
      respond_to(c, r.status, r.type, r.location, r.body.p, r.body.n);
    ct_buf_free(&r.body);
    return;
  }
  if (pn == 1)
    return respond(c, "200 OK", "text/html; charset=utf-8", l->page.p, l->page.n);
  if (pn == 5 && !memcmp(path, "/data", 5)) {
    if (!l->cur) { /* nobody watched so far: built on demand, from a first part */
      ct_live_tail(l, FIRST_BYTES, FIRST_NS);
      snapshot(l);
    }
    if (!l->cur)
      return refuse(c, "503 Service Unavailable", "no data yet\n");
    ct_buf_printf(
        &c->out,
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %zu\r\n"
        "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: "
        "no-referrer\r\n"
        "X-Corotracer-Version: %" PRIu64 "\r\nConnection: close\r\n\r\n",
        l->cur->z.n, l->cur->version);
    c->snap = l->cur;
    c->snap->refs++;
    c->done = 1;
    return;
  }
  if (pn == 7 && !memcmp(path, "/detail", 7)) {
    struct ct_buf body = {0};
    const char *status, *type;
    if (!ct_live_detail(l, c->id, q + 1, (size_t)(sp2 - q - 1), &body, &status, &type)) {
      c->waits = 1; /* answered when the worker is done (detail_replies) */
      return;
    }
    if (body.err)
      refuse(c, "503 Service Unavailable", "out of memory\n");
    else
      respond(c, status, type, body.p, body.n);
    ct_buf_free(&body);
    return;
  }
  if (pn == 7 && !memcmp(path, "/events", 7)) {
    ct_buf_puts(&c->out,
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
                "X-Content-Type-Options: nosniff\r\nConnection: keep-alive\r\n\r\nretry: 1000\n\n");
    c->sse = 1;
    ct_live_tail(l, FIRST_BYTES, FIRST_NS); /* idle while nobody watched: catch up first */
    tick_json(l, &c->out, c, 0);
    return;
  }
  refuse(c, "404 Not Found", "not found\n");
}

/* Reads what the client sent; 1 when it is gone. */
static int client_read(struct ct_live *l, struct client *c) {
  for (;;) {
    if (c->nin >= REQ_MAX - 1) {
      if (!c->done)
        refuse(c, "431 Request Header Fields Too Large", "request too large\n");
      return 0;
    }
    ssize_t k = recv(c->fd, c->in + c->nin, REQ_MAX - 1 - c->nin, MSG_DONTWAIT);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0)
      return errno != EAGAIN && errno != EWOULDBLOCK;
    if (k == 0)
      return 1;
    if (c->done || c->sse || c->waits)
      continue; /* one request per connection: the rest is ignored */
    c->nin += (size_t)k;
    c->in[c->nin] = 0;
    int shape = request_shape(c->in, c->nin);
    if (shape < 0)
      refuse(c, "400 Bad Request", "bad request\n");
    else if (shape > 0)
      handle(l, c);
  }
}

/* Sends what is pending; 1 when the client is finished or gone. */
static int client_write(struct ct_live *l, struct client *c) {
  while (c->off < c->out.n || (c->snap && c->soff < c->snap->z.n)) {
    const char *p;
    size_t n;
    if (c->off < c->out.n) {
      p = c->out.p + c->off;
      n = c->out.n - c->off;
    } else {
      p = c->snap->z.p + c->soff;
      n = c->snap->z.n - c->soff;
    }
    ssize_t k = send(c->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0)
      return errno != EAGAIN && errno != EWOULDBLOCK;
    c->progress = ct_mono_ns();
    if (c->off < c->out.n)
      c->off += (size_t)k;
    else
      c->soff += (size_t)k;
  }
  if (c->snap && c->snap->version == l->version && !c->counted) {
    c->counted = 1;
    l->fetches_of_last++;
  }
  c->out.n = c->off = 0;
  return c->done && !c->sse;
}

/* The present for the live counts: now while the trace is being written. */
static uint64_t live_now(const struct ct_live *l) {
  if (l->m.has_end)
    return 0;
  if (l->running || ct_mono_ns() - l->last_growth < 5000000000ull)
    return ct_mono_ns();
  return 0;
}

/* The findings of a trace still being read (l->behind: a file larger than
 * what was read so far): none, and how far the reading is, so that the page
 * says "analysing" instead of showing a part's findings as the run's.
 * 0 or -ENOMEM. */
static int analysing_json(const struct ct_live *l, char **json, size_t *n) {
  struct stat sb;
  uint64_t size = fstat(l->tfd, &sb) ? 0 : (uint64_t)sb.st_size;
  int k =
      asprintf(json, "{\"analysing\":{\"bytes\":%" PRIu64 ",\"size\":%" PRIu64 "},\"findings\":[]}",
               l->bytes, size);
  if (k < 0) {
    *json = NULL;
    return -ENOMEM;
  }
  *n = (size_t)k;
  return 0;
}

/* The page's data from the aggregate: the findings of the lines so far (a
 * report built from the live state, which it leaves as it was; none while
 * the file is still being read) and the model, serialized. The trace is
 * never re-read: the cost follows the new lines (and the report's
 * O(coroutines) assembly). The caller reads the trace first. */
static void snapshot(struct ct_live *l) {
  uint64_t t0 = ct_mono_ns(), now = live_now(l);
  struct snap *s = NULL;
  struct ct_report r = {0};
  char *json = NULL;
  size_t jlen = 0;
  uint64_t raw;
  if (ct_report_build(l->st, l->path, l->bytes, l->judge.stuck_ns, now, &r))
    goto out;
  if (!r.t.events && !r.t.has_meta && !r.t.has_end)
    goto out; /* nothing to show yet */
  r.run = r.runs = l->runs;
  if (l->behind) {
    if (analysing_json(l, &json, &jlen))
      goto out;
  } else {
    if (ct_dash_findings_json(&r, &json, &jlen))
      goto out;
    /* From now on their spans are kept whatever the budget. */
    (void)ct_dash_keep_findings(&l->m, &r);
  }
  struct ct_model_page pg = {json, jlen, r.sym, l->path, now, 1};
  if (!(s = calloc(1, sizeof *s)) || ct_model_serialize(&l->m, &pg, &s->z, NULL, &raw))
    goto out;
  s->refs = 1;
  s->version = ++l->version;
  s->partial = l->behind;
  s->final = !l->behind && l->m.has_end;
  snap_put(l->cur);
  l->cur = s;
  s = NULL;
  l->snap_bytes = l->bytes;
out:
  if (s) {
    ct_buf_free(&s->z);
    free(s);
  }
  free(json);
  ct_report_free(&r);
  l->last_build = ct_mono_ns();
  l->build_ns = l->last_build - t0;
}

static void tick_json(struct ct_live *l, struct ct_buf *b, const struct client *c, int ended) {
  struct ct_model_counts k;
  uint64_t now = live_now(l), end = ct_model_end(&l->m, now);
  ct_model_counts(&l->m, end, l->judge.stuck_ns, &k);
  uint64_t start = l->m.start_ts ? l->m.start_ts : end;
  ct_buf_printf(b,
                "event: tick\ndata: {\"seq\":%" PRIu64 ",\"t\":%" PRIu64 ",\"alive\":%" PRIu64
                ",\"running\":%" PRIu64 ",\"runnable\":%" PRIu64 ",\"suspended\":%" PRIu64
                ",\"stuck\":%" PRIu64 ",\"events\":%" PRIu64 ",\"lost\":%" PRIu64
                ",\"wakes\":%" PRIu64 ",\"coroutines\":%zu,\"bytes\":%" PRIu64
                ",\"snapshot\":%" PRIu64 ",\"drops\":%" PRIu64 ",\"ended\":%s}\n\n",
                l->seq, end - start, k.alive, k.running, k.runnable, k.suspended, k.stuck,
                l->m.events, l->m.lost, l->m.wake_count, l->m.ncoros, l->bytes,
                l->cur ? l->cur->version : 0, c ? c->drops : 0,
                ended || (l->cur && l->cur->final) ? "true" : "false");
  if (l->windowed) {
    b->n -= 3; /* the object goes on: the window and its dumps */
    ct_live_window_json(l, b, now ? now : end);
    ct_buf_puts(b, "}\n\n");
  }
}

static void tick(struct ct_live *l, int ended) {
  l->seq++;
  for (int i = 0; i < MAX_CLIENTS; i++) {
    struct client *c = l->c[i];
    if (!c || !c->sse)
      continue;
    struct ct_buf t = {0};
    tick_json(l, &t, c, ended);
    if (c->out.n - c->off + t.n > SSE_LIMIT)
      c->drops++; /* a page that does not read: bounded */
    else
      ct_buf_put(&c->out, t.p, t.n);
    ct_buf_free(&t);
  }
}

/* ---- the thread ------------------------------------------------------------- */
/* Still sending its request (no reply begun). */
static int pending(const struct client *c) {
  return !c->done && !c->sse && !c->waits;
}

static int has_output(const struct client *c) {
  return c->off < c->out.n || (c->snap && c->soff < c->snap->z.n);
}

static void drop(struct ct_live *l, int i) {
  client_free(l->c[i]);
  l->c[i] = NULL;
}

/* Before a connection from peer is taken: beyond PENDING_PER_PEER pending
 * connections of that address, or PENDING_MAX in all, the oldest such one
 * is dropped, so that a silent crowd never keeps a fresh request out. */
static void make_room(struct ct_live *l, uint32_t peer) {
  int all = 0, mine = 0, oldest = -1, oldest_mine = -1;
  for (int i = 0; i < MAX_CLIENTS; i++) {
    const struct client *c = l->c[i];
    if (!c || !pending(c))
      continue;
    all++;
    if (oldest < 0 || c->born < l->c[oldest]->born)
      oldest = i;
    if (c->peer == peer) {
      mine++;
      if (oldest_mine < 0 || c->born < l->c[oldest_mine]->born)
        oldest_mine = i;
    }
  }
  if (mine >= PENDING_PER_PEER)
    drop(l, oldest_mine);
  else if (all >= PENDING_MAX)
    drop(l, oldest);
}

/* Drops the connections whose request is not whole HEADER_NS after the
 * connect (silent, or slow like slowloris), the replies stalled STALL_NS,
 * and a detail answer not made within STALL_NS. */
static void expire(struct ct_live *l, uint64_t now) {
  for (int i = 0; i < MAX_CLIENTS; i++) {
    const struct client *c = l->c[i];
    if (c &&
        ((pending(c) && now - c->born > HEADER_NS) ||
         (has_output(c) && now - c->progress > STALL_NS) || (c->waits && now - c->born > STALL_NS)))
      drop(l, i);
  }
}

static void accept_all(struct ct_live *l) {
  for (;;) {
    struct sockaddr_in sa = {0};
    socklen_t sl = sizeof sa;
    int fd = accept4(l->lfd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0 && errno == EINTR)
      continue;
    if (fd < 0)
      return;
    uint32_t peer = sa.sin_family == AF_INET ? sa.sin_addr.s_addr : 0;
    make_room(l, peer);
    int slot = -1;
    for (int i = 0; i < MAX_CLIENTS && slot < 0; i++)
      if (!l->c[i])
        slot = i;
    struct client *c = slot >= 0 ? calloc(1, sizeof *c) : NULL;
    if (!c) { /* every slot serves a reply (token holders): busy */
      static const char busy[] =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)send(fd, busy, sizeof busy - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
      close(fd);
      continue;
    }
    c->fd = fd;
    c->peer = peer;
    c->id = ++l->nconn;
    c->born = c->progress = ct_mono_ns();
    l->c[slot] = c;
    /* Its request may be here already: answered before later connections
     * can push it out. */
    if (client_read(l, c) || client_write(l, c))
      drop(l, slot);
  }
}

/* The detail worker's answers to the connections still waiting for them
 * (one gone meanwhile: its answer is dropped). */
static void detail_replies(struct ct_live *l) {
  uint64_t id;
  struct ct_buf body;
  const char *status, *type;
  while (ct_live_detail_done(l, &id, &body, &status, &type)) {
    for (int i = 0; i < MAX_CLIENTS; i++) {
      struct client *c = l->c[i];
      if (c && c->waits && c->id == id) {
        c->waits = 0;
        if (body.err)
          refuse(c, "503 Service Unavailable", "out of memory\n");
        else
          respond(c, status, type, body.p, body.n);
      }
    }
    ct_buf_free(&body);
  }
}

/* Some page follows the view (an event stream is open). */
static int watched(const struct ct_live *l) {
  for (int i = 0; i < MAX_CLIENTS; i++)
    if (l->c[i] && l->c[i]->sse)
      return 1;
  return 0;
}

static void *thread_main(void *arg) {
  struct ct_live *l = arg;
  uint64_t last_tick = 0, final_at = 0;
  int final_pages = 0;
  struct pollfd pf[2 + MAX_CLIENTS];
  int idx[2 + MAX_CLIENTS];
  for (;;) {
    int n = 0;
    pf[n++] = (struct pollfd){l->lfd, POLLIN, 0};
    pf[n++] = (struct pollfd){l->wake[0], POLLIN, 0};
    for (int i = 0; i < MAX_CLIENTS; i++)
      if (l->c[i]) {
        short ev = POLLIN;
        if (l->c[i]->off < l->c[i]->out.n || (l->c[i]->snap && l->c[i]->soff < l->c[i]->snap->z.n))
          ev |= POLLOUT;
        idx[n] = i;
        pf[n++] = (struct pollfd){l->c[i]->fd, ev, 0};
      }
    /* A trace still being read is read on between requests, at once. */
    int pr = poll(pf, (nfds_t)n, l->behind && watched(l) ? 0 : 100);
    if (pr > 0 && (pf[0].revents & POLLIN))
      accept_all(l);
    if (pr > 0 && (pf[1].revents & POLLIN)) {
      char b[16];
      while (read(l->wake[0], b, sizeof b) > 0) {
      }
    }
    detail_replies(l);
    for (int j = 2; pr > 0 && j < n; j++) {
      struct client *c = l->c[idx[j]];
      int gone = 0;
      if (!c || c->fd != pf[j].fd)
        continue; /* pushed out by accept_all since the poll */
      if (pf[j].revents & (POLLIN | POLLHUP | POLLERR))
        gone = client_read(l, c);
      if (!gone)
        gone = client_write(l, c);
      if (gone) {
        client_free(c);
        l->c[idx[j]] = NULL;
      }
    }
    uint64_t now = ct_mono_ns();
    expire(l, now);
    int stopping = atomic_load_explicit(&l->stop, memory_order_acquire);
    /* Nobody watching: no reading, no rebuilding; the engine pays nothing. */
    int seen = watched(l);
    if (stopping && !final_at) {
      if (seen) {
        do /* the final data is the whole trace's */
          ct_live_tail(l, TAIL_MAX, UINT64_MAX);
        while (l->behind);
        snapshot(l);
        l->fetches_of_last = 0;
        for (int i = 0; i < MAX_CLIENTS; i++)
          final_pages += l->c[i] && l->c[i]->sse;
        tick(l, 1);
      }
      final_at = now;
    } else if (seen && (l->behind || (l->cur && l->cur->partial) || now - last_tick >= TICK_NS)) {
      /* A trace still being read: a slice of it at every turn. Read to its
       * end (here, or by a request's catch-up) since the data was built: its
       * findings now. */
      ct_live_tail(l, TAIL_MAX, SLICE_NS);
      int whole = l->cur && l->cur->partial && !l->behind;
      uint64_t gap = l->build_ns * SNAP_COST_FACTOR;
      /* While the program runs, time alone changes findings (a coroutine
       * left parked becomes stuck): rebuild on schedule even without new
       * lines; not while a trace is still being read (its whole data next). */
      if (now - last_tick >= TICK_NS || whole) {
        last_tick = now;
        if (!l->cur || whole ||
            (!l->behind && (l->bytes != l->snap_bytes || live_now(l)) &&
             now - l->last_build >= (gap > SNAP_MIN_NS ? gap : SNAP_MIN_NS)))
          snapshot(l);
        tick(l, 0);
      }
    }
    for (int i = 0; i < MAX_CLIENTS; i++) /* push the ticks out now */
      if (l->c[i] && client_write(l, l->c[i])) {
        client_free(l->c[i]);
        l->c[i] = NULL;
      }
    if (final_at) {
      /* Done once as many complete fetches of the final data as there were
       * pages watching (each fetches on the final tick), or the grace ran out. */
      int waiting = l->fetches_of_last < final_pages, busy = 0;
      for (int i = 0; i < MAX_CLIENTS; i++)
        if (l->c[i] && l->c[i]->snap && l->c[i]->soff < l->c[i]->snap->z.n)
          busy = 1;
      if ((!waiting && !busy) || now - final_at > FINAL_WAIT_NS)
        break;
    }
  }
  return NULL;
}

static void live_free(struct ct_live *l) {
  ct_live_detail_stop(l); /* before the trace's fd closes */
  for (int i = 0; i < MAX_CLIENTS; i++)
    if (l->c[i])
      client_free(l->c[i]);
  snap_put(l->cur);
  if (l->lfd >= 0)
    close(l->lfd);
  if (l->tfd >= 0)
    close(l->tfd);
  for (int i = 0; i < 2; i++)
    if (l->wake[i] >= 0)
      close(l->wake[i]);
  ct_model_free(&l->m);
  ct_state_free(l->st);
  ct_buf_free(&l->page);
  free(l->lb);
  free(l->cb);
  if (l->it)
    ct_ctr_fini(l->it);
  free(l->it);
  free(l->blk);
  free(l->path);
  free(l);
}

/* ct_live_start, or ct_live_start_window when src is not NULL, or
 * ct_live_start_routes when route is. */
static int start(const char *spec, const char *trace_path, int running,
                 const struct ct_live_source *src, const struct ct_thresholds *th,
                 ct_live_route_fn route, void *route_ctx, struct ct_live **out) {
  struct ct_live *l = calloc(1, sizeof *l);
  if (!l)
    return -ENOMEM;
  l->lfd = l->tfd = l->wake[0] = l->wake[1] = -1;
  l->running = running;
  l->judge = th ? *th : CT_THRESHOLDS_DEFAULT;
  l->runs = 1;
  l->blk_t0 = UINT64_MAX;
  l->route = route;
  l->route_ctx = route_ctx;
  int rc = ct_live_parse_addr(spec, l->ip, sizeof l->ip, &l->port);
  if (rc)
    goto fail;
  unsigned char rnd[16];
  if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
    rc = -EIO;
    goto fail;
  }
  for (int i = 0; i < 16; i++)
    snprintf(l->token + 2 * i, 3, "%02x", rnd[i]);
  if (!(l->path = strdup(trace_path)) ||
      ct_model_init(&l->m, CT_DASH_SPAN_BUDGET, CT_DASH_SPAN_BUDGET / 5 * 7) ||
      ct_state_new_judging(&l->judge, &l->st) || ct_page_render(NULL, 1, &l->page)) {
    rc = -ENOMEM;
    goto fail;
  }
  /* Bounded like the offline page's, in one pass: the coroutines findings
   * name are kept from the snapshot that first names them. */
  ct_model_prune(&l->m);
  if (src) {
    l->windowed = l->begin = l->binary = 1;
    l->src = *src;
  }
  if ((!src && !route && (l->tfd = open(trace_path, O_RDONLY | O_CLOEXEC)) < 0) ||
      pipe2(l->wake, O_CLOEXEC | O_NONBLOCK) ||
      (l->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0) {
    rc = -errno;
    goto fail;
  }
  int one = 1;
  (void)setsockopt(l->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)l->port)};
  inet_pton(AF_INET, l->ip, &sa.sin_addr);
  socklen_t sl = sizeof sa;
  if (bind(l->lfd, (struct sockaddr *)&sa, sizeof sa) || listen(l->lfd, 64) ||
      getsockname(l->lfd, (struct sockaddr *)&sa, &sl)) {
    rc = -errno;
    goto fail;
  }
  l->port = ntohs(sa.sin_port);
  snprintf(l->host1, sizeof l->host1, "%s:%d", l->ip, l->port);
  if (!strncmp(l->ip, "127.", 4))
    snprintf(l->host2, sizeof l->host2, "localhost:%d", l->port);
  snprintf(l->url, sizeof l->url, "http://%s:%d/?token=%s", l->ip, l->port, l->token);
  l->last_growth = ct_mono_ns();
  if ((rc = -pthread_create(&l->th, NULL, thread_main, l)))
    goto fail;
  *out = l;
  return 0;
fail:
  live_free(l);
  return rc;
}

int ct_live_start(const char *spec, const char *trace_path, int running,
                  const struct ct_thresholds *th, struct ct_live **out) {
  return start(spec, trace_path, running, NULL, th, NULL, NULL, out);
}

int ct_live_start_window(const char *spec, const char *name, const struct ct_live_source *src,
                         const struct ct_thresholds *th, struct ct_live **out) {
  return start(spec, name, 1, src, th, NULL, NULL, out);
}

int ct_live_start_routes(const char *spec, ct_live_route_fn route, void *ctx,
                         struct ct_live **out) {
  return start(spec, "", 0, NULL, NULL, route, ctx, out);
}

const char *ct_live_url(const struct ct_live *l) {
  return l->url;
}

void ct_live_stop(struct ct_live *l) {
  if (!l)
    return;
  atomic_store_explicit(&l->stop, 1, memory_order_release);
  if (write(l->wake[1], "x", 1) < 0) { /* full pipe: the thread wakes anyway */
  }
  pthread_join(l->th, NULL);
  live_free(l);
}
