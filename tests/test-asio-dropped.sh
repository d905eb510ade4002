#!/bin/sh
# test-asio-dropped.sh - tests/lib/asio-dropped.cpp: posted functions that
# never run. The adapter records a post as queued (its suspend and wake at
# once, at the post line); with --bug two of them are destroyed without
# running (a new stand-in posted from main, a chain's next step posted by a
# handler), and the report's first finding must still be one lost_completion
# of 2 operations, naming the first post's line of the program (a queued
# stand-in woken once more from the drop told the report nothing: runnable,
# never run). The correct twin runs them all: no finding.
. "$(dirname "$0")/lib/engine.sh"
. "$(dirname "$0")/lib/twins.sh"
PROG="$CT_BUILD/tests/lib/asio-dropped"
[ -x "$PROG" ] || skip "standalone Asio not installed (libasio-dev)"
bug_names "$PROG" "$(dirname "$0")/lib/asio-dropped.cpp" 'a new stand-in, posted here=1'
grep -q '^### 1\. \[error\] 2 operations never completed: destroyed without running' "$T/f1" ||
  fail "the first finding is not 2 lost completions: $(cat "$T/f1")"
grep -q '^ran 1$' "$T/out" || fail "asio-dropped --bug: $(cat "$T/out")"
twin_clean "$PROG"
grep -q '^ran 3$' "$T/out" || fail "asio-dropped: $(cat "$T/out")"
exit 0
