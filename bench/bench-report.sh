#!/bin/sh
# bench-report.sh - `corotracer report` throughput (MB/s) and peak RSS on
# generated traces of two sizes (memory must not grow with the events), against
# `cat > /dev/null` and `wc -l` on the same file in the same run.
# Usage: O=build/x [RUNS=5] [ALIVE=1000] [MODE=ref|ref-sites] [BASE=other/corotracer]
#          sh bench/bench-report.sh [EVENTS...]   (default 1e6 3e6 1e7)
# ALIVE: coroutines alive at a time (ours) or in all (MODE=ref: the reference
# format, a frame address per coroutine; ref-sites: 16 code addresses).
# BASE: a second report binary (e.g. an older build) timed on the same files,
# interleaved, for a ratio that the machine's load cancels out of.
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
  "$gen" "$n" "${ALIVE:-1000}" ${MODE:-} > "$f"
  bytes=$(wc -c < "$f")
  cat "$f" > /dev/null # warm the page cache
  : > "$tmp/cat"; : > "$tmp/wc"; : > "$tmp/rep"; : > "$tmp/rss"; : > "$tmp/brep"; : > "$tmp/brss"
  i=0
  while [ $i -lt "$runs" ]; do
    secs cat "$f" >> "$tmp/cat"
    secs wc -l "$f" >> "$tmp/wc"
    "$ct" report "$f" --stats -o /dev/null 2> "$tmp/stats"
    sed -n 's/.* in \([0-9.]*\) s:.*/\1/p' "$tmp/stats" >> "$tmp/rep"
    sed -n 's/.*peak RSS \([0-9]*\) kB.*/\1/p' "$tmp/stats" >> "$tmp/rss"
    if [ -n "${BASE:-}" ]; then
      "$BASE" report "$f" --stats -o /dev/null 2> "$tmp/stats"
      sed -n 's/.* in \([0-9.]*\) s:.*/\1/p' "$tmp/stats" >> "$tmp/brep"
      sed -n 's/.*peak RSS \([0-9]*\) kB.*/\1/p' "$tmp/stats" >> "$tmp/brss"
    fi
    i=$((i + 1))
  done
  c=$(median < "$tmp/cat") w=$(median < "$tmp/wc") r=$(median < "$tmp/rep") m=$(median < "$tmp/rss")
  echo "$n $bytes $c $w $r $m" | awk '{
    printf "events %d, %.0f MB: report %.3f s = %.0f MB/s (peak RSS %.1f MB); cat %.3f s = %.0f MB/s; wc -l %.3f s = %.0f MB/s; report/wc time ratio %.2f\n",
      $1, $2 / 1e6, $5, $2 / 1e6 / $5, $6 / 1024, $3, $2 / 1e6 / $3, $4, $2 / 1e6 / $4, $5 / $4 }'
  if [ -n "${BASE:-}" ]; then
    br=$(median < "$tmp/brep") bm=$(median < "$tmp/brss")
    echo "$bytes $br $bm $r" | awk '{ printf "  base %.3f s = %.0f MB/s (peak RSS %.1f MB); base/report time ratio %.2f\n",
      $2, $1 / 1e6 / $2, $3 / 1024, $2 / $4 }'
  fi
  rm -f "$f"
done
