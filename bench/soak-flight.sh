#!/bin/sh
# soak-flight.sh - the flight recorder over time (issue #34 item 13): the demo
# server under redis-benchmark in a loop, traced by `run -n 4096 --flight 64M
# --dump-on lost_wakeup`, a SIGUSR1 dump every minute. Every 10 s it records
# the engine's and the server's RSS and CPU (% of a core over the last 10 s)
# and the machine's load average;
# at the end each dump's size, whether `report` reads it, and the run's
# losses (the engine's summary line), then a PNG of RSS and CPU (gnuplot).
#
#   O=build/default [MINUTES=30] [OUT=soak-out] [DUMP_ON=lost_wakeup] [FLIGHT=64M]
#     sh bench/soak-flight.sh
#
# DUMP_ON= (empty) runs without the live findings: the engine's RSS then
# without the watch's state (what grows with the run, docs/FLIGHT.md).
#
# Prints the RSS at minutes 1, 5 and the end, and the growth from minute 5
# (or the middle, for a run under 10 minutes) to the end: of the RSS, of the
# RSS less the shared memory (the rings the program claimed and wrote, within
# --rings x --ring-kib: docs/FLIGHT.md "Over time"), of each part. Not a test: the
# figures go to docs/BENCHMARKS.md. Needs redis-benchmark (redis-tools) and
# gnuplot (gnuplot-nox), as scripts/install-deps.sh installs. `make bench
# BENCH=soak-flight` runs it (by name only: not in BENCH=all).
set -u
: "${O:?O must name the build directory}"
MINUTES=${MINUTES:-30}
OUT=${OUT:-soak-out}
DUMP_ON=${DUMP_ON-lost_wakeup}
FLIGHT=${FLIGHT:-64M} # a smaller window fills sooner: a short run's warm-up
CT=$O/bin/corotracer
SRV=$O/examples/demo/resp_server
for t in redis-benchmark gnuplot; do
  command -v $t >/dev/null 2>&1 || { echo "soak-flight: $t not installed" >&2; exit 2; }
done
[ -x "$CT" ] && [ -x "$SRV" ] || { echo "soak-flight: build $CT and $SRV first" >&2; exit 2; }
rm -rf "$OUT" && mkdir -p "$OUT" || exit 2
eng="" load=""
cleanup() {
  [ -n "$load" ] && kill "$load" 2>/dev/null
  [ -n "$eng" ] && kill -TERM "$eng" 2>/dev/null
}
trap cleanup EXIT INT TERM

"$CT" run -n 4096 --flight "$FLIGHT" ${DUMP_ON:+--dump-on "$DUMP_ON"} -o "$OUT/dump.ctrace" -- \
  "$SRV" --port 0 --port-file "$OUT/port" >"$OUT/server.log" 2>"$OUT/engine.log" &
eng=$!
i=0
while [ ! -s "$OUT/port" ]; do
  i=$((i + 1))
  [ $i -lt 100 ] && kill -0 $eng 2>/dev/null || { cat "$OUT/engine.log" >&2; exit 1; }
  sleep 0.1
done
port=$(cat "$OUT/port")
srv=$(pgrep -P $eng | head -n 1)
# The load: redis-benchmark again and again (new connections each round).
(while :; do
  redis-benchmark -h 127.0.0.1 -p "$port" -c 50 -n 200000 -q -t ping,set,get >/dev/null 2>&1 ||
    sleep 1
done) &
load=$!

# rss PID [FIELD]: VmRSS (or RssAnon, RssShmem: the engine's own memory and
# the shared memory it touched) in KiB; ticks PID: utime + stime in clock ticks.
rss() { awk -v k="${2:-VmRSS}:" '$1 == k {print $2}' /proc/"$1"/status 2>/dev/null || echo 0; }
ticks() { awk '{print $14 + $15}' /proc/"$1"/stat 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)
# pct T0 T1: % of a core over the 10 s between the two tick counts.
pct() { awk -v a="$1" -v b="$2" -v hz="$hz" 'BEGIN {printf "%.1f", (b - a) * 100 / hz / 10}'; }
printf 't_s\tengine_rss_kb\tengine_cpu_pct\tserver_rss_kb\tserver_cpu_pct\tengine_anon_kb\tengine_shmem_kb\tload1\n' \
  >"$OUT/samples.tsv"
e0=$(ticks $eng) s0=$(ticks "$srv") t=0 end=$((MINUTES * 60))
while [ $t -lt $end ] && kill -0 $eng 2>/dev/null; do
  sleep 10
  t=$((t + 10))
  e1=$(ticks $eng) s1=$(ticks "$srv")
  printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' $t "$(rss $eng)" "$(pct "$e0" "$e1")" "$(rss "$srv")" \
    "$(pct "$s0" "$s1")" "$(rss $eng RssAnon)" "$(rss $eng RssShmem)" "$(cut -d' ' -f1 /proc/loadavg)" \
    >>"$OUT/samples.tsv"
  e0=$e1 s0=$s1
  [ $((t % 60)) -eq 0 ] && kill -USR1 $eng
done
kill $load 2>/dev/null
wait $load 2>/dev/null
load=""
sleep 2 # the last SIGUSR1's dump
kill -TERM $eng
wait $eng
echo "engine exit status $?" >>"$OUT/engine.log"
eng=""

echo "== samples (every 10 s): $OUT/samples.tsv"
# at T COLUMN: the sample at T s (column 0: RSS less the shared memory, the engine's own).
at() { awk -v t="$1" -v c="${2:-2}" -F'\t' 'NR > 1 && $1 <= t {v = c ? $c : $2 - $7} END {print v + 0}' "$OUT/samples.tsv"; }
growth() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b - a) * 100 / a}'; }
last=$(tail -n 1 "$OUT/samples.tsv" | cut -f1)
m5=$((last >= 600 ? 300 : last / 2))
for c in 2:RSS 0:"RSS less shared memory" 6:anonymous 7:shared; do
  r1=$(at 60 ${c%:*}) r5=$(at $m5 ${c%:*}) rend=$(at "$last" ${c%:*})
  echo "engine ${c#*:}: $r1 KiB at 60 s, $r5 KiB at $m5 s, $rend KiB at $last s;" \
    "growth $m5 s -> end: $(growth "$r5" "$rend") %"
done
awk -F'\t' 'NR > 1 {e += $3; s += $5; l += $8; n++}
  END {printf "mean CPU: engine %.1f %%, server %.1f %% of a core; load average %.1f\n", e / n, s / n, l / n}' \
  "$OUT/samples.tsv"
echo "== dumps"
for f in "$OUT"/dump.ctrace*; do
  [ -e "$f" ] || continue
  if "$CT" report "$f" >"$f.md" 2>"$f.err"; then ok=readable; else ok="NOT readable: $(head -n 1 "$f.err")"; fi
  echo "$(basename "$f"): $(stat -c %s "$f") bytes, $ok, $(grep -m1 -o '[0-9]* events lost[^.]*' "$f.md")"
done
grep -E "events harvested|flight:|failed" "$OUT/engine.log"

gnuplot <<EOF
set terminal png size 900,600 noenhanced
set output "$OUT/soak-flight.png"
set multiplot layout 2,1 title "corotracer run --flight $FLIGHT ${DUMP_ON:+--dump-on $DUMP_ON}, demo server under redis-benchmark"
set xlabel "s"
set ylabel "RSS (MiB)"
plot "$OUT/samples.tsv" using 1:(\$2/1024) skip 1 with lines title "engine", \
     "" using 1:(\$6/1024) skip 1 with lines title "engine (anonymous)", \
     "" using 1:(\$7/1024) skip 1 with lines title "engine (shared memory)", \
     "" using 1:(\$4/1024) skip 1 with lines title "server"
set ylabel "CPU (% of a core)"
plot "$OUT/samples.tsv" using 1:3 skip 1 with lines title "engine", \
     "" using 1:5 skip 1 with lines title "server"
unset multiplot
EOF
echo "plot: $OUT/soak-flight.png"
