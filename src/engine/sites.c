/* sites.c - the text-site area (docs/PROTOCOL.md "Text sites"): records the
 * probes published since the last look become `site` lines of the trace. The
 * area is the target's to write: every record is checked before use. */
#include <string.h>

#include "engine/engine.h"

void ct_sites_init(struct ct_sites *s, void *map, uint64_t off, uint32_t bytes) {
  memset(s, 0, sizeof *s);
  s->area = (char *)map + off;
  s->hdr = map;
  s->bytes = bytes;
}

/* The record at s->done, checked: its length, or 0 (not written yet, or
 * malformed: then s->bad is set and reading stops for good). */
static uint32_t record(struct ct_sites *s, uint32_t used, const struct ctp_site_rec **out) {
  if (s->done > used || used - s->done < sizeof(struct ctp_site_rec))
    return 0;
  const struct ctp_site_rec *r = (const struct ctp_site_rec *)(s->area + s->done);
  uint32_t len = atomic_load_explicit(&r->len, memory_order_acquire);
  if (len == 0)
    return 0; /* claimed, not yet published */
  const char *t = r->text, *e = s->area + s->done + len;
  const char *z1, *z2;
  if (len % 8 || len < sizeof *r + 2 || len > s->bytes - s->done ||
      !(z1 = memchr(t, 0, (size_t)(e - t))) || !(z2 = memchr(z1 + 1, 0, (size_t)(e - z1 - 1))) ||
      z1 - t > CTP_SITE_NAME_MAX || z2 - z1 - 1 > CTP_SITE_NAME_MAX) {
    s->bad = 1;
    return 0;
  }
  *out = r;
  return len;
}

int ct_sites_scan(struct ct_sites *s, struct ct_writer *w) {
  if (!s->area || s->bad)
    return 0;
  uint32_t used = atomic_load_explicit(&s->hdr->sites_used, memory_order_relaxed);
  if (used > s->bytes)
    used = s->bytes; /* claims past the end failed: nothing there */
  int n = 0;
  const struct ctp_site_rec *r;
  for (uint32_t len; (len = record(s, used, &r)); s->done += len, n++) {
    /* Copied out first: the target may rewrite the area while we read it. */
    char file[CTP_SITE_NAME_MAX + 1], function[CTP_SITE_NAME_MAX + 1];
    size_t nf = strnlen(r->text, CTP_SITE_NAME_MAX);
    memcpy(file, r->text, nf);
    file[nf] = '\0';
    size_t nfn = strnlen(r->text + nf + 1, CTP_SITE_NAME_MAX);
    memcpy(function, r->text + nf + 1, nfn);
    function[nfn] = '\0';
    ct_rec_site(w, r->pid, CTP_SITE_TEXT | s->done, file, r->line, function);
  }
  return n;
}
