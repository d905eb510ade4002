#!/bin/sh
# test-report-pie.sh - sites of a PIE come out as the right function and line:
# test-symbolize --trace writes a trace whose module lines are its own
# /proc/self/maps and whose sites are its own code, and says what to expect.
. "$(dirname "$0")/lib/report.sh"
"$CT_BUILD/tests/test-symbolize" --trace "$tmp/pie.jsonl" > "$tmp/expect" || { echo "FAIL: trace writer"; exit 1; }
"$COROTRACER" report "$tmp/pie.jsonl" --json "$tmp/pie.json" > "$tmp/pie.md" || { echo "FAIL: report exit $?"; exit 1; }
while read -r what fn line; do
  grep -q "\"function\":\"$fn\",\"file\":\"[^\"]*test-symbolize.c\",\"line\":$line," "$tmp/pie.json" ||
    fail "$what site is not $fn at test-symbolize.c:$line"
  grep -q "\`$fn (test-symbolize.c:$line)\`" "$tmp/pie.md" || fail "Markdown lacks $fn (test-symbolize.c:$line)"
done < "$tmp/expect"
[ "$(wc -l < "$tmp/expect")" -eq 2 ] || fail "expectations: $(cat "$tmp/expect")"
finish test-report-pie
