/* test-trace.c - unit test of the trace reader (src/format/parse.c): each
 * record type parsed into its fields, the three ways a line is rejected
 * (syntax, shape, torn), string decoding, and the line streamer (lines across
 * buffer refills, a last line without '\n', a line past the buffer, the
 * callback stopping the read, a read error), with and without reading ahead, and
 * the fast path for event lines against the general scanner on those lines
 * and every one-byte edit, deletion and cut of them. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/trace.h"
#include "lib/check.h"

static enum ct_line_err parse(const char *s, struct ct_line *l) {
  return ct_parse_line(s, strlen(s), l);
}

static void test_event(void) {
  struct ct_line l;
  ASSERT_EQ(parse("{\"probe_id\":7,\"tid\":100,\"addr\":\"0x00000000000012ab\",\"seq\":6,"
                  "\"is_active\":false,\"ts\":1001,\"kind\":\"suspend\",\"ev\":2,"
                  "\"site\":\"0x12AB\",\"wait\":\"fd\",\"obj\":12,\"future_key\":[1,{\"a\":null}]}",
                  &l),
            CT_LINE_OK);
  ASSERT_EQ(l.type, CT_LINE_EVENT);
  ASSERT_EQ(l.kind, CT_EV_SUSPEND);
  ASSERT_UINT64_EQ(l.probe_id, 7);
  ASSERT_UINT64_EQ(l.tid, 100);
  ASSERT_UINT64_EQ(l.addr, 0x12ab);
  ASSERT_UINT64_EQ(l.site, 0x12ab);
  ASSERT_UINT64_EQ(l.seq, 6);
  ASSERT_UINT64_EQ(l.ts, 1001);
  ASSERT_UINT64_EQ(l.ev, 2);
  ASSERT_EQ(l.is_active, 0);
  ASSERT_EQ(l.wait, 1);
  ASSERT_UINT64_EQ(l.obj, 12);
  ASSERT_EQ(l.obj_is_str, 0);
  ASSERT(CT_HAS(&l, CT_K_SITE));
  ASSERT(!CT_HAS(&l, CT_K_FROM));

  /* A wake on a pointer, from another coroutine; obj as a hex string. */
  ASSERT_EQ(parse("{\"probe_id\":1,\"ts\":3,\"kind\":\"wake\",\"from\":4,\"wait\":\"ptr\","
                  "\"obj\":\"0xffffffffffffffff\"}",
                  &l),
            CT_LINE_OK);
  ASSERT_EQ(l.kind, CT_EV_WAKE);
  ASSERT_UINT64_EQ(l.from, 4);
  ASSERT_EQ(l.wait, 2);
  ASSERT_UINT64_EQ(l.obj, UINT64_MAX);
  ASSERT_EQ(l.obj_is_str, 1);

  /* The reference's v1 lines: no kind, is_active says what happened. */
  ASSERT_EQ(parse(" {\"probe_id\":4342902816,\"tid\":1238734,\"addr\":\"0x0000000000000000\","
                  "\"seq\":2,\"is_active\":true,\"ts\":168788988797000}\r",
                  &l),
            CT_LINE_OK);
  ASSERT_EQ(l.kind, CT_EV_V1);
  ASSERT_EQ(l.is_active, 1);
  ASSERT_UINT64_EQ(l.probe_id, 4342902816u);
}

static void test_records(void) {
  struct ct_line l;
  char buf[64];
  ASSERT_EQ(parse("{\"type\":\"meta\",\"format\":\"corotracer-trace\",\"format_version\":1,"
                  "\"run_id\":\"00ff\",\"target_pid\":4242,\"command\":[\"./app\",\"-x\"],"
                  "\"clock\":{\"mono_ns\":1000,\"wall_ns\":2000}}",
                  &l),
            CT_LINE_OK);
  ASSERT_EQ(l.type, CT_LINE_META);
  ASSERT_UINT64_EQ(l.target_pid, 4242);
  ASSERT_UINT64_EQ(l.mono_ns, 1000); /* nested in clock */
  ASSERT_UINT64_EQ(l.wall_ns, 2000);
  ct_str_copy(&l.format, buf, sizeof buf);
  ASSERT_STR_EQ(buf, "corotracer-trace");

  ASSERT_EQ(parse("{\"type\":\"module\",\"pid\":1,\"start\":\"0x1000\",\"end\":\"0x2000\","
                  "\"offset\":\"0x0\",\"path\":\"/bin/x\"}",
                  &l),
            CT_LINE_OK);
  ASSERT_EQ(l.type, CT_LINE_MODULE);
  ASSERT_UINT64_EQ(l.start, 0x1000);
  ASSERT_UINT64_EQ(l.end, 0x2000);
  /* A module without its path cannot be used. */
  ASSERT_EQ(parse("{\"type\":\"module\",\"pid\":1,\"start\":\"0x1000\",\"end\":\"0x2000\","
                  "\"offset\":\"0x0\"}",
                  &l),
            CT_LINE_SHAPE);

  ASSERT_EQ(parse("{\"type\":\"coroutine\",\"probe_id\":9,\"label\":\"conn\",\"parent\":3}", &l),
            CT_LINE_OK);
  ASSERT_EQ(l.type, CT_LINE_COROUTINE);
  ASSERT_UINT64_EQ(l.parent, 3);
  ASSERT_EQ(parse("{\"type\":\"coroutine\",\"label\":\"conn\"}", &l), CT_LINE_SHAPE);

  ASSERT_EQ(parse("{\"type\":\"end\",\"ts\":5,\"exit\":{\"signal\":9,\"name\":\"SIGKILL\"},"
                  "\"events\":3,\"lost\":1}",
                  &l),
            CT_LINE_OK);
  ASSERT_EQ(l.type, CT_LINE_END);
  ASSERT(CT_HAS(&l, CT_K_SIGNAL));
  ASSERT_EQ(l.exit_signal, 9);
  ASSERT_UINT64_EQ(l.lost, 1);
  ASSERT_EQ(parse("{\"type\":\"end\",\"exit\":{\"code\":-1}}", &l), CT_LINE_OK);
  ASSERT_EQ(l.exit_code, -1);

  /* A record type of a later version: skipped, not an error. */
  ASSERT_EQ(parse("{\"type\":\"gauge\",\"value\":1.5e3}", &l), CT_LINE_OK);
  ASSERT_EQ(l.type, CT_LINE_OTHER);
}

static void test_rejected(void) {
  struct ct_line l;
  const char *syntax[] = {
      "",
      "{",
      "[1,2]",
      "{\"probe_id\":1,\"ts\":2,\"is_active\":true} x",
      "{\"probe_id\":1,}",
      "{\"label\":\"unterminated}",
      "{\"label\":\"bad \\q escape\"}",
      "{\"label\":\"short \\u12\"}",
      "{\"probe_id\":-}",
      "{\"x\":tru}",
      "{\"probe_id\" 1}",
  };
  for (size_t i = 0; i < sizeof syntax / sizeof syntax[0]; i++)
    ASSERT_EQ(parse(syntax[i], &l), CT_LINE_SYNTAX);

  /* Nesting deeper than the scanner's limit is refused, not recursed into. */
  char deep[400];
  size_t n = 0;
  deep[n++] = '{';
  for (int i = 0; i < 40; i++)
    n += (size_t)snprintf(deep + n, sizeof deep - n, "\"a\":[");
  deep[n] = '\0';
  ASSERT_EQ(parse(deep, &l), CT_LINE_SYNTAX);

  const char *shape[] = {
      "{\"probe_id\":\"7\",\"ts\":2,\"is_active\":true}", /* a number as a string */
      "{\"probe_id\":7,\"ts\":-2,\"is_active\":true}",    /* negative u64 */
      "{\"probe_id\":7,\"ts\":2.5,\"is_active\":true}",   /* fraction */
      "{\"probe_id\":7,\"ts\":2,\"is_active\":1}",        /* bool as a number */
      "{\"probe_id\":7,\"ts\":2,\"kind\":\"jump\"}",      /* unknown kind */
      "{\"probe_id\":7,\"ts\":2,\"kind\":\"wake\",\"wait\":\"sock\"}",
      "{\"probe_id\":7,\"ts\":2,\"kind\":\"wake\",\"site\":\"12ab\"}", /* hex without 0x */
      "{\"probe_id\":7,\"ts\":2,\"kind\":\"wake\",\"site\":\"0x12345678901234567\"}",
      "{\"probe_id\":7,\"is_active\":true}", /* no ts */
      "{\"ts\":2,\"is_active\":true}",       /* no probe_id */
      "{\"probe_id\":7,\"ts\":2}",           /* neither kind nor is_active */
      "{\"probe_id\":7,\"ts\":18446744073709551616,\"is_active\":true}", /* 2^64 */
  };
  for (size_t i = 0; i < sizeof shape / sizeof shape[0]; i++)
    ASSERT_EQ(parse(shape[i], &l), CT_LINE_SHAPE);

  /* Torn slot copies, as the reference engine wrote them. */
  const char *torn[] = {
      "{\"probe_id\":0,\"tid\":0,\"addr\":\"0x000099833fb94158\",\"is_active\":false,\"ts\":0}",
      "{\"probe_id\":5,\"tid\":72057594037927936,\"seq\":1,\"is_active\":false,\"ts\":9}",
      "{\"probe_id\":5,\"tid\":1,\"is_active\":false,\"ts\":4611686018427387904}",
  };
  for (size_t i = 0; i < sizeof torn / sizeof torn[0]; i++)
    ASSERT_EQ(parse(torn[i], &l), CT_LINE_TORN);
}

static void test_strings(void) {
  struct ct_line l;
  char buf[32];
  ASSERT_EQ(parse("{\"type\":\"coroutine\",\"probe_id\":1,"
                  "\"label\":\"a\\\"b\\\\c\\/d\\n\\t\\u0041\\u00e9\"}",
                  &l),
            CT_LINE_OK);
  ASSERT_EQ(l.label.esc, 1);
  ASSERT_EQ(ct_str_copy(&l.label, buf, sizeof buf), 12);
  ASSERT_STR_EQ(buf, "a\"b\\c/d\n\tA\xc3\xa9"); /* \u00e9: UTF-8 */
  /* Truncated to the buffer, always NUL-terminated, never half a character. */
  ASSERT_EQ(ct_str_copy(&l.label, buf, 4), 3);
  ASSERT_STR_EQ(buf, "a\"b");
  ASSERT_EQ(ct_str_copy(&l.label, buf, 12), 10);
  ASSERT_STR_EQ(buf, "a\"b\\c/d\n\tA");
  ASSERT_EQ(ct_str_copy(&l.label, buf, 0), 0);
}

/* \u escapes to UTF-8 (surrogate pairs too), \u0000 kept visible, and the one
 * UTF-8 rule: invalid bytes and lone surrogates become U+FFFD. */
static void test_utf8(void) {
  static const struct {
    const char *line, *want;
  } cases[] = {
      {"{\"type\":\"coroutine\",\"probe_id\":1,\"label\":\"emoji \\ud83d\\ude00 \\u00e9\"}",
       "emoji \xf0\x9f\x98\x80 \xc3\xa9"},
      {"{\"type\":\"coroutine\",\"probe_id\":1,\"label\":\"a\\u0000b\"}", "a\\u0000b"},
      {"{\"type\":\"coroutine\",\"probe_id\":1,\"label\":\"\\u20ac\\ud800x\\udc00\"}",
       "\xe2\x82\xac\xef\xbf\xbdx\xef\xbf\xbd"},
      /* raw bytes: valid UTF-8 kept, the rest replaced byte by byte (fast path: no escape) */
      {"{\"type\":\"coroutine\",\"probe_id\":1,\"label\":\"\xc3\xa9\xff\xc3("
       "\xed\xa0\x80\xf0\x9f\x98\x80\"}",
       "\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xf0\x9f\x98\x80"},
      {"{\"type\":\"coroutine\",\"probe_id\":1,\"label\":\"\xc0\xaf\xf4\x90\x80\x80\"}",
       "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
  };
  char buf[64];
  struct ct_line l;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ASSERT_EQ(parse(cases[i].line, &l), CT_LINE_OK);
    ASSERT_EQ(ct_str_copy(&l.label, buf, sizeof buf), strlen(cases[i].want));
    ASSERT_STR_EQ(buf, cases[i].want);
  }
  /* A surrogate pair that does not fit is left out whole. */
  ASSERT_EQ(parse(cases[0].line, &l), CT_LINE_OK);
  ASSERT_EQ(ct_str_copy(&l.label, buf, 9), 6);
  ASSERT_STR_EQ(buf, "emoji ");
  /* A string without escapes (esc 0: a binary trace's) keeps its backslashes. */
  const struct ct_str raw = {"a\\u0041b", 8, 0};
  ASSERT_EQ(ct_str_copy(&raw, buf, sizeof buf), 8);
  ASSERT_STR_EQ(buf, "a\\u0041b");
  ASSERT_EQ(ct_utf8_len("\xe2\x82", 2), 0);
  ASSERT_EQ(ct_utf8_clean("a\xff"
                          "b",
                          3, buf, sizeof buf),
            5);
  ASSERT_STR_EQ(buf, "a\xef\xbf\xbd"
                     "b");
}

/* The streamer's callback: records line numbers and results; stops at stop_at.
 * With ct_trace_read_ahead, each line that parsed must have been peeked at
 * before, in order, but an event line of the coroutine of the event line
 * before it (shown: the number of peeks matched so far). */
struct seen {
  uint64_t lines, ok, syntax, stop_at;
  uint64_t last_probe, last_event_probe;
  uint64_t peeked[4096], npeeked, shown;
  int ahead;
};

static int on_line(void *ctx, uint64_t lineno, enum ct_line_err err, const struct ct_line *l) {
  struct seen *s = ctx;
  ASSERT_UINT64_EQ(lineno, s->lines + 1);
  s->lines = lineno;
  if (err == CT_LINE_OK) {
    int event = l->type == CT_LINE_EVENT;
    if (s->ahead && !(event && l->probe_id == s->last_event_probe)) {
      ASSERT_UINT64_LT(s->shown, s->npeeked);
      ASSERT_UINT64_EQ(s->peeked[s->shown++], l->probe_id);
    }
    if (event)
      s->last_event_probe = l->probe_id;
    s->ok++;
    s->last_probe = l->probe_id;
  } else if (err == CT_LINE_SYNTAX) {
    s->syntax++;
  }
  return lineno == s->stop_at ? 42 : 0;
}

static void on_peek(void *ctx, const struct ct_line *l) {
  struct seen *s = ctx;
  ASSERT_UINT64_LT(s->npeeked, sizeof s->peeked / sizeof s->peeked[0]);
  s->peeked[s->npeeked++] = l->probe_id;
}

/* ct_trace_read, or ct_trace_read_ahead when s->ahead. */
static int read_all(int fd, struct seen *s, uint64_t *bytes) {
  return s->ahead ? ct_trace_read_ahead(fd, 0, on_line, on_peek, s, bytes)
                  : ct_trace_read(fd, 0, on_line, s, bytes);
}

/* A memory file holding text, at offset 0. */
static int file_of(const char *text, size_t len) {
  int fd = memfd_create("test-trace", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, text, len), (ssize_t)len);
  ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
  return fd;
}

static void test_stream(int ahead) {
  /* 2000 events, two of each coroutine (about 100 KB: many refills of the
   * 4 KiB buffer), a blank line, a line of 1 MiB (the buffer grows), then a
   * last line without '\n'. */
  size_t cap = 2u << 20, len = 0;
  char *text = malloc(cap);
  struct seen *s = malloc(sizeof *s);
  ASSERT_NOT_NULL(text);
  ASSERT_NOT_NULL(s);
  for (int i = 1; i <= 2000; i++)
    len += (size_t)snprintf(text + len, cap - len,
                            "{\"probe_id\":%d,\"tid\":1,\"is_active\":true,\"ts\":%d}\n",
                            (i + 1) / 2, i);
  text[len++] = '\n';
  len += (size_t)snprintf(text + len, cap - len,
                          "{\"type\":\"coroutine\",\"probe_id\":5000,\"label\":\"");
  memset(text + len, 'x', 1u << 20);
  len += 1u << 20;
  len += (size_t)snprintf(text + len, cap - len,
                          "\"}\n{\"probe_id\":7777,\"ts\":1,\"is_active\":false}");

  *s = (struct seen){.ahead = ahead};
  uint64_t bytes = 0;
  int fd = file_of(text, len);
  ASSERT_OK(read_all(fd, s, &bytes));
  close(fd);
  ASSERT_UINT64_EQ(bytes, len);
  ASSERT_UINT64_EQ(s->lines, 2003);
  ASSERT_UINT64_EQ(s->ok, 2002);
  ASSERT_UINT64_EQ(s->syntax, 1); /* the blank line */
  ASSERT_UINT64_EQ(s->last_probe, 7777);
  if (ahead) /* the second event of each coroutine is not shown */
    ASSERT_UINT64_EQ(s->npeeked, 1002);

  /* The callback's non-zero value stops the read and is returned. */
  *s = (struct seen){.stop_at = 10, .ahead = ahead};
  bytes = 0;
  fd = file_of(text, len);
  ASSERT_EQ(read_all(fd, s, &bytes), 42);
  close(fd);
  ASSERT_UINT64_EQ(s->lines, 10);

  /* A read error is -errno. */
  *s = (struct seen){.ahead = ahead};
  ASSERT_EQ(read_all(-1, s, &bytes), -EBADF);
  ASSERT_UINT64_EQ(s->lines, 0);

  /* An empty file: no line, and not a trace (the reason is for a caller
   * with a ct_read_diag: "empty file, not a trace"). */
  fd = file_of("", 0);
  ASSERT_EQ(read_all(fd, s, &bytes), -EBADMSG);
  close(fd);
  ASSERT_UINT64_EQ(s->lines, 0);
  free(s);
  free(text);
}

/* ct_parse_line (fast path first) and the general scanner agree on line
 * (the same result, the same fields, the label the same slice). The n bytes
 * are copied to a block of exactly that size, so that under AddressSanitizer
 * a scanner reading past the end of a cut line is caught. */
static void same_as_general(const char *src, size_t n) {
  char *line = malloc(n ? n : 1);
  ASSERT(line != NULL);
  memcpy(line, src, n);
  struct ct_line a, b;
  enum ct_line_err ea = ct_parse_line(line, n, &a), eb = ct_parse_line_general(line, n, &b);
  if (ea != eb)
    FAIL("%.*s: fast path %d, general scanner %d", (int)n, line, ea, eb);
  if (ea == CT_LINE_OK &&
      (memcmp(&a, &b, offsetof(struct ct_line, exit_code)) != 0 ||
       (CT_HAS(&a, CT_K_LABEL) &&
        (a.label.p != b.label.p || a.label.n != b.label.n || a.label.esc != b.label.esc))))
    FAIL("%.*s: fast path and general scanner decode it differently", (int)n, line);
  free(line);
}

static void test_fast_path(void) {
  /* Event lines as the engines write them, each form of each key. */
  static const char *const lines[] = {
      "{\"probe_id\":1,\"tid\":100,\"addr\":\"0x0000555555560000\",\"seq\":2,\"is_active\":false,"
      "\"ts\":1000000001000,\"kind\":\"create\",\"ev\":0,\"site\":\"0x0000555555560000\","
      "\"parent\":0}",
      "{\"probe_id\":7,\"tid\":101,\"addr\":\"0x0000000000000000\",\"seq\":4,\"is_active\":true,"
      "\"ts\":1000000002000,\"kind\":\"resume\",\"ev\":1}",
      "{\"probe_id\":7,\"tid\":101,\"addr\":\"0x00005555555600c8\",\"seq\":6,\"is_active\":false,"
      "\"ts\":1000000003000,\"kind\":\"suspend\",\"ev\":2,\"site\":\"0x00005555555600c8\","
      "\"wait\":\"fd\",\"obj\":-1}",
      "{\"probe_id\":7,\"tid\":101,\"addr\":\"0x00005555555600c8\",\"seq\":6,\"is_active\":false,"
      "\"ts\":1000000003000,\"kind\":\"suspend\",\"ev\":2,\"site\":\"0x00005555555600c8\","
      "\"wait\":\"ptr\",\"obj\":\"0x00007fffABCDef00\"}",
      "{\"probe_id\":7,\"tid\":101,\"addr\":\"0x00005555555600c8\",\"seq\":8,\"is_active\":false,"
      "\"ts\":1000000004000,\"kind\":\"suspend\",\"ev\":3,\"site\":\"0x00005555555600c8\","
      "\"wait\":\"exit\"}",
      "{\"probe_id\":9,\"tid\":102,\"addr\":\"0x0000555555560010\",\"seq\":2,\"is_active\":false,"
      "\"ts\":1000000005000,\"kind\":\"wake\",\"ev\":4,\"site\":\"0x0000555555560010\",\"from\":7}",
      "{\"probe_id\":9,\"tid\":102,\"addr\":\"0x0000555555560018\",\"seq\":2,\"is_active\":false,"
      "\"ts\":1000000006000,\"kind\":\"destroy\",\"ev\":5,\"site\":\"0x0000555555560018\"}",
      "{\"probe_id\":9999999999999999999,\"tid\":4294967295,\"addr\":\"0x1\",\"seq\":0,"
      "\"is_active\":true,\"ts\":4611686018427387903,\"ev\":18446744073709551615}",
      "{\"probe_id\":4342902816,\"tid\":1238734,\"addr\":\"0x0000000000000000\",\"seq\":2,"
      "\"is_active\":true,\"ts\":168788988797000}",
      "{\"ts\":5,\"probe_id\":3,\"is_active\":false,\"obj\":-9223372036854775807,\"wait\":\"fd\"}",
      "{\"probe_id\":0,\"tid\":0,\"addr\":\"0x000099833fb94158\",\"is_active\":false,\"ts\":0}",
      "{\"type\":\"coroutine\",\"probe_id\":12,\"station\":3,\"pid\":4242,\"birth_ts\":"
      "1000000001000,"
      "\"label\":\"conn\",\"create_site\":\"0x0000555555560000\",\"parent\":7}",
      "{\"type\":\"coroutine\",\"probe_id\":12,\"station\":3,\"pid\":4242,\"birth_ts\":1,"
      "\"create_site\":\"0x00005555555600A0\",\"parent\":0}",
  };
  /* Each class the scanners tell apart, and the bytes just outside them. */
  static const char edits[] = " \t0195afxX\"',:{}[]-+.eE\\nut/@AFGgz`"
                              "\x01\x7f\x80\xff";
  char buf[512];
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
    size_t n = strlen(lines[i]);
    ASSERT_LT(n + 1, sizeof buf);
    same_as_general(lines[i], n);
    for (size_t at = 0; at < n; at++) {
      same_as_general(lines[i], at); /* cut short */
      memcpy(buf, lines[i], at);     /* one byte deleted */
      memcpy(buf + at, lines[i] + at + 1, n - at - 1);
      same_as_general(buf, n - 1);
      memcpy(buf, lines[i], n);
      for (const char *c = edits; *c; c++) { /* one byte replaced, one inserted */
        buf[at] = *c;
        same_as_general(buf, n);
      }
      memcpy(buf, lines[i], at);
      memcpy(buf + at + 1, lines[i] + at, n - at);
      for (const char *c = edits; *c; c++) {
        buf[at] = *c;
        same_as_general(buf, n + 1);
      }
    }
  }
  /* A key twice: the general scanner's last-one-wins, not the fast path. */
  const char *twice = "{\"probe_id\":1,\"ts\":2,\"is_active\":true,\"ts\":3}";
  struct ct_line l;
  ASSERT_EQ(parse(twice, &l), CT_LINE_OK);
  ASSERT_UINT64_EQ(l.ts, 3);
  same_as_general(twice, strlen(twice));
}

int main(void) {
  test_event();
  test_fast_path();
  test_records();
  test_rejected();
  test_strings();
  test_utf8();
  test_stream(0);
  test_stream(1);
  puts("test-trace: ok");
  return 0;
}
