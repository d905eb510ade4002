/* jsonesc.h - a JSON string's escaping, spelled once: the engine's writer
 * (ct_w_json, src/engine/writer.c) formats labels, paths and names with it,
 * and the binary trace's decoder (src/analysis/ctrace_dec.c) gives a label
 * the very text its JSONL line has. Header-only. */
#ifndef CT_JSONESC_H
#define CT_JSONESC_H

#include <stddef.h>
#include <string.h>

/* Room ct_json_escape may need for n bytes: a \u00XX per byte, the quotes. */
#define CT_JSON_ESC_MAX(n) (6 * (n) + 2)

/* s (n bytes) as a quoted JSON string at out (CT_JSON_ESC_MAX(n) bytes of
 * room): escapes what JSON requires (quote, backslash, control characters);
 * bytes >= 0x80 that are not valid UTF-8 (labels are arbitrary bytes) become
 * U+FFFD so the text stays valid UTF-8. Returns the length written. */
static inline size_t ct_json_escape(char *out, const char *s, size_t n) {
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
    } else if (c < 0x20 || c == 0x7f) {
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

#endif /* CT_JSONESC_H */
