/* sites.c - the text-site area (docs/PROTOCOL.md "Text sites"): records the
 * probes published since the last look become `site` lines of the trace. The
 * area is the target's to write: each record is copied out, then checked. */
#include <string.h>

#include "common/ctp.h"
#include "engine/sites.h"
#include "format/records.h"
#include "format/writer.h"

/* Longest record a probe writes: header, two names and their NULs, padding. */
#define SITE_REC_MAX ((sizeof(struct ctp_site_rec) + 2 * (CTP_SITE_NAME_MAX + 1) + 7) & ~(size_t)7)

void ct_sites_init(struct ct_sites *s, void *map, uint64_t off, uint32_t bytes) {
  memset(s, 0, sizeof *s);
  s->area = (char *)map + off;
  s->hdr = map;
  s->bytes = bytes;
}

/* One record, copied out of the area. */
struct rec {
  uint32_t len, line, pid;
  const char *file, *function; /* in buf, NUL-terminated */
  char buf[SITE_REC_MAX];
};

/* The record at s->done, copied into *r and checked: 1, or 0 (not written
 * yet; or malformed: then s->bad is set and reading stops for good). */
static int record(struct ct_sites *s, uint32_t used, struct rec *r) {
  if (s->done > used || used - s->done < sizeof(struct ctp_site_rec))
    return 0;
  const struct ctp_site_rec *h = (const struct ctp_site_rec *)(s->area + s->done);
  uint32_t len = atomic_load_explicit(&h->len, memory_order_acquire);
  if (len == 0)
    return 0; /* claimed, not yet published */
  if (len % 8 || len < sizeof *h + 2 || len > SITE_REC_MAX || len > s->bytes - s->done) {
    s->bad = 1;
    return 0;
  }
  memcpy(r->buf, h, len); /* the target may rewrite it: only the copy is used */
  r->len = len;
  memcpy(&r->line, r->buf + offsetof(struct ctp_site_rec, line), sizeof r->line);
  memcpy(&r->pid, r->buf + offsetof(struct ctp_site_rec, pid), sizeof r->pid);
  const char *t = r->buf + sizeof *h, *e = r->buf + len;
  const char *z1 = memchr(t, 0, (size_t)(e - t));
  const char *z2 = z1 ? memchr(z1 + 1, 0, (size_t)(e - z1 - 1)) : NULL;
  if (!z2 || z1 - t > CTP_SITE_NAME_MAX || z2 - z1 - 1 > CTP_SITE_NAME_MAX) {
    s->bad = 1;
    return 0;
  }
  r->file = t;
  r->function = z1 + 1;
  return 1;
}

int ct_sites_scan(struct ct_sites *s, struct ct_writer *w) {
  if (!s->area || s->bad)
    return 0;
  uint32_t used = atomic_load_explicit(&s->hdr->sites_used, memory_order_relaxed);
  if (used > s->bytes)
    used = s->bytes; /* claims past the end failed: nothing there */
  int n = 0;
  struct rec r;
  for (; record(s, used, &r); s->done += r.len, n++)
    ct_rec_site(w, r.pid, CTP_SITE_TEXT | s->done, r.file, r.line, r.function);
  return n;
}
