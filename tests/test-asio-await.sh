#!/bin/sh
# test-asio-await.sh - the Asio adapter on asio::awaitable coroutines
# (tests/lib/asio-await.cpp): the operations they await are started by Asio
# after the coroutine suspended (its frame is not on the stack). One passes
# its source location (asio::use_awaitable_t<>()), which the adapter records
# as a text site: the report names the co_await line in the user's file. The
# plain use_awaitable, redirect_error and as_tuple pass none: the report names
# the awaiting coroutine's definition line in the user's file, not Asio's.
. "$(dirname "$0")/lib/engine.sh"
PROG="$CT_BUILD/tests/lib/asio-await"
[ -x "$PROG" ] || skip "standalone Asio not installed (libasio-dev)"
SRC="$(dirname "$0")/lib/asio-await.cpp"
line=$(grep -n 'the waiter parks here' "$SRC" | cut -d: -f1)
"$PROG" > /dev/null 2>&1
[ $? -ne 77 ] || skip "this build's Asio has no awaitable with source locations (clang 14 + libstdc++ 12)"

for fmt in ctrace jsonl; do
  "$COROTRACER" run --quiet --lossless --format $fmt -o "$T/t.$fmt" -- "$PROG" > "$T/out" 2>&1 ||
    fail "$fmt: asio-await: $(cat "$T/out")"
  "$COROTRACER" report "$T/t.$fmt" $untimed --json "$T/f.json" -o "$T/r.md" || fail "$fmt: report failed"
  [ "$(grep -c '^### ' "$T/r.md")" = 1 ] &&
    grep -q '^### 1\. \[error\] 5 coroutines suspended forever' "$T/r.md" &&
    grep -q "^- \`waiter (asio-await.cpp:$line)\`: 1 coroutine" "$T/r.md" &&
    grep -q "\"function\":\"waiter\",\"file\":\"[^\"]*tests/lib/asio-await.cpp\",\"line\":$line" "$T/f.json" ||
    fail "$fmt: want one lost wakeup at waiter (asio-await.cpp:$line); report says:
$(grep -A8 '^### ' "$T/r.md")"
  for co in plain_waiter plain_reader read_step tuple_reader; do
    l=$(grep -n "// parks in $co\$" "$SRC" | cut -d: -f1)
    grep -q "^- \`[^\`]*$co[^\`]* (asio-await.cpp:$l)\`: 1 coroutine" "$T/r.md" ||
      fail "$fmt: want $co (asio-await.cpp:$l) among the lost wakeups; report says:
$(grep -A8 '^### ' "$T/r.md")"
  done
done
exit 0
