#!/bin/sh
# test-check.sh - the test kit itself: each tests/lib/check.h assertion passes
# when it holds and, when it does not, prints "file:line: Assertion failed:"
# with the expression and both values and exits 1; check.sh's fail ends the
# test, or counts and goes on with CHECK_KEEP_GOING=1.
set -u
. "$(dirname "$0")/lib/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/t.c" <<'C'
#include <errno.h>
#include "lib/check.h"
static void cleanup(void) { fputs("cleanup ran\n", stderr); }
int main(int argc, char **argv) {
  int three = 3;
  uint64_t big = UINT64_MAX;
  const char *s = "abc";
  ASSERT(three == 3);
  ASSERT_EQ(three, 3);
  ASSERT_LT(-1, three);
  ASSERT_UINT64_GT(big, 3);
  ASSERT_STR_EQ(s, "abc");
  ASSERT_STR_NE(s, NULL);
  ASSERT_PTR_EQ(s, s);
  ASSERT_NOT_NULL(s);
  ASSERT_MEM_EQ(s, "abc", 3);
  ASSERT_OK(0);
  switch (argc > 1 ? argv[1][0] : '-') {
  case 'a': ASSERT(three == 4); break;
  case 'e': ASSERT_EQ(three, 4); break;
  case 'u': ASSERT_UINT64_EQ(big, 1); break;
  case 's': ASSERT_STR_EQ(s, "abd"); break;
  case 'n': ASSERT_STR_EQ(s, NULL); break;
  case 'p': ASSERT_NULL(s); break;
  case 'm': ASSERT_MEM_EQ(s, "abd", 3); break;
  case 'o': ASSERT_OK(-ENOENT); break;
  case 'g': ASSERT_GE(-2, three); break;
  case 'P': ASSERT_PTR_EQ(s, NULL); break;
  case 'f': FAIL("line %d: %s", 7, "torn"); break;
  case 'c': CHECK_ATFAIL(cleanup); ASSERT_EQ(three, 5); break;
  }
  return 0;
}
C
cc -std=c11 -Wall -Wextra -Werror -I tests -o "$tmp/t" "$tmp/t.c" || fail "check.h does not build"
"$tmp/t" >"$tmp/out" 2>&1 || fail "passing assertions failed: $(cat "$tmp/out")"
# expect CASE MESSAGE: the failure of case CASE is exactly MESSAGE, exit 1.
expect() {
  "$tmp/t" "$1" >"$tmp/out" 2>&1
  rc=$?
  [ $rc -eq 1 ] || fail "case $1: exit $rc, want 1"
  line=$(grep -n "case '$1'" "$tmp/t.c" | cut -d: -f1)
  [ "$(cat "$tmp/out")" = "$tmp/t.c:$line: Assertion failed: $2" ] ||
    fail "case $1: got '$(cat "$tmp/out")', want '$tmp/t.c:$line: Assertion failed: $2'"
}
expect a 'three == 4'
expect e 'three == 4 (3 == 4)'
expect u 'big == 1 (18446744073709551615 [0xffffffffffffffff] == 1 [0x1])'
expect s 's == "abd" ("abc" == "abd")'
expect n 's == NULL ("abc" == "(null)")'
expect m 's == "abd" (3 bytes differ)'
expect o '-ENOENT == 0 (-2: No such file or directory)'
expect g '-2 >= three (-2 >= 3)'
expect f 'line 7: torn'
# CHECK_ATFAIL: the cleanup runs after the failure line, before the exit.
"$tmp/t" c >"$tmp/out" 2>&1 && fail "case c passed"
[ "$(sed -n 2p "$tmp/out")" = "cleanup ran" ] || fail "CHECK_ATFAIL: $(cat "$tmp/out")"
grep -q "Assertion failed: three == 5 (3 == 5)" "$tmp/out" || fail "CHECK_ATFAIL case: $(cat "$tmp/out")"
"$tmp/t" P >"$tmp/out" 2>&1 && fail "ASSERT_PTR_EQ of different pointers passed"
grep -q "Assertion failed: s == NULL (0x[0-9a-f]* == (nil))" "$tmp/out" || fail "ASSERT_PTR_EQ: $(cat "$tmp/out")"
"$tmp/t" p >"$tmp/out" 2>&1 && fail "ASSERT_NULL of a pointer passed"
grep -q "Assertion failed: s == NULL (0x[0-9a-f]* == (nil))" "$tmp/out" || fail "ASSERT_NULL: $(cat "$tmp/out")"

# check.sh: fail ends the test; with CHECK_KEEP_GOING=1 it counts.
( . tests/lib/check.sh; fail "first"; echo "not reached" ) >"$tmp/out" 2>&1 && fail "fail did not exit non-zero"
[ "$(cat "$tmp/out")" = "FAIL: first" ] || fail "fail printed: $(cat "$tmp/out")"
( CHECK_KEEP_GOING=1; . tests/lib/check.sh; fail "one"; fail "two"; echo "went on"; check_done; echo "not reached" ) \
  >"$tmp/out" 2>&1 && fail "check_done did not exit non-zero after failures"
[ "$(tr '\n' '|' <"$tmp/out")" = "FAIL: one|FAIL: two|went on|2 failures|" ] || fail "keep going: $(cat "$tmp/out")"
echo "ok"
