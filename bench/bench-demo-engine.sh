#!/bin/sh
# bench-demo-engine.sh - issue #20's demo target: the engine's CPU per event
# of the demo server under redis-benchmark (the run of
# examples/demo/run-demo.sh --fixed: 50 reconnecting clients, ping, set, get,
# incr), in the binary trace against the same run in JSONL (target: binary
# <= 1/10 of JSONL). Per run: the end record's engine_cpu_us (and the harvest
# loop's harvest_cpu_us) over its events. Medians of RUNS rounds, each round
# one binary and one JSONL run of every build (BASE first when set: an A/B in
# one run, bench/lib-ab.sh).
# Usage: O=build/x [BASE=build/y] [RUNS=5] [REQUESTS=10000] sh bench/bench-demo-engine.sh
. "$(dirname "$0")/lib-ab.sh"
runs=${RUNS:-5} req=${REQUESTS:-10000}
ab_need bin/corotracer examples/demo/resp_server tests/lib/ctjl
command -v redis-benchmark > /dev/null 2>&1 || {
  echo "redis-benchmark missing: sh scripts/install-deps.sh" >&2
  exit 2
}

# One traced server run of build $1 in format $2: engine ns/event, harvest
# loop ns/event, events, lost.
serve() {
  rm -f "$tmp/port" "$tmp/t.$2"
  # One station per connection coroutine, as run-demo.sh sizes it.
  "$1/bin/corotracer" run --quiet -n $((5 * req + 4096)) --format "$2" -o "$tmp/t.$2" -- \
    "$1/examples/demo/resp_server" --port 0 --port-file "$tmp/port" > /dev/null 2>&1 &
  e=$!
  i=0
  while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  timeout 120 redis-benchmark -h 127.0.0.1 -p "$(cat "$tmp/port")" -c 50 -n "$req" -k 0 \
    -t ping,set,get,incr -q > /dev/null 2>&1
  kill -TERM "$e"
  wait "$e"
  "$1/tests/lib/ctjl" -t end events engine_cpu_us harvest_cpu_us lost < "$tmp/t.$2" |
    awk '{ printf "%.1f %.1f %d %d\n", $2 * 1000 / $1, $3 * 1000 / $1, $1, $4 }'
}
both() {
  echo "$(serve "$1" ctrace) $(serve "$1" jsonl)"
}

ab_loop "$runs" demo both
k=0
for b in $builds; do
  k=$((k + 1))
  r=$tmp/demo.$k
  echo "demo, $req requests x 5 tests, $b, median of $runs: binary $(ab_median "$r" 1) ns/event" \
    "(harvest loop $(ab_median "$r" 2)), JSONL $(ab_median "$r" 5) ns/event (harvest loop" \
    "$(ab_median "$r" 6)); binary / JSONL $(awk -v a="$(ab_median "$r" 1)" \
      -v b="$(ab_median "$r" 5)" 'BEGIN { printf "%.3f", a / b }'); events $(ab_median "$r" 3)," \
    "lost $(awk '{ printf "%s/%s ", $4, $8 }' "$r")"
done
if [ -n "${BASE:-}" ]; then
  echo "  O / BASE: binary $(ab_ratio demo 1), JSONL $(ab_ratio demo 5)"
fi
