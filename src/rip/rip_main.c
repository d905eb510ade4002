/* rip_main.c - `corotracer rip`: where every thread of a rip ring file is, and was. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/args.h"
#include "common/commands.h"
#include "rip/rip_load.h"
#include "rip/rip_syms.h"

static const char usage_text[] =
    "usage: corotracer rip -e EXECUTABLE [-r RING_FILE] [-m MAPS_FILE] [-t] [-v]\n"
    "  -e EXECUTABLE  the program that wrote the ring (with debug info for file:line)\n"
    "  -r RING_FILE   the ring file, raw, gzip or zlib (default rip_ring)\n"
    "  -m MAPS_FILE   its module map (default RING_FILE.maps, or that of RING_FILE\n"
    "                 without .gz/.z/.zz/.zlib)\n"
    "  -t             each thread's history, oldest first: {counter}file:line\n"
    "  -v             exited threads, addresses and thread ids too\n"
    "Default view: the newest snapshot of each live thread, grouped by function.\n";

struct opts {
  const char *exe, *ring, *maps;
  bool by_thread, verbose;
};

/* (site, thread) pair: thread t's newest snapshot is at site (by-function view). */
struct at {
  size_t site;
  uint64_t id;
};

/* A function of the by-function view: sites [first, first + nsites) of the
 * function-sorted site order, threads in total. */
struct group {
  const char *func;
  size_t first, nsites, threads;
};

static int nomem(char *err, size_t errlen) {
  snprintf(err, errlen, "out of memory");
  return 1;
}

static int usage_error(const char *what) {
  fprintf(stderr, "corotracer: rip: %s (see corotracer rip --help)\n", what);
  return 2;
}

/* Default module map: "<ring>.maps", else (for a compressed copy) the map of
 * the name without its compression suffix, if that one exists. */
static char *default_maps(const char *ring) {
  static const char *const suffixes[] = {".gz", ".zz", ".zlib", ".z"};
  char *path = NULL;
  if (asprintf(&path, "%s.maps", ring) < 0)
    return NULL;
  FILE *f = fopen(path, "re");
  if (f != NULL) {
    fclose(f);
    return path;
  }
  size_t len = strlen(ring);
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
    size_t sl = strlen(suffixes[i]);
    if (len <= sl || strcmp(ring + len - sl, suffixes[i]) != 0)
      continue;
    char *alt = NULL;
    if (asprintf(&alt, "%.*s.maps", (int)(len - sl), ring) < 0)
      break;
    if ((f = fopen(alt, "re")) != NULL) {
      fclose(f);
      free(path);
      return alt;
    }
    free(alt);
  }
  return path;
}

static void print_loc(FILE *out, const struct ct_rip_site *site, bool verbose) {
  if (verbose || site->loc_addrs > 1)
    fprintf(out, "%s<%#" PRIx64 ">", site->loc, site->addr);
  else
    fputs(site->loc, out);
}

static int cmp_at(const void *a, const void *b) {
  const struct at *x = a, *y = b;
  if (x->site != y->site)
    return x->site < y->site ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Site indices by function name, then address (qsort_r: ctx is the sites). */
static int cmp_site_func(const void *a, const void *b, void *ctx) {
  const struct ct_rip_sites *sites = ctx;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  int c = strcmp(sites->v[x].func, sites->v[y].func);
  return c != 0 ? c : (x > y) - (x < y);
}

static int cmp_group(const void *a, const void *b) {
  const struct group *x = a, *y = b;
  if (x->threads != y->threads)
    return x->threads > y->threads ? -1 : 1;
  return strcmp(x->func, y->func);
}

/* Default view: `func : N threads, M locations: loc (k); ...`, largest group
 * first; -v lists the thread ids of each location instead of their count. */
static int print_by_function(FILE *out, const struct ct_rip_threads *th,
                             const struct ct_rip_sites *sites, bool verbose) {
  struct at *ats = malloc((th->n ? th->n : 1) * sizeof *ats);
  size_t *order = malloc((sites->n ? sites->n : 1) * sizeof *order);
  size_t *first_at = malloc((sites->n + 1) * sizeof *first_at);
  struct group *groups = malloc((sites->n ? sites->n : 1) * sizeof *groups);
  size_t nats = 0, ngroups = 0;
  int rc = -1;
  if (ats == NULL || order == NULL || first_at == NULL || groups == NULL)
    goto out;
  for (size_t i = 0; i < th->n; i++) {
    const struct ct_rip_thread *t = &th->v[i];
    if (t->exited || t->n == 0)
      continue;
    uint64_t addr = t->e[t->n - 1] & RIP_ADDR_MASK;
    ats[nats++] = (struct at){ct_rip_site_index(sites, addr), t->id};
  }
  qsort(ats, nats, sizeof *ats, cmp_at);
  /* first_at[s]: the first pair of site s (pairs of s end at first_at[s + 1]). */
  for (size_t s = 0, k = 0; s <= sites->n; s++) {
    while (k < nats && ats[k].site < s)
      k++;
    first_at[s] = k;
  }
  for (size_t s = 0; s < sites->n; s++)
    order[s] = s;
  qsort_r(order, sites->n, sizeof *order, cmp_site_func, (void *)sites);
  for (size_t i = 0; i < sites->n; i++) {
    size_t s = order[i], threads = first_at[s + 1] - first_at[s];
    if (i == 0 || strcmp(sites->v[s].func, sites->v[order[i - 1]].func) != 0)
      groups[ngroups++] = (struct group){sites->v[s].func, i, 0, 0};
    groups[ngroups - 1].nsites++;
    groups[ngroups - 1].threads += threads;
  }
  qsort(groups, ngroups, sizeof *groups, cmp_group);
  for (size_t g = 0; g < ngroups; g++) {
    const struct group *gr = &groups[g];
    fprintf(out, "%s : %zu thread%s, %zu location%s: ", gr->func, gr->threads,
            gr->threads == 1 ? "" : "s", gr->nsites, gr->nsites == 1 ? "" : "s");
    for (size_t i = gr->first; i < gr->first + gr->nsites; i++) {
      size_t s = order[i];
      if (i > gr->first)
        fputs("; ", out);
      print_loc(out, &sites->v[s], verbose);
      if (verbose) {
        fputs(" [", out);
        for (size_t k = first_at[s]; k < first_at[s + 1]; k++)
          fprintf(out, "%s%" PRIu64, k > first_at[s] ? ", " : "", ats[k].id);
        fputc(']', out);
      } else {
        fprintf(out, " (%zu)", first_at[s + 1] - first_at[s]);
      }
    }
    fputc('\n', out);
  }
  rc = 0;
out:
  free(ats);
  free(order);
  free(first_at);
  free(groups);
  return rc;
}

/* -t: `name[id]: {ctr}loc, ...` oldest first; -v adds exited threads (ending
 * in EXIT) and every address. */
static void print_by_thread(FILE *out, const struct ct_rip_threads *th,
                            const struct ct_rip_sites *sites, bool verbose) {
  for (size_t i = 0; i < th->n; i++) {
    const struct ct_rip_thread *t = &th->v[i];
    if (t->exited && !verbose)
      continue;
    fprintf(out, "%s[%" PRIu64 "]: ", t->name, t->id);
    for (int k = 0; k < t->n; k++) {
      uint64_t e = t->e[k];
      fprintf(out, "%s{%u}", k > 0 ? ", " : "", (unsigned)(e >> RIP_CTR_SHIFT));
      print_loc(out, &sites->v[ct_rip_site_index(sites, e & RIP_ADDR_MASK)], verbose);
    }
    if (t->exited)
      fputs(t->n > 0 ? ", EXIT" : "EXIT", out);
    fputc('\n', out);
  }
}

enum { O_EXE = 1, O_RING, O_MAPS, O_BY_THREAD, O_VERBOSE, O_HELP };
static const struct ct_opt rip_opts[] = {
    {"-e", O_EXE, 1},     {"-r", O_RING, 1},        {"-m", O_MAPS, 1}, {"-t", O_BY_THREAD, 0},
    {"-v", O_VERBOSE, 0}, {"-h --help", O_HELP, 0}, {NULL, 0, 0}};

/* Returns -1 when parsed, else the exit status (0 for --help). */
static int parse_opts(int argc, char **argv, struct opts *o) {
  memset(o, 0, sizeof *o);
  struct ct_args it;
  const char *val;
  int id;
  ct_args_init(&it, argc, argv, CT_ARGS_GETOPT);
  while ((id = ct_args_next(&it, rip_opts, &val)) != CT_ARGS_END) {
    switch (id) {
    case O_EXE:
      if (o->exe != NULL)
        return usage_error("duplicate option -e");
      o->exe = val;
      break;
    case O_RING:
      if (o->ring != NULL)
        return usage_error("duplicate option -r");
      o->ring = val;
      break;
    case O_MAPS:
      if (o->maps != NULL)
        return usage_error("duplicate option -m");
      o->maps = val;
      break;
    case O_BY_THREAD:
      o->by_thread = true;
      break;
    case O_VERBOSE:
      o->verbose = true;
      break;
    case O_HELP:
      fputs(usage_text, stdout);
      return 0;
    case CT_ARGS_POSITIONAL:
      return usage_error("unexpected argument");
    default: /* CT_ARGS_UNKNOWN, CT_ARGS_NO_VALUE */
      return usage_error("bad option");
    }
  }
  if (o->exe == NULL)
    return usage_error("the executable (-e) must be given");
  if (o->ring == NULL)
    o->ring = "rip_ring";
  return -1; /* go on */
}

/* `corotracer rip ARGS`: prints the view on stdout; returns 0, 2 on bad input or
 * usage (one line on stderr), 1 when out of memory or stdout fails. */
int ct_rip_main(int argc, char **argv) {
  struct opts o;
  int rc = parse_opts(argc, argv, &o);
  if (rc >= 0)
    return rc;
  struct ct_rip_threads th = {0};
  struct ct_rip_sites sites = {0};
  ct_symbolizer *sym = NULL;
  char *maps = NULL;
  uint64_t *addrs = NULL;
  char err[512];
  const char *warn, *err_file = o.ring;
  int r = ct_rip_load(o.ring, &th, err, sizeof err);
  rc = r == -ENOMEM ? 1 : 2; /* else bad input */
  if (r != 0)
    goto out;
  maps = o.maps != NULL ? strdup(o.maps) : default_maps(o.ring);
  if (maps == NULL) {
    rc = nomem(err, sizeof err);
    goto out;
  }
  r = ct_rip_symbolizer(o.exe, maps, &sym, &warn, &err_file, err, sizeof err);
  rc = r == -ENOMEM ? 1 : 2;
  if (r != 0)
    goto out;
  if (warn != NULL)
    fprintf(stderr, "corotracer: %s: %s\n", maps, warn);
  /* The addresses the view shows: every snapshot (-t) or the newest ones. */
  size_t n = 0;
  addrs = malloc((th.n ? th.n : 1) * RIP_RING_SIZE * sizeof *addrs);
  if (addrs == NULL) {
    rc = nomem(err, sizeof err);
    goto out;
  }
  for (size_t i = 0; i < th.n; i++) {
    const struct ct_rip_thread *t = &th.v[i];
    if (o.by_thread ? t->exited && !o.verbose : t->exited || t->n == 0)
      continue;
    for (int k = o.by_thread ? 0 : t->n - 1; k < t->n; k++)
      addrs[n++] = t->e[k] & RIP_ADDR_MASK;
  }
  if (ct_rip_sites_build(sym, addrs, n, &sites) != 0) {
    rc = nomem(err, sizeof err);
    goto out;
  }
  if (o.by_thread)
    print_by_thread(stdout, &th, &sites, o.verbose);
  else if (print_by_function(stdout, &th, &sites, o.verbose) != 0) {
    rc = nomem(err, sizeof err);
    goto out;
  }
  err_file = "<stdout>";
  if (fflush(stdout) != 0 || ferror(stdout)) {
    snprintf(err, sizeof err, "%s", strerror(errno));
    rc = 1;
    goto out;
  }
  rc = 0;
out:
  if (rc != 0)
    fprintf(stderr, "corotracer: %s: %s\n", err_file, err);
  free(addrs);
  free(maps);
  ct_rip_sites_free(&sites);
  ct_symbolizer_free(sym);
  ct_rip_threads_free(&th);
  return rc;
}
