/* jsonesc.h - the one JSON string escaper, strict UTF-8: the engine's writer
 * (ct_w_json, src/format/writer.c) formats labels, paths and names with it,
 * the binary trace's decoder (src/format/ctrace_dec.c) gives a label the
 * very text its JSONL line has, the dashboard's model (ct_buf_json, which
 * asks for CT_JSON_HTML), the report's JSON and the JSONL export write their
 * strings through it. Header-only. */
#ifndef CT_JSONESC_H
#define CT_JSONESC_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Room ct_json_escape may need for n bytes: a \u00XX per byte, and two more
 * for the quotes its callers put around it. */
#define CT_JSON_ESC_MAX(n) (6 * (n) + 2)
/* Also escape '<' and '>' (\u003c, \u003e): JSON inside an HTML page's
 * <script> can then never close it. */
#define CT_JSON_HTML 1u

/* s (n bytes) escaped as the inside of a JSON string (no quotes) at out
 * (CT_JSON_ESC_MAX(n) bytes of room): quote and backslash escaped, control
 * characters and DEL as \u00XX (and '<', '>' under CT_JSON_HTML); valid UTF-8
 * passes through, each byte >= 0x80 that starts no valid sequence (labels are
 * arbitrary bytes) becomes U+FFFD, so the text is valid UTF-8. Returns the
 * length written. */
static inline size_t ct_json_escape_as(char *out, const char *s, size_t n, unsigned flags) {
  static const char digits[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)s;
  char *o = out;
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c == '"' || c == '\\') {
      *o++ = '\\';
      *o++ = (char)c;
      i++;
    } else if (c < 0x20 || c == 0x7f || ((flags & CT_JSON_HTML) && (c == '<' || c == '>'))) {
      memcpy(o, (char[]){'\\', 'u', '0', '0', digits[c >> 4], digits[c & 0xf]}, 6);
      o += 6;
      i++;
    } else if (c < 0x80) {
      *o++ = (char)c;
      i++;
    } else {
      /* Validate one UTF-8 sequence (no overlongs, no surrogates). */
      size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
      if (c > 0xf4)
        len = 0;
      int ok = len > 0 && i + len <= n;
      for (size_t k = 1; ok && k < len; k++)
        ok = (p[i + k] & 0xc0) == 0x80;
      if (ok && len == 3) {
        unsigned c1 = p[i + 1];
        ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
      }
      if (ok && len == 4) {
        unsigned c1 = p[i + 1];
        ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
      }
      if (ok) {
        memcpy(o, s + i, len);
        o += len;
        i += len;
      } else {
        memcpy(o, "\xef\xbf\xbd", 3);
        o += 3;
        i++;
      }
    }
  }
  return (size_t)(o - out);
}

/* ct_json_escape_as without flags: the trace format's strings. */
static inline size_t ct_json_escape(char *out, const char *s, size_t n) {
  return ct_json_escape_as(out, s, n, 0);
}

/* s (n bytes) as a quoted JSON string (ct_json_escape) on f, in pieces cut
 * between UTF-8 sequences (a valid one is never split). */
static inline void ct_json_fput(FILE *f, const char *s, size_t n) {
  char out[CT_JSON_ESC_MAX(256)];
  fputc('"', f);
  while (n) {
    size_t k = n < 256 ? n : 256;
    for (size_t back = 0; k < n && back < 3 && ((unsigned char)s[k] & 0xc0) == 0x80; back++)
      k--; /* s[k] continues a sequence: end the piece before it starts */
    fwrite(out, 1, ct_json_escape(out, s, k), f);
    s += k;
    n -= k;
  }
  fputc('"', f);
}

#endif /* CT_JSONESC_H */
