#!/bin/sh
# test-fiber-pool.sh - examples/fiber/pool.cpp, a buffered_channel worker pool
# on work_stealing over three threads: with --bug (the producer returns
# without close()) the report's finding names this example's own lines for
# the workers (pop), main (join) and the helper threads' main fibers
# (done_cv.wait, found through std::thread's entry, where the adapter's own
# line was named before) and no line of the adapter; the correct twin has no
# finding.
. "$(dirname "$0")/lib/engine.sh"
PROG="$CT_BUILD/examples/fiber-pool"
[ -x "$PROG" ] || skip "Boost.Fiber not installed (libboost-fiber-dev)"
SRC="$(dirname "$0")/../examples/fiber/pool.cpp"
at() { grep -n "$1" "$SRC" | head -n 1 | cut -d: -f1; }

"$COROTRACER" run --quiet --lossless -o "$T/bug.ctrace" -- "$PROG" --bug > "$T/out" 2>&1 ||
  fail "fiber-pool --bug: $(cat "$T/out")"
grep -q 'the pool never finished$' "$T/out" || fail "the bug did not show: $(cat "$T/out")"
"$COROTRACER" report "$T/bug.ctrace" -o "$T/bug.md" || fail "report failed"
sed -n '/^### 1\. \[error\]/,/^### 2\./p' "$T/bug.md" > "$T/f1"
for want in "worker (pool.cpp:$(at 'workers park here'))\`: 6 coroutines" \
  "(pool.cpp:$(at 'helpers park here'))\`: 2 coroutines" \
  "main (pool.cpp:$(at 'main parks here'))\`: 1 coroutine"; do
  grep -qF "$want" "$T/f1" || fail "want '$want' in the first finding; report says:
$(grep -A8 '^### ' "$T/bug.md")"
done
grep -q 'boost_fiber\.hpp' "$T/bug.md" && fail "the adapter's own line named: $(grep 'boost_fiber\.hpp' "$T/bug.md")"

"$COROTRACER" run --quiet --lossless -o "$T/ok.ctrace" -- "$PROG" > "$T/out" 2>&1 || fail "fiber-pool: $(cat "$T/out")"
"$COROTRACER" report "$T/ok.ctrace" -o "$T/ok.md" || fail "report failed"
grep -q '^### ' "$T/ok.md" && fail "findings in the correct twin: $(grep -A6 '^### ' "$T/ok.md")"
exit 0
