#!/bin/sh
# test-pack-blocked.sh - issue #32 route 1 (docs/ROUTE1.md "Latency"): a thread whose
# coroutine blocks in an untraced call right after a scheduler's yields holds its last
# switches in an open pack. Under corotracer run --pack they must reach the trace while it
# blocks (the engine takes an open pack that stayed the same for a pass), once only when
# the thread goes on and publishes the pack, and when the program is killed.
. "$(dirname "$0")/lib/engine.sh"
SDKW="$CT_BUILD/tests/lib/sdk-writer"

# kinds FILE: "kind count" of its events, sorted.
kinds() { "$CTJL" -e kind < "$1" | sort | uniq -c | awk '{ print $2, $1 }' | tr '\n' ' '; }
# resumes FILE: its resume events (a trace still being written reads up to its last chunk).
resumes() { "$CTJL" -e kind < "$1" 2>/dev/null | grep -c '^resume$'; }
# whole FILE: every event once (no probe_id/ev twice, each coroutine's ev from 0 without a
# gap), the end's events all harvested, none lost.
whole() {
  "$CTJL" -e probe_id ev < "$1" | sort -k1,1n -k2,2n > "$T/pe"
  dup=$(uniq -d "$T/pe" | head -3 | tr '\n' ' ')
  [ -z "$dup" ] || fail "$2: events twice in the trace (probe_id ev): $dup"
  gap=$(awk '$1 != p { p = $1; n = 0 } $2 != n { print $1, $2; exit } { n++ }' "$T/pe")
  [ -z "$gap" ] || fail "$2: a gap in a coroutine's events (probe_id ev): $gap"
  set -- "$1" "$2" $("$CTJL" -t end events harvested lost < "$1")
  [ "$#" -eq 5 ] && [ "$3" = "$4" ] && [ "$5" = 0 ] ||
    fail "$2: end: events harvested lost = ${3:-?} ${4:-?} ${5:-?}"
  [ "$3" -eq "$(wc -l < "$T/pe")" ] || fail "$2: end says $3 events, the trace holds $(wc -l < "$T/pe")"
}

# 1. Blocked: the 30 switches show while the thread sleeps; then it goes on (30 more, in
# the same pack when the engine took it within the pack's span, or a new one) and exits.
mkdir "$T/a"
"$COROTRACER" run --pack -o "$T/a.ctrace" -- "$SDKW" block 10 30 "$T/a" > "$T/a.log" 2>&1 &
eng=$!
bg_add $eng
wait_file "$T/a/ready" 20 $eng
n=0
until [ "$(resumes "$T/a.ctrace")" -eq 31 ]; do
  n=$((n + 1))
  [ $n -lt 400 ] || fail "blocked: after 20 s the trace shows $(resumes "$T/a.ctrace") of the 31 resumes (its last switches held in the open pack)"
  sleep 0.05
done
touch "$T/a/go"
wait $eng || fail "blocked: corotracer run exited $?: $(cat "$T/a.log")"
got=$(kinds "$T/a.ctrace")
[ "$got" = "create 10 destroy 10 resume 71 suspend 71 wake 60 " ] ||
  fail "blocked: events by kind: $got"
whole "$T/a.ctrace" blocked

# 2. Killed while it blocks, before a pass could see its pack twice, and after.
for wait_first in 0 1; do
  d="$T/k$wait_first"
  mkdir "$d"
  "$COROTRACER" run --pack -o "$d.ctrace" -- "$SDKW" block 10 30 "$d" > "$d.log" 2>&1 &
  eng=$!
  bg_add $eng
  wait_file "$d/ready" 20 $eng
  [ $wait_first = 0 ] || sleep 0.5
  kill -KILL "$(ready_val "$d" pid)"
  wait $eng
  got=$(kinds "$d.ctrace")
  [ "$got" = "create 10 resume 31 suspend 30 wake 30 " ] ||
    fail "killed ($wait_first s): events by kind: $got ($(tail -1 "$d.log"))"
  whole "$d.ctrace" "killed"
done
echo "blocked: 31 resumes while it slept, 71 in all; killed: 31"
