#!/bin/sh
# run.sh - run libFuzzer targets for a bounded time each, one line per target.
# Usage: sh tests/fuzz/run.sh FUZZ_O SECONDS NAME...
# Ends with the total, `fuzz: N passed, N failed`, as tests/run.sh does.
# Each target first replays its seed corpus (tests/fuzz/corpus/NAME, read
# only), then mutates for SECONDS, keeping what it learns in FUZZ_O/corpus/NAME
# (not in the repository). A crash, leak, sanitizer report or timeout fails
# the run: the input is saved as FUZZ_O/artifacts/NAME-crash-* (or leak-,
# timeout-); once the bug is fixed, copy it into tests/fuzz/corpus/NAME.
set -u
fo=$1 secs=$2
shift 2
passes=0 fails=0
for n in "$@"; do
  bin=$fo/fuzz-$n seeds=tests/fuzz/corpus/$n work=$fo/corpus/$n
  mkdir -p "$work" "$fo/artifacts" "$fo/logs"
  dict=""
  [ -f "tests/fuzz/$n.dict" ] && dict="-dict=tests/fuzz/$n.dict"
  start=$(date +%s)
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a runaway allocation.
  # shellcheck disable=SC2086 # dict is one word or none
  "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$fo/artifacts/$n-" $dict "$work" "$seeds" \
    >"$fo/logs/$n.log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$fo/logs/$n.log")
  if [ $rc -eq 0 ]; then
    passes=$((passes + 1))
    echo "PASS fuzz-$n ($(( $(date +%s) - start ))s, ${runs:-?} inputs)"
  else
    fails=$((fails + 1))
    echo "FAIL fuzz-$n (exit $rc); the input is in $fo/artifacts/; last lines of $fo/logs/$n.log:"
    tail -n 40 "$fo/logs/$n.log" | sed 's/^/    /'
  fi
done
# The summary line every leg of make check ends with (as tests/run.sh).
echo "fuzz: $passes passed, $fails failed"
[ $fails -eq 0 ]
