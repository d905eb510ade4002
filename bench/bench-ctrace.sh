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
# from --stats) and `html` (M events/s). Medians of RUNS runs.
# Usage: O=build/x [RUNS=5] [EVENTS=10000000] [FORMAT=ctrace|jsonl] sh bench/bench-ctrace.sh
set -eu
O=${O:-build/default}
runs=${RUNS:-5} n=${EVENTS:-10000000} fmt=${FORMAT:-ctrace}
ct=$O/bin/corotracer w=$O/tests/lib/sdk-writer ctjl=$O/tests/lib/ctjl
[ -x "$ct" ] && [ -x "$w" ] && [ -x "$ctjl" ] || { echo "build first: make O=$O" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-ctrace.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
now() { date +%s.%N; }

for threads in 1 2; do
  : > "$tmp/rows"
  i=0
  while [ $i -lt "$runs" ]; do
    i=$((i + 1))
    f=$tmp/t$threads.$fmt
    t0=$(now)
    "$ct" run --format "$fmt" -o "$f" -- "$w" spaced "$threads" $((n / threads)) 0 "$tmp/w" \
      > /dev/null 2> "$tmp/err"
    t1=$(now)
    prog=$(sed -n 's/.*program exited with [0-9]*; \([0-9.]*\) s;.*/\1/p' "$tmp/err")
    set -- $("$ctjl" -t end events engine_cpu_us harvest_cpu_us lost spilled_bytes < "$f")
    size=$(wc -c < "$f")
    echo "$1 $2 $3 $4 $5 $size $prog $t0 $t1" | awk '{
      printf "%.1f %.1f %.2f %.3f %.3f %s %s\n", $2 * 1000 / $1, $3 * 1000 / $1, $6 / $1,
        ($9 - $8) / $7, $7, $4, $5 }' >> "$tmp/rows"
  done
  col() { awk -v c="$1" '{ print $c }' "$tmp/rows" | median; }
  echo "burst $n events, $threads thread(s), $fmt, median of $runs:" \
    "engine $(col 1) ns/event (harvest $(col 2)), $(col 3) bytes/event," \
    "run/program $(col 4) (program $(col 5) s), lost $(col 6), spilled $(col 7)"
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
echo "read $n events ($fmt), median of $runs: report $(awk '{ print $1 }' "$tmp/rr" | median) M events/s" \
  "(peak RSS $(awk '{ print $2 }' "$tmp/rr" | median) MB), html $(median < "$tmp/hr") M events/s"
