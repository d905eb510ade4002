#!/bin/sh
# test-engine-alloc.sh - issue #34 N1: a target writes 0xfffffff0 over the
# header's allocated_count (tests/lib/scribbler ... alloc) under --lossless
# --rings 0 -n 1048576. The engine walked every station handed out on each
# pass while the lossless writer waited for each pass: 200k events took
# 27 ms untouched, 3.5-24.7 s scribbled, silently. Now the scan list goes at
# most 64 stations past those their creators initialized: the engine's
# harvest thread spends on the scribbled run what it spends on the same run
# untouched, within a bound no load can reach (CPU time, not wall time: 10x
# the untouched run's, and at least 2 s, where the old walk took tens of
# seconds of CPU), every event written is in the trace, and the summary says
# the count past n as untraced, as before.
. "$(dirname "$0")/lib/engine.sh"
SCR="$CT_BUILD/tests/lib/scribbler"
EVENTS=100000

# run SEED [alloc]: harvest_cpu_us of the run, its events and the program's written count.
run() {
  rm -f "$T/out" "$T/t.ctrace"
  timeout -s KILL 120 "$COROTRACER" run --quiet --lossless --rings 0 -n 1048576 -o "$T/t.ctrace" -- \
    "$SCR" "$1" "$2" "$T/out" ${3:-} >"$T/err" 2>&1
  rc=$?
  [ -s "$T/out" ] || fail "scribbler $*: the program did not finish (engine exit $rc): $(cat "$T/err")"
  written=$(cut -d' ' -f2 "$T/out")
  set -- $("$CTJL" -t end harvest_cpu_us events < "$T/t.ctrace")
  cpu=$1 events=$2
}

run 0 $EVENTS
base=$cpu
[ "$events" = "$written" ] || fail "untouched: $events events in the trace, $written written"
run 1 $EVENTS alloc
bound=$((base * 10 > 2000000 ? base * 10 : 2000000))
echo "harvest CPU: untouched ${base} us, allocated_count scribbled ${cpu} us (bound ${bound} us)"
[ "$cpu" -le "$bound" ] || fail "the scribbled count cost the harvest ${cpu} us of CPU (untouched: ${base} us)"
[ "$events" -ge $((written - 16)) ] ||
  fail "scribbled: $events events in the trace of $written written (the after-coroutines may go untraced)"
echo "ok"
