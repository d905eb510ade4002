#!/bin/sh
# test-pack-gap.sh - issue #32 route 1 (docs/ROUTE1.md item 4, "the gap of a pack-only
# coroutine"): a loss shows where it is for coroutines that only switch in packs. A drop
# (a full ring in the default mode) charges the stations' v2_lost; a coroutine whose
# switches are all hot has no ordinary record to carry the gap in its ev, so without a
# gap entry its pack events after the hole were numbered on with none, and a reader
# judged the transitions across it (the report's "resumed while ..." findings).
# `sdk-writer yield 2 40 N` (packs by default) into 16 KiB rings, not --lossless, the
# engine stopped a while so that the rings fill and drop: in `export jsonl`'s order, a
# coroutine's event whose ev follows the one before it with no gap never breaks the
# suspend, wake, resume cycle (a resume after a resume, a suspend after a suspend or a
# wake, a wake after a wake or a resume); end events = written = harvested + lost.
# Failed on main (before the formatter's per-pass gap entry): 3 such pairs in a run of
# 7.2 M events, 214,379 lost. No time is asserted: the stop only makes losses likely; a
# run that lost nothing checks nothing more and is said so.
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
  "$CTJL" -e probe_id ev kind < "$T/t.jsonl" > "$T/ev"
  awk '{
    id = $1
    if ($2 == n[id] && ((k[id] == "resume" && ($3 == "resume" || $3 == "wake")) ||
        ($3 == "suspend" && (k[id] == "suspend" || k[id] == "wake")) || (k[id] == "wake" && $3 == "wake"))) {
      printf "coroutine %s ev %s: %s after %s, no gap\n", id, $2, $3, k[id]; bad = 1
    }
    n[id] = $2 + 1; k[id] = $3
  } END { exit bad }' "$T/ev" > "$T/bad" ||
    fail "run $r ($3 lost): $(wc -l < "$T/bad") transitions judged across a hole: $(head -3 "$T/bad" | tr '\n' ';')"
  echo "   $w events, $3 lost"
done
[ $lossy -gt 0 ] || echo "test-pack-gap: no run lost events (a fast machine): the gaps were not exercised"
echo "test-pack-gap: ok"
