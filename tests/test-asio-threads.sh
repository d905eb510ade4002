#!/bin/sh
# test-asio-threads.sh - the Asio adapter with four threads in one io_context's
# run() (tests/lib/asio-threads.cpp): every session and client finishes, and
# the report finds nothing (every stand-in ended with its chain). An adapter
# that reads a stand-in after handing it on loses or ends stand-ins early
# ("coroutines waiting when the program stopped"; under ASan: a
# heap-use-after-free, as the adapter of a88c2eb did). The timing findings
# are off ($untimed): on a loaded machine the kernel alone can stop a thread
# past their 100 ms.
. "$(dirname "$0")/lib/engine.sh"
PROG="$CT_BUILD/tests/lib/asio-threads"
[ -x "$PROG" ] || skip "standalone Asio not installed (libasio-dev)"
for i in 1 2 3; do
  "$COROTRACER" run --quiet --lossless -o "$T/t.jsonl" -- "$PROG" > "$T/out" 2>&1 ||
    fail "run $i: asio-threads: $(cat "$T/out")"
  grep -q '^done 8$' "$T/out" || fail "run $i: asio-threads: $(cat "$T/out")"
  "$COROTRACER" report "$T/t.jsonl" $untimed -o "$T/r.md" || fail "run $i: report failed"
  grep -q '^### ' "$T/r.md" && fail "run $i: findings in a clean run:
$(grep -A6 '^### ' "$T/r.md")"
done
exit 0
