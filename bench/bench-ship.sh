#!/bin/sh
# bench-ship.sh - issue #36: `run --ship` to a server that never answers does
# not slow the traced program. The same burst (tests/lib/sdk-writer spaced 1
# N 0: one coroutine suspending and resuming back to back) under
# `run --flight 16M`, three SIGUSR1 to the engine 0.15 s apart (a dump each,
# while the program runs), runs alternating:
#   plain  no --ship
#   ship   --ship to 127.0.0.1:PORT, a listener that never accepts (the
#          connection waits in its backlog: libpq's startup never gets an
#          answer), each dump handed to a shipper that waits on it
# Program wall: the run's wall (the engine exits with the program); CPU: user
# + system of the run (program and engine; the detached shippers, which only
# wait, are not its children). Medians of RUNS, the ratio ship/plain.
# Usage: O=build/x [RUNS=5] [EVENTS=6000000] sh bench/bench-ship.sh
set -eu
O=${O:-build/default}
runs=${RUNS:-5} n=${EVENTS:-6000000}
ct=$O/bin/corotracer w=$O/tests/lib/sdk-writer
[ -x "$ct" ] && [ -x "$w" ] || { echo "build first: make O=$O" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-ship.XXXXXX")
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
time.sleep(3600)' "$tmp/port" &
hole=$!
# The shippers of this run only (their spool is ours), then the listener.
trap 'pkill -f -- "--spool $tmp/spool" 2> /dev/null; kill $hole; rm -rf "$tmp"' EXIT
while [ ! -s "$tmp/port" ]; do sleep 0.05; done
url="postgresql://bench@127.0.0.1:$(cat "$tmp/port")/bench?connect_timeout=600"
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
now() { date +%s%N; }
: > "$tmp/plain"
: > "$tmp/ship"
i=0
while [ $i -lt "$runs" ]; do
  i=$((i + 1))
  for mode in plain ship; do
    set -- --quiet --flight 16M -o "$tmp/d.ctrace"
    [ $mode = plain ] || set -- "$@" --ship "$url" --ship-spool "$tmp/spool"
    rm -f "$tmp"/d.ctrace*
    t0=$(now)
    rm -f "$tmp/pid"
    # the engine's pid (sh execs it) for the signals; time counts it and the program
    /usr/bin/time -f "%U %S" -o "$tmp/cpu" sh -c 'echo $$ > "$0/pid"; exec "$@"' "$tmp" \
      "$ct" run "$@" -- "$w" spaced 1 "$n" 0 "$tmp/w" > /dev/null 2> "$tmp/err" &
    tpid=$!
    while [ ! -s "$tmp/pid" ]; do sleep 0.01; done
    eng=$(cat "$tmp/pid")
    (k=0; while [ $k -lt 3 ] && kill -0 $eng 2> /dev/null; do sleep 0.15; kill -USR1 $eng 2> /dev/null; k=$((k + 1)); done) &
    sig=$!
    wait $tpid
    t1=$(now)
    kill $sig 2> /dev/null || true
    wait $sig 2> /dev/null || true
    dumps=$(ls "$tmp"/d.ctrace* 2> /dev/null | wc -l)
    echo "$(((t1 - t0) / 1000000)) $dumps $(awk '{ printf "%.2f", $1 + $2 }' "$tmp/cpu")" >> "$tmp/$mode"
  done
done
col() { awk -v c="$2" '{ print $c }' "$tmp/$1" | median; }
p=$(col plain 1) s=$(col ship 1)
echo "burst $n events, --flight 16M, 3 SIGUSR1 0.15 s apart, median of $runs: program wall" \
  "plain $p ms ($(col plain 2) dumps, CPU $(col plain 3) s), --ship to a server that never" \
  "answers $s ms ($(col ship 2) dumps, each handed to a waiting shipper; CPU $(col ship 3) s);" \
  "wall ship/plain $(echo "$s $p" | awk '{ printf "%.3f", $1 / $2 }')"
