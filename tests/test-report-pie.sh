#!/bin/sh
# test-report-pie.sh - sites of a PIE come out as the right function and line:
# test-symbolize --trace writes a trace whose module lines are its own
# /proc/self/maps and whose sites are its own code, and says what to expect.
. "$(dirname "$0")/lib/report.sh"
"$CT_BUILD/tests/test-symbolize" --trace "$tmp/pie.jsonl" > "$tmp/expect" || { fail "trace writer"; check_done; }
"$COROTRACER" report "$tmp/pie.jsonl" --json "$tmp/pie.json" > "$tmp/pie.md" || { fail "report exit $?"; check_done; }
while read -r what fn line; do
  grep -q "\"function\":\"$fn\",\"file\":\"[^\"]*test-symbolize.c\",\"line\":$line," "$tmp/pie.json" ||
    fail "$what site is not $fn at test-symbolize.c:$line"
  grep -q "\`$fn (test-symbolize.c:$line)\`" "$tmp/pie.md" || fail "Markdown lacks $fn (test-symbolize.c:$line)"
done < "$tmp/expect"
[ "$(wc -l < "$tmp/expect")" -eq 2 ] || fail "expectations: $(cat "$tmp/expect")"
finish test-report-pie
