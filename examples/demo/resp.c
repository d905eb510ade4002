/* resp.c - RESP parser, command table and key-value store of the demo server:
 * PING, ECHO, SET, GET, INCR, DEL, EXISTS, DBSIZE, FLUSHALL, plus what
 * redis-benchmark and redis-cli ask on connect (CONFIG GET, COMMAND, INFO,
 * SELECT, CLIENT, QUIT). Inline commands too (redis-benchmark's PING_INLINE). */
#include "resp.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_ARGS 32
#define NBUCKETS 65536

struct arg {
  const char *p;
  size_t len;
};

/* ---- the store: one lock, chained buckets; critical sections never park -- */

struct entry {
  struct entry *next;
  size_t klen, vlen;
  char *val;
  char key[];
};

static struct entry *buckets[NBUCKETS];
static size_t nkeys;
static pthread_mutex_t store_mu = PTHREAD_MUTEX_INITIALIZER;

static uint32_t hash(const char *p, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++)
    h = (h ^ (uint8_t)p[i]) * 16777619u;
  return h;
}

/* The link pointing at key's entry (or at the NULL ending its chain). */
static struct entry **find(const struct arg *k) {
  struct entry **pp = &buckets[hash(k->p, k->len) % NBUCKETS];
  while (*pp && !((*pp)->klen == k->len && memcmp((*pp)->key, k->p, k->len) == 0))
    pp = &(*pp)->next;
  return pp;
}

/* Store val under key (store_mu held). Returns 0 or -ENOMEM. */
static int put(const struct arg *k, const char *val, size_t vlen) {
  char *v = malloc(vlen ? vlen : 1);
  if (!v)
    return -ENOMEM;
  memcpy(v, val, vlen);
  struct entry **pp = find(k);
  if (!*pp) {
    struct entry *e = malloc(sizeof *e + k->len);
    if (!e) {
      free(v);
      return -ENOMEM;
    }
    e->next = NULL;
    e->klen = k->len;
    e->val = NULL;
    memcpy(e->key, k->p, k->len);
    *pp = e;
    nkeys++;
  }
  free((*pp)->val);
  (*pp)->val = v;
  (*pp)->vlen = vlen;
  return 0;
}

static int del(const struct arg *k) {
  struct entry **pp = find(k), *e = *pp;
  if (!e)
    return 0;
  *pp = e->next;
  free(e->val);
  free(e);
  nkeys--;
  return 1;
}

/* ---- replies ---------------------------------------------------------------- */

static void out_raw(struct resp_out *o, const char *p, size_t n) {
  if (n > o->cap - o->len)
    n = o->cap - o->len; /* cannot happen: RESP_REPLY_ROOM */
  memcpy(o->buf + o->len, p, n);
  o->len += n;
}

static void out_fmt(struct resp_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_fmt(struct resp_out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
  va_end(ap);
  if (n > 0)
    o->len += (size_t)n < o->cap - o->len ? (size_t)n : o->cap - o->len - 1;
}

static void out_bulk(struct resp_out *o, const char *p, size_t n) {
  out_fmt(o, "$%zu\r\n", n);
  out_raw(o, p, n);
  out_raw(o, "\r\n", 2);
}

/* ---- commands ----------------------------------------------------------------- */

static int is(const struct arg *a, const char *name) {
  return a->len == strlen(name) && strncasecmp(a->p, name, a->len) == 0;
}

static void cmd_get(const struct arg *av, struct resp_out *o) {
  pthread_mutex_lock(&store_mu);
  struct entry *e = *find(&av[1]);
  if (e)
    out_bulk(o, e->val, e->vlen);
  else
    out_raw(o, "$-1\r\n", 5);
  pthread_mutex_unlock(&store_mu);
}

static void cmd_set(const struct arg *av, struct resp_out *o) {
  pthread_mutex_lock(&store_mu);
  int rc = put(&av[1], av[2].p, av[2].len);
  pthread_mutex_unlock(&store_mu);
  if (rc == 0)
    out_raw(o, "+OK\r\n", 5);
  else
    out_fmt(o, "-OOM out of memory\r\n");
}

static void cmd_incr(const struct arg *av, struct resp_out *o) {
  char num[32];
  long long v = 0;
  int rc = 0;
  pthread_mutex_lock(&store_mu);
  struct entry *e = *find(&av[1]);
  if (e) {
    char *end;
    if (e->vlen == 0 || e->vlen >= sizeof num) {
      rc = -EINVAL;
    } else {
      memcpy(num, e->val, e->vlen);
      num[e->vlen] = 0;
      errno = 0;
      v = strtoll(num, &end, 10);
      if (*end || errno)
        rc = -EINVAL;
    }
  }
  if (rc == 0 && v == INT64_MAX)
    rc = -EINVAL;
  if (rc == 0) {
    v++;
    int n = snprintf(num, sizeof num, "%lld", v);
    rc = put(&av[1], num, (size_t)n);
  }
  pthread_mutex_unlock(&store_mu);
  if (rc == 0)
    out_fmt(o, ":%lld\r\n", v);
  else if (rc == -EINVAL)
    out_fmt(o, "-ERR value is not an integer or out of range\r\n");
  else
    out_fmt(o, "-OOM out of memory\r\n");
}

/* DEL and EXISTS: count the keys, deleting them for DEL. */
static void cmd_keys(const struct arg *av, int ac, int remove, struct resp_out *o) {
  long n = 0;
  pthread_mutex_lock(&store_mu);
  for (int i = 1; i < ac; i++)
    n += remove ? del(&av[i]) : *find(&av[i]) != NULL;
  pthread_mutex_unlock(&store_mu);
  out_fmt(o, ":%ld\r\n", n);
}

static void cmd_flushall(struct resp_out *o) {
  pthread_mutex_lock(&store_mu);
  for (size_t b = 0; b < NBUCKETS; b++) {
    for (struct entry *e = buckets[b], *nx; e; e = nx) {
      nx = e->next;
      free(e->val);
      free(e);
    }
    buckets[b] = NULL;
  }
  nkeys = 0;
  pthread_mutex_unlock(&store_mu);
  out_raw(o, "+OK\r\n", 5);
}

/* CONFIG GET: redis-benchmark reads `save` and `appendonly` on start. */
static void cmd_config(const struct arg *av, int ac, struct resp_out *o) {
  if (ac >= 3 && is(&av[1], "get") && is(&av[2], "save"))
    out_fmt(o, "*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
  else if (ac >= 3 && is(&av[1], "get") && is(&av[2], "appendonly"))
    out_fmt(o, "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
  else if (ac >= 2 && is(&av[1], "get"))
    out_raw(o, "*0\r\n", 4);
  else
    out_raw(o, "+OK\r\n", 5);
}

static void run(const struct arg *av, int ac, struct resp_out *o, int *quit) {
  const struct arg *c = &av[0];
  if (is(c, "ping") && ac <= 2) {
    if (ac == 2)
      out_bulk(o, av[1].p, av[1].len);
    else
      out_raw(o, "+PONG\r\n", 7);
  } else if (is(c, "echo") && ac == 2) {
    out_bulk(o, av[1].p, av[1].len);
  } else if (is(c, "get") && ac == 2) {
    cmd_get(av, o);
  } else if (is(c, "set") && ac >= 3) {
    cmd_set(av, o); /* options (EX, NX, ...) are accepted and ignored */
  } else if (is(c, "incr") && ac == 2) {
    cmd_incr(av, o);
  } else if ((is(c, "del") || is(c, "unlink")) && ac >= 2) {
    cmd_keys(av, ac, 1, o);
  } else if (is(c, "exists") && ac >= 2) {
    cmd_keys(av, ac, 0, o);
  } else if (is(c, "dbsize") && ac == 1) {
    pthread_mutex_lock(&store_mu);
    size_t n = nkeys;
    pthread_mutex_unlock(&store_mu);
    out_fmt(o, ":%zu\r\n", n);
  } else if ((is(c, "flushall") || is(c, "flushdb")) && ac <= 2) {
    cmd_flushall(o);
  } else if (is(c, "config") && ac >= 2) {
    cmd_config(av, ac, o);
  } else if (is(c, "command")) {
    out_raw(o, "*0\r\n", 4); /* no command docs: clients fall back to plain input */
  } else if (is(c, "info")) {
    static const char info[] = "# Server\r\nredis_version:7.0.0\r\nredis_mode:standalone\r\n";
    out_bulk(o, info, sizeof info - 1);
  } else if (is(c, "select") || is(c, "client")) {
    out_raw(o, "+OK\r\n", 5);
  } else if (is(c, "quit")) {
    out_raw(o, "+OK\r\n", 5);
    *quit = 1;
  } else {
    out_fmt(o, "-ERR unknown command '%.*s' or wrong number of arguments\r\n",
            (int)(c->len > 64 ? 64 : c->len), c->p);
  }
}

/* ---- parsing ------------------------------------------------------------------ */

/* Parse a decimal after a type byte, ending in \r\n. Returns the index after
 * \r\n, 0 when incomplete, -1 when malformed. */
static ssize_t parse_len(const char *in, size_t n, size_t at, long *v) {
  const char *nl = memchr(in + at, '\n', n - at);
  if (!nl)
    return n - at > 32 ? -1 : 0;
  const char *p = in + at + 1, *end = nl;
  if (end > p && end[-1] == '\r')
    end--;
  long x = 0;
  int neg = 0;
  if (p < end && *p == '-') {
    neg = 1;
    p++;
  }
  if (p == end)
    return -1;
  for (; p < end; p++) {
    if (*p < '0' || *p > '9' || x > RESP_MAX_REQUEST)
      return -1;
    x = x * 10 + (*p - '0');
  }
  *v = neg ? -x : x;
  return nl - in + 1;
}

/* One multibulk request at in[0..n). Same returns as parse_len. */
static ssize_t parse_multibulk(const char *in, size_t n, struct arg *av, int *ac) {
  long count;
  ssize_t at = parse_len(in, n, 0, &count);
  if (at <= 0)
    return at;
  if (count < 0 || count > MAX_ARGS)
    return -1;
  for (long i = 0; i < count; i++) {
    long len;
    if ((size_t)at >= n)
      return 0;
    if (in[at] != '$')
      return -1;
    ssize_t next = parse_len(in, n, (size_t)at, &len);
    if (next <= 0)
      return next;
    if (len < 0)
      return -1;
    if ((size_t)next + (size_t)len + 2 > n)
      return 0;
    av[i] = (struct arg){in + next, (size_t)len};
    at = next + len + 2;
  }
  *ac = (int)count;
  return at;
}

/* One inline request ("PING\r\n"): words split on spaces. */
static ssize_t parse_inline(const char *in, size_t n, struct arg *av, int *ac) {
  const char *nl = memchr(in, '\n', n);
  if (!nl)
    return 0;
  const char *p = in, *end = nl;
  if (end > p && end[-1] == '\r')
    end--;
  int k = 0;
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\t'))
      p++;
    const char *w = p;
    while (p < end && *p != ' ' && *p != '\t')
      p++;
    if (p > w) {
      if (k == MAX_ARGS)
        return -1;
      av[k++] = (struct arg){w, (size_t)(p - w)};
    }
  }
  *ac = k;
  return nl - in + 1;
}

ssize_t resp_execute(const char *in, size_t n, struct resp_out *out, int *quit,
                     unsigned long *commands) {
  size_t done = 0;
  while (done < n && !*quit && out->cap - out->len >= RESP_REPLY_ROOM) {
    struct arg av[MAX_ARGS];
    int ac = 0;
    ssize_t used = in[done] == '*' ? parse_multibulk(in + done, n - done, av, &ac)
                                   : parse_inline(in + done, n - done, av, &ac);
    if (used < 0) {
      out_fmt(out, "-ERR Protocol error\r\n");
      return -1;
    }
    if (used == 0)
      break;
    done += (size_t)used;
    if (ac == 0)
      continue;
    run(av, ac, out, quit);
    (*commands)++;
  }
  return (ssize_t)done;
}
