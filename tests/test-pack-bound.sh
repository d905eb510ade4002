#!/bin/sh
# test-pack-bound.sh - issue #32 route 1 (docs/ROUTE1.md "Latency"): open packs bound each
# pass. A coroutine suspended by a hot switch sits in its thread's open pack, unpublished,
# while that thread goes on switching; another thread may resume it meanwhile and publish
# that at once (a record). A pass that took the second thread's records but not the first's
# pack would write the resume in one chunk and the suspend before it in a later one: the
# decoder merges by time within a chunk only, so the trace would have the coroutine's events
# out of order. The engine lowers each pass's limit to the first untaken entry of every open
# pack (rings.c `open_packs`), so neither thread's events from that moment on are written
# before those entries.
# `sdk-writer handoff 2 4 20` (--lossless, packs by default): two threads of 4 coroutines;
# a baton coroutine resumed on each thread in turn by a record (published at once) and
# suspended by a hot switch, after which the thread sleeps 60 ms with that switch in its
# open pack (past the engine's 50 ms flush interval: the pass that takes the next thread's
# resume ends a chunk). Every coroutine's event lines, in the order `export jsonl` gives
# them, have ev 0, 1, 2, ... and a time that never goes back, and a resume never follows a
# resume nor a suspend a suspend. Without the bound (ct_rings_open_take never lowering
# *bound) 5 of 5 runs failed, 5-6 of the baton's 20 resumes each ("resume after resume":
# the decoder had the resume on the new thread before the suspend on the old). No time
# is asserted: the sleep only shapes the run; with the bound the order holds however
# late the engine or the threads run.
. "$(dirname "$0")/lib/engine.sh"
SDKW="$CT_BUILD/tests/lib/sdk-writer"
rounds=20
for r in 1 2 3; do
  echo "== run $r: handoff, 2 threads x 4 coroutines x $rounds rounds, --lossless"
  "$COROTRACER" run --quiet --lossless -o "$T/t.ctrace" -- "$SDKW" handoff 2 4 $rounds "$T/w" > /dev/null ||
    fail "run $r: exit $?"
  "$COROTRACER" export jsonl "$T/t.ctrace" -o "$T/t.jsonl" -q 2> "$T/err" || fail "run $r: export jsonl: exit $?: $(cat "$T/err")"
  [ -s "$T/err" ] && fail "run $r: export said: $(cat "$T/err")"
  w=$(cat "$T/w")
  [ "$("$CTJL" -t end events harvested lost < "$T/t.jsonl")" = "$w $w 0" ] ||
    fail "run $r: end $("$CTJL" -t end events harvested lost < "$T/t.jsonl"), $w written"
  "$CTJL" -e probe_id ev kind ts tid < "$T/t.jsonl" > "$T/ev"
  [ "$(wc -l < "$T/ev")" = "$w" ] || fail "run $r: $(wc -l < "$T/ev") event lines, $w written"
  # In file order, per coroutine: ev counts up from 0, ts never goes back, the kinds
  # follow each other as a coroutine's do. The baton (999) changes threads.
  awk '{
    id = $1
    if ($2 != n[id] + 0) { printf "coroutine %s: ev %s after %d events (%s)\n", id, $2, n[id], $3; bad = 1 }
    if ($4 < t[id]) { printf "coroutine %s ev %s (%s): ts %s before %s\n", id, $2, $3, $4, t[id]; bad = 1 }
    if (($3 == "resume" && k[id] == "resume") || ($3 == "suspend" && k[id] == "suspend")) {
      printf "coroutine %s ev %s: %s after %s\n", id, $2, $3, k[id]; bad = 1
    }
    if (id == 999 && $3 == "resume") { if (tid != "" && $5 != tid) moves++; tid = $5 }
    n[id]++; t[id] = $4; k[id] = $3
  } END { print "moves " moves + 0 > "/dev/stderr"; exit bad }' "$T/ev" > "$T/bad" 2> "$T/moves" ||
    fail "run $r: $(wc -l < "$T/bad") events out of order: $(head -3 "$T/bad" | tr '\n' ';')"
  set -- $(cat "$T/moves")
  [ "$2" -ge $((rounds / 2)) ] || fail "run $r: the baton changed threads $2 times in $rounds rounds"
  echo "   $w events, the baton moved $2 times, $(grep -ac CHK5 "$T/t.ctrace") chunks"
done
echo "test-pack-bound: ok"
