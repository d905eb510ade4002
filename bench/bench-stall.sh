#!/bin/sh
# bench-stall.sh - what an event costs the program once the engine stalls:
# disk full (the trace on a 1 MiB tmpfs, which needs root: the engine cuts
# the trace at ENOSPC and exits; /dev/full no longer serves, as the engine
# stops at once on its header),
# the engine SIGSTOPped, the engine SIGKILLed; default mode and --lossless
# (after its one --lossless-ms timeout), on rings and on --rings 0. The
# writer (tests/lib/sdk-writer stall) attaches, waits until the engine is in
# that state, writes EVENTS events back to back (the ring fills, the one
# lossless wait times out), then times EVENTS more.
# Prints a Markdown row per case: median ns per event over RUNS, and the
# lossless/default ratio of the same run (issue #24: after one timeout, ≤ 2x).
# The `--flight 8M` rows (the engine stopped or killed): a full ring's oldest
# records taken back, not the new one dropped (issue #34 N6), against the
# rings row's default column; lossless there waits as without --flight.
#
#   O=build/x sh bench/bench-stall.sh [RUNS [EVENTS [LOSSLESS_MS]]]
#       (default 3 runs, 2000000 events, 100 ms)
set -u
O=${O:-build/default}
RUNS=${1:-3}
EV=${2:-2000000}
MS=${3:-100}
CT=$O/bin/corotracer
W=$O/tests/lib/sdk-writer
for f in "$CT" "$W"; do [ -x "$f" ] || { echo "build first: make O=$O ($f)" >&2; exit 2; }; done
D=$(mktemp -d "${TMPDIR:-/tmp}/bench-stall.XXXXXX") || exit 1
trap 'umount "$D/fs" 2>/dev/null; rm -rf "$D"' EXIT
mkdir "$D/fs"
full=full
[ "$(id -u)" = 0 ] && mount -t tmpfs -o size=1m tmpfs "$D/fs" 2>/dev/null || full=
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# one STALL RINGS LOSSLESS: ns per event of one run.
one() {
  rm -rf "$D/w"
  mkdir "$D/w"
  out="$D/t.jsonl"
  [ "$1" = full ] && out=$D/fs/t.jsonl && rm -f "$out"
  case $2 in --flight*) out=$D/t.ctrace ;; esac
  # shellcheck disable=SC2086
  "$CT" run --quiet $2 $3 --lossless-ms "$MS" -o "$out" -- "$W" stall "$EV" "$D/w" >/dev/null 2>&1 &
  eng=$!
  i=0
  while [ ! -e "$D/w/ready" ]; do
    i=$((i + 1)); [ $i -gt 400 ] && { echo "writer did not start" >&2; exit 1; }; sleep 0.05
  done
  case $1 in
  stop) kill -STOP $eng ;;
  kill) kill -KILL $eng ;;
  esac
  sleep 0.1
  touch "$D/w/go"
  i=0
  while [ ! -e "$D/w/ns" ]; do
    i=$((i + 1)); [ $i -gt 2400 ] && { echo "writer did not finish" >&2; exit 1; }; sleep 0.05
  done
  [ "$1" = stop ] && kill -CONT $eng
  wait $eng 2>/dev/null
  awk '{ print $2 }' "$D/w/ns"
}

echo "| stall | ring mode | default ns/event | --lossless ns/event | ratio |"
echo "| --- | --- | --- | --- | --- |"
[ -n "$full" ] || echo "| full | (skipped: mounting a small tmpfs needs root) | | | |"
for stall in $full stop kill; do
  for rings in "" "--rings 0" "--flight 8M"; do
    [ "$stall" = full ] && [ -n "$rings" ] && [ "$rings" != "--rings 0" ] && continue
    : >"$D/def"
    : >"$D/ll"
    r=0
    while [ $r -lt "$RUNS" ]; do
      one $stall "$rings" "" >>"$D/def"
      one $stall "$rings" --lossless >>"$D/ll"
      r=$((r + 1))
    done
    a=$(median <"$D/def")
    b=$(median <"$D/ll")
    echo "| $stall | ${rings:-rings} | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }') |"
  done
done
