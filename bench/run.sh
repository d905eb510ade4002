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
# The quick set takes about a minute and needs only the build packages. The
# others are long (minutes each) or need the test packages (`make deps`):
# redis-benchmark, the database servers, Chromium and Node.
#
# A benchmark whose figure has a target prints one line for it, "verdict:
# FIGURE: target T, measured M: met|not met"; the run ends with those lines
# together (targets and figures: docs/BENCHMARKS.md).
: "${O:?O must name the build directory}"
B=$O/bench
QUICK="probe demo-switch rip writer format clock harvest report html seedclaim server backtoback serve"
# Run by name only (not in all): 30 minutes.
SOAK="soak-flight"
LONG="coswitch stations cpp wake active idle demo demo-engine export html-serve html-live html-lod stall fiber asio ctrace flight fsnap setup onecpu ship server-ab pack"
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
    seedclaim) [ -n "$FULL" ] && echo "env O=$O sh bench/bench-seedclaim.sh -R 5 -s 3" ||
      echo "env O=$O sh bench/bench-seedclaim.sh -R 3 -s 0.3" ;;
    backtoback) [ -n "$FULL" ] && echo "env O=$O sh bench/bench-backtoback.sh -n 5000000 -R 5" ||
      echo "env O=$O sh bench/bench-backtoback.sh -n 300000 -R 5" ;;
    server) [ -n "$FULL" ] && echo "env O=$O sh bench/bench-seedclaim.sh -S server -C 64 -R 5 -s 3" ||
      echo "env O=$O sh bench/bench-seedclaim.sh -S server -C 64 -R 3 -s 0.3" ;;
    stations) echo "env O=$O sh bench/bench-stations.sh -n 1024 -s 3 -R 3" ;;
    coswitch) echo "env O=$O sh bench/bench-seedclaim.sh -S random -C 1000 -R 5 -s 3" ;;
    cpp) echo "$B/bench-cpp" ;;
    wake) echo "$B/bench-wake 1000 2" ;;
    active) echo "sh bench/bench-active.sh $O 6 3" ;;
    idle) echo "sh bench/bench-idle.sh $O 6 3" ;;
    demo) echo "env O=$O sh bench/bench-demo.sh 7 200000" ;;
    demo-engine) echo "env O=$O RUNS=5 sh bench/bench-demo-engine.sh" ;;
    export) echo "env O=$O RUNS=3 REF_ROWS=2000 sh bench/bench-export.sh 1000000" ;;
    serve) [ -n "$FULL" ] && echo "env O=$O RUNS=3 sh bench/bench-serve.sh 10000000 100000000" ||
      echo "env O=$O RUNS=3 ROUNDS=2 sh bench/bench-serve.sh 2000000" ;;
    html-serve) echo "env O=$O RUNS=3 sh bench/bench-html-serve.sh" ;;
    html-live) echo "env O=$O RUNS=3 REQUESTS=20000 sh bench/bench-html-live.sh" ;;
    html-lod) echo "env O=$O RUNS=3 sh bench/bench-html-lod.sh 10000000" ;;
    stall) echo "env O=$O sh bench/bench-stall.sh 3 2000000 100" ;;
    fiber) echo "$B/bench-fiber -r 9 -n 500000" ;;
    asio) echo "env O=$O sh bench/bench-asio.sh 15 50000" ;;
    ctrace) echo "env O=$O RUNS=5 sh bench/bench-ctrace.sh" ;;
    flight) echo "env O=$O RUNS=5 sh bench/bench-flight.sh" ;;
    fsnap) echo "env O=$O RUNS=5 sh bench/bench-fsnap.sh" ;;
    setup) echo "env O=$O RUNS=9 sh bench/bench-setup.sh" ;;
    onecpu) echo "env O=$O RUNS=5 sh bench/bench-onecpu.sh" ;;
    server-ab) echo "env O=$O RUNS=7 sh bench/bench-server-ab.sh" ;;
    pack) echo "env O=$O sh bench/bench-pack.sh -R 5" ;;
    soak-flight) echo "env O=$O MINUTES=30 sh bench/soak-flight.sh" ;;
    ship) echo "env O=$O RUNS=9 sh bench/bench-ship.sh" ;;
    *) return 1 ;;
  esac
}
# With BENCH=all the seeds' claim runs at its full counts (issue #32).
FULL=""
if [ "${1:-}" = --list ]; then
  for n in $QUICK $LONG $SOAK; do echo "$n: $(cmd "$n")"; done
  exit 0
fi
[ $# -gt 0 ] || set -- $QUICK
[ "$*" = all ] && FULL=1 && set -- $QUICK $LONG
for n in "$@"; do
  cmd "$n" > /dev/null || {
    echo "bench/run.sh: no benchmark named $n (quick: $QUICK; long: $LONG; by name: $SOAK; or all)" >&2
    exit 2
  }
done
out=$(mktemp "${TMPDIR:-/tmp}/bench-run.XXXXXX")
trap 'rm -f "$out" "$out.failed"' EXIT
for n in "$@"; do
  c=$(cmd "$n")
  echo "== $n: $c"
  { $c || echo " $n" >> "$out.failed"; } | tee -a "$out"
done
echo "== verdicts (target against measured; docs/BENCHMARKS.md)"
grep '^verdict: ' "$out" | sed 's/^verdict: //' || echo "(none of these benchmarks has a target)"
[ ! -s "$out.failed" ] || { echo "bench/run.sh: failed:$(tr -d '\n' < "$out.failed")" >&2; exit 1; }
