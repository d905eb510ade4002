#!/bin/sh
# bench-idle.sh - CPU time of the engine (and of the target) while the target
# sleeps, with 128 and with 100,000 coroutines alive (one station each).
#
#   sh bench/bench-idle.sh [BUILD_DIR [SECONDS [RUNS]]]   (default build/default 10 3)
#
# The target (tests/lib/ct-target idle) creates N coroutines, says ready, then
# sleeps SECONDS. We read utime+stime of both processes from /proc/PID/stat
# 0.5 s after ready and 0.5 s before the target wakes; CPU % = ticks over the
# window. Prints one Markdown row per N: medians over RUNS.
set -u
B=${1:-build/default} SECS=${2:-10} RUNS=${3:-3}
ENGINE=$B/bin/corotracer TARGET=$B/tests/lib/ct-target
[ -x "$ENGINE" ] && [ -x "$TARGET" ] || { echo "build first: make O=$B" >&2; exit 2; }
TICK=$(getconf CLK_TCK)
D=$(mktemp -d "${TMPDIR:-/tmp}/bench-idle.XXXXXX") || exit 1
eng=""
trap '[ -n "$eng" ] && kill -KILL $eng 2>/dev/null; rm -rf "$D"' EXIT
trap 'exit 1' INT TERM

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; } # utime + stime (after a comm without spaces)
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "| stations (coroutines alive) | engine CPU % | target CPU % | window s | runs |"
echo "| --- | --- | --- | --- | --- |"
for n in 128 100000; do
  : > "$D/eng" ; : > "$D/tgt"
  r=0
  while [ $r -lt "$RUNS" ]; do
    r=$((r + 1))
    rm -f "$D/ready"
    "$ENGINE" run --quiet -n "$n" -o "$D/trace" -- "$TARGET" idle "$n" "$SECS" "$D" &
    eng=$!
    while [ ! -e "$D/ready" ]; do kill -0 $eng 2>/dev/null || { echo "engine ended early" >&2; exit 1; }; sleep 0.05; done
    tpid=$(awk '$1 == "pid" { print $2 }' "$D/ready")
    sleep 0.5
    e0=$(cpu_ticks $eng) t0=$(cpu_ticks "$tpid") s0=$(date +%s.%N)
    sleep $((SECS - 1))
    e1=$(cpu_ticks $eng) t1=$(cpu_ticks "$tpid") s1=$(date +%s.%N)
    wait $eng || { echo "run failed" >&2; exit 1; }
    eng=""
    awk -v a="$e0" -v b="$e1" -v s="$s0" -v e="$s1" -v t="$TICK" 'BEGIN { printf "%.2f\n", 100 * (b - a) / t / (e - s) }' >> "$D/eng"
    awk -v a="$t0" -v b="$t1" -v s="$s0" -v e="$s1" -v t="$TICK" 'BEGIN { printf "%.2f\n", 100 * (b - a) / t / (e - s) }' >> "$D/tgt"
  done
  echo "| $n | $(median < "$D/eng") | $(median < "$D/tgt") | $((SECS - 1)) | $RUNS (engine: $(tr '\n' ' ' < "$D/eng")) |"
done
