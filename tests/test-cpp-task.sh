#!/bin/sh
# test-cpp-task.sh - a user's own task type on PromiseMixin (examples/cpp/
# task_erase.cpp) under the engine: with --bug, the tasks its owner erases from
# a std::map while they wait are found destroyed while waiting, at the
# example's own co_await line, and destroyed at its owner's erase line (not
# in the task's destructors); the twin, which resumes each task before
# erasing it, gets no finding. Every build variant (g++/clang++, -O2/-O0):
# what is inlined into the erase differs. Half the tasks get their reply (so the trace
# has wakes: without any, a destroy while waiting proves nothing). The waits
# last 50 ms at least; --stuck-ms 10 judges them (the default, 1 s, would
# not), so load cannot change the answer.
. "$(dirname "$0")/lib/engine.sh"
SRC="$(cd "$(dirname "$0")/.." && pwd)/examples/cpp/task_erase.cpp"
line=$(grep -n 'co_await reply;' "$SRC" | head -n 1 | cut -d: -f1)
erase=$(grep -n 'pending.erase(i);' "$SRC" | head -n 1 | cut -d: -f1)

# lost_wakeup FINDINGS: the lost_wakeup finding's count and symbolized wait
# sites from the report's JSON, one per line (cut before its coroutines).
lost_wakeup() {
  tr -d '\n' < "$1" | sed 's/{"kind":/\n&/g' | grep '^{"kind":"lost_wakeup"' | sed 's/"coroutines":\[.*//' |
    grep -o '"count":[0-9]*\|"site":"0x[0-9a-f]*","function":"[^"]*","file":"[^"]*","line":[0-9]*'
}

# destroyers FINDINGS: the symbolized sites that destroyed the lost_wakeup
# finding's coroutines, one per line.
destroyers() {
  tr -d '\n' < "$1" | sed 's/{"kind":/\n&/g' | grep '^{"kind":"lost_wakeup"' |
    grep -o '"destroyed":{[^}]*"site":{[^}]*}' | grep -o '"function":"[^"]*","file":"[^"]*","line":[0-9]*'
}

for PROG in "$CT_BUILD"/examples/cpp-task-erase "$CT_BUILD"/examples/cpp-task-erase-*; do
  [ -x "$PROG" ] || continue
  "$COROTRACER" run --quiet --lossless -o "$T/bug.ctrace" -- "$PROG" --bug > "$T/out" 2>&1 ||
    fail "$PROG --bug: $(cat "$T/out")"
  grep -q '^2 answered, 2 of 4 finished$' "$T/out" || fail "$PROG --bug: $(cat "$T/out")"
  "$COROTRACER" report "$T/bug.ctrace" --stuck-ms 10 --json "$T/findings.json" -o "$T/report.md" ||
    fail "report failed"
  lost_wakeup "$T/findings.json" > "$T/lw"
  [ "$(head -n 1 "$T/lw")" = '"count":2' ] &&
    [ "$(grep -c '^"site"' "$T/lw")" = 1 ] &&
    grep -q "^\"site\":\"0x[0-9a-f]*\",\"function\":\"[^\"]*\",\"file\":\"[^\"]*examples/cpp/task_erase.cpp\",\"line\":$line\$" "$T/lw" ||
    fail "$PROG: want 2 tasks destroyed while waiting at task_erase.cpp:$line; report says:
$(cat "$T/lw")
$(grep -A8 '^### ' "$T/report.md")"
  destroyers "$T/findings.json" > "$T/by"
  [ "$(grep -c "^\"function\":\"main\",\"file\":\"[^\"]*examples/cpp/task_erase.cpp\",\"line\":$erase\$" "$T/by")" = 2 ] ||
    fail "$PROG: want both destroyed at main's erase, task_erase.cpp:$erase; report says:
$(cat "$T/by")"

  # The twin: every task resumed and finished before its erase.
  "$COROTRACER" run --quiet --lossless -o "$T/ok.ctrace" -- "$PROG" > "$T/out" 2>&1 ||
    fail "$PROG: $(cat "$T/out")"
  grep -q '^2 answered, 4 of 4 finished$' "$T/out" || fail "$PROG: $(cat "$T/out")"
  "$COROTRACER" report "$T/ok.ctrace" --stuck-ms 10 --json "$T/findings.json" -o "$T/report.md" ||
    fail "report failed"
  tr -d '\n' < "$T/findings.json" | grep -o '"kind":"[a-z_]*"' | grep -qv '"lost_events"' &&
    fail "$PROG: findings without the bug:
$(grep -A2 '^### ' "$T/report.md")"
done
exit 0
