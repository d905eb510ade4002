#!/bin/sh
# test-flight-memory.sh - issue #21 acceptance: the flight recorder's memory
# stays bounded however much flows through it.
#   10^8 events from a back-to-back burst writer (one coroutine, one thread;
#   two processes of 5 x 10^7 one after the other, the signal between them)
#   through --flight 64M: the engine's peak RSS (VmHWM, /proc) stays within
#   128 MiB; a SIGUSR1 dump taken mid-run reads as a trace and its newest
#   event lies within the last second before the signal; the window at the
#   end (--dump-on exit) holds at least 6 x 10^6 events of the burst.
# The default rings: under --flight 64 of 512 KiB, shared memory the engine
# maps and faults in (docs/FLIGHT.md "Memory"), counted in its VmHWM: a
# lossless burst fills three quarters of them (the writer goes on in spare
# rings while the engine lags), 24 MiB. --lossless: every event goes through
# the window (without it the rings drop most of a burst, and the window may
# not fill). Long (30 s to 2 min: two reports of ~3 x 10^7 events): the
# plain build only.
. "$(dirname "$0")/lib/engine.sh"
SDKW="$CT_BUILD/tests/lib/sdk-writer"
d=$T/mem; mkdir "$d"

# Two bursts of 5 x 10^7 (a burst may take under a second when the rings
# drop): the signal goes between them, mid-run whatever the box's speed.
"$COROTRACER" run --lossless --flight 64M --dump-on exit -o "$d/f.ctrace" -- \
  sh -c "'$SDKW' spaced 1 50000000 0 '$d/w1' && touch '$d/half' &&
         '$SDKW' spaced 1 50000000 0 '$d/w2' && touch '$d/done' && sleep 2" > /dev/null 2> "$d/err" &
eng=$!; bg_add $eng
wait_file "$d/half" 300 $eng
sig_wall=$(date +%s%N)
kill -USR1 $eng
wait_file "$d/done" 300 $eng
done_wall=$(date +%s%N)
cp "/proc/$eng/status" "$d/status"
hwm=$(awk '$1 == "VmHWM:" { print $2 }' "$d/status")
wait $eng || fail "engine exit $?: $(cat "$d/err")"
cat "$d/err"
echo "engine VmHWM: $hwm kB ($(grep -E '^Rss(Anon|Shmem)' "$d/status" | tr -s ' \t\n' ' '))"
[ -n "$hwm" ] && [ "$hwm" -le $((128 * 1024)) ] || fail "engine peak RSS $hwm kB > 128 MiB"
grep -q "^corotracer: .*f.ctrace: flight dump on SIGUSR1" "$d/err" || fail "no SIGUSR1 dump line"

# The newest event of the mid-run dump against the signal, on the wall clock
# (the meta record's clock pair converts a ts). The engine takes the signal in
# its loop: events of the second burst harvested meanwhile are in the dump,
# so its newest event may come after the kill, never after the run's end.
set -- $("$CTJL" -t window end_ts < "$d/f.ctrace") \
  $("$CTJL" -t meta clock < "$d/f.ctrace" | sed 's/[^0-9,]//g; s/,/ /')
[ $# = 3 ] || fail "the SIGUSR1 dump: no window or meta record"
newest_wall=$(($1 - $2 + $3))
lag=$((sig_wall - newest_wall))
echo "newest event of the SIGUSR1 dump: $((lag / 1000000)) ms before the signal"
[ $lag -le 1000000000 ] && [ "$newest_wall" -le "$done_wall" ] ||
  fail "the newest event is $lag ns before the signal ($((done_wall - newest_wall)) ns before the second burst's end)"
"$COROTRACER" report "$d/f.ctrace" > "$d/r1.md" 2> "$d/rerr" || fail "report of the SIGUSR1 dump: exit $?"
[ ! -s "$d/rerr" ] || fail "report of the SIGUSR1 dump: $(cat "$d/rerr")"

# The window at the end: full (chunks dropped) and at least 6 x 10^6 events.
set -- $("$CTJL" -t window trigger bytes dropped_bytes < "$d/f.ctrace.1")
[ "$1" = exit ] || fail "the exit dump: trigger $1"
[ "$3" -gt 0 ] || fail "the exit dump: the window never filled ($2 bytes)"
[ "$2" -le $((64 * 1024 * 1024)) ] || fail "the exit dump: $2 bytes in a 64M window"
"$COROTRACER" report "$d/f.ctrace.1" > "$d/r2.md" 2> "$d/rerr" || fail "report of the exit dump: exit $?"
[ ! -s "$d/rerr" ] || fail "report of the exit dump: $(cat "$d/rerr")"
events=$(sed -n 's/.* records ([^)]*), \([0-9]*\) events.*/\1/p' "$d/r2.md" | head -n 1)
printf "the 64M window: %s events, %s bytes (%d.%02d bytes/event)\n" "$events" "$2" \
  $(($2 / events)) $(($2 * 100 / events % 100))
[ -n "$events" ] && [ "$events" -ge 6000000 ] || fail "the 64M window holds $events events (< 6 x 10^6)"
