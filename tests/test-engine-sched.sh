#!/bin/sh
# test-engine-sched.sh - never a busy thread above the program (issue #20):
# at most one thread of the engine runs real-time, the harvest loop (its
# short passes copy, then nap); the formatter, which formats and writes for
# as long as a backlog lasts, and every other thread stay SCHED_OTHER. On
# 958b127 the formatter ran SCHED_FIFO 1. And with the engine and the program
# on one CPU, a back-to-back writer is still traced without loss in default
# mode: the rings and the capture absorb the burst.
. "$(dirname "$0")/lib/engine.sh"
SDK="$CT_BUILD/tests/lib/sdk-writer"

d=$T/hold
mkdir "$d"
"$COROTRACER" run --quiet -o "$d/trace" -- "$TARGET" hold 5 "$d" > "$d/out" 2>&1 &
eng=$!
bg_add $eng
wait_file "$d/ready" 20 $eng
# Field 41 of /proc/PID/task/TID/stat is the policy (1 = SCHED_FIFO, 2 = RR);
# the comm field (2) has no spaces here.
rt=0
threads=0
for st in /proc/$eng/task/*/stat; do
  pol=$(awk '{ print $41 }' "$st" 2>/dev/null) || continue
  threads=$((threads + 1))
  [ "$pol" != 1 ] && [ "$pol" != 2 ] || rt=$((rt + 1))
done
[ $threads -ge 2 ] || fail "engine $eng: $threads threads, want the loop and the formatter at least"
[ $rt -le 1 ] || fail "engine $eng: $rt real-time threads of $threads, want at most 1 (the harvest loop)"
tpid=$(ready_val "$d" pid)
kill -TERM "$tpid"
wait $eng
sched=$("$CTJL" -t end sched < "$d/trace")
echo "engine: $threads threads, $rt real-time (the loop's sched: $sched)"

# --no-realtime (as without CAP_SYS_NICE): the loop, the engine's main thread,
# asks for a 0.1 ms EEVDF slice so its wake-ups preempt (issue #32); the
# formatter and the program keep the default. The kernel shows a task's slice
# in /proc/PID/task/TID/sched (se.slice, ns) where it has one (>= 6.12).
d=$T/nort
mkdir "$d"
"$COROTRACER" run --quiet --no-realtime -o "$d/trace" -- "$TARGET" hold 5 "$d" > "$d/out" 2>&1 &
eng=$!
bg_add $eng
wait_file "$d/ready" 20 $eng
tpid=$(ready_val "$d" pid)
slice() { awk '$1 == "se.slice" { print $3 }' "$1" 2>/dev/null; }
loop=$(slice /proc/$eng/task/$eng/sched)
if [ -n "$loop" ]; then
  [ "$loop" = 100000 ] || fail "--no-realtime: the loop's slice is $loop ns, want 100000"
  for f in /proc/$eng/task/*/sched /proc/$tpid/task/*/sched; do
    case $f in /proc/$eng/task/$eng/sched) continue ;; esac
    v=$(slice "$f")
    [ "$v" != 100000 ] || fail "--no-realtime: $f has the loop's short slice"
  done
  echo "--no-realtime: the loop's slice 100000 ns, the others' $(slice /proc/$tpid/sched)"
else
  echo "--no-realtime: no se.slice in /proc (kernel), slice not checked"
fi
kill -TERM "$tpid"
wait $eng

command -v taskset > /dev/null || skip "no taskset"
ev=1000000
[ -z "$CT_SAN" ] || ev=200000
taskset -c 0 "$COROTRACER" run --quiet -o "$T/one.jsonl" -- "$SDK" spaced 1 $ev 0 "$T/written" ||
  fail "one CPU: engine or writer failed"
w=$(cat "$T/written")
got=$("$CTJL" -t end events harvested lost < "$T/one.jsonl")
[ "$got" = "$w $w 0" ] || fail "one CPU: end record 'events harvested lost' = '$got', want '$w $w 0'"
echo "ok: one real-time thread at most; one CPU, $w events back to back, none lost"
