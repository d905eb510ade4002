#!/bin/sh
# test-report-precision.sh - issue #10: reused ids are incarnations, returned
# coroutines are not parked ones, one finding per root cause, the race through
# a yield, blockers bracketed, lost schedules, frame addresses not sites, small
# wording (tests/data/report/*.txt via gen.awk).
. "$(dirname "$0")/lib/report.sh"

run() { # run NAME: trace, report, JSON in $tmp/NAME.{jsonl,md,json}
  gen "$1"
  "$COROTRACER" report "$tmp/$1.jsonl" --json "$tmp/$1.json" > "$tmp/$1.md" 2> "$tmp/$1.err" ||
    fail "$1: exit $?: $(cat "$tmp/$1.err")"
}
count() { # count NAME KIND SEVERITY: that finding's count, empty when absent
  grep -o "\"kind\":\"$2\",\"severity\":\"$3\",\"count\":[0-9]*" "$tmp/$1.json" | sed 's/.*://' | head -n 1
}
expect() { # expect NAME KIND SEVERITY N
  got=$(count "$1" "$2" "$3")
  [ "$got" = "$4" ] || fail "$1: $2/$3 count '${got}', want '$4'"
}
absent() { ! grep -q "\"kind\":\"$2\",\"severity\"" "$tmp/$1.json" || fail "$1: unexpected $2 finding"; }
has() { grep -q -- "$3" "$tmp/$1.$2" || fail "$1: '$3' not in the .$2 output"; }
lacks() { ! grep -q -- "$3" "$tmp/$1.$2" || fail "$1: '$3' in the .$2 output"; }
# coro NAME ID TEXT: coroutine ID's entry (of any finding) holds TEXT
coro() { grep "\"probe_id\":$2," "$tmp/$1.json" | grep -q -- "$3" || fail "$1: coroutine $2 lacks '$3'"; }

# Item 2: a create after a destroy of the same id is a new coroutine.
run reuse
expect reuse after_destroy error 1
has reuse json '"probe_id":2,"label":"conn","evidence":"line [0-9]*: wake on tid 100'
lacks reuse json '"probe_id":1,[^}]*after its destroy'
expect reuse lost_wakeup error 1
coro reuse 1 '"incarnation":3'
has reuse json '"coroutines":4,'
has reuse json '"reused_ids":2,'
has reuse md '^| 1 (#3) | conn |'
has reuse md 'Reused ids.*: 2 coroutines'

# Item 3: a returned coroutine waits for nothing.
run returned
absent returned lost_wakeup
expect returned leak warning 1
coro returned 2 '"returned":true'
coro returned 2 'returned at +5.0 ms (final suspend), never destroyed'
has returned md '1 of them returned'
expect returned resume_after_return error 1
coro returned 3 'resumed on tid 101 at +8.0 ms after it returned'
has returned json '"returned":4,'

# Item 4: stuck coroutines are not repeated as leaks; the deadlock's members
# neither; counts are of coroutines.
run deadlock
absent deadlock leak
expect deadlock deadlock error 2
coro deadlock 1 'also never destroyed (not repeated as a leak)'
has deadlock json '"related":\[{"kind":"leak","count":2,"relation":"also never destroyed"}\]'
gen lost-wakeup
sed 's/"probe_id":3,"tid":101,"addr":"[^"]*","seq":[0-9]*,"is_active":false,"ts":[0-9]*,"kind":"destroy"[^}]*}//' \
  "$tmp/lost-wakeup.jsonl" | grep -v '^$' > "$tmp/mixed.jsonl"
"$COROTRACER" report "$tmp/mixed.jsonl" --json "$tmp/mixed.json" > "$tmp/mixed.md" || fail "mixed: exit $?"
expect mixed leak warning 1
coro mixed 3 'last event at'
has mixed json '"related":\[{"kind":"lost_wakeup","count":1,"relation":"also never destroyed"}\]'
has mixed md '1 more never destroyed are reported as lost_wakeup, their root cause'
lacks mixed json '"probe_id":1,[^}]*last event at'

# Item 5: the race through a yield: the early wake absorbed by the resume.
run absorbed
expect absorbed wake_before_suspend error 2
coro absorbed 1 'woken at +5.0 ms by coroutine 2 (conn) at 0x000000000000e000 (unsymbolized) while already runnable after its yield at +3.0 ms; its resume at +6.0 ms absorbed that wake; it parked on ptr 0x0000000000009000 at +7.0 ms'
coro absorbed 1 '"wake":{"from":2,"ts":1000005000000,"at_ns":5000000,"absorbed":true'
expect absorbed lost_wakeup error 2
coro absorbed 3 'never woke it'
coro absorbed 5 'never woke it'
coro absorbed 6 'woken at +37.0 ms by coroutine 2 (conn) at 0x000000000000e000 (unsymbolized) while already runnable before its first run; its resume at +38.0 ms absorbed'
lacks absorbed json '"probe_id":4,'

# Item 6: a blocker names where its run began and ended, and its label.
run blocker
coro blocker 1 '"label":"conn"'
coro blocker 1 'from 0x0000000000005000 (unsymbolized) to its suspend at 0x0000000000005000'
coro blocker 1 '"run_end":{"kind":"suspend","site":{"site":"0x0000000000005000"}}'

# Item 10: woken and never resumed.
run sched
expect sched lost_schedule error 1
coro sched 1 'woken at +20.0 ms by coroutine 2 (conn) at 0x000000000000d000 (unsymbolized), never resumed: the program ran on for 3.0 s'
expect sched lost_schedule warning 1
coro sched 3 'by a plain thread (tid 101) at 0x000000000000b000 (unsymbolized), never resumed: the program exited with code 0 200.0 ms later'
absent sched lost_wakeup
absent sched leak
has sched md 'woken and never resumed: lost from the run queue'
# Killed instead: caught by the exit, info.
sed 's/"exit":{"code":0}/"exit":{"signal":15,"name":"SIGTERM","core":false}/' "$tmp/sched.jsonl" > "$tmp/schedk.jsonl"
"$COROTRACER" report "$tmp/schedk.jsonl" --json "$tmp/schedk.json" > /dev/null || fail "schedk: exit $?"
expect schedk lost_schedule info 1
expect schedk lost_schedule error 1

# Item 7: a reference-SDK trace (no module map, a frame address per
# coroutine): the addresses are not listed or timed as sites.
"$CT_BUILD/bench/bench-report-gen" 200000 3000 ref > "$tmp/ref.jsonl" || fail "bench-report-gen ref"
"$COROTRACER" report "$tmp/ref.jsonl" --json "$tmp/ref.json" > "$tmp/ref.md" || fail "ref: exit $?"
has ref json '"sites_not_code":true'
has ref json '^"sites":\[\]}'
lacks ref md 'unsymbolized'
has ref md 'Suspend addresses are not code'
! grep -q '"site_index"' "$tmp/ref.json" || fail "ref: coroutines point at sites"
# The same with one constant site per coroutine group: code, listed.
"$CT_BUILD/bench/bench-report-gen" 200000 3000 ref-sites > "$tmp/refs.jsonl" || fail "bench-report-gen ref-sites"
"$COROTRACER" report "$tmp/refs.jsonl" --json "$tmp/refs.json" > "$tmp/refs.md" || fail "refs: exit $?"
has refs json '"sites_not_code":false'
has refs md '(unsymbolized)'

# Item 11: grammar, and the reference's unknown flags.
grep -q '[^0-9]1 threads' "$tmp/sched.md" && fail "sched: '1 threads'"
has reuse md '4 coroutines, 1 thread;'
"$COROTRACER" -frobnicate x > /dev/null 2> "$tmp/flag.err" && fail "-frobnicate: exit 0"
grep -q '^corotracer: -frobnicate: unknown flag; the reference.s flags are -n N, -cmd "CMD", -out FILE.*-deepdive.*-export FORMAT' "$tmp/flag.err" ||
  fail "-frobnicate: '$(cat "$tmp/flag.err")'"
"$COROTRACER" -in trace.jsonl > /dev/null 2> "$tmp/flag.err"; rc=$?
[ $rc -eq 2 ] && grep -q '^corotracer: -in: unknown flag' "$tmp/flag.err" || fail "-in: exit $rc, '$(cat "$tmp/flag.err")'"
[ "$(wc -l < "$tmp/flag.err")" -eq 1 ] || fail "-in: more than one line"
finish test-report-precision
