#!/bin/sh
# run.sh - run test programs and scripts, one line per test, then the total.
# Usage: O=build/x SAN=asan|tsan| sh tests/run.sh TEST...
# A test passes by exiting 0, is skipped by exiting 77, fails otherwise. Each
# gets CT_BUILD (the build dir), COROTRACER (the binary) and CT_SAN.
# Under CI (CI=true) a skip counts as a failure: CI installs everything the
# tests need, so a skipped acceptance test there is a missing check.
: "${O:?O must name the build directory}"
export CT_BUILD="$O" COROTRACER="$O/bin/corotracer" CT_SAN="${SAN:-}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"
pass=0 fail=0 skip=0 failed=""
logdir="$O/test-logs"; mkdir -p "$logdir"
for t in "$@"; do
  name=$(basename "$t")
  case "$t" in
    *.sh) cmd="sh $t" ;;
    *) cmd="$t" ;;
  esac
  start=$(date +%s)
  timeout -k 10 900 $cmd >"$logdir/$name.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  if [ $rc -eq 0 ]; then pass=$((pass+1)); echo "PASS $name (${secs}s)"
  elif [ $rc -eq 77 ] && [ "${CI:-}" != true ]; then
    skip=$((skip+1)); echo "SKIP $name: $(tail -n 1 "$logdir/$name.log")"
  else fail=$((fail+1)); failed="$failed $name"; echo "FAIL $name (exit $rc, ${secs}s); last lines of $logdir/$name.log:"
    tail -n 30 "$logdir/$name.log" | sed 's/^/    /'
  fi
done
echo "${O}: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
