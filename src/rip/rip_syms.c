/* rip_syms.c - module map of a ring file, and its snapshot addresses -> function, file:line. */
#include "rip/rip_syms.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAPS_MAGIC "# corotracer rip maps 1"
#define ET_DYN_TYPE 3

/* Say why in why (prefixed with the line when line > 0) and return code (-errno). */
static int set_err(int code, char *why, size_t whylen, const char *msg, long line) {
  if (line > 0)
    snprintf(why, whylen, "line %ld: %s", line, msg);
  else
    snprintf(why, whylen, "%s", msg);
  return code;
}

/* 1 if path is an ELF shared object or PIE (e_type ET_DYN), 0 if another ELF
 * type, -1 with errno when it cannot be read or is not ELF. */
static int is_dyn_elf(const char *path) {
  unsigned char h[18];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n;
  while ((n = pread(fd, h, sizeof h, 0)) < 0 && errno == EINTR) {
  }
  int saved = errno;
  close(fd);
  if (n < 0) {
    errno = saved;
    return -1;
  }
  if (n != (ssize_t)sizeof h || memcmp(h, "\177ELF", 4) != 0) {
    errno = ENOEXEC;
    return -1;
  }
  /* e_type is in the file's byte order: EI_DATA 1 = little, 2 = big. */
  unsigned type = h[5] == 2 ? (unsigned)(h[16] << 8 | h[17]) : (unsigned)(h[17] << 8 | h[16]);
  return type == ET_DYN_TYPE;
}

/* Add the mappings of the module map f to s; the executable recorded in the
 * map stands for exe. */
static int add_map_file(ct_symbolizer *s, FILE *f, const char *exe, char *why, size_t whylen) {
  char *line = NULL, *map_exe = NULL;
  size_t cap = 0;
  long lineno = 0;
  int rc;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) >= 0) {
    lineno++;
    if (len > 0 && line[len - 1] == '\n')
      line[--len] = '\0';
    uint64_t start, end, off;
    char perms[8];
    int path_at = 0;
    if (lineno == 1) {
      if (strcmp(line, MAPS_MAGIC) != 0) {
        rc = set_err(-EINVAL, why, whylen, "not a rip module map (no \"" MAPS_MAGIC "\" line)", 0);
        goto out;
      }
    } else if (strncmp(line, "pid ", 4) == 0) {
      continue;
    } else if (strncmp(line, "exe ", 4) == 0) {
      free(map_exe);
      map_exe = strdup(line + 4);
      if (map_exe == NULL) {
        rc = set_err(-ENOMEM, why, whylen, "out of memory", 0);
        goto out;
      }
    } else if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*u %n", &start, &end,
                      perms, &off, &path_at) == 4 &&
               path_at > 0 && line[path_at] == '/' && start < end) {
      const char *path = line + path_at;
      if (map_exe != NULL && strcmp(path, map_exe) == 0)
        path = exe;
      rc = ct_symbolizer_add_module(s, 0, start, end, off, path);
      if (rc != 0) {
        set_err(rc, why, whylen, strerror(-rc), lineno);
        goto out;
      }
    } else {
      rc = set_err(-EINVAL, why, whylen, "not a mapping (start-end perms offset dev inode /path)",
                   lineno);
      goto out;
    }
  }
  if (ferror(f)) {
    rc = set_err(-errno, why, whylen, strerror(errno), 0);
    goto out;
  }
  if (lineno == 0) {
    rc = set_err(-EINVAL, why, whylen, "empty module map", 0);
    goto out;
  }
  rc = 0;
out:
  free(line);
  free(map_exe);
  return rc;
}

/* Contract in rip_syms.h. */
int ct_rip_symbolizer(const char *exe, const char *maps_path, ct_symbolizer **out,
                      const char **warn, const char **err_file, char *why, size_t whylen) {
  ct_symbolizer *s = NULL;
  FILE *f = NULL;
  int rc;
  *warn = NULL;
  *err_file = exe;
  int dyn = is_dyn_elf(exe);
  if (dyn < 0) {
    rc = set_err(-errno, why, whylen, errno == ENOEXEC ? "not an ELF file" : strerror(errno), 0);
    goto out;
  }
  rc = ct_symbolizer_new(&s);
  if (rc != 0) {
    set_err(rc, why, whylen, strerror(-rc), 0);
    goto out;
  }
  f = fopen(maps_path, "re");
  if (f == NULL && errno != ENOENT) {
    *err_file = maps_path;
    rc = set_err(-errno, why, whylen, strerror(errno), 0);
    goto out;
  }
  if (f != NULL) {
    *err_file = maps_path;
    if ((rc = add_map_file(s, f, exe, why, whylen)) != 0)
      goto out;
  } else {
    rc = ct_symbolizer_add_static(s, exe);
    if (rc != 0) {
      set_err(rc, why, whylen, strerror(-rc), 0);
      goto out;
    }
    if (dyn)
      *warn = "no module map next to the ring file: a PIE's or shared library's addresses will "
              "not symbolize (see -m)";
  }
  *out = s;
  s = NULL;
  rc = 0;
out:
  if (f != NULL)
    fclose(f);
  ct_symbolizer_free(s);
  return rc;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int cmp_loc(const void *a, const void *b) {
  return strcmp((*(struct ct_rip_site *const *)a)->loc, (*(struct ct_rip_site *const *)b)->loc);
}

/* Contract in rip_syms.h. */
int ct_rip_sites_build(ct_symbolizer *s, uint64_t *addrs, size_t n, struct ct_rip_sites *out) {
  struct ct_rip_site **by_loc = NULL;
  int rc = -1;
  memset(out, 0, sizeof *out);
  qsort(addrs, n, sizeof *addrs, cmp_u64);
  out->v = calloc(n ? n : 1, sizeof *out->v);
  if (out->v == NULL)
    goto out;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && addrs[i] == addrs[i - 1])
      continue;
    struct ct_rip_site *site = &out->v[out->n++];
    struct ct_sym sym;
    memset(&sym, 0, sizeof sym);
    site->addr = addrs[i];
    int found = ct_symbolize(s, 0, addrs[i], 0, &sym) == 0;
    site->func = found && sym.function != NULL ? sym.function : "UNKNOWN";
    int len;
    if (found && sym.file != NULL && sym.line > 0) {
      const char *base = strrchr(sym.file, '/');
      len = asprintf(&site->loc, "%s:%d", base != NULL ? base + 1 : sym.file, sym.line);
    } else {
      len = asprintf(&site->loc, "%#" PRIx64, addrs[i]);
    }
    if (len < 0) {
      site->loc = NULL;
      goto out;
    }
  }
  /* librip's reader marks a location reached from several addresses (inlined
   * or unrolled copies) with the address: count them per location. */
  by_loc = malloc((out->n ? out->n : 1) * sizeof *by_loc);
  if (by_loc == NULL)
    goto out;
  for (size_t i = 0; i < out->n; i++)
    by_loc[i] = &out->v[i];
  qsort(by_loc, out->n, sizeof *by_loc, cmp_loc);
  for (size_t i = 0, j; i < out->n; i = j) {
    for (j = i + 1; j < out->n && strcmp(by_loc[j]->loc, by_loc[i]->loc) == 0; j++) {
    }
    for (size_t k = i; k < j; k++)
      by_loc[k]->loc_addrs = j - i;
  }
  rc = 0;
out:
  free(by_loc);
  if (rc != 0)
    ct_rip_sites_free(out);
  return rc;
}

/* Contract in rip_syms.h. */
size_t ct_rip_site_index(const struct ct_rip_sites *sites, uint64_t addr) {
  size_t lo = 0, hi = sites->n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (sites->v[mid].addr <= addr)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* Contract in rip_syms.h. */
void ct_rip_sites_free(struct ct_rip_sites *sites) {
  for (size_t i = 0; i < sites->n; i++)
    free(sites->v[i].loc);
  free(sites->v);
  memset(sites, 0, sizeof *sites);
}
