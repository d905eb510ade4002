#!/bin/sh
# test-report-input.sh - `corotracer report` on what it may be handed: the
# reference engine's fixture (torn records), truncated and garbage files, a
# missing file, bad options, the reference's -deepdive spelling.
. "$(dirname "$0")/lib/report.sh"

# bad NAME WANT_TEXT ARGS...: exit 2 with exactly one line on stderr holding WANT_TEXT.
bad() {
  name=$1 want=$2; shift 2
  "$COROTRACER" "$@" > "$tmp/out" 2> "$tmp/err"; rc=$?
  [ $rc -eq 2 ] || fail "$name: exit $rc, want 2"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "$name: stderr is not one line: $(cat "$tmp/err")"
  grep -q "^corotracer: .*$want" "$tmp/err" || fail "$name: stderr '$(cat "$tmp/err")' lacks '$want'"
}

bad missing "No such file" report "$tmp/nope.jsonl"
: > "$tmp/empty.jsonl"
bad empty "empty file, not a trace" report "$tmp/empty.jsonl"
head -c 65536 "$COROTRACER" > "$tmp/binary.jsonl"
bad binary "binary.jsonl:[0-9]*: not a corotracer trace" report "$tmp/binary.jsonl"
i=0; while [ $i -lt 20 ]; do echo '{"name":"x","values":[1,2,{"a":null}],"ok":true}'; i=$((i + 1)); done > "$tmp/other.jsonl"
bad other-json "other.jsonl:1: not a corotracer trace" report "$tmp/other.jsonl"
bad directory "Is a directory" report "$tmp"
bad no-trace "no trace given" report
bad unknown-option "unknown option: --frobnicate" report "$tmp/empty.jsonl" --frobnicate
bad fail-on "--fail-on wants info, warning or error" report x --fail-on fatal
bad blocker-ms "--blocker-ms wants a number" report x --blocker-ms -5
bad missing-value "option needs a value: --json" report x --json
bad flag-value "option takes no value: --deepdive=1" report "$tmp/empty.jsonl" --deepdive=1
bad export-flag-value "option takes no value: --no-progress=1" export csv "$tmp/empty.jsonl" -o "$tmp/csv" --no-progress=1

# A good trace cut in the middle of its last line, plus invalid JSON inside.
gen lost-wakeup
t=$tmp/lost-wakeup.jsonl
{ head -n 5 "$t"; echo '{"probe_id":1,"tid":100,,}'; echo 'not json at all'
  sed -n '6,$p' "$t"; head -n 8 "$t" | tail -n 1 | head -c 40; } > "$tmp/trunc.jsonl"
"$COROTRACER" report "$tmp/trunc.jsonl" --json "$tmp/trunc.json" > "$tmp/trunc.md" 2> "$tmp/err" ||
  fail "truncated: exit $?: $(cat "$tmp/err")"
grep -q '"malformed":3,"torn":0,"malformed_lines":\[6,7,28\]' "$tmp/trunc.json" ||
  fail "truncated: malformed lines not [6,7,28]: $(grep -o '"malformed[^]]*' "$tmp/trunc.json")"
grep -q 'Malformed lines.*: 3 skipped.*first at lines 6, 7, 28' "$tmp/trunc.md" || fail "truncated: Markdown note"
grep -q '"kind":"lost_wakeup","severity":"error","count":1' "$tmp/trunc.json" || fail "truncated: finding lost"

# Corrupted traces (seeded byte flips, cut and doubled lines): never a crash,
# exit 0 (a report) or 2 (not a trace), nothing from the sanitizers.
for f in "$data"/*.txt; do awk -f "$data/gen.awk" "$f"; done > "$tmp/base.jsonl"
seed=1
while [ $seed -le 40 ]; do
  awk -v seed=$seed 'BEGIN { srand(seed); alpha = "{}[]\":,0123456789-ex\\ tfn\001\377" }
    { l = $0; r = rand()
      if (r < 0.1) { p = int(rand() * length(l)) + 1; l = substr(l, 1, p - 1) substr(alpha, int(rand() * 28) + 1, 1) substr(l, p + 1) }
      else if (r < 0.13) l = substr(l, 1, int(rand() * length(l)))
      else if (r < 0.15) l = l l
      print l }' "$tmp/base.jsonl" > "$tmp/fuzz.jsonl"
  "$COROTRACER" report "$tmp/fuzz.jsonl" --json "$tmp/fuzz.json" > "$tmp/fuzz.md" 2> "$tmp/err"; rc=$?
  { [ $rc -eq 0 ] || [ $rc -eq 2 ]; } && ! grep -q 'Sanitizer\|runtime error' "$tmp/err" ||
    fail "corrupted trace (seed $seed): exit $rc: $(head -n 3 "$tmp/err")"
  seed=$((seed + 1))
done

# A v1-like trace (no meta, no end) of 2,000 events plus one valid-looking
# event whose ts is 2^56 (834 days later): left out of the duration, counted.
gen=$CT_BUILD/bench/bench-report-gen
if [ -x "$gen" ]; then
  "$gen" 2000 50 | grep -v '"type"' > "$tmp/plain.jsonl"
  { cat "$tmp/plain.jsonl"
    echo '{"probe_id":7,"tid":100,"addr":"0x0000000000000000","seq":2,"is_active":true,"ts":72057594037927936}'
  } > "$tmp/absurd.jsonl"
  "$COROTRACER" report "$tmp/plain.jsonl" --json "$tmp/plain.json" > /dev/null || fail "plain: exit $?"
  "$COROTRACER" report "$tmp/absurd.jsonl" --json "$tmp/absurd.json" > "$tmp/absurd.md" || fail "absurd: exit $?"
  d1=$(grep -o '"duration_ns":[0-9]*' "$tmp/plain.json") d2=$(grep -o '"duration_ns":[0-9]*' "$tmp/absurd.json")
  [ -n "$d1" ] && [ "$d1" = "$d2" ] || fail "an absurd ts changed the duration: $d1 vs $d2"
  grep -q '"absurd_ts":1,' "$tmp/absurd.json" || fail "absurd ts not counted"
  grep -q 'Absurd timestamps.*: 1 events' "$tmp/absurd.md" || fail "absurd ts not in the Markdown"
else
  fail "$gen not built"
fi

# The reference engine's own trace: torn records counted, a sane duration.
fixture=$(dirname "$0")/data/reference-engine-trace.jsonl
[ -r "$fixture" ] || { fail "$fixture missing"; check_done; }
"$COROTRACER" report "$fixture" --json "$tmp/ref.json" > "$tmp/ref.md" 2> "$tmp/err" ||
  fail "fixture: exit $?: $(cat "$tmp/err")"
grep -q '"lines":1513,"malformed":115,"torn":115,"malformed_lines":\[5,6,7,8,12,19,21,29,30,36\]' "$tmp/ref.json" ||
  fail "fixture: torn records: $(grep -o '"lines[^]]*' "$tmp/ref.json")"
grep -q '"events":1398,"coroutines":105,' "$tmp/ref.json" || fail "fixture: events/coroutines"
# 168782.6 s .. 174556.9 s of CLOCK_MONOTONIC: 5774 s, events in ~15 s of it.
dur=$(grep -o '"duration_ns":[0-9]*' "$tmp/ref.json" | sed 's/.*://')
act=$(grep -o '"active_ns":[0-9]*' "$tmp/ref.json" | sed 's/.*://')
[ "${dur:-0}" -gt 5774000000000 ] && [ "${dur:-0}" -lt 5775000000000 ] || fail "fixture: duration_ns $dur"
[ "${act:-0}" -gt 10000000000 ] && [ "${act:-0}" -lt 20000000000 ] || fail "fixture: active_ns $act"
grep -q 'Idle gaps' "$tmp/ref.md" || fail "fixture: idle gaps not explained"
grep -q 'unsymbolized' "$tmp/ref.md" || fail "fixture: sites not labelled unsymbolized"
! grep -q '"kind":"resume_running"' "$tmp/ref.json" || fail "fixture: v1 double resumes flagged"
# The reference spelling reads the same file.
"$COROTRACER" -deepdive -out "$fixture" -o "$tmp/deep.md" || fail "-deepdive: exit $?"
cmp -s "$tmp/deep.md" "$tmp/ref.md" || fail "-deepdive report differs from report's"

finish test-report-input
