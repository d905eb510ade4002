#!/bin/sh
# bench-server-ab.sh - the server shape's cost per request (bench-server: a coroutine per
# request, 7 events) split into the program's and the engine's, for a probe change: each
# round runs the program untraced and under `corotracer run -o F.ctrace`. Per request:
# the untraced program's CPU, the traced program's extra CPU (probe, and the cache it
# loses to the engine), the engine's CPU (the end record's engine_cpu_us), both together,
# bytes of trace, lost (end record) / dropped (the probe's count), and the stations the
# run cycled through (end record's stations_used: the free-station queue is FIFO, so a
# create's station is the oldest freed one, and the more there are the colder it is).
# Medians of RUNS. With BASE=build/y that build runs too, interleaved with O's (A/B in
# one run, bench/lib-ab.sh), and each figure's ratio O / BASE. RUNFLAGS: more options
# for `corotracer run` (e.g. "--lossless -n 1024": a short station cycle).
# Usage: O=build/x [BASE=build/y] [RUNS=7] [RUNFLAGS=...] sh bench/bench-server-ab.sh [W [SECONDS]]
. "$(dirname "$0")/lib-ab.sh"
runs=${RUNS:-7} work=${1:-500} secs=${2:-2}
ab_need bin/corotracer bench/bench-server tests/lib/ctjl

# field KEY LINE: the value after KEY in bench-server's result line.
field() { echo "$2" | awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }'; }

# One round of build $1: untraced ns, program extra ns, engine ns, extra ns, B, lost, dropped,
# stations used.
one() {
  u=$("$1/bench/bench-server" 2 64 "$work" "$secs")
  rm -f "$tmp/t.ctrace"
  # shellcheck disable=SC2086 # RUNFLAGS: options, split on purpose
  t=$("$1/bin/corotracer" run --quiet ${RUNFLAGS:-} -o "$tmp/t.ctrace" -- "$1/bench/bench-server" 2 64 "$work" \
    "$secs" 2> "$tmp/err") || { cat "$tmp/err" >&2; exit 1; }
  eng=$("$1/tests/lib/ctjl" -t end engine_cpu_us < "$tmp/t.ctrace")
  lost=$("$1/tests/lib/ctjl" -t end lost < "$tmp/t.ctrace")
  used=$("$1/tests/lib/ctjl" -t end stations_used < "$tmp/t.ctrace")
  echo "$(field cpu_s "$u") $(field switches "$u") $(field cpu_s "$t") $(field switches "$t") $eng" \
    "$(wc -c < "$tmp/t.ctrace") $lost $(field dropped "$t") $used" |
    awk '{ u = $1 * 1e9 / $2; p = $3 * 1e9 / $4 - u; e = $5 * 1e3 / $4
           printf "%.1f %.1f %.1f %.1f %.1f %s %s %s\n", u, p, e, p + e, $6 / $4, $7, $8, $9 }'
}
ab_loop "$runs" server one
k=0
for b in $builds; do
  k=$((k + 1))
  printf '%s: per request, medians of %s: untraced %s ns, program extra %s ns, engine %s ns, extra %s ns; %s B; lost %s, dropped %s; stations used %s\n' \
    "$b" "$runs" "$(ab_median "$tmp/server.$k" 1)" "$(ab_median "$tmp/server.$k" 2)" \
    "$(ab_median "$tmp/server.$k" 3)" "$(ab_median "$tmp/server.$k" 4)" \
    "$(ab_median "$tmp/server.$k" 5)" "$(ab_median "$tmp/server.$k" 6)" "$(ab_median "$tmp/server.$k" 7)" \
    "$(ab_median "$tmp/server.$k" 8)"
done
if [ -n "${BASE:-}" ]; then
  echo "ratio O / BASE: program extra $(ab_ratio server 2), engine $(ab_ratio server 3), extra $(ab_ratio server 4)"
fi
