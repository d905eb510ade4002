/* modules.c - the traced processes and their executable mappings, read from
 * /proc/PID/maps (code and read-only file mappings) and written as `module`
 * lines. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/clock.h"
#include "engine/procs.h"
#include "engine/records.h"
#include "engine/writer.h"

uint64_t ct_now_ns(clockid_t clk) {
  struct timespec ts;
  clock_gettime(clk, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct ct_proc *ct_procs_get(struct ct_procs *ps, pid_t pid) {
  for (size_t i = 0; i < ps->n; i++)
    if (ps->v[i].pid == pid)
      return &ps->v[i];
  if (ps->n == ps->cap) {
    size_t cap = ps->cap ? ps->cap * 2 : 8;
    struct ct_proc *v = realloc(ps->v, cap * sizeof(*v));
    if (!v)
      return NULL;
    ps->v = v;
    ps->cap = cap;
  }
  struct ct_proc *p = &ps->v[ps->n++];
  memset(p, 0, sizeof(*p));
  p->pid = pid;
  return p;
}

static int known(const struct ct_proc *p, const struct ct_module *m) {
  for (size_t i = 0; i < p->nmods; i++) {
    const struct ct_module *k = &p->mods[i];
    if (k->start == m->start && k->end == m->end && k->offset == m->offset &&
        strcmp(k->path, m->path) == 0)
      return 1;
  }
  return 0;
}

static uint64_t hex(const char **p) {
  uint64_t v = 0;
  for (;; (*p)++) {
    char c = **p;
    if (c >= '0' && c <= '9')
      v = v << 4 | (uint64_t)(c - '0');
    else if (c >= 'a' && c <= 'f')
      v = v << 4 | (uint64_t)(c - 'a' + 10);
    else
      return v;
  }
}

static const char *skip_field(const char *p, const char *end) {
  while (p < end && *p != ' ')
    p++;
  while (p < end && *p == ' ')
    p++;
  return p;
}

/* One maps line [p, end): "start-end perms offset dev inode   path". Keeps
 * executable or read-only mappings of files ("/..."; not [vdso], not
 * anonymous, not writable); m->path points into the line, which parse_line
 * NUL-terminates. Read-only too because qemu-user maps an emulated program's
 * code without the host's x bit (r--): its sites symbolize like native ones
 * (file offset = site - start + offset), and natively no site lies there. */
static int parse_line(char *p, char *end, struct ct_module *m) {
  const char *q = p;
  m->start = hex(&q);
  if (*q++ != '-')
    return 0;
  m->end = hex(&q);
  if (*q++ != ' ' || end - q < 5 || (q[2] != 'x' && (q[0] != 'r' || q[1] != '-')))
    return 0;
  q = skip_field(q, end);
  m->offset = hex(&q);
  q = skip_field(q, end); /* offset's separator */
  q = skip_field(q, end); /* dev */
  q = skip_field(q, end); /* inode */
  if (q >= end || *q != '/')
    return 0;
  *end = '\0';
  m->path = (char *)q;
  return 1;
}

/* The whole of a /proc file, read fast: this runs while a program that just
 * attached may be writing a burst we have yet to harvest. */
static char *slurp(const char *fn, size_t *len) {
  int fd;
  do
    fd = open(fn, O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return NULL;
  size_t cap = 16384, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    if (n == cap) {
      char *nb = realloc(buf, 2 * cap + 1);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
    ssize_t k = read(fd, buf + n, cap - n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break; /* EOF, or gone mid-read: keep what we have */
    n += (size_t)k;
  }
  close(fd);
  if (buf)
    buf[n] = '\0';
  *len = n;
  return buf;
}

void ct_proc_read_maps(struct ct_proc *p, struct ct_writer *w) {
  char fn[64];
  snprintf(fn, sizeof(fn), "/proc/%ld/maps", (long)p->pid);
  p->maps_ts = ct_now_ns(CLOCK_MONOTONIC);
  size_t len;
  char *buf = slurp(fn, &len);
  if (!buf)
    return; /* gone already: its sites stay unmapped */
  for (char *line = buf, *stop = buf + len; line < stop;) {
    char *nl = memchr(line, '\n', (size_t)(stop - line));
    char *end = nl ? nl : stop;
    struct ct_module m;
    if (parse_line(line, end, &m) && !known(p, &m)) {
      if (p->nmods == p->capmods) {
        size_t nc = p->capmods ? p->capmods * 2 : 16;
        struct ct_module *v = realloc(p->mods, nc * sizeof(*v));
        if (!v)
          break;
        p->mods = v;
        p->capmods = nc;
      }
      m.path = strdup(m.path);
      if (!m.path)
        break;
      p->mods[p->nmods++] = m;
      ct_rec_module(w, p->pid, &m);
    }
    line = end + 1;
  }
  free(buf);
}

int ct_proc_covers(const struct ct_proc *p, uint64_t addr) {
  for (size_t i = 0; i < p->nmods; i++)
    if (addr >= p->mods[i].start && addr < p->mods[i].end)
      return 1;
  return 0;
}

void ct_procs_free(struct ct_procs *ps) {
  for (size_t i = 0; i < ps->n; i++) {
    for (size_t k = 0; k < ps->v[i].nmods; k++)
      free(ps->v[i].mods[k].path);
    free(ps->v[i].mods);
  }
  free(ps->v);
  memset(ps, 0, sizeof(*ps));
}
