#!/bin/sh
# test-ctrace-engine.sh - issue #20: the compact binary trace under the real
# engine.
#  1. format selection: the default is trace.ctrace (binary); -o NAME.jsonl,
#     --format jsonl and the reference's -out / -cmd write JSONL;
#  2. round trip: one run writes both formats (--also-jsonl: the formatter
#     writes the JSONL a `-o x.jsonl` run writes, from the same items), and
#     `export jsonl` of the binary gives exactly those bytes: v2 rings
#     with drops (lost), station reuse (coroutine lines with gen > 1, parent),
#     a v1-only SDK's slots (their seq), process, module, station_end, end;
#  3. the reference-style tracee (tests/lib/v1-writer) reports the same
#     findings from the binary as from the JSONL of the same run;
#  4. a truncated and a corrupted binary trace: one line naming the byte
#     offset, and the report of everything before it; with nothing before
#     it (a cut in the first chunk, a header alone) that line, exit 2, no output;
#  5. --append: a second binary run follows the first; formats never mix.
. "$(dirname "$0")/lib/engine.sh"
SDKW="$CT_BUILD/tests/lib/sdk-writer"
V1W="$CT_BUILD/tests/lib/v1-writer"
magic() { head -c 8 "$1" | od -An -tx1 | tr -d ' \n'; }
BIN=894354524143450a
first() { head -c 1 "$1"; }

echo "== 1. format selection"
"$COROTRACER" run --quiet -o "$T/a.jsonl" -- "$HELLO" > /dev/null || fail "-o a.jsonl: exit $?"
[ "$(first "$T/a.jsonl")" = "{" ] || fail "-o a.jsonl did not write JSONL"
"$COROTRACER" run --quiet -o "$T/a.ctrace" -- "$HELLO" > /dev/null || fail "-o a.ctrace: exit $?"
[ "$(magic "$T/a.ctrace")" = $BIN ] || fail "-o a.ctrace is not binary: $(magic "$T/a.ctrace")"
(cd "$T" && "$COROTRACER" run --quiet -- "$HELLO" > /dev/null) || fail "default: exit $?"
[ "$(magic "$T/trace.ctrace")" = $BIN ] || fail "the default is not trace.ctrace, binary"
"$COROTRACER" run --quiet --format jsonl -o "$T/b.trace" -- "$HELLO" > /dev/null || fail "--format jsonl: exit $?"
[ "$(first "$T/b.trace")" = "{" ] || fail "--format jsonl did not write JSONL"
"$COROTRACER" run --quiet --format ctrace -o "$T/c.jsonl" -- "$HELLO" > /dev/null || fail "--format ctrace: exit $?"
[ "$(magic "$T/c.jsonl")" = $BIN ] || fail "--format ctrace -o c.jsonl is not binary"
"$COROTRACER" -n 16 -cmd "exec '$HELLO'" -out "$T/ref.out" > /dev/null 2>&1 || fail "-cmd -out: exit $?"
[ "$(first "$T/ref.out")" = "{" ] || fail "the reference's -out did not write JSONL"
(cd "$T" && "$COROTRACER" -n 16 -cmd "exec '$HELLO'" > /dev/null 2>&1) || fail "-cmd: exit $?"
[ "$(first "$T/trace.jsonl")" = "{" ] || fail "the reference's -cmd did not write trace.jsonl"
"$COROTRACER" run --format xml -- true 2> "$T/err" && fail "--format xml accepted"
grep -q "^corotracer: --format: expects ctrace or jsonl" "$T/err" || fail "--format xml: $(cat "$T/err")"

echo "== 2. round trip: binary -> export jsonl == the run's JSONL"
# roundtrip NAME ENGINE-OPTIONS -- PROGRAM...: one run, both files, compared.
roundtrip() {
  name=$1
  shift
  "$COROTRACER" run --quiet -o "$T/$name.ctrace" --also-jsonl "$T/$name.jsonl" "$@" > /dev/null ||
    fail "$name: run exit $?"
  "$COROTRACER" export jsonl "$T/$name.ctrace" -o "$T/$name.back" -q 2> "$T/err" ||
    fail "$name: export jsonl exit $?: $(cat "$T/err")"
  [ -s "$T/err" ] && fail "$name: export said: $(cat "$T/err")"
  cmp "$T/$name.jsonl" "$T/$name.back" || fail "$name: the binary trace converts to other bytes"
  b=$(wc -c < "$T/$name.ctrace") j=$(wc -c < "$T/$name.jsonl") e=$("$CTJL" -e ev < "$T/$name.jsonl" | wc -l)
  echo "   $name: $e events, JSONL $j bytes, binary $b bytes ($(awk -v b="$b" -v e="$e" 'BEGIN { printf "%.1f", b / e }') per event, records included)"
}
# Rings of 4 KiB without --lossless: writers drop events (lost), 2 threads.
roundtrip rings --ring-kib 4 -- "$SDKW" spaced 2 300000 0 "$T/w1"
"$CTJL" -t end events harvested lost torn < "$T/rings.jsonl" | grep -q '^[0-9]* [0-9]* [0-9]* 0$' ||
  fail "rings: no end record with its counts"
# Station reuse: 3000 coroutines through 16 stations (gen > 1).
roundtrip churn --lossless -n 16 -- "$SDKW" churn 3000 "$T/w2"
grep -q '"type":"coroutine",.*"gen":2,.*"parent":' "$T/churn.jsonl" || fail "churn: no coroutine line with gen 2 and parent"
grep -q '"type":"station_end",.*"gen":' "$T/churn.jsonl" || fail "churn: no station_end line with gen"
# A v1-only SDK on stations (slot seqs, no kinds), with events lost to a fast writer.
roundtrip v1 --rings 0 -n 8 -- "$V1W" 4 20000 0
for t in meta process module station_end end; do
  grep -q "\"type\":\"$t\"" "$T/rings.jsonl" "$T/v1.jsonl" || fail "no $t record in the round trips"
done
# The tests' field printer reads the binary as its JSONL.
"$CTJL" -e probe_id ev ts kind site < "$T/rings.ctrace" > "$T/f.bin"
"$CTJL" -e probe_id ev ts kind site < "$T/rings.jsonl" > "$T/f.txt"
cmp -s "$T/f.bin" "$T/f.txt" || fail "ctjl reads the binary trace differently"

echo "== 3. the reference-style tracee: same findings from both formats"
same_reports "$T/v1.ctrace" "$T/v1.jsonl"
grep -q 'events' "$T/b.md" || fail "no report"

echo "== 4. truncated and corrupted binary traces"
# Damage goes into the last chunk: an event chunk holds up to 64 KiB, so a cut at a
# fixed fraction of this ~90 KB trace can fall inside the first one (nothing before it).
size=$(wc -c < "$T/rings.ctrace")
head -c $((size - 10)) "$T/rings.ctrace" > "$T/cut.ctrace"
"$COROTRACER" report "$T/cut.ctrace" > "$T/cut.md" 2> "$T/err" || fail "report of a cut trace: exit $?"
[ "$(wc -l < "$T/err")" = 1 ] && grep -q "^corotracer: $T/cut.ctrace: offset [0-9]*: truncated" "$T/err" ||
  fail "cut trace: not one line with the offset: $(cat "$T/err")"
grep -q '[1-9][0-9]* events' "$T/cut.md" || fail "cut trace: the events before the cut are not reported"
# ... and the report itself says so, not only stderr: a report read alone
# must not pass a cut trace off as whole (nor its unknown loss as "0 lost").
off=$(sed -n 's/.*: offset \([0-9]*\): truncated.*/\1/p' "$T/err")
grep -q "^- \*\*Damaged\*\*: offset $off: truncated" "$T/cut.md" &&
  grep -q '^- \*\*Completeness\*\*: [0-9]* events lost up to the cut (the end line' "$T/cut.md" &&
  grep -q '^- \*\*Trace\*\*: .*, [0-9]* records (' "$T/cut.md" ||
  fail "cut trace: the report does not say it is damaged: $(sed -n '/## Overview/,/## Findings/p' "$T/cut.md")"
cp "$T/rings.ctrace" "$T/bad.ctrace"
printf 'XXXX' | dd of="$T/bad.ctrace" bs=1 seek=$((size - 10)) conv=notrunc 2> /dev/null
"$COROTRACER" report "$T/bad.ctrace" > "$T/bad.md" 2> "$T/err" || fail "report of a corrupt trace: exit $?"
[ "$(wc -l < "$T/err")" = 1 ] && grep -q "^corotracer: $T/bad.ctrace: offset [0-9]*: .*chunk" "$T/err" ||
  fail "corrupt trace: not one line with the offset: $(cat "$T/err")"
grep -q '[1-9][0-9]* events' "$T/bad.md" || fail "corrupt trace: the events before the damage are not reported"
"$COROTRACER" report "$T/bad.ctrace" --json "$T/bad.json" -o /dev/null 2> /dev/null
grep -q '^- \*\*Damaged\*\*: offset [0-9]*: .*chunk' "$T/bad.md" &&
  grep -q '"trace":{"path":"[^"]*","damaged":"offset [0-9]*: [^"]*chunk' "$T/bad.json" ||
  fail "corrupt trace: the report does not say it is damaged: $(grep Damaged "$T/bad.md"; head -c 300 "$T/bad.json")"
for cmd in "html:-o $T/bad.html" "export sqlite:-o $T/bad.db -q" "export jsonl:-o $T/bad.back -q"; do
  # shellcheck disable=SC2086
  "$COROTRACER" ${cmd%%:*} "$T/bad.ctrace" ${cmd#*:} 2> "$T/err" || fail "$cmd of a corrupt trace: exit $?"
  grep -q "offset [0-9]*:" "$T/err" || fail "$cmd: no offset: $(cat "$T/err")"
done
# The dashboard carries the report's findings JSON, its "damaged" included
# (the page's note says so).
if command -v node > /dev/null 2>&1; then
  node "$(dirname "$0")/browser/decode.mjs" page "$T/bad.html" "$T/bad.json" > "$T/dec" ||
    fail "the corrupt trace's page: $(cat "$T/dec")"
fi
# Nothing before the damage (a cut inside the first chunk; a run stopped after
# the file header): every reader says so in the one line, exits 2, and writes
# no output as if it were a trace.
head -c 100 "$T/rings.ctrace" > "$T/first.ctrace"
head -c 16 "$T/rings.ctrace" > "$T/hdr.ctrace"
for f in first:'offset 16: truncated' hdr:'offset 16: no chunk after the file header'; do
  for cmd in "report:-o $T/n.md" "html:-o $T/n.html" "export csv:-o $T/n.csv -q" \
    "export sqlite:-o $T/n.db -q" "export jsonl:-o $T/n.jsonl -q" "export jsonl-v1:-o $T/n.v1 -q"; do
    rm -f "$T/n.md" "$T/n.html" "$T/n.csv" "$T/n.db" "$T/n.jsonl" "$T/n.v1"
    rc=0
    # shellcheck disable=SC2086
    "$COROTRACER" ${cmd%%:*} "$T/${f%%:*}.ctrace" ${cmd#*:} 2> "$T/err" || rc=$?
    [ $rc = 2 ] || fail "$cmd of $f: exit $rc, not 2"
    [ "$(wc -l < "$T/err")" = 1 ] && grep -q "^corotracer: $T/${f%%:*}.ctrace: ${f#*:}" "$T/err" ||
      fail "$cmd of ${f%%:*}: not the one line: $(cat "$T/err")"
    [ ! -s "$T/n.md" ] && [ ! -e "$T/n.jsonl" ] && [ ! -e "$T/n.v1" ] || fail "$cmd of ${f%%:*}: an output"
  done
done

echo "== 5. --append"
cp "$T/a.ctrace" "$T/two.ctrace"
"$COROTRACER" run --quiet --append -o "$T/two.ctrace" -- "$HELLO" > /dev/null || fail "--append: exit $?"
[ "$("$CTJL" -t meta type < "$T/two.ctrace" | wc -l) $("$CTJL" -t end type < "$T/two.ctrace" | wc -l)" = "2 2" ] ||
  fail "--append: expected 2 meta and 2 end records"
"$COROTRACER" run --quiet --append -o "$T/a.jsonl" --format ctrace -- "$HELLO" > /dev/null 2> "$T/err" &&
  fail "a binary run appended to a JSONL trace"
grep -q "other format" "$T/err" || fail "--append mix: $(cat "$T/err")"
echo "test-ctrace-engine: ok"
