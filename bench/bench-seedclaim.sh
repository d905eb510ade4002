#!/bin/sh
# bench-seedclaim.sh - the seeds' headline as a user measures it (issue #32): 10 M coroutine
# switches a second on 8 cores traced for ~1 % of throughput and <= 2 % more CPU, i.e. at
# 1.25 M switches a second per core, ~800 ns of work a switch, the tracer's whole cost (probe
# + engine) <= 16 ns of CPU a switch.
#
# The seeds' program (../shared/bench/seedclaim.c, beside the repository) is built here as a
# user builds it: -Iinclude and the build's libcorotracer.a. W (work per switch) is calibrated
# so a switch is ~800 ns of CPU on this machine. Then RUNS alternating rounds, each running
# every mode once on the same cores (taskset), so a load that comes and goes hits all alike:
#   untraced  the program alone
#   floor     the program linked with bench/floor-probe.c instead of the probe: one clock
#             read a switch and nothing else, no engine (-S rr only): the throughput goal's
#             floor measured in the same rounds (the issue derives 0.988 from a quiet read)
#   default   corotracer run -o F.ctrace (the default: binary format, packs, docs/ROUTE1.md)
#   flight    corotracer run --flight 64M --dump-on exit -o F (the window in memory; packs,
#             the default there since 2026-11-29: docs/ROUTE1.md "Remaining" 10)
#   flightrec the same with --no-pack (switch records, the default under --flight before; a
#             row, no verdict); flightpack: with --pack (the same as flight now)
#   flightturn --flight 4M: a window the run turns over many times, as any flight recorder
#             left on does past its first 64 MiB (~7 s here): each chunk the window drops is
#             decoded into the snapshot tracker (flight_snap.c; bench-fsnap measures it
#             alone), a cost a 3 s run under --flight 64M never sees (a row, no verdict)
#   jsonl     corotracer run -o F.jsonl
#   records   corotracer run --no-pack -o F.ctrace (switch records, the default before packs: a
#             row, no verdict)
# Per mode, medians over rounds: switches/s and its ratio to untraced in the same round (by
# wall time, and by CPU); the tracer's extra CPU (program + engine CPU per switch, against the
# untraced run's program CPU per switch) in ns per switch and as % of all cores (against the
# program's own CPU per switch, on its share of the cores: not deflated by whatever else
# loads a shared machine); the engine's CPU
# per switch (the end record's engine_cpu_us, and its harvest loop's harvest_cpu_us); bytes
# of trace per switch; events lost (end record) and dropped (the probe's count); bytes
# spilled. Then what that implies at the seed's 10 M switches/s on 8 cores, and one verdict
# line per figure against issue #32's target ("verdict: ...", collected by bench/run.sh).
#
# Shapes (-S): rr, the seeds' (T threads, C coroutines each, round-robin: seedclaim.c);
# random, C coroutines a thread in random order (bench-coswitch -r; 1,000 on 2 threads is the
# issue's cache-unfriendly shape); server, a coroutine per request with an fd wait
# (bench-server, C requests in flight a thread, 2 W of work a request). With -B N, also the
# back-to-back burst of N switches (bench/bench-backtoback.sh), where only the loss counts.
#
# Usage: O=build/x sh bench/bench-seedclaim.sh [-S rr|random|server] [-T threads] [-C n]
#        [-W work] [-R rounds] [-s seconds] [-B switches] [-c cpus]
# MODES="untraced flight ..." runs those modes only (untraced first: the ratios need it).
# Defaults: -S rr -T 2 -C 100 -R 5 -s 3 -B 0, W calibrated, cpus the first T online.
set -eu
O=${O:-build/default}
shape=rr threads=2 cos=100 work="" rounds=5 secs=3 burst=0 cpus=""
while getopts S:T:C:W:R:s:B:c: opt; do
  case $opt in
    S) shape=$OPTARG ;;
    T) threads=$OPTARG ;;
    C) cos=$OPTARG ;;
    W) work=$OPTARG ;;
    R) rounds=$OPTARG ;;
    s) secs=$OPTARG ;;
    B) burst=$OPTARG ;;
    c) cpus=$OPTARG ;;
    *) echo "usage: O=build/x sh bench/bench-seedclaim.sh [-S rr|random|server] [-T n] [-C n] [-W n] [-R n] [-s secs] [-B n] [-c cpus]" >&2; exit 2 ;;
  esac
done
# Counts are whole numbers (T, C, R at least 1), seconds a positive decimal.
for v in "T $threads" "C $cos" "R $rounds" "B $burst" "W ${work:-1}"; do
  case ${v#? } in
    '' | *[!0-9]*) echo "bench-seedclaim: -${v%% *} ${v#? }: not a whole number" >&2; exit 2 ;;
  esac
done
[ "$threads" -ge 1 ] && [ "$cos" -ge 1 ] && [ "$rounds" -ge 1 ] ||
  { echo "bench-seedclaim: -T, -C and -R are at least 1" >&2; exit 2; }
case $secs in
  '' | *[!0-9.]* | *.*.* | .) echo "bench-seedclaim: -s $secs: not a number of seconds" >&2; exit 2 ;;
esac
ct=$O/bin/corotracer lib=$O/lib/libcorotracer.a
[ -x "$ct" ] && [ -f "$lib" ] && [ -x "$O/bench/bench-coswitch" ] && [ -x "$O/bench/bench-server" ] ||
  { echo "bench-seedclaim: build first: make O=$O" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
# The seeds' program: SEEDCLAIM, else ../shared/bench/seedclaim.c beside the
# repository (in a git worktree, beside the main checkout).
seed=${SEEDCLAIM:-$root/../shared/bench/seedclaim.c}
if [ ! -f "$seed" ] && [ -z "${SEEDCLAIM:-}" ]; then
  common=$(git -C "$root" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) &&
    [ -f "$common/../../shared/bench/seedclaim.c" ] && seed=$(cd "$common/../../shared/bench" && pwd)/seedclaim.c
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-seedclaim.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
case $shape in
  rr)
    [ -f "$seed" ] || { echo "bench-seedclaim: $seed: no such file (the seeds' benchmark: ../shared/bench/seedclaim.c beside the repository, or SEEDCLAIM=FILE)" >&2; exit 2; }
    [ "$cos" -le 256 ] || { echo "bench-seedclaim: -C $cos: seedclaim.c runs at most 256 coroutines a thread (-S random runs more)" >&2; exit 2; }
    ${CC:-cc} -std=c11 -O2 -I"$root/include" -o "$tmp/seedclaim" "$seed" "$lib" -lpthread
    # The floor: the same program linked with a clock read a call for the API
    # (bench/floor-probe.c), the "floor" mode.
    ${CC:-cc} -std=c11 -O2 -D_GNU_SOURCE -I"$root/include" -I"$root/src" -c -o "$tmp/floor.o" \
      "$root/bench/floor-probe.c"
    ${CC:-cc} -std=c11 -O2 -I"$root/include" -o "$tmp/seedclaim-floor" "$seed" "$tmp/floor.o" -lpthread
    bin=$tmp/seedclaim pre="" unit=switch units=switches ;;
  random) bin=$O/bench/bench-coswitch pre=-r unit=switch units=switches ;;
  server) bin=$O/bench/bench-server pre="" unit=request units=requests ;;
  *) echo "bench-seedclaim: -S $shape: not rr, random or server" >&2; exit 2 ;;
esac
# The cores: the first T online unless -c. This shell is pinned to them, so
# every run (program and engine) inherits them.
ncpu=$(getconf _NPROCESSORS_ONLN)
[ -n "$cpus" ] || cpus=0-$(( (threads < ncpu ? threads : ncpu) - 1 ))
taskset -pc "$cpus" $$ > /dev/null
ncores=$(nproc)
# prog W SECONDS: one run of the shape's program, untraced.
prog() { "$bin" $pre "$threads" "$cos" "$1" "$2"; }
# trun OPTION... -- PROGRAM...: corotracer run, its messages (a flight dump's
# line) kept unless it fails.
trun() {
  "$ct" run --quiet "$@" 2> "$tmp/err" || {
    rc=$?
    cat "$tmp/err" >&2
    echo "bench-seedclaim: corotracer run $*: exit $rc" >&2
    exit 1
  }
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "-") }'; }
# field KEY LINE...: the value after KEY in a result line.
field() { k=$1; shift; echo "$@" | awk -v k="$k" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }'; }
# endline FILE: the trace's end record (a binary trace read as its JSONL; under
# --flight the dump's window record follows it). Exits when there is none.
endline() {
  case $1 in
    *.jsonl) tail -n 3 "$1" ;;
    *) "$ct" export jsonl "$1" -q -o "$tmp/end.jsonl" && tail -n 3 "$tmp/end.jsonl" && rm -f "$tmp/end.jsonl" ;;
  esac | grep '^{"type":"end"' || { echo "bench-seedclaim: $1: no end record" >&2; exit 1; }
}
# key KEY LINE: KEY's value (a number, or a string without its quotes) in a JSON line.
key() { echo "$2" | sed -n "s/.*\"$1\":\"*\([0-9.a-z]*\).*/\1/p"; }

# Calibrate W: the program's CPU per switch (robust to a shared machine's load,
# unlike wall time) brought to ~800 ns in three steps.
if [ -z "$work" ]; then
  work=300
  for step in 1 2 3; do
    out=$(prog "$work" 0.3)
    ns=$(echo "$(field cpu_s "$out") $(field switches "$out")" |
      awk '{ printf "%.1f", $1 * 1e9 / $2 }')
    target=800
    [ $shape = server ] && target=1600 # a request is two halves of W
    work=$(echo "$work $ns $target" | awk '{ w = int($1 * $3 / $2 + 0.5); print w < 1 ? 1 : w }')
  done
fi

# run MODE: one run of the shape under MODE; appends to $tmp/MODE:
# rate cpu_s engine_s harvest_s bytes lost dropped spilled sched switches
run() {
  f=$tmp/t.ctrace
  rm -f "$f" "$tmp/t.jsonl"
  case $1 in
    untraced) out=$(prog "$work" "$secs") ;;
    floor) out=$("$tmp/seedclaim-floor" "$threads" "$cos" "$work" "$secs") ;;
    default) out=$(trun -o "$f" -- "$bin" $pre "$threads" "$cos" "$work" "$secs") ;;
    flight) out=$(trun --flight 64M --dump-on exit -o "$f" -- "$bin" $pre "$threads" "$cos" "$work" "$secs") ;;
    flightpack) out=$(trun --pack --flight 64M --dump-on exit -o "$f" -- "$bin" $pre "$threads" "$cos" "$work" "$secs") ;;
    flightrec) out=$(trun --no-pack --flight 64M --dump-on exit -o "$f" -- "$bin" $pre "$threads" "$cos" "$work" "$secs") ;;
    flightturn) out=$(trun --flight 4M --dump-on exit -o "$f" -- "$bin" $pre "$threads" "$cos" "$work" "$secs") ;;
    jsonl) f=$tmp/t.jsonl out=$(trun -o "$f" -- "$bin" $pre "$threads" "$cos" "$work" "$secs") ;;
    records) out=$(trun --no-pack -o "$f" -- "$bin" $pre "$threads" "$cos" "$work" "$secs") ;;
  esac
  traced=$(field traced "$out")
  want=1
  [ "$1" = untraced ] && want=0
  [ "$traced" = "$want" ] || { echo "bench-seedclaim: $1: the program says traced=$traced: $out" >&2; exit 1; }
  if [ "$1" = untraced ] || [ "$1" = floor ]; then
    eng=0 har=0 bytes=0 lost=0 spill=0 sched=-
  else
    end=$(endline "$f")
    eng=$(key engine_cpu_us "$end") har=$(key harvest_cpu_us "$end") lost=$(key lost "$end")
    spill=$(key spilled_bytes "$end") sched=$(key sched "$end")
    bytes=$(wc -c < "$f")
  fi
  echo "$(field per_sec "$out") $(field cpu_s "$out") $eng $har $bytes $lost" \
    "$(field dropped "$out") $spill $sched $(field switches "$out")" >> "$tmp/$1"
}
modes=${MODES:-untraced floor default flight flightrec jsonl records}
[ $shape = rr ] || modes=$(echo " $modes " | sed 's/ floor / /') # seedclaim.c's only
for m in $modes; do : > "$tmp/$m"; : > "$tmp/$m.ratio"; : > "$tmp/$m.cratio"; : > "$tmp/$m.extra"; done
i=0
while [ $i -lt "$rounds" ]; do
  i=$((i + 1))
  for m in $modes; do run $m; done
  u=$(tail -n 1 "$tmp/untraced")
  for m in $modes; do
    # In-round figures against untraced: throughput by wall time, and by CPU
    # (units per CPU-second of program + engine: what the cores deliver when
    # the program has them all, steadier than wall time on a shared machine);
    # extra CPU per unit (ns).
    echo "$u $(tail -n 1 "$tmp/$m")" | awk '{
      printf "%.4f\n", $11 / $1 >> "'"$tmp/$m.ratio"'"
      printf "%.4f\n", ($2 / $10) / (($12 + $13 / 1e6) / $20) >> "'"$tmp/$m.cratio"'"
      printf "%.2f\n", (($12 + $13 / 1e6) / $20 - $2 / $10) * 1e9 >> "'"$tmp/$m.extra"'"
    }'
  done
done
col() { awk -v c="$2" '{ print $c }' "$tmp/$1" | median; }
# most MODE COL: the largest of COL over the rounds (a loss in one round counts).
most() { awk -v c="$2" '{ print $c }' "$tmp/$1" | sort -g | tail -n 1; }
what=coroutines
[ $shape = server ] && what="requests in flight"
echo "bench-seedclaim: shape $shape, $threads threads x $cos $what, W=$work (calibrated: ~800 ns of CPU a"\
  "switch, 2 x 800 a request), $secs s a run, cores $cpus ($ncores), median of $rounds alternating"\
  "rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ratio: $units/s against untraced in the same round, by wall time and by CPU ($units per CPU-second"\
  "of program + engine). extra CPU: program + engine CPU per $unit traced minus the program's untraced"\
  "(0 when noise puts it below), and as % of all $ncores cores with the program on its cores alone (the"\
  "extra over the program's own CPU per $unit, times its share of the cores). engine, harvest: the"\
  "end record's engine_cpu_us and its harvest loop's part. lost: the end record's, dropped: the probe's,"\
  "spilled: the end record's spilled_bytes (largest over rounds). B: the trace file (under --flight the"\
  "dumped window)."
printf '| mode | %s/s | ratio wall | ratio CPU | extra CPU ns/%s | %% of cores | engine ns/%s | harvest ns/%s | B/%s | lost | dropped | spilled B |\n' \
  "$units" "$unit" "$unit" "$unit" "$unit"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
# % of all cores: the extra CPU against the program's own CPU per unit
# untraced, on the cores the program keeps busy (one a thread): what the
# tracer adds when the program has its cores to itself, whatever else loads
# a shared machine (the seed's 8 cores: the same fraction).
ucpu=$(awk '{ print $2 * 1e9 / $10 }' "$tmp/untraced" | median)
busy=$((threads < ncores ? threads : ncores))
for m in $modes; do
  rate=$(col $m 1) ratio=$(median < "$tmp/$m.ratio") cratio=$(median < "$tmp/$m.cratio")
  extra=$(median < "$tmp/$m.extra" | awk '{ printf "%.1f", $1 < 0 ? 0 : $1 }')
  # engine, harvest ns per unit and bytes per unit, run by run.
  eng=$(awk '{ print $3 * 1000 / $10 }' "$tmp/$m" | median | awk '{ printf "%.1f", $1 }')
  har=$(awk '{ print $4 * 1000 / $10 }' "$tmp/$m" | median | awk '{ printf "%.1f", $1 }')
  bpu=$(awk '{ print $5 / $10 }' "$tmp/$m" | median | awk '{ printf "%.1f", $1 }')
  pct=$(echo "$extra $ucpu $busy $ncores" | awk '{ printf "%.2f", $1 / $2 * $3 / $4 * 100 }')
  bshow=$bpu
  case $m in flight*) bshow="($bpu window)" ;; esac
  [ $m = untraced ] && bshow=-
  lost=$(most $m 6) drop=$(most $m 7) spill=$(most $m 8)
  printf '| %s | %.3f M | %.3f | %.3f | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$m" \
    "$(echo "$rate" | awk '{ print $1 / 1e6 }')" "$ratio" "$cratio" "$extra" "$pct" "$eng" "$har" \
    "$bshow" "$lost" "$drop" "$spill"
  eval "ratio_$m=$ratio cratio_$m=$cratio extra_$m=$extra pct_$m=$pct eng_$m=$eng bpu_$m=$bpu"
  eval "lost_$m=$lost drop_$m=$drop spill_$m=$spill"
done
ran() { case " $modes " in *" $1 "*) return 0 ;; esac; return 1; } # mode $1 was run
if [ $shape != server ] && ran default; then
  awk -v e="$extra_default" -v g="$eng_default" 'BEGIN {
    printf "on the seed'"'"'s 8 cores at 10 M switches/s, from the default row: the tracer would take %.2f", e / 100
    printf " cores = %.1f %% of 8 cores (target <= 2 %%); its engine %.2f of one core (its harvest loop is", e / 8, g / 100
    printf " one thread: it keeps up only below 1)\n" }'
fi

# verdict FIGURE TARGET MEASURED OK: one line, "met" when OK is 1.
verdict() {
  v="not met"
  [ "$4" = 1 ] && v=met
  echo "verdict: $shape $1: target $2, measured $3: $v"
}
ok() { awk "BEGIN { print ($1) ? 1 : 0 }"; }
engine_target=5
[ $shape = random ] && engine_target=10
if [ $shape = server ]; then
  verdict "extra CPU (default)" "<= 2 % of all cores" "$pct_default %" "$(ok "$pct_default <= 2")"
  bpe=$(echo "$bpu_default" | awk '{ printf "%.1f", $1 / 7 }') # 7 events a request
  verdict "trace size (default)" "<= 4 B/event" "$bpe B/event" "$(ok "$bpe <= 4")"
else
  for m in default flight; do
    ran $m || continue
    # Throughput: the lower of the two ratios (on a shared machine either
    # can be flattered by the load of the moment).
    eval "r=\$ratio_$m c=\$cratio_$m p=\$pct_$m"
    low=$(echo "$r $c" | awk '{ print $1 < $2 ? $1 : $2 }')
    verdict "throughput ($m)" ">= 0.985 of untraced (the lower of wall, CPU)" "$low" "$(ok "$low >= 0.985")"
    verdict "extra CPU ($m)" "<= 2 % of all cores" "$p %" "$(ok "$p <= 2")"
    if ran floor; then
      # Against the floor of the same rounds: the tracer's cost beyond its clock read.
      eval "f=\$ratio_floor fc=\$cratio_floor"
      of=$(echo "$r $c $f $fc" | awk '{ a = $1 / $3; b = $2 / $4; printf "%.4f", a < b ? a : b }')
      verdict "throughput ($m) of the floor (one clock read a switch, in the same rounds: $f / $fc)" \
        ">= 0.997 (0.985 / 0.988)" "$of" "$(ok "$of >= 0.997")"
    fi
  done
  if ran default; then # MODES without it: its verdicts left out
    verdict "trace size (default)" "<= 4 B/switch" "$bpu_default B/switch" "$(ok "$bpu_default <= 4")"
    verdict "engine CPU (default)" "<= $engine_target ns/switch" "$eng_default ns/switch" "$(ok "$eng_default <= $engine_target")"
  fi
fi
for m in default flight jsonl; do
  ran $m || continue
  eval "l=\$lost_$m d=\$drop_$m s=\$spill_$m"
  verdict "lost, dropped, spilled ($m)" "0, 0, 0" "$l, $d, $s B" "$(ok "$l + $d + $s == 0")"
done

# The back-to-back burst: one thread, 100 coroutines, N switches, no work
# (bench-backtoback.sh, in the modes where only the loss counts).
[ "$burst" -gt 0 ] || exit 0
sh "$root/bench/bench-backtoback.sh" -n "$burst" -R "$rounds"
