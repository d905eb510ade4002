#!/bin/sh
# bench-html-lod.sh - the dashboard at any size (issue #37): a binary trace of
# N events (bench-coswitch under `run --lossless`, 2 threads × 50 coroutines)
# turned into a page by `corotracer html`: wall and CPU time, peak RSS, page
# size; `corotracer report` of the same trace in the same run as the
# baseline; then the page in headless Chromium (tests/browser/lod.mjs):
# interactive (from the navigation to the frame that answers the first key,
# on the page's clock) with the page's marks (data parsed, inflated,
# decoded, prepared, first draw, tables), and screenshots zoomed out and
# zoomed in at the end.
# `corotracer serve` of such a trace: bench/bench-serve.sh.
# Usage: O=build/x [RUNS=3] [SHOTS=dir] sh bench/bench-html-lod.sh [EVENTS...]   (default 1e7)
set -eu
O=${O:-build/default}
runs=${RUNS:-3}
[ $# -gt 0 ] || set -- 10000000
ct=$O/bin/corotracer sw=$O/bench/bench-coswitch
[ -x "$ct" ] && [ -x "$sw" ] || { echo "build first: make O=$O" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-html-lod.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at start"
for n in "$@"; do
  # 3 events a switch, N/6 switches on each of the 2 threads.
  per=$((n / 6))
  "$ct" run --quiet --lossless -o "$tmp/t.ctrace" -- "$sw" -n "$per" 2 50 0 >/dev/null
  bytes=$(wc -c <"$tmp/t.ctrace")
  # Each run: html, then report, each as "wall CPU peak-RSS" (CPU: user + sys),
  # the medians of each column taken across runs.
  : >"$tmp/html"; : >"$tmp/report"
  for i in $(seq "$runs"); do
    for cmd in html report; do
      out=$tmp/page.html
      [ $cmd = html ] || out=/dev/null
      /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$ct" $cmd "$tmp/t.ctrace" -o "$out" 2>/dev/null
      awk '{ print $1, $2 + $3, $4 }' "$tmp/t" >>"$tmp/$cmd"
    done
  done
  col() { cut -d' ' -f"$2" "$tmp/$1" | median; }
  ev=$("$ct" report "$tmp/t.ctrace" --json "$tmp/f.json" -o /dev/null && grep -o '"events":[0-9]*' "$tmp/f.json" | head -1 | cut -d: -f2)
  echo "$ev $bytes $(col html 1) $(col html 2) $(col html 3) $(wc -c <"$tmp/page.html") $(col report 1) $(col report 2)" | awk '{
    printf "events %d, binary trace %.0f MB: html %.2f s wall (CPU %.2f s), peak RSS %.0f MB, page %.1f MB; report %.2f s wall (CPU %.2f s); html/report CPU %.2f\n",
      $1, $2 / 1e6, $3, $4, $5 / 1024, $6 / 1e6, $7, $8, $4 / $8 }'
  if command -v node >/dev/null && [ -d tests/browser/node_modules/playwright-core ]; then
    shots=${SHOTS:-$tmp}
    : >"$tmp/inter"
    for i in $(seq "$runs"); do
      CT_BENCH=1 node tests/browser/lod.mjs "file://$tmp/page.html" "$shots/dashboard-lod-$n" >"$tmp/lod.out" 2>&1 || true
      grep -E "ready|zoomed|drawn|ok|FAIL" "$tmp/lod.out"
      sed -n 's/.*interactive in \([0-9]*\) ms.*/\1/p' "$tmp/lod.out" >>"$tmp/inter"
    done
    [ -s "$tmp/inter" ] && echo "interactive: median $(median <"$tmp/inter") ms of $(tr '\n' ' ' <"$tmp/inter")"
  fi
done
