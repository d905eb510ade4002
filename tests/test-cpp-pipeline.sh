#!/bin/sh
# test-cpp-pipeline.sh - the example C++ scheduler (examples/cpp) under the
# engine, on 3 workers and a timer thread: every coroutine's events follow
# create, wake, (suspend, wake, resume)*, destroy; with --lost-wakeup, the
# coroutines left parked are exactly those the program counts as stuck, and
# their site is the co_await line in consumer().
. "$(dirname "$0")/lib/engine.sh"
PROG="$CT_BUILD/examples/cpp-pipeline"
SRC="$(cd "$(dirname "$0")/.." && pwd)/examples/cpp/pipeline.cpp"
line=$(grep -n 'co_await ch.recv()' "$SRC" | head -n 1 | cut -d: -f1)

# events TRACE: "probe_id label kinds..." per coroutine, in ev order.
events() {
  "$CTJL" -t coroutine probe_id label < "$1" > "$T/labels"
  "$CTJL" -e probe_id kind < "$1" | awk 'NR == FNR { l[$1] = $2; next }
    { k[$1] = k[$1] " " $2 } END { for (c in k) print c, l[c] k[c] }' "$T/labels" -
}

"$COROTRACER" run --quiet -o "$T/ok.jsonl" -- "$PROG" > "$T/out" 2>&1 || fail "pipeline: $(cat "$T/out")"
grep -q '^sum 5100 (want 5100), 0 coroutines never finished$' "$T/out" || fail "pipeline: $(cat "$T/out")"
check_trace_ends "$T/ok.jsonl"
events "$T/ok.jsonl" > "$T/ev"
[ "$(grep -c ' producer ' "$T/ev") $(grep -c ' consumer ' "$T/ev")" = "4 6" ] ||
  fail "want 4 producers and 6 consumers: $(cut -c1-80 "$T/ev")"
# Coroutines that lost events (a slow engine laps their ring) are not checked.
"$CTJL" -t station_end probe_id lost < "$T/ok.jsonl" | awk '$2 == 0 { print $1 }' > "$T/whole"
awk 'NR == FNR { whole[$1] = 1; next } whole[$1] { n++; s = $0; sub(/^[0-9]+ [a-z]+ /, "", s)
       if (s !~ /^create wake( suspend wake resume)+ destroy$/) { print "bad sequence: " $0; exit 1 } }
     END { if (n < 5) { print "only " n " coroutines without lost events"; exit 1 } }' "$T/whole" "$T/ev" > "$T/bad" ||
  fail "pipeline: $(cut -c1-300 "$T/bad")"

# The bug: parked consumers stay suspended, waiting on the channel.
ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
  "$COROTRACER" run --quiet -o "$T/bug.jsonl" -- "$PROG" --lost-wakeup > "$T/out" 2>&1 ||
  fail "pipeline --lost-wakeup: $(cat "$T/out")"
stuck=$(sed -n 's/.*, \([0-9]*\) coroutines never finished$/\1/p' "$T/out")
events "$T/bug.jsonl" | awk '$NF == "suspend"' > "$T/parked"
[ "$(wc -l < "$T/parked")" = "$stuck" ] || fail "program says $stuck stuck, trace ends suspended: $(cut -c1-80 "$T/parked")"
grep -qv ' consumer ' "$T/parked" && fail "a non-consumer is left suspended: $(cat "$T/parked")"
"$CTJL" -e probe_id kind site wait < "$T/bug.jsonl" |
  awk 'NR == FNR { p[$1] = 1; next } p[$1] && $2 == "suspend" { last[$1] = $3 " " $4 } END { for (c in last) print last[c] }' \
    "$T/parked" - | sort -u > "$T/sites"
[ "$(wc -l < "$T/sites")" = 1 ] || fail "parked consumers at more than one site: $(cat "$T/sites")"
set -- $(cat "$T/sites")
[ "$2" = ptr ] || fail "parked consumers do not say they wait on the channel: $*"
set -- $("$CT_BUILD/tests/test-cpp-sym" "$T/bug.jsonl" "$1")
case "$1:$2" in *examples/cpp/pipeline.cpp:$line) ;;
  *) fail "parked site symbolizes to '$*', want examples/cpp/pipeline.cpp:$line" ;; esac
