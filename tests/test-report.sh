#!/bin/sh
# test-report.sh - `corotracer report` findings on synthetic traces, each with
# what must be found and what must not (tests/data/report/*.txt via gen.awk).
set -u
: "${COROTRACER:?run through tests/run.sh}"
data=$(dirname "$0")/data/report
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-report.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run NAME [options...]: trace from NAME.txt, report, JSON in $tmp/NAME.json.
run() {
  name=$1; shift
  awk -f "$data/gen.awk" "$data/$name.txt" > "$tmp/$name.jsonl" || { fail "$name: gen.awk"; return; }
  "$COROTRACER" report "$tmp/$name.jsonl" --json "$tmp/$name.json" "$@" > "$tmp/$name.md" 2> "$tmp/$name.err"
  rc=$?
  [ $rc -eq 0 ] || fail "$name: exit $rc: $(cat "$tmp/$name.err")"
  grep -q '^# corotracer report' "$tmp/$name.md" || fail "$name: no Markdown report"
}
# count NAME KIND SEVERITY: the count of that finding, empty when absent.
count() {
  grep -o "\"kind\":\"$2\",\"severity\":\"$3\",\"count\":[0-9]*" "$tmp/$1.json" | sed 's/.*://' | head -n 1
}
expect() { # expect NAME KIND SEVERITY N
  got=$(count "$1" "$2" "$3")
  [ "$got" = "$4" ] || fail "$1: $2/$3 count '${got}', want '$4'"
}
absent() { # absent NAME KIND: no finding of that kind at all
  ! grep -q "\"kind\":\"$2\"" "$tmp/$1.json" || fail "$1: unexpected $2 finding"
}
has() { # has NAME FILE-SUFFIX TEXT
  grep -q -- "$3" "$tmp/$1.$2" || fail "$1: '$3' not in the .$2 output"
}

run lost-wakeup
expect lost-wakeup lost_wakeup error 1
has lost-wakeup json '"probe_id":1,"label":"conn","wait":"fd","obj":12'
has lost-wakeup json 'fd 12 was reused by coroutine 3 after it parked: closed under it'
has lost-wakeup json 'the program ran on for 4.0 s'
has lost-wakeup json '1 of them wait on an fd number that another coroutine parked on later'
has lost-wakeup md 'suspended forever: nobody woke them'
expect lost-wakeup leak warning 1
for k in wake_before_suspend resume_running resume_without_wake after_destroy deadlock lost_events; do
  absent lost-wakeup $k
done

run race
expect race wake_before_suspend error 1
has race json '"probe_id":1,"label":"conn","wait":"ptr","obj":"0x0000000000009000"'
has race json 'woken at +10.0 ms, 1.0 ms before it parked'
absent race lost_wakeup
absent race resume_without_wake

run killed
expect killed lost_wakeup info 1
[ -z "$(count killed lost_wakeup error)" ] || fail "killed: a lost_wakeup error for a coroutine caught by the exit"
has killed json 'killed by SIGTERM while it waited'
absent killed leak
has killed json '"alive_at_end":1'
# The same trace cut short (no end line): still caught by the exit, no leaks.
grep -v '"type":"end"' "$tmp/killed.jsonl" > "$tmp/cut.jsonl"
"$COROTRACER" report "$tmp/cut.jsonl" --json "$tmp/cut.json" > "$tmp/cut.md" || fail "cut: exit $?"
expect cut lost_wakeup info 1
absent cut leak
has cut md 'no end line'

run violations
expect violations resume_running error 1
has violations json '"probe_id":1,"label":"conn","evidence":"line [0-9]*: resumed on tid 101 at +2.0 ms while running on tid 100 since +1.0 ms'
expect violations resume_without_wake error 1
has violations json '"probe_id":2,"label":"conn","evidence":"line [0-9]*: resumed on tid 100 at +6.0 ms'
! grep -q '"probe_id":3,' "$tmp/violations.json" || fail "violations: coroutine 3 (no wakes in its trace) flagged"
! grep -q '"probe_id":5,' "$tmp/violations.json" || fail "violations: coroutine 5 (runnable at creation) flagged"
! grep -q '"probe_id":6,' "$tmp/violations.json" || fail "violations: coroutine 6 (resumes across lost events) flagged"
expect violations after_destroy error 1
has violations json '"probe_id":4,"label":"conn","evidence":"line [0-9]*: wake on tid 100 at +3.0 ms after its destroy at +2.0 ms'
absent violations leak
absent violations lost_wakeup

run blocker
expect blocker blocker warning 1
has blocker json '"run_ns":{"mean":300000000,"max":300000000}'
has blocker json 'ran 300.0 ms without suspending on tid 100'
run blocker --blocker-ms 400
absent blocker blocker
run blocker --blocker-ms 20
expect blocker blocker warning 2

run deadlock
expect deadlock deadlock error 2
has deadlock json '"probe_id":1,"label":"conn","wait":"ptr","obj":"0x0000000000001000","site_index":[0-9],"suspended_ns":[0-9]*,"waits_for":2'
has deadlock json '"probe_id":2,"label":"conn","wait":"ptr","obj":"0x0000000000002000","site_index":[0-9],"suspended_ns":[0-9]*,"waits_for":1'
has deadlock json 'woken only by coroutine 2 (1 time), which is stuck too'
expect deadlock lost_wakeup error 1
grep '"probe_id":3,' "$tmp/deadlock.json" | grep -q 'parked on ptr 0x0000000000003000' || fail "deadlock: 3 not a lost wakeup"

run lost-events
expect lost-events lost_events warning 2
expect lost-events lost_wakeup error 1
has lost-events json 'less certain: 2 of its events were lost'
has lost-events json '"lost_events":2'

run v1
expect v1 lost_wakeup warning 1
has v1 json 'a v1 trace (no kind, no wakes)'
has v1 json '"malformed":2,"torn":1,"malformed_lines":\[9,11\]'
absent v1 resume_running
grep '"probe_id":10,' "$tmp/v1.json" | grep -q 'the trace went on for 3.0 s' || fail "v1: coroutine 10's evidence"
! grep -q '"probe_id":11,' "$tmp/v1.json" || fail "v1: coroutine 11 (parked at the very end) flagged"

# --fail-on: exit 1 at or above the severity, 0 below it.
"$COROTRACER" report "$tmp/race.jsonl" --fail-on error > /dev/null; rc=$?
[ $rc -eq 1 ] || fail "--fail-on error with an error finding: exit $rc"
"$COROTRACER" report "$tmp/blocker.jsonl" --fail-on error > /dev/null; rc=$?
[ $rc -eq 0 ] || fail "--fail-on error with only warnings: exit $rc"
"$COROTRACER" report "$tmp/blocker.jsonl" --fail-on warning > /dev/null; rc=$?
[ $rc -eq 1 ] || fail "--fail-on warning with a warning: exit $rc"
"$COROTRACER" report "$tmp/killed.jsonl" --fail-on warning > /dev/null; rc=$?
[ $rc -eq 0 ] || fail "--fail-on warning with info only: exit $rc"

[ $fails -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "test-report: ok"
