#!/bin/sh
# test-fiber-pool.sh - examples/fiber/pool.cpp, a buffered_channel worker pool
# on work_stealing over three threads: with --bug (the producer returns
# without close()) the report's finding names this example's own lines for
# the workers (pop), main (join) and the helper threads' main fibers
# (done_cv.wait in a std::thread's lambda, found through std::thread's entry,
# where the adapter's own note_switch line was named before), and no line of
# the adapter; the correct twin has no finding.
. "$(dirname "$0")/lib/engine.sh"
. "$(dirname "$0")/lib/twins.sh"
PROG="$CT_BUILD/examples/fiber-pool"
[ -x "$PROG" ] || skip "Boost.Fiber not installed (libboost-fiber-dev)"
bug_names "$PROG" "$(dirname "$0")/../examples/fiber/pool.cpp" \
  'workers park here=6' 'helpers park here=2' 'main parks here=1'
twin_clean "$PROG"
exit 0
