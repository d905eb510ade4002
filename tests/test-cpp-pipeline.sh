#!/bin/sh
# test-cpp-pipeline.sh - the example C++ scheduler (examples/cpp) under the
# engine, on 3 workers and a timer thread: every coroutine's events follow
# create, wake, (suspend, wake, resume)*, its final suspend (exit), destroy; with --lost-wakeup, the
# coroutines left parked are exactly those the program counts as stuck, and
# the report finds them lost at the co_await line in consumer(); without the
# bug it finds nothing.
. "$(dirname "$0")/lib/engine.sh"
PROG="$CT_BUILD/examples/cpp-pipeline"
SRC="$(cd "$(dirname "$0")/.." && pwd)/examples/cpp/pipeline.cpp"
line=$(grep -n 'co_await ch.recv()' "$SRC" | head -n 1 | cut -d: -f1)

# lost_wakeup FINDINGS: the lost_wakeup finding's counts, symbolized sites and
# coroutines (label, wait kind) from the report's JSON, one per line.
lost_wakeup() {
  tr -d '\n' < "$1" | sed 's/{"kind":/\n&/g; s/,"obj_last_wake":{[^{}]*{[^{}]*}}//g' | grep '^{"kind":"lost_wakeup"' |
    grep -o '"count":[0-9]*\|"site":"0x[0-9a-f]*","function":"[^"]*","file":"[^"]*","line":[0-9]*\|"label":"[^"]*","wait":"[a-z]*"'
}

# events TRACE: "probe_id label kinds..." per coroutine, in ev order.
events() {
  "$CTJL" -t coroutine probe_id label < "$1" > "$T/labels"
  "$CTJL" -e probe_id kind < "$1" | awk 'NR == FNR { l[$1] = $2; next }
    { k[$1] = k[$1] " " $2 } END { for (c in k) print c, l[c] k[c] }' "$T/labels" -
}

"$COROTRACER" run --quiet --lossless -o "$T/ok.jsonl" -- "$PROG" > "$T/out" 2>&1 || fail "pipeline: $(cat "$T/out")"
grep -q '^sum 5100 (want 5100), 0 coroutines never finished$' "$T/out" || fail "pipeline: $(cat "$T/out")"
check_trace_ends "$T/ok.jsonl"
events "$T/ok.jsonl" > "$T/ev"
[ "$(grep -c ' producer ' "$T/ev") $(grep -c ' consumer ' "$T/ev")" = "4 6" ] ||
  fail "want 4 producers and 6 consumers: $(cut -c1-80 "$T/ev")"
# Lossless mode: every coroutine's events are all there, whatever the load.
[ "$("$CTJL" -t end lost < "$T/ok.jsonl")" = 0 ] || fail "pipeline: events lost in lossless mode: $(tail -n 1 "$T/ok.jsonl")"
"$CTJL" -t station_end probe_id lost < "$T/ok.jsonl" | awk '$2 == 0 { print $1 }' > "$T/whole"
awk 'NR == FNR { whole[$1] = 1; next } whole[$1] { n++; s = $0; sub(/^[0-9]+ [a-z]+ /, "", s)
       if (s !~ /^create wake( suspend wake resume)+ suspend destroy$/) { print "bad sequence: " $0; exit 1 } }
     END { if (n != 10) { print "only " n " of 10 coroutines without lost events"; exit 1 } }' "$T/whole" "$T/ev" > "$T/bad" ||
  fail "pipeline: $(cut -c1-300 "$T/bad")"

# The bug: parked consumers stay suspended, waiting on the channel.
ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
  "$COROTRACER" run --quiet --lossless -o "$T/bug.jsonl" -- "$PROG" --lost-wakeup > "$T/out" 2>&1 ||
  fail "pipeline --lost-wakeup: $(cat "$T/out")"
stuck=$(sed -n 's/.*, \([0-9]*\) coroutines never finished$/\1/p' "$T/out")
events "$T/bug.jsonl" | awk '$NF == "suspend"' > "$T/parked"
[ "$(wc -l < "$T/parked")" = "$stuck" ] || fail "program says $stuck stuck, trace ends suspended: $(cut -c1-80 "$T/parked")"
grep -qv ' consumer ' "$T/parked" && fail "a non-consumer is left suspended: $(cat "$T/parked")"
"$COROTRACER" report "$T/bug.jsonl" --json "$T/findings.json" -o "$T/report.md" || fail "report failed"
lost_wakeup "$T/findings.json" > "$T/lw"
[ "$(head -n 1 "$T/lw")" = "\"count\":$stuck" ] &&
  [ "$(grep -c '^"site"' "$T/lw")" = 1 ] &&
  grep -q "^\"site\":\"0x[0-9a-f]*\",\"function\":\"[^\"]*\",\"file\":\"[^\"]*examples/cpp/pipeline.cpp\",\"line\":$line\$" "$T/lw" &&
  [ "$(grep '"label"' "$T/lw" | sort -u)" = '"label":"consumer","wait":"ptr"' ] ||
  fail "want $stuck lost wakeups of consumers waiting on the channel at pipeline.cpp:$line; report says:
$(cat "$T/lw")"

# The run without the bug is clean (but for events a slow engine may lose).
"$COROTRACER" report "$T/ok.jsonl" --json "$T/findings.json" -o "$T/report.md" || fail "report failed"
tr -d '\n' < "$T/findings.json" | grep -o '"kind":"[a-z_]*"' | grep -qv '"lost_events"' &&
  fail "findings without the bug:
$(grep -A2 '^### ' "$T/report.md")"
exit 0
