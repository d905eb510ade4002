#!/bin/sh
# test-asio-echo20.sh - examples/asio/echo20.cpp, an asio::awaitable echo
# server written with the plain use_awaitable and redirect_error tokens: with
# --bug (the timer used as an event is never cancelled) the report's first
# finding names the drainer coroutine at its line of the example, not a line
# of Asio's headers nor of the adapter; the correct twin has no finding.
. "$(dirname "$0")/lib/engine.sh"
. "$(dirname "$0")/lib/twins.sh"
PROG="$CT_BUILD/examples/asio-echo20"
[ -x "$PROG" ] || skip "standalone Asio not installed (libasio-dev)"
bug_names "$PROG" "$(dirname "$0")/../examples/asio/echo20.cpp" '{ // the drainer=1'
grep -Eq '/asio/[^ ]*\.hpp:' "$T/f1" && fail "an Asio header named in the finding: $(cat "$T/f1")"
twin_clean "$PROG"
exit 0
