#!/bin/sh
# test-bench.sh - `make bench`'s runner (bench/run.sh): every benchmark in bench/
# has its name there, every command names a program or script that exists in
# this build, two quick ones run to the end and the run ends with the verdicts;
# the seeds' benchmark (bench-seedclaim.sh) runs one short round of each shape
# (the seeds' own, rr, where ../shared/bench/seedclaim.c is beside the clone)
# and prints its table and verdicts, and says in one line when the seeds'
# program is absent. No figure is asserted: the machine may be loaded.
CHECK_KEEP_GOING=1
. "$(dirname "$0")/lib/check.sh"
set -u
B=${CT_BUILD:?run me through tests/run.sh}
list=$(O=$B sh bench/run.sh --list) || { fail "bench/run.sh --list: exit $?"; check_done; }
for f in bench/bench-*.c bench/bench-*.cpp bench/bench-*.sh; do
  n=$(basename "$f")
  n=${n#bench-}
  n=${n%.*}
  [ "$n" = report-gen ] && continue # the generator the report and html benchmarks run
  echo "$list" | grep -q "^$n: " || fail "$f: no name '$n' in bench/run.sh"
done
for w in $(echo "$list" | sed 's/^[^:]*: //'); do
  case $w in
    "$B"/bench/* | bench/*.sh) [ -e "$w" ] || fail "bench/run.sh runs $w, which does not exist" ;;
  esac
done
out=$(O=$B sh bench/run.sh writer clock 2>&1) || fail "bench/run.sh writer clock: $out"
echo "$out" | grep -q '^event line, by hand: [0-9]* ns' || fail "bench-writer printed no figure: $out"
echo "$out" | grep -q '^| < 1 ms | [0-9]' || fail "bench-clock printed no figure: $out"
echo "$out" | tail -n 2 | grep -q '^== verdicts' || fail "bench/run.sh did not end with the verdicts: $out"

# One short round of each shape (W given: no calibration). The seeds' program
# (rr) lives beside the repository, not in it: a clone elsewhere has none.
for shape in rr random server; do
  out=$(O=$B sh bench/bench-seedclaim.sh -S $shape -C 20 -W 50 -R 1 -s 0.2 -B 20000 2>&1) || {
    case $shape:$out in
      "rr:bench-seedclaim: "*": no such file (the seeds' benchmark"*)
        echo "test-bench: no ../shared/bench/seedclaim.c beside this clone: the rr shape not run" ;;
      *) fail "bench-seedclaim.sh -S $shape: $out" ;;
    esac
    continue
  }
  for m in untraced default flight jsonl; do
    echo "$out" | grep -q "^| $m | [0-9.]* M | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | " ||
      fail "bench-seedclaim.sh -S $shape: no row for $m: $out"
  done
  echo "$out" | grep -q "^verdict: $shape extra CPU (default): target <= 2 % of all cores, measured [0-9.]* %: \(met\|not met\)\$" ||
    fail "bench-seedclaim.sh -S $shape: no verdict on the extra CPU: $out"
  # -B: bench-backtoback.sh's table and verdicts, the same burst whatever the shape.
  for m in default flight no-realtime flight-nort; do
    echo "$out" | grep -q "^| $m | [0-9.]* ([0-9.]*) | [0-9.]* | [0-9.]* | " ||
      fail "bench-seedclaim.sh -S $shape -B: no back-to-back row for $m: $out"
  done
  echo "$out" | grep -q "^verdict: back-to-back lost (flight-nort): target 0 in every round" ||
    fail "bench-seedclaim.sh -S $shape: no back-to-back verdict: $out"
done
out=$(O=$B SEEDCLAIM=/nonexistent/seedclaim.c sh bench/bench-seedclaim.sh 2>&1) && fail "bench-seedclaim.sh without the seeds' program: exit 0"
[ "$out" = "bench-seedclaim: /nonexistent/seedclaim.c: no such file (the seeds' benchmark: ../shared/bench/seedclaim.c beside the repository, or SEEDCLAIM=FILE)" ] ||
  fail "bench-seedclaim.sh without the seeds' program: $out"
check_done
echo "test-bench: ok"
