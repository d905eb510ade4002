#!/bin/sh
# test-report-pie.sh - sites of a PIE come out as the right function and line:
# test-symbolize --trace writes a trace whose module lines are its own
# /proc/self/maps and whose sites are its own code, and says what to expect.
set -u
: "${CT_BUILD:?run through tests/run.sh}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-report-pie.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
"$CT_BUILD/tests/test-symbolize" --trace "$tmp/pie.jsonl" > "$tmp/expect" || { echo "FAIL: trace writer"; exit 1; }
"$COROTRACER" report "$tmp/pie.jsonl" --json "$tmp/pie.json" > "$tmp/pie.md" || { echo "FAIL: report exit $?"; exit 1; }
fails=0
while read -r what fn line; do
  grep -q "\"function\":\"$fn\",\"file\":\"[^\"]*test-symbolize.c\",\"line\":$line," "$tmp/pie.json" ||
    { echo "FAIL: $what site is not $fn at test-symbolize.c:$line"; fails=$((fails + 1)); }
  grep -q "\`$fn (test-symbolize.c:$line)\`" "$tmp/pie.md" ||
    { echo "FAIL: Markdown lacks $fn (test-symbolize.c:$line)"; fails=$((fails + 1)); }
done < "$tmp/expect"
[ "$(wc -l < "$tmp/expect")" -eq 2 ] || { echo "FAIL: expectations: $(cat "$tmp/expect")"; exit 1; }
[ $fails -eq 0 ] || exit 1
echo "test-report-pie: ok"
