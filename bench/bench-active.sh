#!/bin/sh
# bench-active.sh - the engine's CPU with many coroutines alive and few active
# (issue #9: 10, 10^4 and 10^6 alive, 10 active): the target
# (tests/lib/sdk-writer active) creates N coroutines, then every ms 10 of them
# resume and suspend (20,000 events/s) while it sleeps in between.
#
#   sh bench/bench-active.sh [BUILD_DIR [SECONDS [RUNS [ENGINE-OPTION...]]]]
#       default build/default 6 3; e.g. ... 6 3 --rings 0 for v1 stations
#   BENCH_NS="1000000" sh bench/bench-active.sh ...   other counts of coroutines
#
# CPU % of the engine = the run time of its threads (/proc/PID/task/*/schedstat,
# ns; utime+stime ticks where schedstat is missing: 1 tick = 0.2% of a 5 s
# window, and biased when wake-ups keep step with the tick) over a window from
# SETTLE seconds (default 0.5; the engine formats the N creates first) after
# the target is ready to 0.5 s before it ends; wake-ups/s = voluntary context
# switches of its threads over the window. Medians over RUNS.
set -u
B=${1:-build/default} SECS=${2:-6} RUNS=${3:-3}
shift 3 2>/dev/null || shift $#
ENGINE=$B/bin/corotracer W=$B/tests/lib/sdk-writer
[ -x "$ENGINE" ] && [ -x "$W" ] || { echo "build first: make O=$B" >&2; exit 2; }
TICK=$(getconf CLK_TCK)
D=$(mktemp -d "${TMPDIR:-/tmp}/bench-active.XXXXXX") || exit 1
eng=""
trap '[ -n "$eng" ] && kill -KILL $eng 2>/dev/null; rm -rf "$D"' EXIT
trap 'exit 1' INT TERM
# CPU seconds of process $1 (all threads), and its threads' voluntary switches.
if [ -r /proc/self/schedstat ]; then
  cpu_s() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.9f\n", s / 1e9 }'; }
else
  cpu_s() { awk -v t="$TICK" '{ printf "%.9f\n", ($14 + $15) / t }' "/proc/$1/stat"; }
fi
vcsw() { cat /proc/"$1"/task/*/status | awk '/^voluntary_ctxt_switches/ { s += $2 } END { print s }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "| coroutines alive | active | engine CPU % | engine wake-ups/s | window s | runs | engine options |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
SETTLE=${SETTLE:-0.5}
for n in ${BENCH_NS:-10 10000 1000000}; do
  : > "$D/eng"
  : > "$D/wake"
  r=0
  while [ $r -lt "$RUNS" ]; do
    r=$((r + 1))
    rm -f "$D/ready"
    "$ENGINE" run --quiet "$@" -n $((n + 16)) -o /dev/null -- "$W" active "$n" 10 "$SECS" "$D" &
    eng=$!
    while [ ! -e "$D/ready" ]; do kill -0 $eng 2>/dev/null || { echo "engine ended early" >&2; exit 1; }; sleep 0.05; done
    sleep "$SETTLE"
    e0=$(cpu_s $eng) w0=$(vcsw $eng) s0=$(date +%s.%N)
    sleep "$(awk -v s="$SECS" -v t="$SETTLE" 'BEGIN { print s - t - 0.5 }')"
    e1=$(cpu_s $eng) w1=$(vcsw $eng) s1=$(date +%s.%N)
    wait $eng || { echo "run failed" >&2; exit 1; }
    eng=""
    awk -v a="$e0" -v b="$e1" -v s="$s0" -v e="$s1" 'BEGIN { printf "%.2f\n", 100 * (b - a) / (e - s) }' >> "$D/eng"
    awk -v a="$w0" -v b="$w1" -v s="$s0" -v e="$s1" 'BEGIN { printf "%.0f\n", (b - a) / (e - s) }' >> "$D/wake"
  done
  echo "| $n | 10 | $(median < "$D/eng") | $(median < "$D/wake") | $(awk -v s="$SECS" -v t="$SETTLE" 'BEGIN { print s - t - 0.5 }') | $RUNS ($(tr '\n' ' ' < "$D/eng")) | $* |"
done
