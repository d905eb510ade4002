#!/bin/sh
# bench-report.sh - `corotracer report` throughput (MB/s) and peak RSS on
# generated traces of two sizes (memory must not grow with the events), against
# `cat > /dev/null` and `wc -l` on the same file in the same run.
# Usage: O=build/x [RUNS=5] sh bench/bench-report.sh [EVENTS...]   (default 1e6 3e6 1e7)
set -eu
O=${O:-build/default}
runs=${RUNS:-5}
[ $# -gt 0 ] || set -- 1000000 3000000 10000000
gen=$O/bench/bench-report-gen ct=$O/bin/corotracer
[ -x "$gen" ] && [ -x "$ct" ] || { echo "build first: make O=$O $gen $ct" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# secs CMD...: wall seconds of one run.
secs() {
  s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
  echo "$s $e" | awk '{ printf "%.4f\n", $2 - $1 }'
}

for n in "$@"; do
  f=$tmp/trace-$n.jsonl
  "$gen" "$n" 1000 > "$f"
  bytes=$(wc -c < "$f")
  cat "$f" > /dev/null # warm the page cache
  : > "$tmp/cat"; : > "$tmp/wc"; : > "$tmp/rep"; : > "$tmp/rss"
  i=0
  while [ $i -lt "$runs" ]; do
    secs cat "$f" >> "$tmp/cat"
    secs wc -l "$f" >> "$tmp/wc"
    "$ct" report "$f" --stats -o /dev/null 2> "$tmp/stats"
    sed -n 's/.* in \([0-9.]*\) s:.*/\1/p' "$tmp/stats" >> "$tmp/rep"
    sed -n 's/.*peak RSS \([0-9]*\) kB.*/\1/p' "$tmp/stats" >> "$tmp/rss"
    i=$((i + 1))
  done
  c=$(median < "$tmp/cat") w=$(median < "$tmp/wc") r=$(median < "$tmp/rep") m=$(median < "$tmp/rss")
  echo "$n $bytes $c $w $r $m" | awk '{
    printf "events %d, %.0f MB: report %.3f s = %.0f MB/s (peak RSS %.1f MB); cat %.3f s = %.0f MB/s; wc -l %.3f s = %.0f MB/s; report/wc time ratio %.2f\n",
      $1, $2 / 1e6, $5, $2 / 1e6 / $5, $6 / 1024, $3, $2 / 1e6 / $3, $4, $2 / 1e6 / $4, $5 / $4 }'
  rm -f "$f"
done
