#!/bin/sh
# run-demo.sh - the demo story: the RESP server on the demo scheduler runs
# under `corotracer run`, redis-benchmark hammers it with reconnecting clients
# (a storm of EOFs), then `corotracer report` explains what happened.
#
# Usage: O=build/x sh examples/demo/run-demo.sh --bug|--fixed [--out DIR]
#            [-n REQUESTS] [-c CLIENTS] [--bench-secs S]
#   --bug    the server's reactor closes hung-up fds without waking the
#            coroutines parked on them: throughput drops to zero, the report
#            names the stuck coroutines, where they wait and on which fd
#   --fixed  the same run with a correct reactor: the benchmark completes,
#            the report finds no lost wakeup
# Every step is bounded in time; outputs land in out/demo (or out/demo-fixed).
set -u
O=${O:-build/default}
mode=""
out=""
requests=10000
clients=50
bench_secs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bug|--fixed) mode=${1#--} ;;
    --out) out=$2; shift ;;
    -n) requests=$2; shift ;;
    -c) clients=$2; shift ;;
    --bench-secs) bench_secs=$2; shift ;;
    *) echo "run-demo: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$mode" ] || { echo "usage: run-demo.sh --bug|--fixed [--out DIR] [-n N] [-c C]" >&2; exit 2; }
if [ "$mode" = bug ]; then
  out=${out:-out/demo}; bug_flag=--bug; bench_secs=${bench_secs:-10}
else
  out=${out:-out/demo-fixed}; bug_flag=; bench_secs=${bench_secs:-120}
fi
CT=$O/bin/corotracer
SRV=$O/examples/demo/resp_server
for f in "$CT" "$SRV"; do
  [ -x "$f" ] || { echo "run-demo: $f is not built (make O=$O)" >&2; exit 1; }
done
if ! command -v redis-benchmark >/dev/null 2>&1; then
  echo "run-demo: redis-benchmark missing, installing redis-tools"
  sh scripts/install-deps.sh demo || { echo "run-demo: cannot install redis-tools" >&2; exit 1; }
fi

mkdir -p "$out"
rm -f "$out/trace.ctrace" "$out/report.md" "$out/findings.json" "$out/server.log" "$out/server.out" \
      "$out/bench.txt" "$out/port"
engine=""
cleanup() {
  # Never leave the server behind, whatever stopped us.
  if [ -n "$engine" ] && kill -0 "$engine" 2>/dev/null; then
    kill -TERM "$engine" 2>/dev/null; sleep 1; kill -KILL "$engine" 2>/dev/null
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One station per coroutine, for life: every reconnecting client is a new
# connection coroutine. 5 tests (ping counts twice: inline and multibulk) x
# requests, plus room.
stations=$((5 * requests + 4096))
echo "== 1. server ($mode): corotracer run -n $stations -o $out/trace.ctrace -- resp_server $bug_flag"
"$CT" run --quiet -n "$stations" -o "$out/trace.ctrace" -- \
  "$SRV" --port 0 --port-file "$out/port" $bug_flag >"$out/server.out" 2>"$out/server.log" &
engine=$!
i=0
while [ ! -s "$out/port" ]; do
  i=$((i + 1))
  if [ $i -gt 100 ] || ! kill -0 "$engine" 2>/dev/null; then
    echo "run-demo: the server did not start; its log:" >&2; cat "$out/server.log" >&2; exit 1
  fi
  sleep 0.1
done
port=$(cat "$out/port")
cat "$out/server.out"

echo "== 2. redis-benchmark -p $port -c $clients -n $requests -k 0 -t ping,set,get,incr (at most ${bench_secs}s)"
start=$(date +%s)
timeout -k 2 "$bench_secs" redis-benchmark -h 127.0.0.1 -p "$port" -c "$clients" -n "$requests" -k 0 \
  -t ping,set,get,incr -q >"$out/bench.txt" 2>&1
brc=$?
secs=$(( $(date +%s) - start ))
# Progress lines end in \r; keep the summaries and the last progress line.
tr '\r' '\n' <"$out/bench.txt" | grep -E 'requests per second|rps=' | \
  awk '/requests per second/ {print "   " $0; last=""; next} {last=$0} END {if (last != "") print "   " last}'
if [ $brc -eq 124 ] || [ $brc -eq 137 ]; then
  echo "   redis-benchmark made no progress: stopped after ${secs}s (throughput dropped to zero)"
fi
bugs=$(grep -c 'closed fd .* without waking' "$out/server.log")

# The program runs on after its coroutines parked; a moment more makes that
# visible in the trace before we stop it.
[ "$mode" = bug ] && sleep 2
echo "== 3. SIGTERM to the engine (forwarded to the server)"
kill -TERM "$engine"
i=0
while kill -0 "$engine" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$engine" 2>/dev/null; then
  echo "   the server ignored SIGTERM for 10 s: SIGKILL"; kill -KILL "$engine"
fi
wait "$engine" 2>/dev/null
erc=$?
engine=""
grep -v 'closed fd .* without waking' "$out/server.log" | sed 's/^/   /'
echo "   engine exit status $erc; server log: $bugs fds closed without waking their coroutine"

echo "== 4. corotracer report $out/trace.ctrace -o $out/report.md --json $out/findings.json"
timeout 120 "$CT" report "$out/trace.ctrace" -o "$out/report.md" --json "$out/findings.json"
rrc=$?
[ -s "$out/report.md" ] || { echo "run-demo: report failed (exit $rrc)" >&2; exit 1; }
# Headline: each finding's title, and the sites of the lost wakeups.
awk '/^### / {print "   " $0; lw = /suspended forever/; next}
     lw && /^- `/ {print "     " $0} /^\| / {lw = 0}' "$out/report.md"
if [ "$mode" = bug ]; then
  grep -q '"kind":"lost_wakeup"' "$out/findings.json" || echo "   (no lost wakeup found: was the bug triggered? $bugs fds closed)"
else
  if grep -q '"kind":"lost_wakeup"' "$out/findings.json"; then
    echo "   UNEXPECTED: the fixed server has lost wakeups"
  else
    echo "   no lost wakeup: every parked coroutine was woken"
  fi
fi
echo "== files: $out/report.md  $out/findings.json  $out/trace.ctrace  $out/server.log  $out/bench.txt"
echo "   (trace.ctrace is the compact binary trace; as JSONL: $CT export jsonl $out/trace.ctrace -o trace.jsonl,"
echo "    or run with -o trace.jsonl)"
