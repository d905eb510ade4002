/* procs.h - the target's processes and their executable modules (modules.c). */
#ifndef CT_ENGINE_PROCS_H
#define CT_ENGINE_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/writer.h"

/* Longest GNU build id we record, in bytes (SHA-1's is 20; the note allows more). */
#define CT_BUILD_ID_MAX 64

struct ct_module {
  uint64_t start, end, offset;
  char *path;
  char build_id[2 * CT_BUILD_ID_MAX + 1]; /* the file's GNU build id, hex; "" when it has none */
};

struct ct_proc {
  pid_t pid;
  uint64_t maps_ts; /* CLOCK_MONOTONIC ns of the last /proc/PID/maps read */
  struct ct_module *mods;
  size_t nmods, capmods;
};

struct ct_procs {
  struct ct_proc *v;
  size_t n, cap;
};

/* The entry of pid, created (empty, maps not read) if new. NULL on ENOMEM. */
struct ct_proc *ct_procs_get(struct ct_procs *ps, pid_t pid);
/* Re-read pid's executable file mappings and write a module line for each
 * one not written before. Errors (process gone) leave the list as it was. */
void ct_proc_read_maps(struct ct_proc *p, struct ct_writer *w);
/* 1 when addr falls in a known module of p. */
int ct_proc_covers(const struct ct_proc *p, uint64_t addr);
/* Free every entry and its module paths; ps is empty afterwards. */
void ct_procs_free(struct ct_procs *ps);

#endif /* CT_ENGINE_PROCS_H */
