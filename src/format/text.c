/* text.c - text from a trace made valid UTF-8: JSON string escapes decoded
 * (ct_str_copy) and the one rule for bytes that are not UTF-8 (ct_utf8_len,
 * ct_utf8_clean), shared by every reader and writer. */
#include <stdint.h>
#include <string.h>

#include "format/parse.h"

size_t ct_utf8_len(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  if (!n)
    return 0;
  if (p[0] < 0x80)
    return 1;
  /* Lead byte: length and the range the second byte must be in (no overlong
   * forms, no surrogates, nothing above U+10FFFF). */
  size_t k;
  unsigned lo = 0x80, hi = 0xbf;
  if (p[0] >= 0xc2 && p[0] <= 0xdf)
    k = 2;
  else if (p[0] >= 0xe0 && p[0] <= 0xef)
    k = 3, lo = p[0] == 0xe0 ? 0xa0 : 0x80, hi = p[0] == 0xed ? 0x9f : 0xbf;
  else if (p[0] >= 0xf0 && p[0] <= 0xf4)
    k = 4, lo = p[0] == 0xf0 ? 0x90 : 0x80, hi = p[0] == 0xf4 ? 0x8f : 0xbf;
  else
    return 0;
  if (n < k || p[1] < lo || p[1] > hi)
    return 0;
  for (size_t i = 2; i < k; i++)
    if ((p[i] & 0xc0) != 0x80)
      return 0;
  return k;
}

/* Code point cp as UTF-8 into out[4]; its length. */
static size_t utf8_put(uint32_t cp, char *out) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xc0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xe0 | cp >> 12);
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | cp >> 18);
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  out[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

size_t ct_utf8_clean(const char *s, size_t n, char *buf, size_t cap) {
  size_t o = 0;
  if (!cap)
    return 0;
  for (size_t i = 0; i < n;) {
    size_t k = ct_utf8_len(s + i, n - i);
    const char *src = k ? s + i : REPLACEMENT;
    size_t len = k ? k : 3;
    if (o + len >= cap)
      break; /* never half a character */
    memcpy(buf + o, src, len);
    o += len;
    i += k ? k : 1;
  }
  buf[o] = 0;
  return o;
}

/* The 4 hex digits at p (n bytes left) as a number; -1 if they are not. */
static long hex4(const char *p, size_t n) {
  long v = 0;
  if (n < 4)
    return -1;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    long d = c >= '0' && c <= '9'   ? c - '0'
             : c >= 'a' && c <= 'f' ? c - 'a' + 10
             : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                    : -1;
    if (d < 0)
      return -1;
    v = v << 4 | d;
  }
  return v;
}

/* The escape at p ('\\' and at least one byte after it; n bytes left)
 * decoded into out[12]: its length; *used: the bytes of p it took. */
static size_t unescape(const char *p, size_t n, char *out, size_t *used) {
  static const char from[] = "bfnrt\"\\/", to[] = "\b\f\n\r\t\"\\/";
  const char *c = strchr(from, p[1]);
  *used = 2;
  if (p[1] && c) {
    out[0] = to[c - from];
    return 1;
  }
  long v = p[1] == 'u' ? hex4(p + 2, n - 2) : -1;
  if (v < 0) { /* not an escape (the scanner lets none through): kept as it is */
    out[0] = p[1];
    return 1;
  }
  *used = 6;
  if (v == 0) { /* NUL would cut the text wherever it goes: kept visible */
    memcpy(out, "\\u0000", 6);
    return 6;
  }
  if (v >= 0xd800 && v <= 0xdbff && n >= 12 && p[6] == '\\' && p[7] == 'u') {
    long lo = hex4(p + 8, n - 8);
    if (lo >= 0xdc00 && lo <= 0xdfff) {
      *used = 12;
      return utf8_put((uint32_t)(0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00)), out);
    }
  }
  if (v >= 0xd800 && v <= 0xdfff) { /* a lone surrogate is no character */
    memcpy(out, REPLACEMENT, 3);
    return 3;
  }
  return utf8_put((uint32_t)v, out);
}

size_t ct_str_copy(const struct ct_str *s, char *buf, size_t cap) {
  size_t o = 0;
  if (!cap)
    return 0;
  for (size_t i = 0; i < s->n;) {
    char tmp[12];
    const char *src = s->p + i;
    size_t len, used;
    if (s->esc && *src == '\\' && i + 1 < s->n) { /* esc: a JSON string's escapes */
      len = unescape(src, s->n - i, tmp, &used);
      src = tmp;
    } else if ((len = used = ct_utf8_len(src, s->n - i)) == 0) {
      src = REPLACEMENT, len = 3, used = 1;
    }
    if (o + len >= cap)
      break; /* never half a character */
    memcpy(buf + o, src, len);
    o += len;
    i += used;
  }
  buf[o] = 0;
  return o;
}
