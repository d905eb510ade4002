/* site.c - text sites: corotracer_site() writes a file, line and function
 * into the shared text-site area once and hands out its token (docs/PROTOCOL.md
 * "Text sites"); the other calls take the token as a site, unchanged. */
#include "corotracer.h"

#include <pthread.h>
#include <string.h>

#include "probe/probe.h"

/* Tokens handed out, by (file, line, function) pointer identity, so that a
 * caller passing the same literals again (a C++ source_location default
 * argument) claims no new record. Open addressing; full: no caching. */
#define SITE_CACHE 1024u
static struct {
  const char *file, *function;
  unsigned line;
  uint64_t token;
} cache[SITE_CACHE];
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t name_len(const char *s) {
  return s ? strnlen(s, CTP_SITE_NAME_MAX) : 0;
}

/* A new record in the area of our engine's file: its token, or 0. */
static uint64_t publish(const char *file, unsigned line, const char *function) {
  struct ctp_header *h = corotracer__probe.hdr;
  uint64_t off = __atomic_load_n(&h->sites_off, __ATOMIC_RELAXED);
  uint32_t bytes = __atomic_load_n(&h->sites_bytes, __ATOMIC_RELAXED);
  if (h->ext_magic != CTP_EXT_MAGIC || bytes == 0 || off % 8 || off > corotracer__probe.map_len ||
      bytes > corotracer__probe.map_len - off)
    return 0; /* not our engine, or no area */
  size_t nf = name_len(file), nfn = name_len(function);
  uint32_t len = (uint32_t)((sizeof(struct ctp_site_rec) + nf + 1 + nfn + 1 + 7) & ~(size_t)7);
  uint32_t at = atomic_fetch_add_explicit(&h->sites_used, len, memory_order_relaxed);
  if (at % 8 || at > bytes || len > bytes - at)
    return 0; /* full (the cursor stays past the end: later claims fail too) */
  struct ctp_site_rec *r = (struct ctp_site_rec *)((char *)h + off + at);
  r->line = line;
  r->pid = corotracer__probe.pid;
  r->pad = 0;
  memcpy(r->text, file ? file : "", nf);
  r->text[nf] = '\0';
  memcpy(r->text + nf + 1, function ? function : "", nfn);
  memset(r->text + nf + 1 + nfn, 0, len - sizeof *r - nf - 1 - nfn);
  atomic_store_explicit(&r->len, len, memory_order_release); /* the fields above first */
  return CTP_SITE_TEXT | at;
}

/* Contract: see include/corotracer.h. */
const void *corotracer_site(const char *file, unsigned line, const char *function) {
  if (corotracer__ensure_attached() != CT_TRACED)
    return NULL;
  uintptr_t k = ((uintptr_t)file * 31u + (uintptr_t)function) * 0x9e3779b97f4a7c15ull + line;
  uint32_t i = (uint32_t)(k >> 40) % SITE_CACHE;
  uint64_t token = 0;
  int found = 0;
  pthread_mutex_lock(&cache_mu);
  for (uint32_t n = 0; n < SITE_CACHE && !found; n++, i = (i + 1) % SITE_CACHE) {
    if (!cache[i].token) { /* free: claim a record, remember it */
      if ((token = publish(file, line, function))) {
        cache[i].file = file;
        cache[i].function = function;
        cache[i].line = line;
        cache[i].token = token;
      }
      found = 1;
    } else if (cache[i].file == file && cache[i].function == function && cache[i].line == line) {
      token = cache[i].token;
      found = 1;
    }
  }
  if (!found) /* the cache is full: a record each time */
    token = publish(file, line, function);
  pthread_mutex_unlock(&cache_mu);
  return (const void *)(uintptr_t)token;
}
