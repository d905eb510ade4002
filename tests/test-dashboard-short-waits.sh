#!/bin/sh
# test-dashboard-short-waits.sh - the waits under --stuck-ms are not silent in
# the dashboard either (Chromium, tests/browser/short-waits.mjs): the findings
# panel of tests/lib/short-wait's trace (a coroutine parked 300 ms, destroyed
# unwoken) says, as the report's overview does, that one coroutine was
# destroyed while still waiting and which --stuck-ms would judge it; with
# that value, html judges it (a finding) and the line is gone; a v1 trace's
# coroutine still suspended at the end gets its own line.
. "$(dirname "$0")/lib/check.sh"
set -u
CT=${COROTRACER:?run me through tests/run.sh}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/browser.sh"
browser_setup
prog=$CT_BUILD/tests/lib/short-wait
"$CT" run --quiet --lossless -o "$tmp/t.ctrace" -- "$prog" > "$tmp/run.out" 2>&1 ||
  { fail "corotracer run exit $?: $(cat "$tmp/run.out")"; check_done; }
"$CT" report "$tmp/t.ctrace" > "$tmp/t.md" || fail "report exit $?"
ms=$(sed -n 's/^- \*\*Not judged, short waits\*\*: 1 coroutine destroyed.*`--stuck-ms \([0-9]*\)` would judge it$/\1/p' "$tmp/t.md")
[ -n "$ms" ] || { fail "report: no short-waits line: $(grep -n 'Not judged' "$tmp/t.md")"; check_done; }
"$CT" html "$tmp/t.ctrace" -o "$tmp/d.html" || fail "html exit $?"
node tests/browser/short-waits.mjs "$tmp/d.html" \
  "Not judged, short waits: 1 coroutine destroyed while still waiting, never woken, after |: --stuck-ms $ms would judge it" ||
  fail "the default page's short waits"
"$CT" html --stuck-ms "$ms" "$tmp/t.ctrace" -o "$tmp/judged.html" || fail "html --stuck-ms $ms exit $?"
node tests/browser/short-waits.mjs "$tmp/judged.html" || fail "--stuck-ms $ms: the judged wait still said short"
awk -f tests/data/report/gen.awk tests/data/report/v1.txt > "$tmp/v1.jsonl" || fail "gen.awk"
"$CT" html "$tmp/v1.jsonl" -o "$tmp/v1.html" || fail "html v1 exit $?"
node tests/browser/short-waits.mjs "$tmp/v1.html" \
  "Not judged, short waits: 1 coroutine still suspended at the end of a trace that records no wakes, after 0 ns|: too short for --stuck-ms to judge" ||
  fail "the v1 page's short waits"
check_done
echo "ok"
