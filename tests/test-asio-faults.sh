#!/bin/sh
# test-asio-faults.sh - the Asio adapter against a hostile program
# (tests/lib/asio-faults.cpp), traced: io_contexts built while another thread
# runs handlers (under TSan, a race on the adapter's switch fails the run),
# and two handlers that throw out of run(), after which no stand-in may stay
# in the adapter's table (one stayed per throw, forever).
. "$(dirname "$0")/lib/engine.sh"
PROG="$CT_BUILD/tests/lib/asio-faults"
[ -x "$PROG" ] || skip "standalone Asio not installed (libasio-dev)"
"$COROTRACER" run --quiet --lossless -o "$T/t.ctrace" -- "$PROG" > "$T/out" 2>&1 ||
  fail "asio-faults: $(cat "$T/out")"
grep -q '^thrown 2$' "$T/out" || fail "want 2 exceptions out of run(): $(cat "$T/out")"
grep -q '^table 0$' "$T/out" || fail "stand-ins left in the table after throwing handlers: $(cat "$T/out")"
"$COROTRACER" report "$T/t.ctrace" -o "$T/r.md" || fail "report failed"
exit 0
