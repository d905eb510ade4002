#!/bin/sh
# test-report-sched.sh - the scheduling findings on programs traced by the
# engine, each beside its correct twin (tests/lib/sched-story.c in C,
# tests/lib/cpp-dwait.cpp in C++ with PromiseMixin): starvation under an
# unfair run queue but not under a fair, overloaded one; a waiter destroyed at
# shutdown while still waiting, never woken, but not the likely idle accept
# loop, the read cancelled by its timeout, or the twin's woken waiter.
# --lossless: every count below is exact, also on a loaded machine.
. "$(dirname "$0")/lib/report.sh"
story=$CT_BUILD/tests/lib/sched-story
cpp=$CT_BUILD/tests/lib/cpp-dwait
for p in "$story" "$cpp"; do
  [ -x "$p" ] || { CHECK_KEEP_GOING=0; fail "$p not built"; }
done

# trace NAME PROGRAM ARGS...: traced into $tmp/NAME.jsonl, reported into
# $tmp/NAME.md and $tmp/NAME.json. No blocker findings: a run stretched past
# 100 ms by a loaded machine is one (seen once at load 7), and none of these
# programs is about them.
noblock="--blocker-ms 3600000"
trace() {
  name=$1; shift
  "$COROTRACER" run --quiet --lossless -n 512 -o "$tmp/$name.jsonl" -- "$@" > "$tmp/$name.out" 2>&1 ||
    fail "$name: corotracer run exit $?: $(cat "$tmp/$name.out")"
  "$COROTRACER" report $noblock "$tmp/$name.jsonl" --json "$tmp/$name.json" > "$tmp/$name.md" 2> "$tmp/$name.err" ||
    fail "$name: report exit $?: $(cat "$tmp/$name.err")"
}
# kinds NAME: "kind/severity/count" of each finding, one a line.
kinds() {
  grep -o '"kind":"[a-z_]*","severity":"[a-z]*","count":[0-9]*' "$tmp/$1.json" |
    sed 's/"kind":"\([a-z_]*\)","severity":"\([a-z]*\)","count":/\1\/\2\//'
}
want() { # want NAME FINDINGS (kinds' lines joined by spaces; "" for none)
  got=$(kinds "$1" | tr '\n' ' ' | sed 's/ $//')
  [ "$got" = "$2" ] || fail "$1: findings '$got', want '$2': $(grep '^###' "$tmp/$1.md")"
}
has() { # has NAME FILE-SUFFIX TEXT
  grep -q -- "$3" "$tmp/$1.$2" || fail "$1: '$3' not in the .$2 output"
}

# Starvation: the victim woken by the busy coroutine, then runnable for over
# a second while the busy one, yielding to the front, is resumed 1000 times on
# the one thread.
trace starve "$story" starve
want starve "starvation/warning/1"
has starve json '"label":"victim","wait":"ptr",.*"evidence":"woken at +[0-9.]* [mu]*s by coroutine [0-9]* (busy) at wake (sched-story.c:[0-9]*), then runnable for 1\.[0-9] s until its resume'
has starve json '"held_by":\[{"probe_id":[0-9]*,"label":"busy","resumes":1000}\]'
has starve md 'was resumed 1000 times'
has starve md '`story_sched (sched-story.c:[0-9]*)`: 1 coroutine, runnable 1\.[0-9] s median'
# The same through the engine's default, binary trace format.
"$COROTRACER" run --quiet --lossless -n 512 -o "$tmp/starve.ctrace" -- "$story" starve > "$tmp/bin.out" 2>&1 ||
  fail "starve.ctrace: corotracer run exit $?: $(cat "$tmp/bin.out")"
"$COROTRACER" report $noblock "$tmp/starve.ctrace" --json "$tmp/starve-bin.json" > /dev/null 2>&1 || fail "starve.ctrace: report exit $?"
has starve-bin json '"kind":"starvation","severity":"warning","count":1,'
has starve-bin json '"held_by":\[{"probe_id":[0-9]*,"label":"busy","resumes":1000}\]'
# Its twin: 200 busy coroutines and a fair queue; the victim waits for each
# of them once, over 100 ms: busy, not starved.
trace fair "$story" fair
want fair ""
awk '/^\| `story_sched/ && $NF == "|" { split($0, c, "|"); if (c[9] ~ / ms/ && c[9] + 0 >= 100) ok = 1 } END { exit !ok }' "$tmp/fair.md" ||
  fail "fair: no site runnable for 100 ms or more (the queue was not loaded): $(grep '^| `' "$tmp/fair.md")"

# Destroyed while waiting, in C: the waiter (the event was set before it
# waited) destroyed 1.5 s later; the accept loop (likely idle) and the read
# cancelled after 20 ms are not findings.
trace dwait "$story" dwait
want dwait "lost_wakeup/error/1"
has dwait json '"label":"waiter","wait":"ptr",.*"suspended_ns":1[5-9][0-9]*,"evidence":"parked at +[0-9.]* [mu]*s; destroyed at +1\.[5-9] s while still waiting, never woken (cancelled at teardown)'
has dwait md '^| [0-9]* | waiter | event (sched-story.c:[0-9]*) | `*story_dwait (sched-story.c:[0-9]*)'
trace dwait-ok "$story" dwait-ok
want dwait-ok ""

# In C++: the frame destroyed by its Task's destructor at shutdown; its twin's
# awaiter checks the event first.
line=$(grep -n 'WAIT-SITE' "$(dirname "$0")/lib/cpp-dwait.cpp" | cut -d: -f1)
trace cpp-bug "$cpp" bug
want cpp-bug "lost_wakeup/error/1"
has cpp-bug json '"function":"[^"]*waiter[^"]*","file":"[^"]*cpp-dwait.cpp","line":'"$line"
has cpp-bug json '"label":"waiter","wait":"ptr",.*"evidence":"parked at +[0-9.]* [mu]*s; destroyed at +1\.[5-9] s while still waiting, never woken (cancelled at teardown)'
trace cpp-ok "$cpp" ok
want cpp-ok ""

# The dashboard: the same findings, the victim's runnable span as long as the
# finding says, the coroutine that held its thread in the table.
if command -v node >/dev/null 2>&1; then
  gen starve
  "$COROTRACER" report "$tmp/starve.jsonl" --json "$tmp/starve-syn.json" > /dev/null || fail "starve.txt: report exit $?"
  "$COROTRACER" html "$tmp/starve.jsonl" -o "$tmp/starve.html" 2> "$tmp/html.err" || fail "html exit $?: $(cat "$tmp/html.err")"
  echo '{"summarized": false, "starved": true}' > "$tmp/expect.json"
  node "$(dirname "$0")/browser/decode.mjs" page "$tmp/starve.html" "$tmp/starve-syn.json" "$tmp/expect.json" > "$tmp/dec" ||
    fail "dashboard: $(cat "$tmp/dec")"
fi

finish test-report-sched
