#!/bin/sh
# bench-asio.sh - Asio echo round trips/s: plain, built with corotracer/asio.hpp
# but untraced, and traced under `corotracer run`; ROUNDS alternating rounds,
# medians, ratios to the plain build.
#
#   O=build/default sh bench/bench-asio.sh [ROUNDS] [ROUND_TRIPS]
B=${O:-build/default}
rounds=${1:-7}
n=${2:-20000}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
: > /tmp/bench-asio.$$.plain; : > /tmp/bench-asio.$$.untraced; : > /tmp/bench-asio.$$.traced
i=0
while [ $i -lt "$rounds" ]; do
  "$B/bench/bench-asio" "$n" >> /tmp/bench-asio.$$.plain
  "$B/bench/bench-asio-tracked" "$n" >> /tmp/bench-asio.$$.untraced
  "$B/bin/corotracer" run --quiet -o /dev/null -- "$B/bench/bench-asio-tracked" "$n" >> /tmp/bench-asio.$$.traced
  i=$((i + 1))
done
p=$(median < /tmp/bench-asio.$$.plain)
u=$(median < /tmp/bench-asio.$$.untraced)
t=$(median < /tmp/bench-asio.$$.traced)
rm -f /tmp/bench-asio.$$.*
awk -v p="$p" -v u="$u" -v t="$t" -v r="$rounds" -v n="$n" 'BEGIN {
  printf "round trips/s (median of %d rounds of %d): plain %d, tracking header untraced %d (%.2fx), traced %d (%.2fx)\n", r, n, p, u, u / p, t, t / p }'
