/* modules.c - the traced processes and their executable mappings, read from
 * /proc/PID/maps (code and read-only file mappings) and written as `module`
 * lines, each with its file's GNU build id (so a reader can tell a file
 * rebuilt since from the one that ran). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/clock.h"
#include "engine/procs.h"
#include "engine/records.h"
#include "format/writer.h"

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
 * NUL-terminates, *inode is the mapped file's. Read-only too because
 * qemu-user maps an emulated program's code without the host's x bit (r--):
 * its sites symbolize like native ones (file offset = site - start + offset),
 * and natively no site lies there. */
static int parse_line(char *p, char *end, struct ct_module *m, uint64_t *inode) {
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
  for (*inode = 0; q < end && *q >= '0' && *q <= '9'; q++)
    *inode = *inode * 10 + (uint64_t)(*q - '0');
  q = skip_field(q, end); /* inode's separator */
  if (q >= end || *q != '/')
    return 0;
  *end = '\0';
  m->path = (char *)q;
  m->build_id[0] = '\0';
  return 1;
}

/* n bytes at off of fd into buf; 0 when they were all there. */
static int read_at(int fd, void *buf, size_t n, uint64_t off) {
  for (size_t got = 0; got < n;) {
    ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return -EIO;
    got += (size_t)k;
  }
  return 0;
}

/* The NT_GNU_BUILD_ID note in the note segment buf (n bytes, notes aligned
 * to align) as hex into out; 1 when found. Every length is checked against
 * what is left of buf: the file is input. */
static int find_build_id(const unsigned char *buf, size_t n, size_t align, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t at = 0; n - at >= 12;) {
    uint32_t w[3]; /* namesz, descsz, type */
    memcpy(w, buf + at, sizeof w);
    size_t name = (w[0] + align - 1) & ~(align - 1), desc = (w[1] + align - 1) & ~(align - 1);
    at += 12;
    if (w[0] > n - at || name > n - at || w[1] > n - at - name)
      return 0;
    if (w[2] == NT_GNU_BUILD_ID && w[0] == 4 && memcmp(buf + at, "GNU", 4) == 0 && w[1] > 0 &&
        w[1] <= CT_BUILD_ID_MAX) {
      for (uint32_t i = 0; i < w[1]; i++) {
        out[2 * i] = digits[buf[at + name + i] >> 4];
        out[2 * i + 1] = digits[buf[at + name + i] & 15];
      }
      out[2 * w[1]] = '\0';
      return 1;
    }
    if (desc > n - at - name)
      return 0;
    at += name + desc;
  }
  return 0;
}

/* The GNU build id of the ELF file fd, of this machine's class and byte
 * order, as hex into out ("" when it has none). Reads only the program
 * headers and the note segments (each at most 64 KiB). */
static void read_build_id(int fd, char *out) {
  ElfW(Ehdr) eh;
  out[0] = '\0';
  if (read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
      eh.e_ident[EI_DATA] !=
          (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
      eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum > 256)
    return;
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    ElfW(Phdr) ph;
    if (read_at(fd, &ph, sizeof ph, (uint64_t)eh.e_phoff + i * sizeof ph))
      return;
    if (ph.p_type != PT_NOTE || ph.p_filesz < 12 || ph.p_filesz > 65536)
      continue;
    unsigned char *buf = malloc(ph.p_filesz);
    int found = buf && read_at(fd, buf, ph.p_filesz, ph.p_offset) == 0 &&
                find_build_id(buf, ph.p_filesz, ph.p_align == 8 ? 8 : 4, out);
    free(buf);
    if (found)
      return;
  }
}

/* m's build id: another mapping of the same file in p has it already, else
 * the file at m->path if it is still the mapped one (a regular file, its
 * inode), else none. O_NONBLOCK: a path swapped for a FIFO must not hang the
 * engine. */
static void module_build_id(const struct ct_proc *p, struct ct_module *m, uint64_t inode) {
  for (size_t i = p->nmods; i-- > 0;)
    if (strcmp(p->mods[i].path, m->path) == 0) {
      memcpy(m->build_id, p->mods[i].build_id, sizeof m->build_id);
      return;
    }
  int fd;
  do
    fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return;
  struct stat sb;
  if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_ino == inode)
    read_build_id(fd, m->build_id);
  close(fd);
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
    uint64_t inode;
    if (parse_line(line, end, &m, &inode) && !known(p, &m)) {
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
      module_build_id(p, &m, inode);
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
