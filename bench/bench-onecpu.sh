#!/bin/sh
# bench-onecpu.sh - issue #20's one-CPU target: engine and program pinned to
# one CPU (`taskset -c 0`, what a one-CPU container gets), a back-to-back
# burst (tests/lib/sdk-writer spaced 1 N 0) under `corotracer run`: the
# program's own wall time per event (the summary line's seconds / N) and the
# events lost (the end record's). (The writer refuses to run untraced.)
# With BASE=build/y that build runs too, interleaved with O's (A/B in one run).
# Usage: O=build/x [BASE=build/y] [RUNS=5] [EVENTS=4000000] sh bench/bench-onecpu.sh
set -eu
O=${O:-build/default}
runs=${RUNS:-5} n=${EVENTS:-4000000}
builds=$O
[ -n "${BASE:-}" ] && builds="$BASE $O"
for b in $builds; do
  [ -x "$b/bin/corotracer" ] && [ -x "$b/tests/lib/sdk-writer" ] && [ -x "$b/tests/lib/ctjl" ] ||
    { echo "build first: make O=$b" >&2; exit 2; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-onecpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

i=0
while [ $i -lt "$runs" ]; do
  i=$((i + 1))
  k=0
  for b in $builds; do
    k=$((k + 1))
    taskset -c 0 "$b/bin/corotracer" run -o "$tmp/t.ctrace" -- "$b/tests/lib/sdk-writer" spaced 1 "$n" 0 \
      "$tmp/w" > /dev/null 2> "$tmp/err"
    prog=$(sed -n 's/.*program exited with [0-9]*; \([0-9.]*\) s;.*/\1/p' "$tmp/err")
    lost=$("$b/tests/lib/ctjl" -t end lost < "$tmp/t.ctrace")
    echo "$prog $n $lost" | awk '{ printf "%.1f %s\n", $1 * 1e9 / $2, $3 }' >> "$tmp/b$k"
  done
done
echo "one CPU, $n events back to back, median of $runs:"
k=0
for b in $builds; do
  k=$((k + 1))
  echo "  $b: program $(awk '{ print $1 }' "$tmp/b$k" | median) ns/event" \
    "(runs: $(awk '{ printf "%s ", $1 }' "$tmp/b$k")), lost $(awk '{ printf "%s ", $2 }' "$tmp/b$k")"
done
