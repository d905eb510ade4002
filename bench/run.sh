#!/bin/sh
# run.sh - `make bench`: run benchmarks by name, each printing its figures
# (what they mean, and the latest: docs/BENCHMARKS.md).
#
#   O=build/x sh bench/run.sh [NAME...]   no NAME: the quick set; all: every one
#   O=build/x sh bench/run.sh --list      each name and its command, quick ones first
#
# A name is its benchmark's file name without bench- and the extension
# (bench/bench-report.sh: report); bench-report-gen is the generator the
# report and html benchmarks run.
#
# The quick set takes about half a minute and needs only the build packages. The
# others are long (minutes each) or need the test packages (`make deps`):
# redis-benchmark, the database servers, Chromium and Node.
: "${O:?O must name the build directory}"
B=$O/bench
QUICK="probe demo-switch rip writer format clock harvest report html"
LONG="cpp wake active idle demo demo-engine export html-serve html-live stall fiber asio ctrace flight setup onecpu ship"
# cmd NAME: the command line of the benchmark NAME (the quick ones with small
# counts; the figures of docs/BENCHMARKS.md used the counts given there).
cmd() {
  case $1 in
    probe) echo "$B/bench-probe 5 1000000" ;;
    demo-switch) echo "$B/bench-demo-switch --compare 5 1000000" ;;
    rip) echo "$B/bench-rip" ;;
    writer) echo "$B/bench-writer" ;;
    format) echo "$B/bench-format -r 3 -n 3000000" ;;
    clock) echo "$B/bench-clock 1" ;;
    harvest) echo "$B/bench-harvest $O/bin/corotracer 1" ;;
    report) echo "env O=$O RUNS=3 sh bench/bench-report.sh 1000000" ;;
    html) echo "env O=$O RUNS=3 sh bench/bench-html.sh 100000" ;;
    cpp) echo "$B/bench-cpp" ;;
    wake) echo "$B/bench-wake 1000 2" ;;
    active) echo "sh bench/bench-active.sh $O 6 3" ;;
    idle) echo "sh bench/bench-idle.sh $O 6 3" ;;
    demo) echo "env O=$O sh bench/bench-demo.sh 7 200000" ;;
    demo-engine) echo "env O=$O RUNS=5 sh bench/bench-demo-engine.sh" ;;
    export) echo "env O=$O RUNS=3 REF_ROWS=2000 sh bench/bench-export.sh 1000000" ;;
    html-serve) echo "env O=$O RUNS=3 sh bench/bench-html-serve.sh" ;;
    html-live) echo "env O=$O RUNS=3 REQUESTS=20000 sh bench/bench-html-live.sh" ;;
    stall) echo "env O=$O sh bench/bench-stall.sh 3 2000000 100" ;;
    fiber) echo "$B/bench-fiber -r 9 -n 500000" ;;
    asio) echo "env O=$O sh bench/bench-asio.sh 15 50000" ;;
    ctrace) echo "env O=$O RUNS=5 sh bench/bench-ctrace.sh" ;;
    flight) echo "env O=$O RUNS=5 sh bench/bench-flight.sh" ;;
    setup) echo "env O=$O RUNS=9 sh bench/bench-setup.sh" ;;
    onecpu) echo "env O=$O RUNS=5 sh bench/bench-onecpu.sh" ;;
    ship) echo "env O=$O RUNS=9 sh bench/bench-ship.sh" ;;
    *) return 1 ;;
  esac
}
if [ "${1:-}" = --list ]; then
  for n in $QUICK $LONG; do echo "$n: $(cmd "$n")"; done
  exit 0
fi
[ $# -gt 0 ] || set -- $QUICK
[ "$*" = all ] && set -- $QUICK $LONG
for n in "$@"; do
  cmd "$n" > /dev/null || {
    echo "bench/run.sh: no benchmark named $n (quick: $QUICK; long: $LONG; or all)" >&2
    exit 2
  }
done
failed=""
for n in "$@"; do
  c=$(cmd "$n")
  echo "== $n: $c"
  $c || failed="$failed $n"
done
[ -z "$failed" ] || { echo "bench/run.sh: failed:$failed" >&2; exit 1; }
