#!/bin/sh
# bench-flight.sh - issue #21: the flight recorder's cost against the binary
# trace to disk, same burst, same run (tests/lib/sdk-writer spaced 1 N 0, one
# coroutine suspending and resuming back to back), runs alternating:
#   disk    corotracer run --lossless -o FILE (the compact binary trace)
#   flight  corotracer run --lossless --flight 64M --dump-on exit (the window
#           in memory, one dump at the end, which carries the end record)
#   drop    the same with --flight 4M: the window fills and drops its oldest
#           chunks (the steady state of a long run)
# --lossless so that both harvest every event (flight mode has no spill file:
# past its capture memory the harvest waits, and without --lossless the rings
# would drop what a disk run spills). Engine CPU per event is the end record's
# engine_cpu_us / events; the ratios are of the medians.
# Usage: O=build/x [RUNS=5] [EVENTS=10000000] sh bench/bench-flight.sh
set -eu
O=${O:-build/default}
runs=${RUNS:-5} n=${EVENTS:-10000000}
ct=$O/bin/corotracer w=$O/tests/lib/sdk-writer ctjl=$O/tests/lib/ctjl
[ -x "$ct" ] && [ -x "$w" ] && [ -x "$ctjl" ] || { echo "build first: make O=$O" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-flight.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: > "$tmp/disk"
: > "$tmp/flight"
: > "$tmp/drop"
i=0
while [ $i -lt "$runs" ]; do
  i=$((i + 1))
  for mode in disk flight drop; do
    f=$tmp/$mode.ctrace
    rm -f "$f"
    if [ $mode = disk ]; then
      "$ct" run --quiet --lossless -o "$f" -- "$w" spaced 1 "$n" 0 "$tmp/w" > /dev/null 2>&1
    else
      size=64M
      [ $mode = flight ] || size=4M
      "$ct" run --quiet --lossless --flight $size --dump-on exit -o "$f" -- "$w" spaced 1 "$n" 0 \
        "$tmp/w" > /dev/null 2>&1
    fi
    set -- $("$ctjl" -t end events engine_cpu_us lost < "$f")
    echo "$1 $2 $3" | awk '{ printf "%.1f %s\n", $2 * 1000 / $1, $3 }' >> "$tmp/$mode"
  done
done
col() { awk -v c="$2" '{ print $c }' "$tmp/$1" | median; }
d=$(col disk 1) f=$(col flight 1) r=$(col drop 1)
ratio() { echo "$1 $2" | awk '{ printf "%.2f", $1 / $2 }'; }
echo "burst $n events, --lossless, median of $runs: engine disk $d ns/event (lost $(col disk 2))," \
  "flight 64M $f ns/event (lost $(col flight 2)), flight 4M (dropping) $r ns/event" \
  "(lost $(col drop 2)); flight/disk $(ratio "$f" "$d"), dropping/disk $(ratio "$r" "$d")"
