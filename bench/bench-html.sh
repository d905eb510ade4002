#!/bin/sh
# bench-html.sh - `corotracer html`: speed (MB/s of trace), peak RSS and page
# size for generated traces (bench-report-gen), with `corotracer report` on
# the same file in the same run as the baseline; then first paint and the
# time to a drawn, interactive timeline in Chromium for the 10^6 page.
# BASE=path/to/an/older/corotracer: that binary too, alternated with this
# one in the same run (before / after).
# Ends with verdict lines against the targets (bench/run.sh collects them).
# Usage: O=build/x [RUNS=3] [BASE=old-corotracer] sh bench/bench-html.sh [EVENTS...]   (default 1e5 1e6 1e7)
set -eu
O=${O:-build/default}
runs=${RUNS:-3}
[ $# -gt 0 ] || set -- 100000 1000000 10000000
gen=$O/bench/bench-report-gen ct=$O/bin/corotracer base=${BASE:-}
[ -x "$gen" ] && [ -x "$ct" ] || { echo "build first: make O=$O" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-html.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at start"
for n in "$@"; do
  f=$tmp/trace-$n.jsonl
  "$gen" "$n" 1000 > "$f"
  bytes=$(wc -c < "$f")
  cat "$f" > /dev/null
  : > "$tmp/h"; : > "$tmp/hc"; : > "$tmp/r"; : > "$tmp/m"; : > "$tmp/bh"; : > "$tmp/bm"
  i=0
  while [ $i -lt "$runs" ]; do
    if [ -n "$base" ]; then
      /usr/bin/time -f "%e %M" -o "$tmp/t" "$base" html "$f" -o "$tmp/base-$n.html" 2>/dev/null
      read -r e m < "$tmp/t"
      echo "$e" >> "$tmp/bh"; echo "$m" >> "$tmp/bm"
    fi
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$ct" html "$f" -o "$tmp/page-$n.html" 2>/dev/null
    read -r e u s m < "$tmp/t"
    echo "$e" >> "$tmp/h"; echo "$u $s" | awk '{print $1 + $2}' >> "$tmp/hc"; echo "$m" >> "$tmp/m"
    /usr/bin/time -f "%e" -o "$tmp/t" "$ct" report "$f" -o /dev/null
    cat "$tmp/t" >> "$tmp/r"
    i=$((i + 1))
  done
  h=$(median < "$tmp/h") hc=$(median < "$tmp/hc") r=$(median < "$tmp/r") m=$(median < "$tmp/m")
  page=$(wc -c < "$tmp/page-$n.html")
  echo "$n $bytes $h $hc $r $m $page" | awk '{
    printf "events %d, trace %.0f MB: html %.2f s wall = %.0f MB/s (CPU %.2f s = %.0f MB/s), peak RSS %.0f MB, page %.1f MB; report %.2f s wall; html/report %.2f\n",
      $1, $2 / 1e6, $3, $2 / 1e6 / $3, $4, $2 / 1e6 / $4, $6 / 1024, $7 / 1e6, $5, $3 / $5
    # The targets (docs/BENCHMARKS.md).
    printf "verdict: html JSONL, %d events: target >= 150 MB/s, measured %.0f MB/s: %s\n",
      $1, $2 / 1e6 / $3, $2 / 1e6 / $3 >= 150 ? "met" : "not met"
    printf "verdict: html page, %d events: target <= 30 MB, measured %.1f MB: %s\n",
      $1, $7 / 1e6, $7 / 1e6 <= 30 ? "met" : "not met" }'
  if [ -n "$base" ]; then
    bh=$(median < "$tmp/bh") bm=$(median < "$tmp/bm") bp=$(wc -c < "$tmp/base-$n.html")
    echo "$n $bytes $bh $bm $bp $h" | awk '{
      printf "   BASE: html %.2f s wall = %.0f MB/s, peak RSS %.0f MB, page %.1f MB; this / base wall %.2f\n",
        $3, $2 / 1e6 / $3, $4 / 1024, $5 / 1e6, $6 / $3 }'
  fi
  [ "$n" = 1000000 ] && cp "$tmp/page-$n.html" "$tmp/keep-1e6.html" && { [ -z "$base" ] || cp "$tmp/base-$n.html" "$tmp/base-1e6.html"; }
  rm -f "$f"
done
if [ -f "$tmp/keep-1e6.html" ] && command -v node >/dev/null && [ -d tests/browser/node_modules/playwright-core ]; then
  echo "Chromium, the 10^6-event page (alternated with the base's when BASE is set):"
  i=0
  while [ $i -lt "$runs" ]; do
    [ -z "$base" ] || { printf 'BASE: '; node tests/browser/paint.mjs "$tmp/base-1e6.html" 1; }
    printf 'this: '; node tests/browser/paint.mjs "$tmp/keep-1e6.html" 1
    i=$((i + 1))
  done
fi
echo "load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
