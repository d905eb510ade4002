#!/bin/sh
# test-flight.sh - issue #21: the flight recorder (run --flight).
#  1. options: a bad size or age, --flight with JSONL or --append, --dump-on alone;
#  2. nothing on disk without a trigger (a whole burst through a small window);
#  3. SIGUSR1 to the engine: OUT, then OUT.1, each a self-contained binary
#     trace (meta first, every event of the window, the window record naming
#     the trigger, after the meta's chunk) that report reads; past
#     --flight-max a line says so;
#  4. a window smaller than the run: the oldest chunks are dropped, the dump
#     keeps the meta and module lines and says how much went before it, in
#     its window record before any event;
#  5. crash: a program aborting inside a coroutine leaves a dump whose report
#     shows that coroutine still running on its thread at the end;
#  6. --dump-on exit: a dump at a clean exit too, with the end record;
#  7. `corotracer dump RUN_DIR`, `--pid ENGINE_PID`, and with neither (the one
#     flight recorder of this binary); a pid that is no flight recorder;
#  8. --flight-age: a window of about 500 ms out of a 3 s run;
#  9. without --flight, SIGUSR1 to the engine goes to the program, as INT does;
# 10. the snapshot: coroutines parked before the window enter the dump's
#     report as they were then: one never woken is a lost wakeup "parked ...
#     before the window", one woken before the window is neither lost nor
#     leaked, no event counts as lost; `export jsonl` keeps the records;
# 11. full rings left at the program's exit (the engine stopped meanwhile)
#     are all read or counted lost: the end's events are what was written;
# 12. --pack: a lossless dump from the middle of a packing run reads every
#     event of its window, each coroutine's ev on from its snapshot; a
#     window with an empty snapshot counts the dropped packs too; in
#     overwrite mode with the engine stopped a while, every event written is
#     harvested or lost, and the dump reports without complaint.
. "$(dirname "$0")/lib/engine.sh"
SDKW="$CT_BUILD/tests/lib/sdk-writer"

# window_at FILE [first]: the window record comes once, after the meta (a
# record before it would start a run of its own); with first, also after the
# snapshot records and before every event, coroutine, station_end and end
# record (flight.c ct_flight_begin: chunks were dropped, a decoder learns so
# before the end record).
window_at() {
  "$CTJL" type < "$1" | awk -v first="${2:-}" '
    $1 == "window" { w++; if (!meta || (first && ev)) bad = 1 }
    $1 == "meta" { meta = 1 }
    $1 == "snapshot" && w && first { bad = 1 }
    $1 == "-" || $1 == "coroutine" || $1 == "station_end" || $1 == "end" { ev = 1 }
    END { exit !(w == 1 && !bad) }' ||
    fail "$1: the window record is not where it belongs: $("$CTJL" type < "$1" | uniq -c | head -n 12 | tr -s ' \n' ' ')"
}

echo "== 1. options"
for bad in "--flight 12X" "--flight 0" "--flight 100K" "--flight 2T"; do
  "$COROTRACER" run $bad -o "$T/x" -- true 2> "$T/err" && fail "$bad accepted"
  grep -q "^corotracer: --flight: " "$T/err" || fail "$bad: $(cat "$T/err")"
done
"$COROTRACER" run --flight 1M -o "$T/x.jsonl" -- true 2> "$T/err" && fail "--flight with JSONL accepted"
grep -q "^corotracer: --flight: keeps the binary trace" "$T/err" || fail "--flight .jsonl: $(cat "$T/err")"
"$COROTRACER" run --flight 1M --append -o "$T/x" -- true 2> "$T/err" && fail "--flight --append accepted"
"$COROTRACER" run --dump-on exit -o "$T/x" -- true 2> "$T/err" && fail "--dump-on without --flight accepted"
grep -q "^corotracer: --dump-on: needs --flight" "$T/err" || fail "--dump-on: $(cat "$T/err")"
"$COROTRACER" run --dump-on lost_wakeup -o "$T/x" -- true 2> "$T/err" && fail "--dump-on lost_wakeup without --flight accepted"
grep -q "^corotracer: --dump-on: needs --flight" "$T/err" || fail "--dump-on lost_wakeup: $(cat "$T/err")"
for bad in "lost" "exit," ",exit" "exit,,any" "" "blocker,nope"; do
  "$COROTRACER" run --flight 1M --dump-on "$bad" -o "$T/x" -- true 2> "$T/err" && fail "--dump-on '$bad' accepted"
  grep -q "^corotracer: --dump-on: expects a list of exit, lost_wakeup" "$T/err" || fail "--dump-on '$bad': $(cat "$T/err")"
done
"$COROTRACER" run --quiet --flight 1M --dump-on exit,lost_wakeup,deadlock,blocker,starvation,any \
  --stuck-ms 50 --runnable-ms 5 --blocker-ms 5 -o "$T/ok.ctrace" -- true || fail "a full --dump-on list: exit $?"
[ -e "$T/ok.ctrace" ] || fail "--dump-on exit,...: no exit dump"
rm -f "$T/ok.ctrace"
for bad in "--flight-age 10" "--flight-age 5x" "--flight-age 0s" "--flight-age 31000h"; do
  "$COROTRACER" run --flight 1M $bad -o "$T/x" -- true 2> "$T/err" && fail "$bad accepted"
  grep -q "^corotracer: --flight-age: expects a duration" "$T/err" || fail "$bad: $(cat "$T/err")"
done
[ ! -e "$T/x" ] && [ ! -e "$T/x.jsonl" ] || fail "a refused run wrote a file"

echo "== 2. no trigger, no file"
"$COROTRACER" run --quiet --flight 1M -o "$T/quiet.ctrace" -- "$SDKW" spaced 1 200000 0 "$T/w" ||
  fail "flight run: exit $?"
[ ! -e "$T/quiet.ctrace" ] || fail "a flight run without a trigger wrote its file"
ls "$T" | grep -q "quiet" && fail "a flight run left a file behind: $(ls "$T")"

echo "== 3. SIGUSR1"
d=$T/usr1; mkdir "$d"
"$COROTRACER" run --flight 1M --flight-max 2 -o "$d/f.ctrace" -- "$TARGET" hold 21 "$d" \
  > /dev/null 2> "$d/err" &
eng=$!; bg_add $eng
wait_file "$d/ready" 30 $eng
child=$(ready_val "$d" pid); bg_add "$child"
kill -USR1 $eng
wait_file "$d/f.ctrace" 30 $eng
kill -USR1 $eng
wait_file "$d/f.ctrace.1" 30 $eng
kill -USR1 $eng
n=0
until grep -q "flight-max 2 reached" "$d/err"; do
  n=$((n + 1)); [ $n -lt 400 ] || fail "the third SIGUSR1: no line: $(cat "$d/err")"
  sleep 0.05
done
kill -TERM $eng
wait $eng
[ ! -e "$d/f.ctrace.2" ] || fail "a dump past --flight-max 2"
kill -0 "$child" 2>/dev/null && fail "the target got a SIGUSR1 or survived the TERM"
[ "$(grep -c 'flight dump on SIGUSR1' "$d/err")" = 2 ] || fail "two dump lines expected: $(cat "$d/err")"
for f in "$d/f.ctrace" "$d/f.ctrace.1"; do
  [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 894354524143450a ] || fail "$f: not a binary trace"
  check_first=$(line_type "$f" 1)
  [ "$check_first" = meta ] || fail "$f: first record is $check_first"
  window_at "$f" # nothing dropped: the meta is in the first chunk, the record after it
  [ "$("$CTJL" -t window trigger dropped_bytes < "$f")" = "SIGUSR1 0" ] ||
    fail "$f: window record: $("$CTJL" -t window trigger dropped_bytes < "$f")"
  [ "$("$CTJL" -e ev < "$f" | wc -l)" = 21 ] || fail "$f: $("$CTJL" -e ev < "$f" | wc -l) events, want 21"
  [ "$("$CTJL" -t meta type < "$f" | wc -l)" = 1 ] || fail "$f: more than one run"
  "$COROTRACER" report "$f" > "$d/report.md" 2> "$d/rerr" || fail "report $f: exit $?: $(cat "$d/rerr")"
  [ ! -s "$d/rerr" ] || fail "report $f: $(cat "$d/rerr")"
  grep -q "21 events, 1 coroutine" "$d/report.md" || fail "report $f: $(grep Trace "$d/report.md")"
done

echo "== 4. a window smaller than the run"
d=$T/small; mkdir "$d"
"$COROTRACER" run --lossless --flight 1M --dump-on exit -o "$d/f.ctrace" -- "$SDKW" spaced 1 3000000 0 \
  "$d/w" > /dev/null 2> "$d/err" || fail "small window: exit $?: $(cat "$d/err")"
set -- $("$CTJL" -t window trigger bytes dropped_bytes dropped_chunks < "$d/f.ctrace")
[ "$1" = exit ] || fail "small window: trigger $1"
[ "$2" -le 1048576 ] || fail "small window: $2 bytes in a 1M window"
[ "$3" -gt 0 ] && [ "$4" -gt 0 ] || fail "small window: nothing dropped before it ($3 bytes, $4 chunks)"
[ "$(line_type "$d/f.ctrace" 1)" = meta ] || fail "small window: the meta line was dropped"
window_at "$d/f.ctrace" first
"$CTJL" -t module path < "$d/f.ctrace" | grep -q "sdk-writer$" || fail "small window: no module line"
[ "$("$CTJL" -t meta type < "$d/f.ctrace" | wc -l)" = 1 ] || fail "small window: more than one meta"
[ "$("$CTJL" -t end type < "$d/f.ctrace" | wc -l)" = 1 ] || fail "small window: no end record"
ev=$("$CTJL" -e ev < "$d/f.ctrace" | wc -l)
[ "$ev" -gt 100000 ] && [ "$ev" -lt 3000000 ] || fail "small window: $ev events"
"$COROTRACER" report "$d/f.ctrace" > /dev/null 2> "$d/rerr" || fail "report: exit $?: $(cat "$d/rerr")"
[ ! -s "$d/rerr" ] || fail "report of the small window: $(cat "$d/rerr")"

echo "== 5. crash"
d=$T/crash; mkdir "$d"
"$COROTRACER" run --flight 4M -o "$d/f.ctrace" -- "$TARGET" crash abort 5 > /dev/null 2> "$d/err"
rc=$?
[ $rc = 134 ] || fail "crash: engine exit $rc, want 134: $(cat "$d/err")"
grep -q "flight dump on SIGABRT" "$d/err" || fail "crash: no dump line: $(cat "$d/err")"
[ "$("$CTJL" -t window trigger < "$d/f.ctrace")" = SIGABRT ] || fail "crash: window trigger"
"$COROTRACER" report --blocker-ms 1 "$d/f.ctrace" > "$d/report.md" || fail "crash: report exit $?"
grep -q "killed by SIGABRT" "$d/report.md" || fail "crash: the report does not say SIGABRT"
grep -Eq "still running at the end after [0-9.]+ [mu]?s without suspending on tid [0-9]+" \
  "$d/report.md" || fail "crash: the coroutine is not shown running at the end: $(cat "$d/report.md")"

echo "== 6. --dump-on exit"
d=$T/exit; mkdir "$d"
"$COROTRACER" run --flight 1M --dump-on exit -o "$d/f.ctrace" -- "$TARGET" run 9 0 "$d" \
  > /dev/null 2> "$d/err" || fail "exit dump: exit $?"
grep -q "flight dump on exit" "$d/err" || fail "exit dump: no line: $(cat "$d/err")"
[ "$("$CTJL" -e ev < "$d/f.ctrace" | wc -l)" = 10 ] || fail "exit dump: not every event"
[ "$("$CTJL" -t end exit < "$d/f.ctrace")" = '{"code":0}' ] || fail "exit dump: end record"

echo "== 7. corotracer dump"
d=$T/cmd; mkdir -p "$d/rd"
"$COROTRACER" run --flight 1M --sock "$d/rd/sock" -o "$d/f.ctrace" -- "$TARGET" hold 7 "$d" \
  > /dev/null 2> "$d/err" &
eng=$!; bg_add $eng
wait_file "$d/ready" 30 $eng
child=$(ready_val "$d" pid); bg_add "$child"
"$COROTRACER" dump "$d/rd" > "$d/out" || fail "dump RUN_DIR: exit $?"
grep -q "asked the flight recorder $eng for a dump" "$d/out" || fail "dump RUN_DIR: $(cat "$d/out")"
wait_file "$d/f.ctrace" 30 $eng
"$COROTRACER" dump --pid $eng > /dev/null || fail "dump --pid: exit $?"
wait_file "$d/f.ctrace.1" 30 $eng
"$COROTRACER" dump > /dev/null || fail "dump (no argument): exit $?"
wait_file "$d/f.ctrace.2" 30 $eng
"$COROTRACER" dump --pid $$ 2> "$d/e2" && fail "dump --pid of a shell: exit 0"
grep -q "^corotracer: dump: $$ is not a flight recorder" "$d/e2" || fail "dump --pid \$\$: $(cat "$d/e2")"
"$COROTRACER" dump "$T" 2> "$d/e2" && fail "dump of a directory with no engine: exit 0"
grep -q "no flight recorder of ours listens there" "$d/e2" || fail "dump $T: $(cat "$d/e2")"
kill -TERM $eng
wait $eng
for f in f.ctrace f.ctrace.1 f.ctrace.2; do
  [ "$("$CTJL" -e ev < "$d/$f" | wc -l)" = 7 ] || fail "dump $f: not the 7 events"
done

echo "== 8. --flight-age"
d=$T/age; mkdir "$d"
"$COROTRACER" run --flight 16M --flight-age 500ms --dump-on exit -o "$d/f.ctrace" -- \
  "$TARGET" run 300 10000 "$d" > /dev/null 2> "$d/err" || fail "--flight-age: exit $?: $(cat "$d/err")"
set -- $("$CTJL" -t window start_ts end_ts dropped_chunks < "$d/f.ctrace")
span=$((($2 - $1) / 1000000))
echo "--flight-age 500ms: a window of $span ms, $3 chunks dropped before it"
[ "$3" -gt 0 ] || fail "--flight-age: nothing dropped from a 3 s run"
[ $span -le 1000 ] || fail "--flight-age 500ms: a window of $span ms"
[ $span -ge 400 ] || fail "--flight-age 500ms: a window of only $span ms"

echo "== 9. SIGUSR1 without --flight"
d=$T/fwd; mkdir "$d"
"$COROTRACER" run -o "$d/t.ctrace" -- "$TARGET" hold 3 "$d" > /dev/null 2> "$d/err" &
eng=$!; bg_add $eng
wait_file "$d/ready" 30 $eng
bg_add "$(ready_val "$d" pid)"
kill -USR1 $eng
wait $eng; rc=$?
[ $rc = 138 ] || fail "SIGUSR1 without --flight: engine exit $rc, want 138 (the program killed by it)"
"$CTJL" -t end exit < "$d/t.ctrace" | grep -q '^{"signal":10,' ||
  fail "SIGUSR1 without --flight: the end record says $("$CTJL" -t end exit < "$d/t.ctrace")"
echo "== 10. the snapshot at the window's start"
d=$T/snap; mkdir "$d"
# --lossless-ms 60000: under a sanitizer on a loaded box the engine may lag
# a second behind the busy writer; its events must still all arrive.
"$COROTRACER" run --lossless --lossless-ms 60000 --flight 1M --dump-on exit -o "$d/f.ctrace" -- \
  "$SDKW" parked 3000000 1.5 > /dev/null 2> "$d/err" || fail "snapshot run: exit $?: $(cat "$d/err")"
set -- $("$CTJL" -t window dropped_chunks snapshot < "$d/f.ctrace")
[ "$1" -gt 0 ] || fail "snapshot: nothing dropped before the window"
[ "$2" = 3 ] || fail "snapshot: $2 coroutines in the snapshot, want 3"
window_at "$d/f.ctrace" first
"$CTJL" -e probe_id < "$d/f.ctrace" | grep -qx 1001 && fail "snapshot: coroutine 1001's events still in the window"
# 1003, the busy one, is running or suspended as the chunk boundary fell.
[ "$("$CTJL" -t snapshot probe_id state wait obj < "$d/f.ctrace" | sort | sed 's/^1003 [a-z]* /1003 /')" = \
  "1001 suspended fd 7
1002 runnable ptr 0x0000000000001234
1003 - -" ] || fail "snapshot records: $("$CTJL" -t snapshot probe_id state wait obj < "$d/f.ctrace")"
"$COROTRACER" report "$d/f.ctrace" > "$d/report.md" 2> "$d/rerr" || fail "snapshot report: exit $?"
[ ! -s "$d/rerr" ] || fail "snapshot report: $(cat "$d/rerr")"
grep -q "^- \*\*Flight window\*\*: .*trigger: exit); 3 coroutines alive at its start" "$d/report.md" ||
  fail "snapshot report: no flight window line"
grep -q "Completeness\*\*: 0 events lost" "$d/report.md" || fail "snapshot report: events called lost"
grep -Eq '^\| 1001 \| lost \| fd 7 \| .*parked on fd 7 at [0-9.]+ [mun]?s before the window' "$d/report.md" ||
  fail "snapshot report: 1001 is not a lost wakeup parked before the window: $(cat "$d/report.md")"
grep -c "lost_wakeup\|leak" "$d/report.md" > /dev/null
grep -q '^| 1002 ' "$d/report.md" && fail "snapshot report: 1002 (woken before the window) is in a finding"
grep -q "unknown\|Unknown records" "$d/report.md" && fail "snapshot report: something unknown: $(cat "$d/report.md")"
"$COROTRACER" export jsonl "$d/f.ctrace" -o "$d/f.jsonl" -q || fail "export jsonl of a dump: exit $?"
[ "$(grep -c '"type":"snapshot"' "$d/f.jsonl")" = 3 ] || fail "export jsonl: the snapshot lost"
"$COROTRACER" report "$d/f.jsonl" | sed 1,5d > "$d/r2.md"
sed 1,5d "$d/report.md" | cmp -s - "$d/r2.md" || fail "the JSONL form of the dump reports otherwise"

echo "== 11. full rings at the exit"
d=$T/full; mkdir "$d"
# A lossless writer goes on in spare rings while the engine is stopped: 48 of
# 64 full at its exit, more than the engine's bounded passes of a scan take.
"$COROTRACER" run --lossless --lossless-ms 100 --rings 64 --ring-kib 64 --flight 1M --dump-on exit \
  -o "$d/f.ctrace" -- "$SDKW" stall 200000 "$d" > /dev/null 2> "$d/err" &
eng=$!
until [ -f "$d/ready" ]; do sleep 0.05; done
kill -STOP $eng
touch "$d/go"
until [ -f "$d/ns" ]; do sleep 0.05; done
kill -CONT $eng
wait $eng || fail "full rings: exit $?: $(cat "$d/err")"
# stall writes a create and twice 200000 events.
set -- $("$CTJL" -t end events harvested lost < "$d/f.ctrace")
[ "$1" = 400001 ] && [ $(($2 + $3)) = 400001 ] || fail "full rings: end events $1, harvested $2, lost $3 of 400001"

echo "== 12. packs (--pack): a window from the middle of a packing run"
d=$T/pack; mkdir "$d"
# Lossless: every event of the window is in the dump, each coroutine's ev
# going on by one from its snapshot record (the decoder seeded by it: the
# coroutine lines of the packs' stations were dropped before the window).
"$COROTRACER" run --pack --lossless --lossless-ms 60000 --flight 1M --dump-on exit -o "$d/f.ctrace" -- \
  "$SDKW" yield 2 40 30000 "$d/w" > /dev/null 2> "$d/err" || fail "pack window: exit $?: $(cat "$d/err")"
set -- $("$CTJL" -t window dropped_chunks snapshot < "$d/f.ctrace")
[ "$1" -gt 0 ] && [ "$2" -gt 0 ] || fail "pack window: $1 chunks dropped, $2 in the snapshot"
set -- $("$CTJL" -t end events harvested lost < "$d/f.ctrace")
[ "$1" = "$(cat "$d/w")" ] && [ $(($2 + $3)) = "$1" ] && [ "$3" = 0 ] ||
  fail "pack window: end events $1, harvested $2, lost $3; written $(cat "$d/w")"
{ "$CTJL" -t snapshot probe_id ev < "$d/f.ctrace"; echo next; "$CTJL" -e probe_id ev < "$d/f.ctrace"; } |
  awk '$1 == "next" { ev = 1; next }
       !ev { last[$1] = $2; next }
       { n++; if (($1 in last) && $2 != last[$1] + 1) { bad++; if (bad < 4) print "coroutine " $1 ": ev " $2 " after " last[$1] }
         last[$1] = $2 }
       END { if (!n || bad) { print n " events, " bad " out of step"; exit 1 } }' > "$d/steps" ||
  fail "pack window: $(cat "$d/steps")"
"$COROTRACER" report "$d/f.ctrace" > "$d/report.md" 2> "$d/rerr" || fail "pack window report: exit $?"
[ ! -s "$d/rerr" ] || fail "pack window report: $(cat "$d/rerr")"
grep -q "Completeness\*\*: 0 events lost" "$d/report.md" || fail "pack window report: events called lost"
"$COROTRACER" export jsonl "$d/f.ctrace" -o "$d/f.jsonl" -q || fail "export jsonl of a pack dump: exit $?"
"$COROTRACER" report "$d/f.jsonl" 2> "$d/rerr" | sed 1,5d > "$d/r2.md"
[ ! -s "$d/rerr" ] || fail "report of the pack dump's JSONL: $(cat "$d/rerr")"
sed 1,5d "$d/report.md" | cmp -s - "$d/r2.md" || fail "the JSONL form of the pack dump reports otherwise"
# A window with no coroutine alive at its start (the packing run's all
# destroyed, then a churn of short ones pushed them out): no snapshot record
# seeds the decoder, the window record (dropped_chunks, before the window's
# chunks and so its end record) tells it the packs dropped before are in the
# end's harvested: events = harvested + lost = written (without, events
# counted the window's packs only: 474550 of 7600318).
"$COROTRACER" run --pack --lossless --lossless-ms 60000 --flight 1M --dump-on exit -o "$d/e.ctrace" -- \
  sh -c "\"$SDKW\" yield 2 40 30000 \"$d/we\" && \"$SDKW\" churn 100000 \"$d/wc\"" > /dev/null 2> "$d/err" ||
  fail "empty snapshot: exit $?: $(cat "$d/err")"
set -- $("$CTJL" -t window dropped_chunks snapshot < "$d/e.ctrace")
[ "$1" -gt 0 ] && [ "$2" = - ] || fail "empty snapshot: $1 chunks dropped, $2 in the snapshot"
window_at "$d/e.ctrace" first
set -- $("$CTJL" -t end events harvested lost < "$d/e.ctrace")
[ "$1" = $(($(cat "$d/we") + $(cat "$d/wc"))) ] && [ $(($2 + $3)) = "$1" ] ||
  fail "empty snapshot: end events $1, harvested $2, lost $3; written $(cat "$d/we") + $(cat "$d/wc")"
"$COROTRACER" report "$d/e.ctrace" > /dev/null 2> "$d/rerr" || fail "empty snapshot report: exit $?"
[ ! -s "$d/rerr" ] || fail "empty snapshot report: $(cat "$d/rerr")"
# Overwrite mode, the engine stopped a while: the writers take back whole
# packs (64 KiB rings fill at once), each event is in the dump's run counts
# as harvested or lost, never both, never neither (under TSan, 2 runs of 4
# had ended ~2 M short: full rings left at the end, their pass cut at a
# pack's entry bytes read as a time: rings.c ct_rings_cut).
"$COROTRACER" run --pack --flight 1M --ring-kib 64 --dump-on exit -o "$d/o.ctrace" -- \
  "$SDKW" yield 2 40 300000 "$d/wo" > /dev/null 2> "$d/err" &
eng=$!; bg_add $eng
sleep 0.3; kill -STOP $eng; sleep 0.5; kill -CONT $eng
wait $eng || fail "pack overwrite: exit $?: $(cat "$d/err")"
set -- $("$CTJL" -t end events harvested lost < "$d/o.ctrace")
echo "--pack overwrite: $1 events, $2 harvested, $3 lost"
[ "$1" = "$(cat "$d/wo")" ] && [ $(($2 + $3)) = "$1" ] ||
  fail "pack overwrite: end events $1, harvested $2, lost $3; written $(cat "$d/wo")"
"$COROTRACER" report "$d/o.ctrace" > "$d/report.md" 2> "$d/rerr" || fail "pack overwrite report: exit $?"
[ ! -s "$d/rerr" ] || fail "pack overwrite report: $(cat "$d/rerr")"

echo "test-flight: ok"
