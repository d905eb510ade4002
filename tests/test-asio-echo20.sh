#!/bin/sh
# test-asio-echo20.sh - examples/asio/echo20.cpp, an asio::awaitable echo
# server written with the plain use_awaitable and redirect_error tokens: with
# --bug (the timer used as an event is never cancelled) the report's first
# finding names the drainer coroutine at its line of the example, not a line
# of Asio's headers nor of the adapter; the correct twin has no finding. The
# same with the example built on Boost.Asio (asio-echo20-boost).
. "$(dirname "$0")/lib/engine.sh"
. "$(dirname "$0")/lib/twins.sh"
[ -x "$CT_BUILD/examples/asio-echo20" ] || skip "standalone Asio not installed (libasio-dev)"
[ -x "$CT_BUILD/examples/asio-echo20-boost" ] || skip "Boost.Asio not installed (libboost-dev)"
for PROG in "$CT_BUILD/examples/asio-echo20" "$CT_BUILD/examples/asio-echo20-boost"; do
  bug_names "$PROG" "$(dirname "$0")/../examples/asio/echo20.cpp" '{ // the drainer=1'
  grep -Eq '/asio/[^ ]*\.hpp:' "$T/f1" &&
    fail "$(basename "$PROG"): an Asio header named in the finding: $(cat "$T/f1")"
  twin_clean "$PROG"
done
exit 0
