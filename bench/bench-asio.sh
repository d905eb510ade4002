#!/bin/sh
# bench-asio.sh - Asio echo round trips/s (SHAPE=strand: items/s through a strand
# pipeline, a post per stage, bench/bench-asio.cpp): plain, built with corotracer/asio.hpp
# but untraced, and traced under `corotracer run`; ROUNDS rounds, each running
# the three back to back, in reverse order every other round (ABBA: a load
# that rises or falls through a round weighs on each alike over two rounds).
# Ratios to plain are taken within each round, so a round's load cancels out;
# printed: their medians over the rounds with the middle half of the rounds
# (quartiles), beside the medians of round trips/s, and the load average
# before and after. Each ratio twice: by wall time, and by the program's CPU
# time, which other programs' load on a shared machine barely moves. The
# untraced header costs only CPU: judge it by that one (the traced run's
# engine is another process: judge tracing by wall time). With BASE=build/y
# that build runs too, interleaved with O's (A/B in one run, bench/lib-ab.sh):
# each build's ratios, and O's traced over BASE's. With PIN=CPU every run of
# the program is pinned to that CPU (taskset; the traced run's engine is not).
#
#   O=build/default [BASE=build/y] [PIN=1] [SHAPE=strand] sh bench/bench-asio.sh [ROUNDS] [ROUND_TRIPS]
. "$(dirname "$0")/lib-ab.sh"
rounds=${1:-15}
n=${2:-50000}
pin=${PIN:+taskset -c $PIN}
shape=${SHAPE:-}
ab_need bin/corotracer bench/bench-asio bench/bench-asio-tracked

# Round trips/s of build $2's program $1: plain, tracked (untraced) or traced.
run() {
  case $1 in
    plain) $pin "$2/bench/bench-asio" "$n" $shape ;;
    tracked) $pin "$2/bench/bench-asio-tracked" "$n" $shape ;;
    traced) "$2/bin/corotracer" run --quiet -o /dev/null -- $pin "$2/bench/bench-asio-tracked" "$n" $shape ;;
  esac
}

# One round of build $1: plain, untraced, traced round trips/s by wall time,
# then by the program's CPU time (0 from a bench-asio that prints none), run
# in this order in odd rounds and in the reverse order in even ones.
one() {
  if [ $((ab_round % 2)) -eq 1 ]; then
    p=$(run plain "$1"); u=$(run tracked "$1"); t=$(run traced "$1")
  else
    t=$(run traced "$1"); u=$(run tracked "$1"); p=$(run plain "$1")
  fi
  printf '%s\n' "$p" "$u" "$t" |
    awk '{ w[NR] = $1; c[NR] = $2 + 0 } END { print w[1], w[2], w[3], c[1], c[2], c[3] }'
}

# Column $2 of file $1: "MEDIANx (Q1-Q3)", two decimals; "-" when all 0.
quartiles() {
  awk -v c="$2" '{ print $c }' "$1" | sort -n | awk '{ v[NR] = $1 } END {
    if (v[NR] == 0) printf "-"
    else printf "%.2fx (%.2f-%.2f)", v[int((NR + 1) / 2)], v[int((NR + 3) / 4)], v[int((3 * NR + 3) / 4)] }'
}

l0=$(cut -d' ' -f1 /proc/loadavg)
ab_loop "$rounds" rt one
l1=$(cut -d' ' -f1 /proc/loadavg)
k=0
for b in $builds; do
  k=$((k + 1))
  awk '{ print $2 / $1, $3 / $1, ($4 > 0 ? $5 / $4 : 0), ($4 > 0 ? $6 / $4 : 0) }' \
    "$tmp/rt.$k" > "$tmp/ratio.$k"
  echo "$b: ${SHAPE:+$SHAPE }round trips/s (medians of $rounds rounds of $n${PIN:+, on CPU $PIN}):" \
    "plain $(ab_median "$tmp/rt.$k" 1), tracking header untraced $(ab_median "$tmp/rt.$k" 2)," \
    "traced $(ab_median "$tmp/rt.$k" 3); per round, to plain (median, quartiles):" \
    "by wall time untraced $(quartiles "$tmp/ratio.$k" 1), traced $(quartiles "$tmp/ratio.$k" 2);" \
    "by the program's CPU time untraced $(quartiles "$tmp/ratio.$k" 3)," \
    "traced $(quartiles "$tmp/ratio.$k" 4)"
done
if [ -n "${BASE:-}" ]; then echo "traced, $O over $BASE: $(ab_ratio rt 3)"; fi
echo "load average $l0 before, $l1 after"
