/* records.h - the engine's own records (records.c): meta and module; every
 * other record's writer is the format layer's (format/records.h). */
#ifndef CT_ENGINE_RECORDS_H
#define CT_ENGINE_RECORDS_H

#include <stdint.h>
#include <sys/types.h>

#include "format/writer.h"

struct ct_meta {
  char *const *argv;
  uint64_t engine_pid, target_pid;
  uint32_t stations, rings, ring_bytes, clock;
  int poll_ms;
};
/* The meta line: the trace's first (docs/TRACE_FORMAT.md "meta"). */
void ct_rec_meta(struct ct_writer *w, const struct ct_meta *m);
struct ct_module;
/* A module line: one executable mapping m of process pid. */
void ct_rec_module(struct ct_writer *w, pid_t pid, const struct ct_module *m);

#endif /* CT_ENGINE_RECORDS_H */
