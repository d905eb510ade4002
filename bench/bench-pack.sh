#!/bin/sh
# bench-pack.sh - issue #32 route 1 (docs/ROUTE1.md): the engine's CPU a switch with packs
# (this build, corotracer run --pack) against a base build without them (switch records),
# alternating in each round on the same cores, so a machine's changing load hits both alike.
# Per side and round: the engine's CPU a switch (the end record's engine_cpu_us, and its
# harvest loop's harvest_cpu_us; whole run, and marginal: see below), the program's CPU a
# switch (its own getrusage), trace bytes a switch, events lost. Then medians per side and
# the median of the in-round ratios.
#
# Shapes: rr, the seeds' (seedclaim T C W S: ../shared/bench/seedclaim.c, built against each
# side's library); random, C coroutines a thread in random order (bench-coswitch -r).
#
# Without BASE the base side is this build with --no-pack (the same probe and engine).
# Usage: [BASE=dir-of-a-base-checkout-with-its-build] [O=build/default] sh bench/bench-pack.sh
#        [-S rr|random] [-T threads] [-C n] [-W work] [-R rounds] [-s seconds]
set -eu
O=${O:-build/default}
shape=rr threads=2 cos=100 work=500 rounds=5 secs=2
while getopts S:T:C:W:R:s: opt; do
  case $opt in
    S) shape=$OPTARG ;;
    T) threads=$OPTARG ;;
    C) cos=$OPTARG ;;
    W) work=$OPTARG ;;
    R) rounds=$OPTARG ;;
    s) secs=$OPTARG ;;
    *) echo "usage: [BASE=dir] sh bench/bench-pack.sh [-S rr|random] [-T n] [-C n] [-W n] [-R n] [-s secs]" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
BASE=${BASE:-$root}
seed=${SEEDCLAIM:-$root/../shared/bench/seedclaim.c}
[ -f "$seed" ] || seed=/work/shared/bench/seedclaim.c
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-pack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# side NAME DIR OPTS: the corotracer, the program and the run options of a side.
for side in base pack; do
  d=$root/$O opts=--pack
  # A base that packs by default (this build, or a later one) is asked for switch records.
  [ $side = base ] && d=$BASE/$O opts=$("$BASE/$O/bin/corotracer" run --help 2>&1 | grep -q -- --no-pack && echo --no-pack || :)
  [ -x "$d/bin/corotracer" ] || { echo "bench-pack: $d/bin/corotracer: build first" >&2; exit 2; }
  case $shape in
    rr) ${CC:-cc} -std=c11 -O2 -I"$root/include" -o "$tmp/prog-$side" "$seed" "$d/lib/libcorotracer.a" -lpthread
        echo "$tmp/prog-$side" > "$tmp/cmd-$side" ;;
    random) echo "$d/bench/bench-coswitch -r" > "$tmp/cmd-$side" ;;
    *) echo "bench-pack: -S $shape: not rr or random" >&2; exit 2 ;;
  esac
  echo "$d/bin/corotracer" > "$tmp/ct-$side"
  echo "$opts" > "$tmp/opts-$side"
done
taskset -pc 0-$((threads - 1)) $$ > /dev/null
key() { echo "$2" | sed -n "s/.*\"$1\":\"*\([0-9.a-z]*\).*/\1/p"; }
field() { k=$1; shift; echo "$@" | awk -v k="$k" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "-") }'; }
# one SIDE SECONDS: a run; prints engine_us harvest_us prog_cpu_s bytes lost switches
# missing (events the probe recorded that are neither in the trace nor counted lost).
one() {
  ct=$(cat "$tmp/ct-$1") f=$tmp/t.ctrace
  rm -f "$f"
  out=$("$ct" run --quiet $(cat "$tmp/opts-$1") -o "$f" -- $(cat "$tmp/cmd-$1") "$threads" "$cos" "$work" "$2")
  "$ct" export jsonl "$f" -q -o "$tmp/t.jsonl"
  end=$(grep '^{"type":"end"' "$tmp/t.jsonl")
  echo "$(key engine_cpu_us "$end") $(key harvest_cpu_us "$end") $(field cpu_s "$out") $(stat -c %s "$f") $(key lost "$end") $(field switches "$out") $(( $(field recorded "$out") - $(key events "$end") ))"
}
# Per round and side: a short run (0.3 s) and a long one (secs): the engine's
# CPU a switch of the long run (its startup, ~15 ms, included, as the end
# record counts it), and the marginal one, (long - short) / (their switches'
# difference): what a switch costs once the run is going.
r=1
while [ $r -le "$rounds" ]; do
  for side in base pack; do
    a=$(one $side 0.3)
    b=$(one $side "$secs")
    echo "$a $b" | awk '{ d = $13 - $6; printf "%.1f %.1f %.1f %.2f %s %.1f %.1f %d\n", $8 * 1e3 / $13, $9 * 1e3 / $13, $10 * 1e9 / $13, $11 / $13, $12, ($8 - $1) * 1e3 / d, ($9 - $2) * 1e3 / d, $7 + $14 }' >> "$tmp/$side"
    echo "round $r $side: engine_ns harvest_ns prog_ns bytes lost marginal_engine_ns marginal_harvest_ns missing: $(tail -n 1 "$tmp/$side")"
  done
  r=$((r + 1))
done
paste -d' ' "$tmp/base" "$tmp/pack" | awk '{ print $9 / $1, $11 / $3, $14 / $6 }' > "$tmp/ratio"
for side in base pack; do
  echo "$side medians: engine_ns $(cut -d' ' -f1 "$tmp/$side" | median) harvest_ns $(cut -d' ' -f2 "$tmp/$side" | median) prog_ns $(cut -d' ' -f3 "$tmp/$side" | median) bytes $(cut -d' ' -f4 "$tmp/$side" | median) lost_max $(cut -d' ' -f5 "$tmp/$side" | sort -g | tail -n 1) marginal_engine_ns $(cut -d' ' -f6 "$tmp/$side" | median) marginal_harvest_ns $(cut -d' ' -f7 "$tmp/$side" | median) missing_max $(cut -d' ' -f8 "$tmp/$side" | sort -g | tail -n 1)"
done
echo "in-round ratios pack/base, median: engine $(cut -d' ' -f1 "$tmp/ratio" | median) prog $(cut -d' ' -f2 "$tmp/ratio" | median) marginal_engine $(cut -d' ' -f3 "$tmp/ratio" | median)"
