#!/bin/sh
# bench-html-live.sh - the live view's cost on the engine: CPU seconds of the
# engine process (harvest + the server thread) tracing the demo server (bug
# off) under redis-benchmark: without --serve, with --serve and no page open,
# and with a client following it like an open page
# (tests/browser/sse-client.mjs), alternated.
# Usage: O=build/x [RUNS=3] [REQUESTS=50000] sh bench/bench-html-live.sh
set -eu
O=${O:-build/default}
runs=${RUNS:-3} requests=${REQUESTS:-50000}
ct=$O/bin/corotracer srv=$O/examples/demo/resp_server
[ -x "$ct" ] && [ -x "$srv" ] || { echo "build first: make O=$O" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-live.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
one() { # one MODE: prints engine CPU seconds
  rm -f "$tmp/port" "$tmp/log"
  serve=""; [ "$1" != plain ] && serve="--serve 127.0.0.1:0"
  /usr/bin/time -f "%U %S" -o "$tmp/cpu" "$ct" run --quiet $serve -n $((requests * 3 + 4096)) -o "$tmp/t.jsonl" -- \
    "$srv" --port 0 --port-file "$tmp/port" >/dev/null 2>"$tmp/log" &
  tp=$!
  while [ ! -s "$tmp/port" ]; do sleep 0.05; done
  e=$(pgrep -P $tp) # the engine under time(1): time itself would not forward SIGTERM
  c=""
  if [ "$1" = serve ]; then
    url=$(sed -n 's/^corotracer: live dashboard at //p' "$tmp/log")
    node tests/browser/sse-client.mjs "$url" >"$tmp/client" 2>&1 & c=$!
  fi
  redis-benchmark -h 127.0.0.1 -p "$(cat "$tmp/port")" -c 20 -n "$requests" -t ping,get -q >/dev/null 2>&1
  sleep 1
  kill -TERM $e; wait $tp || true
  [ -n "$c" ] && { wait $c || true; sed 's/^/   client: /' "$tmp/client" >&2; }
  awk '{print $1 + $2}' "$tmp/cpu"
}
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at start"
: > "$tmp/plain"; : > "$tmp/serve"; : > "$tmp/idle"
i=0
while [ $i -lt "$runs" ]; do
  one plain >> "$tmp/plain"
  one idle >> "$tmp/idle"
  one serve >> "$tmp/serve"
  i=$((i + 1))
done
p=$(median < "$tmp/plain") s=$(median < "$tmp/serve") d=$(median < "$tmp/idle")
echo "$p $d $s $requests" | awk '{printf "engine CPU, redis-benchmark %d requests x2 tests: plain %.2f s; --serve, no page %.2f s (x%.2f); --serve with a page %.2f s (x%.2f)\n", $4, $1, $2, $2 / $1, $3, $3 / $1}'
echo "runs plain: $(tr '\n' ' ' < "$tmp/plain"); no page: $(tr '\n' ' ' < "$tmp/idle"); page: $(tr '\n' ' ' < "$tmp/serve")"
echo "load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
