#!/bin/sh
# test-fiber-switches.sh - the Boost.Fiber adapter (include/corotracer/boost_fiber.hpp)
# on examples/fiber/switches.cpp: yields, a sleep with the dispatcher idle, a
# wake from another thread. No finding; every yield seen at the yield line;
# the sleep and the remote wait each seen suspended for at least a
# millisecond (both last 20 ms: a switch out recorded only when the
# dispatcher picks the next fiber, and not when it finds none and sleeps,
# would read as a wait of ~0).
. "$(dirname "$0")/lib/engine.sh"
PROG="$CT_BUILD/examples/fiber-switches"
[ -x "$PROG" ] || skip "Boost.Fiber not installed (libboost-fiber-dev)"
SRC="$(dirname "$0")/../examples/fiber/switches.cpp"
lineof() { grep -n "// the $1\$" "$SRC" | cut -d: -f1; }

"$COROTRACER" run --quiet --lossless -o "$T/t.jsonl" -- "$PROG" > "$T/out" 2>&1 ||
  fail "fiber-switches: $(cat "$T/out")"
"$COROTRACER" report "$T/t.jsonl" $untimed --json "$T/findings.json" -o "$T/report.md" || fail "report failed"
tr -d '\n' < "$T/findings.json" | grep -q '"kind":' && fail "findings:
$(grep -A6 '^### ' "$T/report.md")"
# row LINE: the report's suspension-site row of switches.cpp:LINE
row() { grep "^| \`[^\`]* (switches.cpp:$1)\` |" "$T/report.md"; }
# (the yield row by its function: with clang the line may be the inlined
# this_fiber::yield()'s, operations.hpp)
grep '^| `[^`]*yielder ([^`]*)` |' "$T/report.md" | grep -q '^| [^|]* | 200 |' ||
  fail "want 200 suspensions at the yield line; sites:
$(grep '^| ' "$T/report.md")"
for what in sleep "remote wake"; do
  # waited p50: at least 1 ms
  row "$(lineof "$what")" | grep -q '^| [^|]* | 1 | \([0-9.]* s\|[1-9][0-9.]* ms\) |' ||
    fail "want one suspension of 1 ms or more at the $what line; sites:
$(grep '^| ' "$T/report.md")"
done
exit 0
