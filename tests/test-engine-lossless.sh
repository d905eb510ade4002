#!/bin/sh
# test-engine-lossless.sh - `--lossless`: two threads writing back to back,
# beside a CPU hog, lose nothing (harvested == written, exactly); with the
# engine SIGSTOPped the target still finishes once one wait has timed out, and
# the events it overwrote meanwhile are counted lost. Both for v2 rings (the
# default) and v1 stations (--rings 0). Then `--pack --lossless`: two threads
# of a scheduler's yields (tests/lib/sdk-writer yield, packs), beside the hog,
# lose nothing either, and the binary trace holds every event.
. "$(dirname "$0")/lib/engine.sh"
BH="$CT_BUILD/bench/bench-harvest"
[ -x "$BH" ] || fail "$BH missing"
ev=100000
[ -z "$CT_SAN" ] || ev=20000

yes >/dev/null &
bg_add $!
for i in 1 2 3 v1; do
  rings=""
  [ "$i" != v1 ] || rings="--rings 0"
  # shellcheck disable=SC2086
  "$COROTRACER" run --quiet --lossless $rings -n 16 -o "$T/l.jsonl" -- "$BH" --writer 2 0 $ev "$T/written" ||
    fail "run $i: engine or writer failed"
  w=$(cat "$T/written")
  got=$("$CTJL" -t end events harvested lost < "$T/l.jsonl")
  [ "$got" = "$w $w 0" ] || fail "run $i: end record 'events harvested lost' = '$got', want '$w $w 0'"
  n=$("$CTJL" -e ev < "$T/l.jsonl" | wc -l)
  [ "$n" = "$w" ] || fail "run $i: $n event lines, want $w"
done

# --pack: hot switches as packs, the trace binary.
SW="$CT_BUILD/tests/lib/sdk-writer"
rounds=5000
[ -z "$CT_SAN" ] || rounds=1000
for i in 1 2; do
  quiet=--quiet
  [ $i = 1 ] || quiet="" # the summary line's counts, the second time
  "$COROTRACER" run $quiet --pack --lossless -n 64 -o "$T/p.ctrace" -- "$SW" yield 2 20 $rounds "$T/written" \
    2>"$T/p.err" || fail "--pack run $i: engine or writer failed: $(cat "$T/p.err")"
  w=$(awk '{ print $NF }' "$T/written") # "N" (switch, yield) or "written N" (the docs)
  got=$("$CTJL" -t end events harvested lost < "$T/p.ctrace")
  [ "$got" = "$w $w 0" ] || fail "--pack run $i: end record 'events harvested lost' = '$got', want '$w $w 0'"
  # The summary counts the packs' events too (the end line's events sum the
  # station_end lines, which count none: it said "0 lost of" the creates).
  [ -n "$quiet" ] || grep -q "; $w events harvested, 0 lost of $w;" "$T/p.err" ||
    fail "--pack run $i: the summary does not say $w events, 0 lost of $w: $(cat "$T/p.err")"
  n=$("$CTJL" -e ev < "$T/p.ctrace" | wc -l)
  [ "$n" = "$w" ] || fail "--pack run $i: $n event lines, want $w"
done

# The engine stopped: one wait of --lossless-ms, then the target goes on.
for mode in v2 v1; do
# 4 small rings: a full one moves on to a spare ring only while more than a
# quarter are free, so 3 x 128 records fit and the rest must wait.
rings="--rings 4"
[ $mode = v2 ] || rings="--rings 0"
rm -rf "$T/d"
mkdir "$T/d"
# shellcheck disable=SC2086
"$COROTRACER" run --quiet --lossless --lossless-ms 300 $rings --ring-kib 4 -n 4 -o "$T/s.jsonl" -- \
  "$TARGET" run 3000 100 "$T/d" > "$T/out" 2>&1 &
eng=$!
bg_add $eng
wait_file "$T/d/ready" 20 $eng
kill -STOP $eng
start=$(date +%s)
wait_file "$T/d/done" 30
secs=$(( $(date +%s) - start ))
kill -CONT $eng
wait $eng || fail "$mode: engine exited $? after SIGCONT: $(cat "$T/out")"
set -- $("$CTJL" -t end events harvested lost < "$T/s.jsonl")
[ "$1" = 3001 ] || fail "$mode: engine stopped: end record events = $1, want 3001"
[ "$3" -gt 0 ] || fail "$mode: engine stopped: no loss counted (events $1 harvested $2 lost $3)"
[ $(($2 + $3)) = "$1" ] || fail "$mode: engine stopped: harvested $2 + lost $3 != events $1"
echo "$mode: stopped engine: target done in ~${secs}s, $3 of $1 events lost"
done
echo "ok: 3 lossless v2 runs and 1 v1 run of 2 x $ev events, 2 --pack runs of $w; stopped engine (v2, v1): targets done"
