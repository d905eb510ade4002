#!/bin/sh
# bench-asio.sh - Asio echo round trips/s: plain, built with corotracer/asio.hpp
# but untraced, and traced under `corotracer run`; ROUNDS alternating rounds,
# medians, ratios to the plain build, and the load average before and after.
# With BASE=build/y that build runs too, interleaved with O's (A/B in one
# run, bench/lib-ab.sh): each build's ratios, and O's traced over BASE's.
#
#   O=build/default [BASE=build/y] sh bench/bench-asio.sh [ROUNDS] [ROUND_TRIPS]
. "$(dirname "$0")/lib-ab.sh"
rounds=${1:-7}
n=${2:-20000}
ab_need bin/corotracer bench/bench-asio bench/bench-asio-tracked

# One round of build $1: plain, untraced, traced round trips/s.
one() {
  echo "$("$1/bench/bench-asio" "$n") $("$1/bench/bench-asio-tracked" "$n")" \
    "$("$1/bin/corotracer" run --quiet -o /dev/null -- "$1/bench/bench-asio-tracked" "$n")"
}

l0=$(cut -d' ' -f1 /proc/loadavg)
ab_loop "$rounds" rt one
l1=$(cut -d' ' -f1 /proc/loadavg)
k=0
for b in $builds; do
  k=$((k + 1))
  awk -v b="$b" -v p="$(ab_median "$tmp/rt.$k" 1)" -v u="$(ab_median "$tmp/rt.$k" 2)" \
    -v t="$(ab_median "$tmp/rt.$k" 3)" -v r="$rounds" -v n="$n" 'BEGIN {
    printf "%s: round trips/s (median of %d rounds of %d): plain %d, tracking header untraced %d (%.2fx), traced %d (%.2fx)\n",
      b, r, n, p, u, u / p, t, t / p }'
done
if [ -n "${BASE:-}" ]; then echo "traced, $O over $BASE: $(ab_ratio rt 3)"; fi
echo "load average $l0 before, $l1 after"
