#!/bin/sh
# test-fiber-notify.sh - examples/fiber/notify.cpp, a condition_variable
# notified before its state is set, on shared_work over two threads: with
# --bug the report's finding names the waiters' cv.wait line of the example
# (16 of them), main's join and the helper thread's done_cv.wait (in a
# std::thread's lambda); the correct twin has no finding.
. "$(dirname "$0")/lib/engine.sh"
. "$(dirname "$0")/lib/twins.sh"
PROG="$CT_BUILD/examples/fiber-notify"
[ -x "$PROG" ] || skip "Boost.Fiber not installed (libboost-fiber-dev)"
bug_names "$PROG" "$(dirname "$0")/../examples/fiber/notify.cpp" \
  'waiters park here=16' 'main parks here=1' 'the helper parks here=1'
twin_clean "$PROG"
exit 0
