#!/bin/sh
# test-flight-crash.sh - issue #34 N6: the newest events before a crash are in
# the flight dump, and the losses before them make no false finding. The
# target stops the engine (SIGSTOP: whatever the machine's load, its rings
# fill), writes a burst far beyond them, then its last coroutines' exits and
# destroys, continues the engine and dies of SIGSEGV.
#  1. the dump has every final exit and destroy, and its newest event is the
#     last destroy (a full ring drops its oldest records under --flight);
#  2. the loss is counted and stated (the end record, the report's
#     Completeness line, the coroutines with gaps);
#  3. no transition finding across the gaps: a burst's lost switches made
#     "resumed while running" errors on this single-threaded program;
#  4. the same burst with the engine running, racing the writer for the
#     full ring's records: every event kept or counted lost, once (the
#     stations' counts sum to what the program wrote, exactly).
. "$(dirname "$0")/lib/engine.sh"
PROG="$CT_BUILD/tests/lib/flight-crash"
COROS=300 FINAL=200

d=$T/crash; mkdir "$d"
# --rings 4 --ring-kib 64: the writer's spares stop at three rings (6144
# records), which 2*10^6 switches overflow as packs too (~30 a record,
# the default).
"$COROTRACER" run --flight 8M --rings 4 --ring-kib 64 -o "$d/f.ctrace" -- "$PROG" $COROS 2000000 $FINAL \
  > /dev/null 2> "$d/err"
rc=$?
[ $rc = 139 ] || fail "engine exit $rc, want 139: $(cat "$d/err")"
grep -q "flight dump on SIGSEGV" "$d/err" || fail "no dump line: $(cat "$d/err")"

echo "== 1. the final events"
"$CTJL" -e kind wait probe_id < "$d/f.ctrace" > "$d/ev" || fail "ctjl: exit $?"
n=$(grep -c "^destroy " "$d/ev")
[ "$n" = $FINAL ] || fail "$n destroys in the dump, want $FINAL"
n=$(grep -c "^suspend exit " "$d/ev")
[ "$n" = $FINAL ] || fail "$n exits in the dump, want $FINAL"
[ "$(tail -n 1 "$d/ev")" = "destroy - $COROS" ] ||
  fail "the newest event is '$(tail -n 1 "$d/ev")', want the destroy of $COROS"

echo "== 2. the loss, counted and stated"
lost=$("$CTJL" -t end lost < "$d/f.ctrace")
[ "${lost:-0}" -gt 0 ] 2>/dev/null || fail "the end record counts no loss: '$lost'"
"$COROTRACER" report "$d/f.ctrace" --json "$d/r.json" > "$d/r.md" || fail "report: exit $?"
grep -q "Completeness.*: $lost events lost in the window" "$d/r.md" ||
  fail "the report does not state the $lost lost: $(grep Completeness "$d/r.md")"
grep -q "gaps in the coroutines' ev sequences: [0-9]* events in [0-9]* coroutines" "$d/r.md" ||
  fail "the report does not say which coroutines have gaps"

echo "== 3. no finding across a gap"
for k in resume_running resume_without_wake after_destroy resume_after_return; do
  ! grep -q "\"kind\":\"$k\"" "$d/r.json" || fail "a $k finding across the gaps: $(grep -A3 "$k" "$d/r.md")"
done
echo "== 4. the engine racing the writer: each event kept or counted lost, once"
d=$T/race; mkdir "$d"
# Creates, a resume and suspend each, the first resume, two events a switch,
# the last suspend, the final exits (resume, exit, destroy).
want=$((COROS + 2 * COROS + 1 + 2 * 1000000 + 1 + 3 * FINAL))
# Packs (the default under --flight: the writer takes back whole packs)
# twice, switch records once (--no-pack).
for i in 1 2 3; do
  pk=; [ $i = 3 ] && pk=--no-pack
  "$COROTRACER" run $pk --flight 8M --rings 4 --ring-kib 64 -o "$d/f$i.ctrace" -- \
    "$PROG" $COROS 1000000 $FINAL run > "$d/out" 2> "$d/err"
  rc=$?
  [ $rc = 139 ] || fail "run $i: engine exit $rc, want 139: $(cat "$d/err")"
  got=$("$CTJL" -t end events harvested lost < "$d/f$i.ctrace")
  set -- $got
  [ "$1" = $want ] && [ $(($2 + $3)) = $want ] ||
    fail "run $i: end record 'events harvested lost' = '$got', want $want events, each harvested or lost"
  # The program's own count: each event recorded once, those it gave up for
  # newer ones (written, then taken back) dropped, as the engine says.
  [ "$(cat "$d/out")" = "recorded $want dropped $3" ] ||
    fail "run $i: corotracer_stats says '$(cat "$d/out")', want 'recorded $want dropped $3'"
  echo "   run $i: $got; $(cat "$d/out")"
done
echo "test-flight-crash: ok"
