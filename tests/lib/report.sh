# report.sh - shell helpers for the report's tests (tests/test-report*.sh).
# Source it from a test run by tests/run.sh; it sets
#   data   tests/data/report (scenarios, gen.awk)
#   tmp    a fresh temp dir, removed on exit
# and defines gen and finish; fail (check.sh) counts a failure and goes on
# (`fail MSG; check_done` for one the test cannot go on after).
set -u
: "${CT_BUILD:?run through tests/run.sh}" "${COROTRACER:?run through tests/run.sh}"
data=$(dirname "$0")/data/report
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-report.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
CHECK_KEEP_GOING=1 # fail counts and goes on: finish ends the test
. "$(dirname "$0")/lib/check.sh"
# gen NAME: the trace of scenario $data/NAME.txt in $tmp/NAME.jsonl.
gen() { awk -f "$data/gen.awk" "$data/$1.txt" > "$tmp/$1.jsonl" || fail "$1: gen.awk"; }
# finish NAME: exit 1 after any failure, else say NAME is ok.
finish() {
  check_done
  echo "$1: ok"
}
