#!/bin/sh
# bench-ctrace.sh - issue #20's targets for the binary trace, on a
# back-to-back burst (tests/lib/sdk-writer spaced THREADS N 0: one coroutine
# per thread, suspend/resume as fast as it can) under `corotracer run`:
#   engine CPU per event  the end record's engine_cpu_us / events (and the
#                         harvest loop's part, harvest_cpu_us)
#   bytes per event       the trace's size / events
#   run / program         the whole `corotracer run` (start to exit) over the
#                         program's own lifetime (the summary line's seconds)
#   lost, spilled         from the end record: both must be 0
# then the read speed of the 1-thread trace: `report` (M events/s, peak RSS
# from --stats) and `html` (M events/s). Medians of RUNS runs. With
# BASE=build/y that build's bursts run too, interleaved with O's (an A/B in
# one run, bench/lib-ab.sh), with the ratios O / BASE; the read speed is O's.
# Usage: O=build/x [BASE=build/y] [RUNS=5] [EVENTS=10000000] [FORMAT=ctrace|jsonl] sh bench/bench-ctrace.sh
. "$(dirname "$0")/lib-ab.sh"
runs=${RUNS:-5} n=${EVENTS:-10000000} fmt=${FORMAT:-ctrace}
ct=$O/bin/corotracer
ab_need bin/corotracer tests/lib/sdk-writer tests/lib/ctjl
now() { date +%s.%N; }

# One burst of build $1 with $threads writer threads: engine ns/event,
# harvest ns/event, bytes/event, run/program, program s, lost, spilled. O's
# trace is kept for the read speed.
one() {
  f=$tmp/cur.$fmt
  t0=$(now)
  "$1/bin/corotracer" run --format "$fmt" -o "$f" -- "$1/tests/lib/sdk-writer" spaced "$threads" \
    $((n / threads)) 0 "$tmp/w" > /dev/null 2> "$tmp/err"
  t1=$(now)
  prog=$(sed -n 's/.*program exited with [0-9]*; \([0-9.]*\) s;.*/\1/p' "$tmp/err")
  set -- "$1" $("$1/tests/lib/ctjl" -t end events engine_cpu_us harvest_cpu_us lost spilled_bytes < "$f")
  size=$(wc -c < "$f")
  echo "$2 $3 $4 $5 $6 $size $prog $t0 $t1" | awk '{
    printf "%.1f %.1f %.2f %.3f %.3f %s %s\n", $2 * 1000 / $1, $3 * 1000 / $1, $6 / $1,
      ($9 - $8) / $7, $7, $4, $5 }'
  if [ "$1" = "$O" ]; then mv "$f" "$tmp/t$threads.$fmt"; fi
}

for threads in 1 2; do
  ab_loop "$runs" "th$threads" one
  k=0
  for b in $builds; do
    k=$((k + 1))
    r=$tmp/th$threads.$k
    echo "burst $n events, $threads thread(s), $fmt, $b, median of $runs:" \
      "engine $(ab_median "$r" 1) ns/event (harvest $(ab_median "$r" 2)), $(ab_median "$r" 3) bytes/event," \
      "run/program $(ab_median "$r" 4) (program $(ab_median "$r" 5) s), lost $(ab_median "$r" 6), spilled $(ab_median "$r" 7)"
  done
  if [ -n "${BASE:-}" ]; then
    echo "  O / BASE: engine $(ab_ratio "th$threads" 1), harvest $(ab_ratio "th$threads" 2), run/program $(ab_ratio "th$threads" 4)"
  fi
done

# Read speed of the 1-thread trace.
f=$tmp/t1.$fmt
: > "$tmp/rr"
: > "$tmp/hr"
i=0
while [ $i -lt "$runs" ]; do
  i=$((i + 1))
  t0=$(now)
  "$ct" report "$f" --stats > /dev/null 2> "$tmp/stats"
  t1=$(now)
  "$ct" html "$f" -o "$tmp/d.html" > /dev/null 2>&1
  t2=$(now)
  rss=$(sed -n 's/.*peak RSS \([0-9]*\) kB.*/\1/p' "$tmp/stats")
  echo "$t0 $t1 $n $rss" | awk '{ printf "%.1f %d\n", $3 / ($2 - $1) / 1e6, $4 / 1024 }' >> "$tmp/rr"
  echo "$t1 $t2 $n" | awk '{ printf "%.1f\n", $3 / ($2 - $1) / 1e6 }' >> "$tmp/hr"
done
echo "read $n events ($fmt), median of $runs: report $(ab_median "$tmp/rr" 1) M events/s" \
  "(peak RSS $(ab_median "$tmp/rr" 2) MB), html $(ab_median "$tmp/hr") M events/s"
