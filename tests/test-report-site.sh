#!/bin/sh
# test-report-site.sh - text sites (corotracer_site) through the engine into
# both trace formats: the report names the file:line and function the program
# gave, without symbolization; a bad record in the text-site area (the
# target's to write) is skipped, the run and its trace stay whole.
. "$(dirname "$0")/lib/engine.sh"
PROG="$CT_BUILD/tests/lib/site-prog"

for fmt in ctrace jsonl; do
  "$COROTRACER" run --quiet --lossless --format $fmt -o "$T/t.$fmt" -- "$PROG" > "$T/out" 2>&1 ||
    fail "$fmt: run: $(cat "$T/out")"
  "$COROTRACER" report "$T/t.$fmt" --json "$T/$fmt.json" > "$T/$fmt.md" 2> "$T/err" ||
    fail "$fmt: report: $(cat "$T/err")"
  grep -q '^- `parse_rule (grammar.y:42)`: 1 coroutine' "$T/$fmt.md" ||
    fail "$fmt: the stuck coroutine's site is not parse_rule (grammar.y:42):
$(grep -A8 '^### ' "$T/$fmt.md")"
  grep -q '"function":"parse_rule","file":"grammar.y","line":42' "$T/$fmt.json" ||
    fail "$fmt: JSON site not parse_rule at grammar.y:42"
done
# The record lines, one per text site; the creation's token is the coroutine's create_site.
"$CTJL" -t site site file line function < "$T/t.jsonl" > "$T/sites"
[ "$(wc -l < "$T/sites")" = 2 ] && grep -q ' grammar.y 17 start_rule$' "$T/sites" &&
  grep -q ' grammar.y 42 parse_rule$' "$T/sites" || fail "site lines: $(cat "$T/sites")"
made=$(awk '$4 == "start_rule" { print $1 }' "$T/sites")
[ "$("$CTJL" -t coroutine create_site < "$T/t.jsonl")" = "$made" ] ||
  fail "create_site is not the start_rule token $made"

# Hostile records: the engine reads no further, writes no line for them, and
# the run ends as usual (the good site after them stays unnamed).
for mode in --scribble --scribble-text; do
  "$COROTRACER" run --quiet --lossless -o "$T/h.jsonl" -- "$PROG" $mode > "$T/out" 2>&1 ||
    fail "$mode: run: $(cat "$T/out")"
  check_trace_ends "$T/h.jsonl"
  ! grep -q '"type":"site"' "$T/h.jsonl" || fail "$mode: a site line after a bad record"
  "$COROTRACER" report "$T/h.jsonl" > "$T/h.md" 2> "$T/err" || fail "$mode: report: $(cat "$T/err")"
done

# A full area: corotracer_site returns NULL once no record fits; the engine
# writes a line for each token handed out, no more.
"$COROTRACER" run --quiet -o "$T/f.jsonl" -- "$PROG" --fill > "$T/out" 2>&1 || fail "--fill: $(cat "$T/out")"
n=$(sed -n 's/^filled \([0-9]*\)$/\1/p' "$T/out")
[ "${n:-0}" -gt 1000 ] || fail "--fill: $(cat "$T/out")"
[ "$(grep -c '"type":"site"' "$T/f.jsonl")" = "$n" ] ||
  fail "--fill: $(grep -c '"type":"site"' "$T/f.jsonl") site lines for $n tokens"
exit 0
