#!/bin/sh
# bench-html-serve.sh - the live view's cost as its trace grows: `corotracer
# serve` follows a file that grows by a slice of a generated trace every
# 250 ms (EVENTS events over SECS seconds), with one page following it
# (tests/browser/sse-client.mjs); the serve process's CPU seconds. A rebuild
# that re-reads the trace costs more with every snapshot; an incremental one
# only what was appended. BASE=an older corotracer: alternated with this one.
# Usage: O=build/x [RUNS=3] [EVENTS=1000000] [SECS=10] [BASE=old] sh bench/bench-html-serve.sh
set -eu
O=${O:-build/default}
runs=${RUNS:-3} events=${EVENTS:-1000000} secs=${SECS:-10} base=${BASE:-}
ct=$O/bin/corotracer gen=$O/bench/bench-report-gen
[ -x "$ct" ] && [ -x "$gen" ] || { echo "build first: make O=$O" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-serve.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
"$gen" "$events" 1000 > "$tmp/src.jsonl"
per=$(( $(wc -l < "$tmp/src.jsonl") / (secs * 4) + 1 ))
split -l "$per" -d -a 4 "$tmp/src.jsonl" "$tmp/part."
one() { # BINARY: prints the serve process's CPU seconds
  : > "$tmp/t.jsonl"
  /usr/bin/time -f "%U %S" -o "$tmp/cpu" "$1" serve "$tmp/t.jsonl" --addr 127.0.0.1:0 2>"$tmp/err" &
  tp=$!
  while ! grep -q "http://" "$tmp/err"; do sleep 0.05; done
  s=$(pgrep -P $tp) # serve under time(1), which would not forward SIGTERM
  url=$(sed -n 's/.* at \(http:.*\)/\1/p' "$tmp/err")
  node tests/browser/sse-client.mjs "$url" >"$tmp/client" 2>&1 & c=$!
  for p in "$tmp"/part.*; do cat "$p" >> "$tmp/t.jsonl"; sleep 0.25; done
  sleep 3
  kill -TERM "$s"; wait $tp || true; wait $c || true
  sed 's/^/   client: /' "$tmp/client" >&2
  awk '{print $1 + $2}' "$tmp/cpu"
}
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at start; trace $(wc -c < "$tmp/src.jsonl") B over ${secs} s"
: > "$tmp/new"; : > "$tmp/old"
i=0
while [ $i -lt "$runs" ]; do
  [ -z "$base" ] || one "$base" >> "$tmp/old"
  one "$ct" >> "$tmp/new"
  i=$((i + 1))
done
n=$(median < "$tmp/new")
echo "serve CPU, median of $runs: this $n s (runs $(tr '\n' ' ' < "$tmp/new"))"
[ -z "$base" ] || echo "serve CPU, median of $runs: BASE $(median < "$tmp/old") s (runs $(tr '\n' ' ' < "$tmp/old"))"
echo "load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
