/* modules.c - the traced processes and their executable mappings, read from
 * /proc/PID/maps and written as `module` lines. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"

uint64_t ct_now_ns(clockid_t clk) {
  struct timespec ts;
  clock_gettime(clk, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct ct_proc *ct_procs_get(struct ct_procs *ps, pid_t pid) {
  for (size_t i = 0; i < ps->n; i++)
    if (ps->v[i].pid == pid) return &ps->v[i];
  if (ps->n == ps->cap) {
    size_t cap = ps->cap ? ps->cap * 2 : 8;
    struct ct_proc *v = realloc(ps->v, cap * sizeof(*v));
    if (!v) return NULL;
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

static void write_module(struct ct_writer *w, pid_t pid, const struct ct_module *m) {
  ct_w_str(w, "{\"type\":\"module\",\"pid\":");
  ct_w_u64(w, (uint64_t)pid);
  ct_w_str(w, ",\"start\":");
  ct_w_hex(w, m->start);
  ct_w_str(w, ",\"end\":");
  ct_w_hex(w, m->end);
  ct_w_str(w, ",\"offset\":");
  ct_w_hex(w, m->offset);
  ct_w_str(w, ",\"path\":");
  ct_w_json(w, m->path, strlen(m->path));
  ct_w_str(w, "}\n");
}

/* One maps line: "start-end perms offset dev inode   path". Keeps executable
 * mappings of files ("/..."; not [vdso], not anonymous). */
static int parse_line(char *line, struct ct_module *m) {
  unsigned long long start, end, off;
  char perms[8];
  int pos = 0;
  if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &pos) != 4 || !pos)
    return 0;
  if (perms[2] != 'x') return 0;
  char *path = line + pos;
  if (path[0] != '/') return 0;
  size_t n = strlen(path);
  if (n && path[n - 1] == '\n') path[--n] = '\0';
  m->start = start;
  m->end = end;
  m->offset = off;
  m->path = path;
  return 1;
}

void ct_proc_read_maps(struct ct_proc *p, struct ct_writer *w) {
  char fn[64];
  snprintf(fn, sizeof(fn), "/proc/%ld/maps", (long)p->pid);
  p->maps_ts = ct_now_ns(CLOCK_MONOTONIC);
  FILE *f = fopen(fn, "re");
  if (!f) return; /* gone already: its sites stay unmapped */
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    struct ct_module m;
    if (!parse_line(line, &m) || known(p, &m)) continue;
    if (p->nmods == p->capmods) {
      size_t nc = p->capmods ? p->capmods * 2 : 16;
      struct ct_module *v = realloc(p->mods, nc * sizeof(*v));
      if (!v) break;
      p->mods = v;
      p->capmods = nc;
    }
    m.path = strdup(m.path);
    if (!m.path) break;
    p->mods[p->nmods++] = m;
    write_module(w, p->pid, &m);
  }
  free(line);
  fclose(f);
}

int ct_proc_covers(const struct ct_proc *p, uint64_t addr) {
  for (size_t i = 0; i < p->nmods; i++)
    if (addr >= p->mods[i].start && addr < p->mods[i].end) return 1;
  return 0;
}

void ct_procs_free(struct ct_procs *ps) {
  for (size_t i = 0; i < ps->n; i++) {
    for (size_t k = 0; k < ps->v[i].nmods; k++) free(ps->v[i].mods[k].path);
    free(ps->v[i].mods);
  }
  free(ps->v);
  memset(ps, 0, sizeof(*ps));
}
