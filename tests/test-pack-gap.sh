#!/bin/sh
# test-pack-gap.sh - issue #32 route 1 (docs/ROUTE1.md item 4, "the gap of a pack-only
# coroutine"): a loss shows where it is for coroutines that only switch in packs. A drop
# (a full ring in the default mode) charges the stations' v2_lost; a coroutine whose
# switches are all hot has no ordinary record to carry the gap in its ev, so without a
# gap entry its pack events after the hole were numbered on with none, and a reader
# judged the transitions across it (the report's "resumed while ..." findings).
# `sdk-writer yield 2 40 N` (packs by default) into 16 KiB rings, not --lossless, the
# engine stopped 0.4 s so that the rings fill and drop for that long: in `export jsonl`'s
# order, a coroutine's event whose ev follows the one before it with no gap and that
# lies across the stop (over 100 ms after it) never breaks the suspend, wake, resume
# cycle (a resume after a resume, a suspend after a suspend or a wake, a wake after a wake
# or a resume); end events = written = harvested + lost. Such pairs a few us apart are
# counted and shown, not failed: a drop counted between a pass's look at the counts and
# its claim has its gap a pass late, at any coroutine's next ordinary record as well
# (`--no-pack` shows them too: 4-8 pairs in 3 runs of 4, 2026-11-29).
# Failed on main (before the per-pass gap entry): run 1, 18,941,986 lost, pairs across
# the stop (a wake, then a suspend 0.4 s later, ev on by one). No time is asserted: the
# stop only makes losses likely; a run that lost nothing checks nothing more, said so.
. "$(dirname "$0")/lib/engine.sh"
SDKW="$CT_BUILD/tests/lib/sdk-writer"
lossy=0
for r in 1 2 3; do
  echo "== run $r: yield, 2 threads x 40 coroutines, 16 KiB rings, the engine stopped 0.4 s"
  "$COROTRACER" run --quiet --ring-kib 16 -o "$T/t.ctrace" -- "$SDKW" yield 2 40 100000 "$T/w" \
    > /dev/null 2> "$T/rerr" &
  eng=$!; bg_add $eng
  sleep 0.05; kill -STOP $eng 2> /dev/null; sleep 0.4; kill -CONT $eng 2> /dev/null
  wait $eng || fail "run $r: exit $?: $(cat "$T/rerr")"
  "$COROTRACER" export jsonl "$T/t.ctrace" -o "$T/t.jsonl" -q 2> "$T/err" ||
    fail "run $r: export jsonl: exit $?: $(cat "$T/err")"
  [ -s "$T/err" ] && fail "run $r: export said: $(cat "$T/err")"
  w=$(cat "$T/w")
  set -- $("$CTJL" -t end events harvested lost < "$T/t.jsonl")
  [ "$1" = "$w" ] && [ $(($2 + $3)) = "$w" ] || fail "run $r: end events $1, harvested $2, lost $3; written $w"
  [ "$3" -gt 0 ] && lossy=$((lossy + 1))
  "$CTJL" -e probe_id ev kind ts < "$T/t.jsonl" > "$T/ev"
  awk '{
    id = $1
    if ($2 == n[id] && ((k[id] == "resume" && ($3 == "resume" || $3 == "wake")) ||
        ($3 == "suspend" && (k[id] == "suspend" || k[id] == "wake")) || (k[id] == "wake" && $3 == "wake"))) {
      far = $4 - t[id] > 100000000
      printf "%s coroutine %s ev %s: %s after %s, no gap, %d us apart\n", far ? "ACROSS" : "near", id, $2, $3, k[id], ($4 - t[id]) / 1000
      bad += far
    }
    n[id] = $2 + 1; k[id] = $3; t[id] = $4
  } END { exit bad > 0 }' "$T/ev" > "$T/bad" ||
    fail "run $r ($3 lost): transitions judged across the stop: $(grep ACROSS "$T/bad" | head -3 | tr '\n' ';')"
  echo "   $w events, $3 lost; $(wc -l < "$T/bad") pairs a few us apart judged (a gap a pass late)"
done
[ $lossy -gt 0 ] || echo "test-pack-gap: no run lost events (a fast machine): the gaps were not exercised"
echo "test-pack-gap: ok"
