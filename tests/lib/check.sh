# check.sh - the one `fail` and `skip` of the shell tests (the C tests have
# tests/lib/check.h). Source it: . "$(dirname "$0")/lib/check.sh"
#   fail MSG   print "FAIL: MSG" on stderr and end the test (exit 1); with
#              CHECK_KEEP_GOING=1 set before sourcing, count the failure in
#              $fails and go on instead (end with check_done)
#   skip MSG   print MSG and end the test as skipped (exit 77, tests/run.sh)
#   check_done exit 1 if any failure was counted
# and sets untimed: report options that put the findings judged by the clock
# (a run that blocks its thread, a coroutine starved) out of reach, for a test
# whose program is about neither: on a loaded machine a thread descheduled for
# 100 ms would read as one, and its "no finding" would fail by chance.
fails=0
fail() {
  echo "FAIL: $*" >&2
  fails=$((fails + 1))
  [ "${CHECK_KEEP_GOING:-0}" = 1 ] || exit 1
}
skip() { echo "$*"; exit 77; }
untimed="--blocker-ms 3600000 --runnable-ms 3600000"
check_done() {
  [ "$fails" -eq 0 ] || { echo "$fails failures" >&2; exit 1; }
}
