#!/bin/sh
# test-asio-pipeline.sh - examples/asio/pipeline.cpp, a strand pipeline (post
# per stage) whose completion is lost: with --bug the report's finding names
# the coordinator's async_wait line of the example (the event that the lost
# item never fires); the correct twin has no finding. (The lost completion
# itself, at the stage that dropped it, is not a finding of the report yet:
# what it says is the symptom, at the user's line.)
. "$(dirname "$0")/lib/engine.sh"
. "$(dirname "$0")/lib/twins.sh"
PROG="$CT_BUILD/examples/asio-pipeline"
[ -x "$PROG" ] || skip "standalone Asio not installed (libasio-dev)"
bug_names "$PROG" "$(dirname "$0")/../examples/asio/pipeline.cpp" 'the coordinator waits here=1'
grep -q 'the coordinator still waits$' "$T/out" || fail "the bug did not show: $(cat "$T/out")"
twin_clean "$PROG"
exit 0
