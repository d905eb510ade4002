#!/bin/sh
# bench-backtoback.sh - can the engine keep up with one writer at full speed (issue #32)?
# One thread switching among 100 coroutines back to back (no work between switches:
# bench-coswitch -n N 1 100 0), N switches, under `corotracer run` in four modes, RUNS rounds
# alternating the modes (a load that comes and goes hits all alike):
#   default          the full binary trace (the harvest loop SCHED_FIFO when granted)
#   flight           --flight 64M --dump-on exit (bounded memory: no spill file)
#   flight-records   the same with --no-pack (switch records; packs are the default under
#                    --flight since 2026-11-29: docs/ROUTE1.md; flight-pack: --pack, the same as flight)
#   no-realtime      --no-realtime (the harvest loop SCHED_OTHER, as in a container
#                    without CAP_SYS_NICE)
#   flight-nort      both
# Per mode, medians over the rounds: events lost (the end record's lost, against its events,
# % of what the program wrote), the engine's CPU per switch (engine_cpu_us, both threads,
# start-up included) and its harvest loop's (harvest_cpu_us); and where the engine was when
# it lost: wake_late_max_us (the system kept the loop away past its nap), format_stalls (the
# loop waited for the formatter: under --flight the capture is bounded), spilled bytes (the
# capture's file, default mode only). The most lost in any round gives the verdict (target:
# 0 in every round). Note the load average printed: a 2-core machine shared by others is
# what this measures.
#
# Usage: O=build/x sh bench/bench-backtoback.sh [-n switches] [-R rounds]
#        (MODES="default flight" runs those modes only)
# Defaults: -n 5000000 (the issue's count) -R 5.
set -eu
O=${O:-build/default}
n=5000000 rounds=5
while getopts n:R: opt; do
  case $opt in
    n) n=$OPTARG ;;
    R) rounds=$OPTARG ;;
    *) echo "usage: O=build/x sh bench/bench-backtoback.sh [-n switches] [-R rounds]" >&2; exit 2 ;;
  esac
done
for v in "$n" "$rounds"; do
  case $v in
    '' | *[!0-9]* | 0) echo "bench-backtoback: -n and -R take a whole number above 0, not '$v'" >&2; exit 2 ;;
  esac
done
ct=$O/bin/corotracer sw=$O/bench/bench-coswitch
[ -x "$ct" ] && [ -x "$sw" ] || { echo "bench-backtoback: build first: make O=$O" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-backtoback.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
modes=${MODES:-default flight flight-records no-realtime flight-nort}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "-") }'; }
# num KEY LINE: KEY's numeric value in a JSON line.
num() { echo "$2" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for m in $modes; do : > "$tmp/$m"; done
i=0
while [ $i -lt "$rounds" ]; do
  i=$((i + 1))
  for m in $modes; do
    case $m in
      default) set -- ;;
      flight) set -- --flight 64M --dump-on exit ;;
      flight-pack) set -- --pack --flight 64M --dump-on exit ;;
      flight-records) set -- --no-pack --flight 64M --dump-on exit ;;
      no-realtime) set -- --no-realtime ;;
      flight-nort) set -- --flight 64M --dump-on exit --no-realtime ;;
    esac
    rm -f "$tmp/t.ctrace" "$tmp/t.jsonl"
    "$ct" run --quiet "$@" -o "$tmp/t.ctrace" -- "$sw" -n "$n" 1 100 0 > /dev/null 2> "$tmp/err" || {
      cat "$tmp/err" >&2
      echo "bench-backtoback: $m: corotracer run failed" >&2
      exit 1
    }
    # The end record (under --flight the dump's, the window record after it).
    "$ct" export jsonl "$tmp/t.ctrace" -q -o "$tmp/t.jsonl"
    end=$(grep '^{"type":"end"' "$tmp/t.jsonl" | tail -n 1)
    [ -n "$end" ] || { echo "bench-backtoback: $m: no end record" >&2; exit 1; }
    # lost events cpu_us harvest_us late_us stalls spilled
    echo "$(num lost "$end") $(num events "$end") $(num engine_cpu_us "$end")" \
      "$(num harvest_cpu_us "$end") $(num wake_late_max_us "$end") $(num format_stalls "$end")" \
      "$(num spilled_bytes "$end")" >> "$tmp/$m"
  done
done
# med MODE AWK-EXPR: the median over rounds of an expression of the columns.
med() { awk "{ print $2 }" "$tmp/$1" | median; }
echo "bench-backtoback: 1 thread, 100 coroutines, $n switches back to back (no work), median of"\
  "$rounds alternating rounds; load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "lost: % of the events the program wrote (3 a switch), median and largest; engine, harvest:"\
  "CPU ns a switch (both engine threads, and the harvest loop alone); late: wake_late_max_us;"\
  "stalls: format_stalls; spilled: MB to the capture's file"
echo "| mode | lost %, median (largest) | engine ns/switch | harvest ns/switch | late µs | stalls | spilled MB |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for m in $modes; do
  printf '| %s | %.2f (%.2f) | %.1f | %.1f | %s | %s | %.1f |\n' "$m" \
    "$(med $m '100 * $1 / $2')" "$(awk '{ print 100 * $1 / $2 }' "$tmp/$m" | sort -g | tail -n 1)" \
    "$(med $m "\$3 * 1000 / $n")" "$(med $m "\$4 * 1000 / $n")" "$(med $m '$5')" "$(med $m '$6')" \
    "$(med $m '$7 / 1e6')"
done
for m in $modes; do
  most=$(awk '{ print $1 }' "$tmp/$m" | sort -g | tail -n 1)
  v="not met"
  [ "$most" = 0 ] && v=met
  echo "verdict: back-to-back lost ($m): target 0 in every round, measured $most at most: $v"
done
