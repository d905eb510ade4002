#!/bin/sh
# bench-flight-full.sh - what a full ring costs the program under --flight
# (issue #34 N6): the writer takes back the ring's oldest records (overwrite
# mode) where a full trace drops the new one. The engine is SIGSTOPped, the
# writer (tests/lib/sdk-writer stall) writes EVENTS events back to back (its
# rings fill), then times EVENTS more: every one of those goes the full-ring
# path. Prints a Markdown row: median ns per event over RUNS for a full
# trace (drop) and --flight 8M (overwrite), and their ratio, same build,
# runs alternating.
#
#   O=build/x sh bench/bench-flight-full.sh [RUNS [EVENTS]]
#       (default 5 runs, 2000000 events)
set -u
O=${O:-build/default}
RUNS=${1:-5}
EV=${2:-2000000}
CT=$O/bin/corotracer
W=$O/tests/lib/sdk-writer
for f in "$CT" "$W"; do [ -x "$f" ] || { echo "build first: make O=$O ($f)" >&2; exit 2; }; done
D=$(mktemp -d "${TMPDIR:-/tmp}/bench-flight-full.XXXXXX") || exit 1
trap 'rm -rf "$D"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# one OPTS...: ns per event of one run, the engine stopped while timed.
one() {
  rm -rf "$D/w" "$D/t.ctrace"*
  mkdir "$D/w"
  "$CT" run --quiet "$@" -o "$D/t.ctrace" -- "$W" stall "$EV" "$D/w" >/dev/null 2>&1 &
  eng=$!
  i=0
  while [ ! -e "$D/w/ready" ]; do
    i=$((i + 1)); [ $i -gt 400 ] && { echo "writer did not start" >&2; exit 1; }; sleep 0.05
  done
  kill -STOP $eng
  sleep 0.1
  touch "$D/w/go"
  i=0
  while [ ! -e "$D/w/ns" ]; do
    i=$((i + 1)); [ $i -gt 2400 ] && { echo "writer did not finish" >&2; exit 1; }; sleep 0.05
  done
  kill -CONT $eng
  wait $eng 2>/dev/null
  awk '{ print $2 }' "$D/w/ns"
}

: >"$D/drop"
: >"$D/over"
r=0
while [ $r -lt "$RUNS" ]; do
  one >>"$D/drop"
  one --flight 8M >>"$D/over"
  r=$((r + 1))
done
a=$(median <"$D/drop")
b=$(median <"$D/over")
echo "| ring full, engine stopped | drop (full trace) ns/event | overwrite (--flight 8M) ns/event | ratio |"
echo "| --- | --- | --- | --- |"
echo "| $EV events timed, median of $RUNS | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }') |"
