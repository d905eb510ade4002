#!/bin/sh
# test-flight-dumps.sh - issue #34: the flight recorder's dumps over a long
# run and under faults.
#  1. N3: a SIGUSR1 dump spends --flight-max 1; the crash (an abort: a
#     sanitizer's handler takes a SIGSEGV) that follows still gets its dump
#     (a crash has its own budget);
#  2. N9: a storm of SIGUSR1 past --flight-max says so once, and the end
#     counts the refusals;
#  3. item 13: without --flight-max, ten dumps are all written (not refused
#     after the 8th), the newest kept within --flight-disk, the oldest
#     removed: said once, counted at the end;
#  4. N4: a dump cut short (RLIMIT_FSIZE on the engine: EFBIG, as ENOSPC)
#     keeps the bytes it wrote, says so in one line, and the run exits 1;
#  5. issue #33 item 8: a dump written after losses (a burst into a 64 KiB
#     ring while the engine is stopped) carries the engine's counts, and its
#     report states them: lost in its window; after a burst that turns the
#     window over, the next dump's report has them before its window (the
#     burst is harvested through a 64 KiB ring: on a loaded machine too little
#     of it may reach the window to turn it over, and then the first burst's
#     losses are the second dump's window's, which the report must say).
. "$(dirname "$0")/lib/engine.sh"
SDKW="$CT_BUILD/tests/lib/sdk-writer"
# A burst of 600,000 events (a full 1M window), then the program waits.
burst_then_wait() {
  echo "'$SDKW' spaced 1 600000 0 '$1/w' && : >'$1/ready' && exec sleep 600"
}

# usr1_until ENGINE FILE: one SIGUSR1, then wait for FILE (a dump) to appear.
usr1_until() {
  kill -USR1 "$1"
  wait_file "$2" 30 "$1"
}

echo "== 1. N3: the crash dump past --flight-max"
d=$T/crash; mkdir "$d"
"$COROTRACER" run --flight 1M --flight-max 1 -o "$d/f.ctrace" -- sh -c \
  "kill -USR1 \$PPID; while [ ! -e '$d/f.ctrace' ]; do sleep 0.05; done; exec '$TARGET' crash abort 5" \
  >/dev/null 2>"$d/err"
rc=$?
[ $rc = 134 ] || fail "crash: engine exit $rc, want 134: $(cat "$d/err")"
grep -q "no dump" "$d/err" && fail "the crash dump was refused: $(cat "$d/err")"
[ -e "$d/f.ctrace.1" ] || fail "no crash dump after a SIGUSR1 one: $(cat "$d/err")"
[ "$("$CTJL" -t window trigger <"$d/f.ctrace.1")" = SIGABRT ] || fail "crash: the second dump's trigger"
[ "$("$CTJL" -t window trigger <"$d/f.ctrace")" = SIGUSR1 ] || fail "crash: the first dump's trigger"

echo "== 2. N9: a SIGUSR1 storm past --flight-max, said once"
d=$T/storm; mkdir "$d"
"$COROTRACER" run --flight 1M --flight-max 1 -o "$d/f.ctrace" -- "$TARGET" hold 20 "$d" \
  >/dev/null 2>"$d/err" &
eng=$!; bg_add $eng
wait_file "$d/ready" 30 $eng
usr1_until $eng "$d/f.ctrace"
i=0
while [ $i -lt 30 ]; do
  kill -USR1 $eng
  sleep 0.02
  i=$((i + 1))
done
n=0
until grep -q "no dump, --flight-max 1 reached" "$d/err"; do
  n=$((n + 1)); [ $n -lt 400 ] || fail "storm: no refusal line: $(cat "$d/err")"
  sleep 0.05
done
sleep 0.5 # the rest of the storm
kill -TERM $eng
wait $eng
[ "$(grep -c "no dump" "$d/err")" = 1 ] || fail "storm: the refusal said more than once: $(cat "$d/err")"
refused=$(sed -n 's/^corotracer: flight: \([0-9]*\) dump requests refused (--flight-max 1)$/\1/p' "$d/err")
[ -n "$refused" ] || fail "storm: no count of the refusals: $(cat "$d/err")"
[ "$refused" -ge 2 ] || fail "storm: $refused refusals counted: too few signals reached the engine"
[ ! -e "$d/f.ctrace.1" ] || fail "storm: a dump past --flight-max 1"

echo "== 3. item 13: ten dumps, the newest kept within --flight-disk"
d=$T/keep; mkdir "$d"
"$COROTRACER" run --flight 1M --flight-disk 2M -o "$d/f.ctrace" -- sh -c "$(burst_then_wait "$d")" \
  >/dev/null 2>"$d/err" &
eng=$!; bg_add $eng
wait_file "$d/ready" 60 $eng
usr1_until $eng "$d/f.ctrace"
for i in 1 2 3 4 5 6 7 8 9; do
  usr1_until $eng "$d/f.ctrace.$i"
done
kill -TERM $eng
wait $eng
[ "$(grep -c "flight dump on SIGUSR1" "$d/err")" = 10 ] || fail "keep: ten dump lines expected: $(cat "$d/err")"
size=$(stat -c %s "$d/f.ctrace.9")
[ "$size" -gt 524288 ] || fail "keep: the dumps are too small ($size bytes) to need the budget"
kept=$(ls "$d" | grep -c '^f\.ctrace')
total=$(cat "$d"/f.ctrace* | wc -c)
[ "$total" -le 2097152 ] || fail "keep: $kept dumps of $total bytes kept within a 2M budget"
[ -e "$d/f.ctrace" ] && fail "keep: the oldest dump was not removed"
[ "$(grep -c "the oldest dumps are removed" "$d/err")" = 1 ] || fail "keep: the removal not said once: $(cat "$d/err")"
removed=$(sed -n 's/^corotracer: flight: \([0-9]*\) older dumps removed (--flight-disk 2097152 bytes)$/\1/p' "$d/err")
[ "$removed" = $((10 - kept)) ] || fail "keep: $kept kept, removed counted '$removed': $(cat "$d/err")"
"$COROTRACER" report "$d/f.ctrace.9" >/dev/null || fail "keep: the newest dump does not read"

echo "== 4. N4: a dump cut short keeps its bytes and fails the run"
d=$T/short; mkdir "$d"
"$COROTRACER" run --flight 1M -o "$d/f.ctrace" -- sh -c "$(burst_then_wait "$d")" >/dev/null 2>"$d/err" &
eng=$!; bg_add $eng
wait_file "$d/ready" 60 $eng
# On the engine alone, after its shared memory was sized: its dump's writes fail (EFBIG).
prlimit --pid $eng --fsize=200000 || fail "prlimit on the engine"
kill -USR1 $eng
n=0
until grep -q "flight dump (SIGUSR1) failed" "$d/err"; do
  n=$((n + 1)); [ $n -lt 400 ] || fail "short: no failure line: $(cat "$d/err")"
  sleep 0.05
done
kill -TERM $eng
wait $eng
rc=$?
[ $rc = 1 ] || fail "short: engine exit $rc, want 1 (a dump failed): $(cat "$d/err")"
[ -e "$d/f.ctrace" ] || fail "short: the dump's bytes were not kept"
size=$(stat -c %s "$d/f.ctrace")
grep -q "^corotracer: $d/f.ctrace: flight dump (SIGUSR1) failed: File too large ($size bytes kept)$" "$d/err" ||
  fail "short: the line does not say what was kept ($size bytes): $(cat "$d/err")"
[ "$size" -gt 0 ] || fail "short: nothing kept"

echo "== 5. #33 item 8: the losses in a dump"
d=$T/lost; mkdir "$d"
# wait_go NAME: the program waits for the test's file NAME.
wait_go() { echo "while [ ! -e '$d/$1' ]; do sleep 0.05; done"; }
"$COROTRACER" run --rings 1 --ring-kib 64 --flight 1M -o "$d/f.ctrace" -- sh -c \
  "'$SDKW' spaced 1 1000 0 '$d/w1' && : >'$d/r1' && $(wait_go go1) && '$SDKW' spaced 1 200000 0 '$d/w2' &&
   : >'$d/r2' && $(wait_go go2) && '$SDKW' spaced 1 12000000 0 '$d/w3' && : >'$d/r3' && exec sleep 600" \
  >/dev/null 2>"$d/err" &
eng=$!; bg_add $eng
wait_file "$d/r1" 30 $eng
kill -STOP $eng # 200,000 events into a ring of 2048 records: nearly all lost
: >"$d/go1"
wait_file "$d/r2" 30
kill -CONT $eng
usr1_until $eng "$d/f.ctrace"
: >"$d/go2"
wait_file "$d/r3" 60 $eng
usr1_until $eng "$d/f.ctrace.1"
kill -TERM $eng
wait $eng
# completeness FILE: "IN BEFORE" from its report's Completeness line.
completeness() {
  "$COROTRACER" report "$1" 2>&1 |
    sed -n 's/^- \*\*Completeness\*\*: \([0-9]*\) events lost in the window, \([0-9]*\) before it .*/\1 \2/p'
}
set -- $(completeness "$d/f.ctrace")
[ $# = 2 ] || fail "lost: the first dump's report states no window losses: $("$COROTRACER" report "$d/f.ctrace" | grep Completeness)"
[ "$1" -ge 100000 ] && [ "$2" = 0 ] || fail "lost: the first dump: $1 lost in the window, $2 before it"
first=$1
set -- $(completeness "$d/f.ctrace.1")
[ $# = 2 ] || fail "lost: the second dump's report states no window losses"
if [ "$("$CTJL" -t window dropped_chunks <"$d/f.ctrace.1")" != 0 ]; then
  [ "$2" -ge "$first" ] || fail "lost: the second dump: $2 lost before it, want the first burst's $first"
else
  echo "   (the third burst did not turn the window over: the first burst's losses are in it)"
  [ "$1" -ge "$first" ] || fail "lost: the second dump, its window not turned over: $1 lost in it, want the first burst's $first"
fi
total=$(sed -n 's/.* events harvested, \([0-9]*\) lost of .*/\1/p' "$d/err")
[ $(($1 + $2)) -le "$total" ] || fail "lost: the second dump counts $1 + $2, more than the run's $total"
echo "ok"
