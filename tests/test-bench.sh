#!/bin/sh
# test-bench.sh - `make bench`'s runner (bench/run.sh): every benchmark in bench/
# has its name there, every command names a program or script that exists in
# this build, and two quick ones run to the end.
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
check_done
echo "test-bench: ok"
