#!/bin/sh
# test-asio-lost.sh - examples/asio/lost.cpp, a request/reply service whose
# server parks one request and never answers it: with --bug the client's read
# is pending when the program stops its io_context, whose destruction drops
# it without running; the report's first finding is a lost_completion naming
# the client coroutine at its line of the example (the operation's start, by
# the awaiting coroutine: the plain use_awaitable), one operation. The correct
# twin stops the same way with its accept loop's next accept pending (idle)
# and its watchdog timer cancelled: no finding. On standalone Asio and on
# Boost.Asio (asio-lost-boost).
. "$(dirname "$0")/lib/engine.sh"
. "$(dirname "$0")/lib/twins.sh"
[ -x "$CT_BUILD/examples/asio-lost" ] || skip "standalone Asio not installed (libasio-dev)"
[ -x "$CT_BUILD/examples/asio-lost-boost" ] || skip "Boost.Asio not installed (libboost-dev)"
for PROG in "$CT_BUILD/examples/asio-lost" "$CT_BUILD/examples/asio-lost-boost"; do
  bug_names "$PROG" "$(dirname "$0")/../examples/asio/lost.cpp" 'its reply in here=1'
  grep -q '^### 1\. \[error\] 1 operation never completed: destroyed without running' "$T/f1" ||
    fail "$(basename "$PROG"): the first finding is no lost completion: $(cat "$T/f1")"
  grep -q 'lost_completion' "$T/f1" || fail "$(basename "$PROG"): no lost_completion kind: $(cat "$T/f1")"
  grep -q '^7 of 8 replies read$' "$T/out" || fail "$(basename "$PROG") --bug: $(cat "$T/out")"
  twin_clean "$PROG"
  grep -q '^8 of 8 replies read$' "$T/out" || fail "$(basename "$PROG"): $(cat "$T/out")"
done
exit 0
