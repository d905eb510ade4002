#!/bin/sh
# test-fiber-nomem.sh - the Boost.Fiber adapter out of memory
# (tests/lib/fiber-nomem.cpp), traced: each of its allocations at a fiber's
# first sight fails in turn; the program must run to its end (a bad_alloc out
# of the adapter's noexcept hooks terminated it), and the trace still reads.
. "$(dirname "$0")/lib/engine.sh"
PROG="$CT_BUILD/tests/lib/fiber-nomem"
[ -x "$PROG" ] || skip "Boost.Fiber not installed (libboost-fiber-dev)"
"$COROTRACER" run --quiet --lossless -o "$T/t.ctrace" -- "$PROG" > "$T/out" 2>&1 ||
  fail "fiber-nomem: $(cat "$T/out")"
grep -q '^launched [1-9][0-9]* of 24$' "$T/out" || fail "fiber-nomem: $(cat "$T/out")"
"$COROTRACER" report "$T/t.ctrace" -o "$T/r.md" || fail "report failed"
exit 0
