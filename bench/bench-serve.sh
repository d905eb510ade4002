#!/bin/sh
# bench-serve.sh - `corotracer serve` of a large trace through a real
# Chromium (issue #37's targets: the first paint <= 2 s; a 10 ms window at full
# detail <= 300 ms from the request to the drawn frame). A binary trace of N
# events (bench-coswitch under `run --lossless`, 2 threads x 50 coroutines,
# generated once per N); RUNS times a fresh `serve` and a fresh page
# (bench/lod-serve.mjs): the first paint, the time until the whole trace is
# analysed, and ROUNDS 10 ms windows of the summarized stretch, request to
# frame; the serve process's CPU seconds. Medians. BASE=an older corotracer:
# run alternately with this one, the same figures (the baseline in the run).
# Usage: O=build/x [RUNS=3] [ROUNDS=3] [BASE=old] sh bench/bench-serve.sh [EVENTS...]   (default 2e6)
set -eu
O=${O:-build/default}
runs=${RUNS:-3} rounds=${ROUNDS:-3} base=${BASE:-}
[ $# -gt 0 ] || set -- 2000000
ct=$O/bin/corotracer sw=$O/bench/bench-coswitch
[ -x "$ct" ] && [ -x "$sw" ] || { echo "build first: make O=$O" >&2; exit 2; }
# The quick set needs only the build packages: without a browser, nothing to measure.
command -v node >/dev/null && command -v chromium >/dev/null && [ -d tests/browser/node_modules/playwright-core ] ||
  { echo "skipped: needs chromium, node and playwright-core (make deps; npm install --prefix tests/browser)"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-serve.XXXXXX")
spid=""
trap '[ -z "$spid" ] || kill "$spid" 2>/dev/null; rm -rf "$tmp"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
# one BINARY TAG: a fresh serve of the trace and a fresh page; the page's
# lines into $tmp/TAG.*, the serve's CPU seconds (user + sys) into $tmp/TAG.cpu.
one() {
  "$1" serve "$tmp/t.ctrace" --addr 127.0.0.1:0 2>"$tmp/serve.err" &
  spid=$!
  for _ in $(seq 300); do grep -q "http://" "$tmp/serve.err" && break; sleep 0.1; done
  url=$(sed -n 's/.* at \(http:.*\)/\1/p' "$tmp/serve.err")
  node bench/lod-serve.mjs "$url" "$rounds" >"$tmp/page" 2>&1 || { echo "   $2: the page failed:"; sed 's/^/   /' "$tmp/page"; }
  awk '{ print $14 + $15 }' "/proc/$spid/stat" | awk -v hz="$(getconf CLK_TCK)" '{ print $1 / hz }' >>"$tmp/$2.cpu"
  kill "$spid"
  wait "$spid" 2>/dev/null || true
  spid=""
  sed -n 's/^paint //p' "$tmp/page" >>"$tmp/$2.paint"
  sed -n 's/^whole //p' "$tmp/page" >>"$tmp/$2.whole"
  awk '$1 == "window" { print $2 }' "$tmp/page" >>"$tmp/$2.asks"
  grep -q "^no summarized" "$tmp/page" && echo "   $2: the page holds every span: no window asked" || true
}
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at start"
for n in "$@"; do
  "$ct" run --quiet --lossless -o "$tmp/t.ctrace" -- "$sw" -n "$((n / 6))" 2 50 0 >/dev/null
  echo "trace: $n events asked, $(wc -c <"$tmp/t.ctrace") B binary"
  rm -f "$tmp"/this.* "$tmp"/base.*
  for _ in $(seq "$runs"); do
    [ -z "$base" ] || one "$base" base
    one "$ct" this
  done
  for tag in this ${base:+base}; do
    echo "serve ($tag) of $n events, medians of $runs: first paint $(median <"$tmp/$tag.paint") ms;" \
      "whole analysis $(median <"$tmp/$tag.whole") ms; 10 ms window, request to frame" \
      "$(median <"$tmp/$tag.asks") ms (of $(wc -l <"$tmp/$tag.asks"));" \
      "serve CPU $(median <"$tmp/$tag.cpu") s"
    echo "   first paints: $(tr '\n' ' ' <"$tmp/$tag.paint")ms; windows: $(tr '\n' ' ' <"$tmp/$tag.asks")ms"
  done
  p=$(median <"$tmp/this.paint") w=$(median <"$tmp/this.asks")
  echo "verdict: serve first paint ($n events): target 2000 ms, measured $p ms: $([ "$p" -le 2000 ] && echo met || echo not met)"
  [ "$w" = - ] || echo "verdict: serve 10 ms window ($n events): target 300 ms, measured $w ms: $([ "$w" -le 300 ] && echo met || echo not met)"
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
