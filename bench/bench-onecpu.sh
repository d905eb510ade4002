#!/bin/sh
# bench-onecpu.sh - issue #20's one-CPU target: engine and program pinned to
# one CPU (`taskset -c 0`, what a one-CPU container gets), a back-to-back
# burst (tests/lib/sdk-writer spaced 1 N 0) under `corotracer run`: the
# program's own wall time per event (the summary line's seconds / N) and the
# events lost (the end record's). (The writer refuses to run untraced.)
# With BASE=build/y that build runs too, interleaved with O's (A/B in one
# run, bench/lib-ab.sh), and the ratio O / BASE.
# Usage: O=build/x [BASE=build/y] [RUNS=5] [EVENTS=4000000] sh bench/bench-onecpu.sh
. "$(dirname "$0")/lib-ab.sh"
runs=${RUNS:-5} n=${EVENTS:-4000000}
ab_need bin/corotracer tests/lib/sdk-writer tests/lib/ctjl

# One pinned run of build $1: ns per event of the program's time, lost.
one() {
  taskset -c 0 "$1/bin/corotracer" run -o "$tmp/t.ctrace" -- "$1/tests/lib/sdk-writer" spaced 1 "$n" 0 \
    "$tmp/w" > /dev/null 2> "$tmp/err"
  prog=$(sed -n 's/.*program exited with [0-9]*; \([0-9.]*\) s;.*/\1/p' "$tmp/err")
  lost=$("$1/tests/lib/ctjl" -t end lost < "$tmp/t.ctrace")
  echo "$prog $n $lost" | awk '{ printf "%.1f %s\n", $1 * 1e9 / $2, $3 }'
}

ab_loop "$runs" one one
echo "one CPU, $n events back to back, median of $runs:"
k=0
for b in $builds; do
  k=$((k + 1))
  echo "  $b: program $(ab_median "$tmp/one.$k") ns/event" \
    "(runs: $(awk '{ printf "%s ", $1 }' "$tmp/one.$k")), lost $(awk '{ printf "%s ", $2 }' "$tmp/one.$k")"
done
if [ -n "${BASE:-}" ]; then echo "  ratio $(ab_ratio one)"; fi
