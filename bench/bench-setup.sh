#!/bin/sh
# bench-setup.sh - the fixed cost of a run: `corotracer run -- true` from
# start to exit (shared memory, rings, socket, the program's start and end,
# teardown), with the default 64 rings and with 8. With BASE=build/y it runs
# that build's binary too, interleaved with O's, and prints the ratio (O over
# BASE): an A/B in one run, on a machine whose load comes and goes.
# Usage: O=build/x [BASE=build/y] [RUNS=9] sh bench/bench-setup.sh
set -eu
O=${O:-build/default}
runs=${RUNS:-9}
builds=$O
[ -n "${BASE:-}" ] && builds="$BASE $O"
for b in $builds; do
  [ -x "$b/bin/corotracer" ] || { echo "build first: make O=$b" >&2; exit 2; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-setup.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ms() { date +%s%N | awk '{ printf "%.1f\n", $1 / 1e6 }'; }

for rings in 64 8; do
  i=0
  while [ $i -lt "$runs" ]; do
    i=$((i + 1))
    k=0
    for b in $builds; do
      k=$((k + 1))
      t0=$(ms)
      "$b/bin/corotracer" run --quiet --rings "$rings" -o "$tmp/t.ctrace" -- true
      t1=$(ms)
      echo "$t0 $t1" | awk '{ print $2 - $1 }' >> "$tmp/b$k.r$rings"
    done
  done
  line="run -- true, $rings rings, median of $runs:"
  k=0
  for b in $builds; do
    k=$((k + 1))
    line="$line $b $(median < "$tmp/b$k.r$rings" | awk '{ printf "%.1f", $1 }') ms;"
  done
  if [ -n "${BASE:-}" ]; then
    line="$line ratio $(awk -v a="$(median < "$tmp/b1.r$rings")" -v b="$(median < "$tmp/b2.r$rings")" \
      'BEGIN { printf "%.2f", b / a }')"
  fi
  echo "$line"
done
