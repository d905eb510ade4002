#!/bin/sh
# bench-html-lod.sh - the dashboard at any size (issue #37): a binary trace of
# N events (bench-coswitch under `run --lossless`, 2 threads × 50 coroutines)
# turned into a page by `corotracer html`: wall and CPU time, peak RSS, page
# size; `corotracer report` of the same trace in the same run as the
# baseline; then the page in headless Chromium: time to interactive, and
# screenshots zoomed out and zoomed in at the end (tests/browser/lod.mjs).
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
  : >"$tmp/h"; : >"$tmp/hc"; : >"$tmp/m"; : >"$tmp/r"
  i=0
  while [ $i -lt "$runs" ]; do
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$ct" html "$tmp/t.ctrace" -o "$tmp/page.html" 2>/dev/null
    read -r e u s m <"$tmp/t"
    echo "$e" >>"$tmp/h"; echo "$u $s" | awk '{print $1 + $2}' >>"$tmp/hc"; echo "$m" >>"$tmp/m"
    /usr/bin/time -f "%e" -o "$tmp/t" "$ct" report "$tmp/t.ctrace" -o /dev/null
    cat "$tmp/t" >>"$tmp/r"
    i=$((i + 1))
  done
  ev=$("$ct" report "$tmp/t.ctrace" --json "$tmp/f.json" -o /dev/null && grep -o '"events":[0-9]*' "$tmp/f.json" | head -1 | cut -d: -f2)
  echo "$ev $bytes $(median <"$tmp/h") $(median <"$tmp/hc") $(median <"$tmp/m") $(wc -c <"$tmp/page.html") $(median <"$tmp/r")" | awk '{
    printf "events %d, binary trace %.0f MB: html %.2f s wall (CPU %.2f s), peak RSS %.0f MB, page %.1f MB; report %.2f s; html/report %.2f\n",
      $1, $2 / 1e6, $3, $4, $5 / 1024, $6 / 1e6, $7, $3 / $7 }'
  if command -v node >/dev/null && [ -d tests/browser/node_modules/playwright-core ]; then
    shots=${SHOTS:-$tmp}
    node tests/browser/lod.mjs "file://$tmp/page.html" "$shots/dashboard-lod-$n" | grep -E "ready|zoomed|drawn|ok|FAIL"
  fi
done
