#!/bin/sh
# bench-fsnap.sh - the flight window's snapshot table once the window turns
# over (bench-fsnap.c: every chunk of a trace applied as the window applies a
# chunk it drops): a default trace of bench-coswitch T C W SECONDS (the seeds'
# shape: 2 threads x 100 coroutines, ~800 ns a switch with W 670 on this VM)
# recorded, then fed to the table RUNS times; its CPU per chunk byte and per
# event (the end record's harvested). docs/BENCHMARKS.md, the --flight 64M row.
# Usage: O=build/x [RUNS=5] sh bench/bench-fsnap.sh [T C W SECONDS]
set -eu
O=${O:-build/default}
runs=${RUNS:-5}
ct=$O/bin/corotracer sw=$O/bench/bench-coswitch fs=$O/bench/bench-fsnap ctjl=$O/tests/lib/ctjl
[ -x "$ct" ] && [ -x "$sw" ] && [ -x "$fs" ] && [ -x "$ctjl" ] || { echo "build first: make O=$O" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-fsnap.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$ct" run --quiet -o "$tmp/t.ctrace" -- "$sw" "${1:-2}" "${2:-100}" "${3:-670}" "${4:-1}" > "$tmp/out"
ev=$("$ct" export jsonl "$tmp/t.ctrace" -q -o - | "$ctjl" -t end harvested)
echo "bench-fsnap: $(cat "$tmp/out"); the table fed $ev events, $runs rounds"
"$fs" -R "$runs" -e "$ev" "$tmp/t.ctrace" > /dev/null
