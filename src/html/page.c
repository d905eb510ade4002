/* page.c - the self-contained page: the template of web/dashboard.html with
 * its stylesheet, script and the base64 data pasted in, and the data's zlib
 * compression. Nothing from the trace reaches the HTML as markup: the data is
 * base64 (no '<'), and the page puts every string in as text. */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "html/assets.h"
#include "html/page.h"

int ct_dash_compress(const void *p, size_t n, struct ct_buf *z) {
  z_stream s;
  memset(&s, 0, sizeof s);
  /* Level 1: the data is mostly small numbers; higher levels cost time for
   * a few percent (docs/BENCHMARKS.md "dashboard"). */
  if (deflateInit(&s, 1) != Z_OK) return -ENOMEM;
  int rc = 0;
  s.next_in = (Bytef *)p;
  size_t left = n;
  for (;;) {
    uInt chunk = left > (1u << 30) ? 1u << 30 : (uInt)left;
    s.avail_in = chunk;
    left -= chunk;
    int flush = left ? Z_NO_FLUSH : Z_FINISH, zr;
    do {
      if (ct_buf_reserve(z, 1 << 20)) {
        rc = -ENOMEM;
        goto out;
      }
      s.next_out = (Bytef *)z->p + z->n;
      s.avail_out = (uInt)(z->cap - z->n - 1);
      zr = deflate(&s, flush);
      z->n = (size_t)((char *)s.next_out - z->p);
      if (zr == Z_STREAM_ERROR) {
        rc = -EIO;
        goto out;
      }
    } while (s.avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
    if (flush == Z_FINISH) break;
  }
out:
  deflateEnd(&s);
  return rc;
}

static void base64(struct ct_buf *out, const unsigned char *p, size_t n) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (ct_buf_reserve(out, (n + 2) / 3 * 4 + 1)) return;
  char *o = out->p + out->n;
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
    o[0] = t[v >> 18];
    o[1] = t[(v >> 12) & 63];
    o[2] = t[(v >> 6) & 63];
    o[3] = t[v & 63];
    o += 4;
  }
  if (i < n) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
    o[0] = t[v >> 18];
    o[1] = t[(v >> 12) & 63];
    o[2] = i + 1 < n ? t[(v >> 6) & 63] : '=';
    o[3] = '=';
    o += 4;
  }
  out->n = (size_t)(o - out->p);
}

/* Copies the template up to marker, then skips the marker; 0 or -EINVAL when
 * the template has no such marker (a broken build). */
static int upto(struct ct_buf *out, const char **pos, const char *end, const char *marker) {
  const char *m = memmem(*pos, (size_t)(end - *pos), marker, strlen(marker));
  if (!m) return -EINVAL;
  ct_buf_put(out, *pos, (size_t)(m - *pos));
  *pos = m + strlen(marker);
  return 0;
}

int ct_page_render(const struct ct_buf *z, int live, struct ct_buf *out) {
  const char *pos = ct_asset_html, *end = ct_asset_html + ct_asset_len(ct_asset_html, ct_asset_html_end);
  int rc;
  if ((rc = upto(out, &pos, end, "/*CT:CSS*/"))) return rc;
  ct_buf_put(out, ct_asset_css, ct_asset_len(ct_asset_css, ct_asset_css_end));
  if ((rc = upto(out, &pos, end, "CT:MODE"))) return rc;
  ct_buf_puts(out, live ? "live" : "offline");
  if ((rc = upto(out, &pos, end, "CT:DATA"))) return rc;
  if (z) base64(out, (const unsigned char *)z->p, z->n);
  if ((rc = upto(out, &pos, end, "/*CT:JS*/"))) return rc;
  ct_buf_put(out, ct_asset_js, ct_asset_len(ct_asset_js, ct_asset_js_end));
  ct_buf_put(out, pos, (size_t)(end - pos));
  return out->err;
}
