#!/bin/sh
# bench-setup.sh - the fixed cost of a run: `corotracer run -- true` from
# start to exit (shared memory, rings, socket, the program's start and end,
# teardown), with the default 64 rings and with 8. With BASE=build/y it runs
# that build's binary too, interleaved with O's, and prints the ratio (O over
# BASE): an A/B in one run (bench/lib-ab.sh), on a machine whose load comes
# and goes.
# Usage: O=build/x [BASE=build/y] [RUNS=9] sh bench/bench-setup.sh
. "$(dirname "$0")/lib-ab.sh"
runs=${RUNS:-9}
ab_need bin/corotracer
ms() { date +%s%N | awk '{ printf "%.1f\n", $1 / 1e6 }'; }

# One run of build $1 with $rings rings: its milliseconds.
one() {
  t0=$(ms)
  "$1/bin/corotracer" run --quiet --rings "$rings" -o "$tmp/t.ctrace" -- true
  t1=$(ms)
  echo "$t0 $t1" | awk '{ print $2 - $1 }'
}

for rings in 64 8; do
  ab_loop "$runs" "r$rings" one
  line="run -- true, $rings rings, median of $runs:"
  k=0
  for b in $builds; do
    k=$((k + 1))
    line="$line $b $(ab_median "$tmp/r$rings.$k" | awk '{ printf "%.1f", $1 }') ms;"
  done
  if [ -n "${BASE:-}" ]; then line="$line ratio $(ab_ratio "r$rings")"; fi
  echo "$line"
done
