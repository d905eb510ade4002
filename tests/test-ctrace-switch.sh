#!/bin/sh
# test-ctrace-switch.sh - issue #32: switches (corotracer_switch) end to end,
# and old binary traces.
#  1. a trace written by the binary format of 2026-11 (before switch records,
#     tests/data/switch-2026-11.ctrace: 3 threads of 12 coroutines switching,
#     fd and pointer waits, wakes, exits) still reads: its report is the one
#     checked in with it, its `export jsonl` the JSONL its run wrote (sha256);
#     so does a version 2 trace (switch entries, wakers as ids);
#  2. round trip, switch-heavy (every record kind, every wait kind), many
#     coroutines interleaved on several threads (switch records and, for
#     waits on pointers, their three records): one run's binary converts to
#     exactly its JSONL, which holds
#     the three events (suspend, wake, resume) of every switch, each
#     coroutine's ev counting up from 0 without a gap;
#  3. the same report from both formats of that run.
. "$(dirname "$0")/lib/engine.sh"
SDKW="$CT_BUILD/tests/lib/sdk-writer"
DATA="$(dirname "$0")/data"

echo "== 1. a trace of 2026-11's binary format"
OLD="$DATA/switch-2026-11.ctrace"
"$COROTRACER" report "$OLD" > "$T/old.md" 2> "$T/err" || fail "report of the old trace: exit $?: $(cat "$T/err")"
[ -s "$T/err" ] && fail "report of the old trace said: $(cat "$T/err")"
grep -v '^- \*\*Trace\*\*' "$T/old.md" > "$T/old.cmp"
diff "$DATA/switch-2026-11.report.md" "$T/old.cmp" > "$T/diff" ||
  fail "the old trace's report changed: $(head -20 "$T/diff")"
"$COROTRACER" export jsonl "$OLD" -o "$T/old.jsonl" -q 2> "$T/err" || fail "export jsonl of the old trace: exit $?"
sum=$(sha256sum < "$T/old.jsonl" | cut -d' ' -f1)
[ "$sum" = 00b53d946ad209763266bd8943e5acdb9c5f6eb22bd4273a5ba2974a77199ce6 ] ||
  fail "the old trace's JSONL is not its run's: sha256 $sum"
# Version 2 (switch entries, a wake's waker a varint id; before the waker by
# slot): tests/data/switch-v2-2026-11.ctrace, `sdk-writer switch 2 6 4`, 14 of
# its 46 wakes from a coroutine.
"$COROTRACER" export jsonl "$DATA/switch-v2-2026-11.ctrace" -o "$T/v2.jsonl" -q 2> "$T/err" ||
  fail "export jsonl of the version 2 trace: exit $?: $(cat "$T/err")"
sum=$(sha256sum < "$T/v2.jsonl" | cut -d' ' -f1)
[ "$sum" = 1947a66fafa74b5647cb6371adb6599fb3b39b7c7eada02f93c0c6ff5643faf5 ] ||
  fail "the version 2 trace's JSONL is not its run's: sha256 $sum"

echo "== 2. round trip: switches on 3 threads, 40 coroutines each"
"$COROTRACER" run --quiet --lossless -o "$T/sw.ctrace" --also-jsonl "$T/sw.jsonl" -- \
  "$SDKW" switch 3 40 50 "$T/w" > /dev/null || fail "run: exit $?"
"$COROTRACER" export jsonl "$T/sw.ctrace" -o "$T/sw.back" -q 2> "$T/err" ||
  fail "export jsonl: exit $?: $(cat "$T/err")"
[ -s "$T/err" ] && fail "export said: $(cat "$T/err")"
cmp "$T/sw.jsonl" "$T/sw.back" || fail "the binary trace converts to other bytes"
# ... wakes whose waker is a coroutine among them (the binary's waker by slot).
grep '"kind":"wake"' "$T/sw.jsonl" | grep -qv '"from":0[,}]' || fail "no wake from a coroutine"
# Every event the SDK was asked for is a line (lossless), three per switch.
"$CTJL" -e probe_id ev kind < "$T/sw.jsonl" > "$T/ev"
[ "$(wc -l < "$T/ev")" = "$(cat "$T/w")" ] || fail "$(wc -l < "$T/ev") event lines, $(cat "$T/w") written"
for k in create suspend resume wake destroy; do
  grep -q " $k\$" "$T/ev" || fail "no $k event"
done
for w in fd ptr exit coroutine; do
  grep -q "\"wait\":\"$w\"" "$T/sw.jsonl" || fail "no wait on $w"
done
n=$(awk '$3 == "wake"' "$T/ev" | wc -l)
# Per thread: 40 x 50 - 1 switches, every 5th or 11th without the wake of
# `from` but followed by a corotracer_wake: one wake each.
[ "$n" = $((3 * (40 * 50 - 1))) ] || fail "$n wakes, not $((3 * (40 * 50 - 1)))"
awk '{ if ($2 != next_ev[$1] + 0) { print "coroutine " $1 ": ev " $2 " after " next_ev[$1] - 1; bad = 1 }
       next_ev[$1] = $2 + 1 } END { exit bad }' "$T/ev" > "$T/gaps" || fail "ev gaps: $(head -3 "$T/gaps")"
b=$(wc -c < "$T/sw.ctrace") e=$(wc -l < "$T/ev")
echo "   $e events, binary $b bytes ($(awk -v b="$b" -v e="$e" 'BEGIN { printf "%.2f", 3 * b / e }') per switch, records included)"

echo "== 3. the same report from both formats"
same_reports "$T/sw.ctrace" "$T/sw.jsonl"
grep -q "$e events" "$T/b.md" || fail "the report does not count $e events"
echo "test-ctrace-switch: ok"
