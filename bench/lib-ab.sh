#!/bin/sh
# lib-ab.sh - what the A/B benchmarks share (sourced by bench-onecpu.sh, bench-asio.sh,
# bench-setup.sh and bench-ctrace.sh): the builds to compare (O; with
# BASE=build/y that one too, first), a scratch directory, medians, and the
# interleaved loop: each round runs every build once, so on a machine whose
# load comes and goes both builds see the same load.
# After `. bench/lib-ab.sh`: $builds, $tmp (removed at exit), and
#   ab_need FILE...        every build has these (else exit 2)
#   ab_loop RUNS TAG FN    RUNS rounds of `FN BUILD` per build; its output
#                          lines go to $tmp/TAG.K (K: the build's position);
#                          FN sees the round, 1 to RUNS, in $ab_round
#   ab_median FILE [COL]   the median of column COL (default 1)
#   ab_ratio TAG [COL]     O's median over BASE's (nothing without BASE)
set -eu
O=${O:-build/default}
builds=$O
if [ -n "${BASE:-}" ]; then builds="$BASE $O"; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-ab.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

ab_need() {
  for _b in $builds; do
    for _f in "$@"; do
      [ -x "$_b/$_f" ] || { echo "build first: make O=$_b" >&2; exit 2; }
    done
  done
}

ab_loop() {
  ab_round=0
  while [ "$ab_round" -lt "$1" ]; do
    ab_round=$((ab_round + 1))
    _k=0
    for _b in $builds; do
      _k=$((_k + 1))
      "$3" "$_b" >> "$tmp/$2.$_k"
    done
  done
}

ab_median() {
  awk -v c="${2:-1}" '{ print $c }' "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

ab_ratio() {
  if [ -n "${BASE:-}" ]; then
    awk -v a="$(ab_median "$tmp/$1.1" "${2:-1}")" -v b="$(ab_median "$tmp/$1.2" "${2:-1}")" \
      'BEGIN { if (a > 0) printf "%.2f", b / a; else printf "-" }'
  fi
}
