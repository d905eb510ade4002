/* ship_facts.c - what `corotracer ship` learns of a file before exporting
 * it: its size and a hash of its bytes (the dump's identity: shipping the same
 * file twice is recognised), and from its first lines, as written, the meta's
 * run id, host and command line and the first module's path. */
#include "ship/ship.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct scan {
  struct ct_ship_facts *f;
  int meta; /* the meta line was seen */
  int err;
  uint64_t lines;
};

/* Past the JSON string at p (at its opening quote), or NULL if unterminated. */
static const char *skip_string(const char *p, const char *e) {
  for (p++; p < e; p++)
    if (*p == '\\')
      p++;
    else if (*p == '"')
      return p + 1;
  return NULL;
}

/* Past the JSON value at p (nested arrays and objects included): at the ','
 * or '}' after it; NULL if cut short. */
static const char *skip_value(const char *p, const char *e) {
  int depth = 0;
  while (p && p < e) {
    if (*p == '"') {
      p = skip_string(p, e);
      continue;
    }
    if (*p == '[' || *p == '{')
      depth++;
    else if ((*p == ']' || *p == '}') && depth)
      depth--;
    else if (!depth && (*p == ',' || *p == '}'))
      return p;
    p++;
  }
  return NULL;
}

/* The value of top-level key `key` of the JSON object line (l, n): a malloc'd
 * copy of its text as written (a JSON array stays JSON), made valid UTF-8;
 * NULL when absent or on ENOMEM (*err). */
static char *json_value(const char *l, size_t n, const char *key, int *err) {
  const char *p = memchr(l, '{', n), *e = l + n;
  size_t kn = strlen(key);
  while (p && *p != '}' && ++p < e) { /* p: at '{' or the ',' before a key */
    while (p < e && *p == ' ')
      p++;
    if (p >= e || *p != '"')
      return NULL;
    const char *k = p + 1, *ke = skip_string(p, e);
    if (!ke || !(p = memchr(ke, ':', (size_t)(e - ke))))
      return NULL;
    const char *v = p + 1, *ve = skip_value(v, e);
    if (!ve)
      return NULL;
    if ((size_t)(ke - 1 - k) == kn && !memcmp(k, key, kn)) {
      char *out = malloc(3 * (size_t)(ve - v) + 1);
      if (!out)
        *err = -ENOMEM;
      else
        ct_utf8_clean(v, (size_t)(ve - v), out, 3 * (size_t)(ve - v) + 1);
      return out;
    }
    p = ve;
  }
  return NULL;
}

/* A ct_entry_fn: the meta line, then the first module line; stops there (or
 * after 256 lines, or at the first event: no module line before it). */
static int scan_entry(void *ctx, const struct ct_ev_item *ev, const struct ct_coro_item *co,
                      const char *line, size_t n) {
  struct scan *s = ctx;
  struct ct_line l;
  if (ev || ++s->lines > 256)
    return 1;
  if (co || ct_parse_line(line, n, &l) != CT_LINE_OK)
    return 0;
  if (!s->meta && l.type == CT_LINE_META) {
    s->meta = 1;
    if (CT_HAS(&l, CT_K_RUN_ID)) /* only the keys the line has are set */
      ct_str_copy(&l.run_id, s->f->trace_run_id, sizeof s->f->trace_run_id);
    if (CT_HAS(&l, CT_K_HOST))
      ct_str_copy(&l.host, s->f->host, sizeof s->f->host);
    s->f->command = json_value(line, n, "command", &s->err);
    return s->err;
  }
  if (l.type == CT_LINE_MODULE && CT_HAS(&l, CT_K_PATH)) {
    char path[4096 * 3 + 1];
    ct_str_copy(&l.path, path, sizeof path);
    if (!(s->f->executable = strdup(path)))
      s->err = -ENOMEM;
    return 1;
  }
  return !s->meta && s->lines > 1; /* a reference trace: no meta first */
}

/* FNV-1a 64 of the whole file and its size. */
static int hash_file(int fd, struct ct_ship_facts *f) {
  static unsigned char buf[1 << 16];
  uint64_t h = 1469598103934665603ull, bytes = 0;
  for (;;) {
    ssize_t k = read(fd, buf, sizeof buf);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0)
      return -errno;
    if (!k)
      break;
    for (ssize_t i = 0; i < k; i++)
      h = (h ^ buf[i]) * 1099511628211ull;
    bytes += (uint64_t)k;
  }
  snprintf(f->dump_id, sizeof f->dump_id, "%016llx", (unsigned long long)h);
  f->file_bytes = bytes;
  return 0;
}

int ct_ship_facts_read(const char *path, struct ct_ship_facts *f, char *why, size_t n) {
  struct scan s = {.f = f};
  struct ct_read_diag diag = {0};
  uint64_t bytes = 0;
  memset(f, 0, sizeof *f);
  int fd = open(path, O_RDONLY | O_CLOEXEC), rc;
  if (fd < 0)
    return -errno;
  rc = hash_file(fd, f);
  if (!rc && lseek(fd, 0, SEEK_SET) < 0)
    rc = -errno;
  if (!rc && (rc = ct_trace_read_entries(fd, 1 << 16, scan_entry, &s, &bytes, &diag)) > 0)
    rc = 0; /* stopped by scan_entry */
  if (!rc)
    rc = s.err;
  if (!rc && !s.meta) {
    snprintf(why, n, "%s", diag.why[0] ? diag.why : "no meta line: not a trace of corotracer run");
    rc = -EPROTO;
  }
  close(fd);
  return rc;
}

void ct_ship_facts_free(struct ct_ship_facts *f) {
  free(f->command);
  free(f->executable);
  f->command = f->executable = NULL;
}
