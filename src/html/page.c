/* page.c - the self-contained page: the template of web/dashboard.html with
 * its stylesheet, script and the base64 data pasted in, and the data's zlib
 * compression. Nothing from the trace reaches the HTML as markup: the data is
 * base64 (no '<'), and the page puts every string in as text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "html/assets.h"
#include "html/page.h"

int ct_zw_init(struct ct_zw *w, struct ct_buf *z, const struct ct_zdrain *drain) {
  memset(w, 0, sizeof *w);
  z_stream *s = calloc(1, sizeof *s);
  /* Level 1: the data is mostly small numbers; higher levels cost time for
   * a few percent (docs/BENCHMARKS.md "dashboard"). */
  if (!s || deflateInit(s, 1) != Z_OK) {
    free(s);
    return -ENOMEM;
  }
  w->s = s;
  w->z = z;
  w->drain = drain && drain->fn ? drain : NULL;
  return 0;
}

/* Compressed bytes held before they are drained. */
#define DRAIN_AT (1u << 20)

static void zw_run(struct ct_zw *w, const void *p, size_t n, int flush) {
  z_stream *s = w->s;
  s->next_in = (Bytef *)p;
  s->avail_in = (uInt)n;
  int zr;
  do {
    if (ct_buf_reserve(w->z, 1 << 18)) {
      w->err = -ENOMEM;
      return;
    }
    s->next_out = (Bytef *)w->z->p + w->z->n;
    s->avail_out = (uInt)(w->z->cap - w->z->n - 1);
    zr = deflate(s, flush);
    w->z->n = (size_t)((char *)s->next_out - w->z->p);
    if (zr == Z_STREAM_ERROR) {
      w->err = -EIO;
      return;
    }
    if (w->drain && w->z->n >= DRAIN_AT) {
      int rc = w->drain->fn(w->drain->ctx, w->z, 0);
      if (rc) {
        w->err = rc;
        return;
      }
    }
  } while (s->avail_in || s->avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
}

void ct_zw_put(struct ct_zw *w, const void *p, size_t n) {
  const char *c = p;
  while (n && !w->err) {
    size_t k = n > (1u << 30) ? 1u << 30 : n;
    zw_run(w, c, k, Z_NO_FLUSH);
    w->raw += k;
    c += k;
    n -= k;
  }
}

void ct_zw_align(struct ct_zw *w, size_t align) {
  static const char zeros[16];
  ct_zw_put(w, zeros, (align - w->raw % align) % align);
}

int ct_zw_finish(struct ct_zw *w) {
  if (!w->s)
    return w->err ? w->err : -ENOMEM;
  if (!w->err)
    zw_run(w, NULL, 0, Z_FINISH);
  if (!w->err && w->drain)
    w->err = w->drain->fn(w->drain->ctx, w->z, 1);
  deflateEnd(w->s);
  free(w->s);
  w->s = NULL;
  return w->err;
}

static void base64_block(struct ct_buf *out, const unsigned char *p, size_t n);

/* Base64 in blocks of CHUNK_B64 characters, each closing the data element
 * and opening the next: Chromium's parser handles many 64 KiB text nodes far
 * faster than one of 15 MB, and the page decodes block by block. */
#define CHUNK_B64 65536u
#define DATA_BREAK "</script>\n<script type=\"application/x-corotracer-data\">"

static void base64(struct ct_buf *out, const unsigned char *p, size_t n) {
  for (size_t off = 0; off < n; off += CHUNK_B64 / 4 * 3) {
    size_t k = n - off < CHUNK_B64 / 4 * 3 ? n - off : CHUNK_B64 / 4 * 3;
    if (off)
      ct_buf_puts(out, DATA_BREAK);
    base64_block(out, p + off, k);
  }
}

static void base64_block(struct ct_buf *out, const unsigned char *p, size_t n) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (ct_buf_reserve(out, (n + 2) / 3 * 4 + 1))
    return;
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
  if (!m)
    return -EINVAL;
  ct_buf_put(out, *pos, (size_t)(m - *pos));
  *pos = m + strlen(marker);
  return 0;
}

/* The template up to the data (stylesheet, mode, script pasted in). */
static int render_head(int live, struct ct_buf *out, const char **pos) {
  const char *end = ct_asset_html + ct_asset_len(ct_asset_html, ct_asset_html_end);
  int rc;
  if ((rc = upto(out, pos, end, "/*CT:CSS*/")))
    return rc;
  ct_buf_put(out, ct_asset_css, ct_asset_len(ct_asset_css, ct_asset_css_end));
  if ((rc = upto(out, pos, end, "CT:MODE")))
    return rc;
  ct_buf_puts(out, live ? "live" : "offline");
  /* The script comes before the data: it inflates the blocks as they are parsed. */
  if ((rc = upto(out, pos, end, "/*CT:JS*/")))
    return rc;
  ct_buf_put(out, ct_asset_js, ct_asset_len(ct_asset_js, ct_asset_js_end));
  return upto(out, pos, end, "CT:DATA");
}

static void render_tail(struct ct_buf *out, const char *pos) {
  const char *end = ct_asset_html + ct_asset_len(ct_asset_html, ct_asset_html_end);
  ct_buf_put(out, pos, (size_t)(end - pos));
}

int ct_page_render(const struct ct_buf *z, int live, struct ct_buf *out) {
  const char *pos = ct_asset_html;
  int rc = render_head(live, out, &pos);
  if (rc)
    return rc;
  if (z)
    base64(out, (const unsigned char *)z->p, z->n);
  render_tail(out, pos);
  return out->err;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0)
      return -errno;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

int ct_page_drain(void *ctx, struct ct_buf *z, int final) {
  struct ct_page_stream *ps = ctx;
  int rc;
  if (!ps->tail) {
    ps->tail = ct_asset_html;
    if ((rc = render_head(0, &ps->text, &ps->tail)))
      return rc;
  }
  size_t unit = CHUNK_B64 / 4 * 3, n = final ? z->n : z->n / unit * unit, off = 0;
  for (; off < n || (final && !ps->blocks); off += unit) {
    size_t k = n - off < unit ? n - off : unit;
    if (ps->blocks++)
      ct_buf_puts(&ps->text, DATA_BREAK);
    base64_block(&ps->text, (const unsigned char *)z->p + off, k);
  }
  memmove(z->p, z->p + n, z->n - n);
  z->n -= n;
  if (final)
    render_tail(&ps->text, ps->tail);
  if (ps->text.err)
    return ps->text.err;
  rc = write_all(ps->fd, ps->text.p, ps->text.n);
  ps->bytes += ps->text.n;
  ps->text.n = 0;
  return rc;
}
