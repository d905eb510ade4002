/* test-jsonesc.c - unit test of the one JSON string escaper (src/common/jsonesc.h)
 * and its two wrappers: ct_json_fput (the report's JSON, the JSONL export) and
 * ct_buf_json (the dashboard's model, src/common/buf.c). Strict UTF-8: a byte
 * that starts no valid sequence becomes U+FFFD, a valid one passes whole, also
 * where ct_json_fput cuts a long string into pieces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jsonesc.h"
#include "lib/check.h"

/* s (n bytes) through ct_json_fput, as a NUL-terminated string (malloc'd). */
static char *fput(const char *s, size_t n) {
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  ASSERT_PTR_NE(f, NULL);
  ct_json_fput(f, s, n);
  ASSERT_EQ(fclose(f), 0);
  return out;
}

/* in (n bytes) escapes to want (quotes included) through ct_json_fput, and
 * through ct_buf_json too when html is 0 (neither '<' nor '>' in it). */
static void expect(const char *in, size_t n, const char *want, int html) {
  char *got = fput(in, n);
  ASSERT_STR_EQ(got, want);
  free(got);
  if (html)
    return;
  struct ct_buf b = {0};
  ct_buf_json(&b, in, n);
  ct_buf_put(&b, "", 1);
  ASSERT_EQ(b.err, 0);
  ASSERT_STR_EQ(b.p, want);
  ct_buf_free(&b);
}
#define EXPECT(in, want) expect(in, sizeof(in) - 1, want, 0)

int main(void) {
  EXPECT("plain", "\"plain\"");
  EXPECT("q\"b\\", "\"q\\\"b\\\\\"");
  EXPECT("\n\t\x01\x7f", "\"\\u000a\\u0009\\u0001\\u007f\"");
  EXPECT("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
         "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  /* Strict UTF-8: a stray byte, an overlong form, a surrogate, a code point
   * past U+10FFFF, a sequence cut short: each byte U+FFFD. */
  EXPECT("\xff", "\"\xef\xbf\xbd\"");
  EXPECT("\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"");
  EXPECT("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  EXPECT("\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  EXPECT("a\xe2\x82", "\"a\xef\xbf\xbd\xef\xbf\xbd\"");
  EXPECT("nul\0x", "\"nul\\u0000x\"");
  /* '<' and '>' only where the JSON lands in a page. */
  expect("<b>", 3, "\"<b>\"", 1);
  struct ct_buf b = {0};
  ct_buf_json(&b, "</script>", 9);
  ct_buf_put(&b, "", 1);
  ASSERT_STR_EQ(b.p, "\"\\u003c/script\\u003e\"");
  ct_buf_free(&b);

  /* Long strings go out in pieces: a valid sequence across every piece
   * boundary (at each of its bytes) stays whole. */
  for (size_t at = 250; at <= 258; at++) {
    char in[600], want[610];
    memset(in, 'a', sizeof in);
    memcpy(in + at, "\xf0\x9f\x98\x80", 4);
    want[0] = '"';
    memcpy(want + 1, in, sizeof in);
    memcpy(want + 1 + sizeof in, "\"", 2);
    expect(in, sizeof in, want, 0);
  }
  puts("ok: one escaper, strict UTF-8, whole sequences across pieces");
  return 0;
}
