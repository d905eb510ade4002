/* rip_syms.h - symbolize the snapshot addresses of a rip ring file. */
#ifndef CT_RIP_SYMS_H
#define CT_RIP_SYMS_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/symbolize.h"

/* One distinct snapshot address, symbolized. */
struct ct_rip_site {
  uint64_t addr;
  const char *func; /* function name, or "UNKNOWN"; owned by the symbolizer */
  char *loc;        /* "file.c:10" (file without directories), or "0x..." */
  size_t loc_addrs; /* distinct addresses in the table with the same loc */
};

/* Distinct addresses sorted by address. Owned by the caller (ct_rip_sites_free). */
struct ct_rip_sites {
  struct ct_rip_site *v;
  size_t n;
};

/* A symbolizer for a ring written by exe: through the ring's module map
 * (maps_path, "<ring>.maps" written by rip_create_ring) when it exists, its
 * executable's mappings standing for exe; else exe at its own addresses, as
 * librip's reader did (right for non-PIE executables only). *warn is set to a
 * static message when a PIE is read without a map (the caller prints it).
 * Returns 0 or -errno (-EINVAL: a malformed module map; -ENOEXEC: exe is not
 * ELF), with a one-line reason in why and the file it is about in *err_file.
 * Never prints. */
int ct_rip_symbolizer(const char *exe, const char *maps_path, ct_symbolizer **out,
                      const char **warn, const char **err_file, char *why, size_t whylen);

/* Symbolize addrs[0..n) (any order, duplicates allowed; addrs is sorted in
 * place). Returns 0, or -1 on memory exhaustion. */
int ct_rip_sites_build(ct_symbolizer *s, uint64_t *addrs, size_t n, struct ct_rip_sites *out);

/* Index of addr in sites (which must contain it). */
size_t ct_rip_site_index(const struct ct_rip_sites *sites, uint64_t addr);

void ct_rip_sites_free(struct ct_rip_sites *sites);

#endif
