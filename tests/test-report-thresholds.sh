#!/bin/sh
# test-report-thresholds.sh - `report --stuck-ms`, and the waits below it not
# silent: tests/lib/short-wait parks a coroutine 300 ms (at least), never wakes
# it, then destroys it. Judged with --stuck-ms 200 (a lost wakeup); with
# --stuck-ms 100000 no finding, but the overview and the JSON say that one
# coroutine was destroyed while waiting under the threshold and which
# --stuck-ms would judge it. Only thresholds the sleep cannot cross are used.
. "$(dirname "$0")/lib/report.sh"
prog=$CT_BUILD/tests/lib/short-wait
[ -x "$prog" ] || { fail "$prog not built"; check_done; }
"$COROTRACER" run --quiet --lossless -o "$tmp/t.ctrace" -- "$prog" > "$tmp/run.out" 2>&1 ||
  { fail "corotracer run exit $?: $(cat "$tmp/run.out")"; check_done; }
# report NAME OPTIONS...: Markdown in $tmp/NAME.md, JSON in $tmp/NAME.json.
report() {
  name=$1; shift
  "$COROTRACER" report "$@" "$tmp/t.ctrace" --json "$tmp/$name.json" > "$tmp/$name.md" 2> "$tmp/$name.err" ||
    fail "$name: report exit $?: $(cat "$tmp/$name.err")"
}
report judged --stuck-ms 200
grep -q '"kind":"lost_wakeup","severity":"error","count":1,' "$tmp/judged.json" ||
  fail "--stuck-ms 200: no lost wakeup: $(grep '^###' "$tmp/judged.md")"
grep -q 'destroyed while still waiting: never woken' "$tmp/judged.md" || fail "--stuck-ms 200: title"
! grep -q 'Not judged, short waits' "$tmp/judged.md" || fail "--stuck-ms 200: the judged wait also counted short"

report quiet --stuck-ms 100000
grep -q '^No findings' "$tmp/quiet.md" || fail "--stuck-ms 100000: findings: $(grep '^###' "$tmp/quiet.md")"
line=$(grep '^- \*\*Not judged, short waits\*\*' "$tmp/quiet.md")
[ -n "$line" ] || fail "--stuck-ms 100000: silent: $(sed -n '/## Overview/,/## Findings/p' "$tmp/quiet.md")"
echo "$line" | grep -q ': 1 coroutine destroyed while still waiting, never woken, after [0-9.]* [mu]*s, not longer than the 100[.0]* s threshold: `--stuck-ms [0-9]*` would judge it$' ||
  fail "--stuck-ms 100000: wording: $line"
ms=$(echo "$line" | sed 's/.*`--stuck-ms \([0-9]*\)`.*/\1/')
[ "$ms" -ge 299 ] || fail "--stuck-ms 100000: suggests $ms ms, below the 300 ms slept"
grep -q '"short_waits":{"destroyed_waiting":1,"min_ns":[0-9]*,"max_ns":[0-9]*,"stuck_ns":100000000000,"option":"--stuck-ms"}' "$tmp/quiet.json" ||
  fail "--stuck-ms 100000: no short_waits in the JSON"
# The suggested value judges it.
report suggested --stuck-ms "$ms"
grep -q '"kind":"lost_wakeup","severity":"error","count":1,' "$tmp/suggested.json" ||
  fail "--stuck-ms $ms (suggested): not judged"
# A bad value: one line naming the option, exit 2.
"$COROTRACER" report --stuck-ms 12x "$tmp/t.ctrace" > /dev/null 2> "$tmp/bad.err"
st=$?
[ "$st" -eq 2 ] || fail "--stuck-ms 12x: exit $st, want 2"
grep -q -- '--stuck-ms wants a number of milliseconds' "$tmp/bad.err" || fail "--stuck-ms 12x: $(cat "$tmp/bad.err")"
finish test-report-thresholds
