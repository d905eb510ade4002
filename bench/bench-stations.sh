#!/bin/sh
# bench-stations.sh - station reuse in a server's shape (bench/bench-server.c:
# a coroutine per request, 2 threads x 64 in flight, W 300, full speed):
# how many requests go untraced for want of a station, how many stations the
# run used, and whether the trace's lost equals the probe's dropped. Binary
# and JSONL traces, R rounds, each build of O and BASE (optional, an A/B in
# the same rounds).
# Usage: O=build/x [BASE=build/y] sh bench/bench-stations.sh [-n stations] [-s secs] [-R rounds]
set -eu
O=${O:-build/default}
n=1024 secs=3 rounds=3
while getopts n:s:R: opt; do
  case $opt in
    n) n=$OPTARG ;;
    s) secs=$OPTARG ;;
    R) rounds=$OPTARG ;;
    *) echo "usage: O=build/x [BASE=build/y] sh bench/bench-stations.sh [-n N] [-s secs] [-R rounds]" >&2; exit 2 ;;
  esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-stations.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "bench-stations: -n $n, bench-server 2 64 300 $secs, $rounds rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| build | trace | requests | untraced | % untraced | stations_used | lost | probe dropped |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
i=0
while [ $i -lt "$rounds" ]; do
  i=$((i + 1))
  for b in "$O" ${BASE:-}; do
    for fmt in ctrace jsonl; do
      rm -f "$tmp"/t.* "$tmp/e.jsonl"
      out=$("$b/bin/corotracer" run -n "$n" -o "$tmp/t.$fmt" -- "$b/bench/bench-server" 2 64 300 "$secs" 2>/dev/null)
      if [ $fmt = ctrace ]; then
        "$b/bin/corotracer" export jsonl "$tmp/t.ctrace" -q -o "$tmp/e.jsonl"
      else
        mv "$tmp/t.jsonl" "$tmp/e.jsonl"
      fi
      end=$(grep '^{"type":"end"' "$tmp/e.jsonl")
      k() { echo "$end" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
      req=$(echo "$out" | awk '{ print $2 }')
      drop=$(echo "$out" | awk '{ for (i = 1; i < NF; i++) if ($i == "dropped") print $(i + 1) }')
      u=$(k untraced_coroutines)
      echo "| $b | $fmt | $req | $u | $(echo "$u $req" | awk '{ printf "%.1f", $2 ? 100 * $1 / $2 : 0 }') |" \
        "$(k stations_used) | $(k lost) | $drop |"
    done
  done
done
