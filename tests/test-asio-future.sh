#!/bin/sh
# test-asio-future.sh - examples/asio/future.cpp, a service whose two clients
# (one on asio::use_future, one on a plain completion handler) each read a
# reply the server, with --bug, writes only half of: the report's first
# finding is a lost_completion naming each client's async_read line of the
# example, not the Asio header of the step before (the next step of a
# composed operation, started from the previous one's completion, takes the
# site of the user's call); no site of the report, the steps of async_connect
# over two addresses and of a multi-write async_write included, is an Asio
# header's, nor the server's line for the callback client's read (a stale
# return address of the server's read, in the frame of Asio's read_op, was
# taken for it). The callback client's write and read are started by the
# handlers of its async_connect and async_write, which the compiler inlines
# into the composed operations' own functions (range_connect_op's
# process(), write_op's operator()): named at their lines of the example.
# The use_future client's thread, waiting for its read's future in the
# adapter's get() (corotracer::asio_tracking::get), is listed in the same
# finding at the example's get line, chained to the lost async_read ("waits
# for the operation started at ...future.cpp:N"), not as a finding of its own,
# though its connect's and write's futures were ready before their get()
# (waited for under a timeout): such a get() ends the count of operations
# started (the waiter was tied to nothing in 1 run in 10 under load, always
# with ready futures). The example stops its io_context only once that
# thread is about to wait for its read (a flag, then 50 ms): a stop before
# left its get() a broken promise to throw, no wait to show (1 run in 40).
# The correct twin has no finding. On standalone Asio and on Boost.Asio
# (asio-future-boost).
. "$(dirname "$0")/lib/engine.sh"
. "$(dirname "$0")/lib/twins.sh"
[ -x "$CT_BUILD/examples/asio-future" ] || skip "standalone Asio not installed (libasio-dev)"
[ -x "$CT_BUILD/examples/asio-future-boost" ] || skip "Boost.Asio not installed (libboost-dev)"
SRC="$(dirname "$0")/../examples/asio/future.cpp"
for PROG in "$CT_BUILD/examples/asio-future" "$CT_BUILD/examples/asio-future-boost"; do
  bug_names "$PROG" "$SRC" 'cond, asio::use_future)=1' 'Progress{svc}, on_reply)=1' 'if (get(got)=1'
  grep -q '^### 1\. \[error\] 2 operations never completed: destroyed without running.*; 1 more waits for them to finish$' "$T/f1" ||
    fail "$(basename "$PROG"): the first finding is no lost completion with its waiter: $(cat "$T/f1")"
  read_line=$(grep -nF 'cond, asio::use_future)' "$SRC" | head -n 1 | cut -d: -f1)
  get_line=$(grep -nF 'if (get(got)' "$SRC" | head -n 1 | cut -d: -f1)
  grep -F '| future::get |' "$T/f1" | grep -F "(future.cpp:$get_line) |" |
    grep -F 'waits for the operation started at ' | grep -qF "(future.cpp:$read_line) (coroutine " ||
    fail "$(basename "$PROG"): no waiter at future.cpp:$get_line chained to the read at future.cpp:$read_line: $(grep '^| ' "$T/f1")"
  grep -q '^0 of 2 clients got their reply$' "$T/out" || fail "$(basename "$PROG") --bug: $(cat "$T/out")"
  grep -Eq '\.hpp:[0-9]+\)' "$T/bug.md" &&
    fail "$(basename "$PROG"): a header's line named: $(grep -E '\.hpp:[0-9]+\)' "$T/bug.md")"
  # Every operation the example starts is a site of its own file.
  for w in 'async_connect(fsock' 'async_write(fsock' 'cond, asio::use_future)' \
    'async_connect(sock' 'async_write(sock' 'Progress{svc}, on_reply)'; do
    line=$(grep -nF "$w" "$SRC" | head -n 1 | cut -d: -f1)
    grep -qF "(future.cpp:$line)\` |" "$T/bug.md" ||
      fail "$(basename "$PROG"): no site at future.cpp:$line ($w): $(grep '^| `' "$T/bug.md")"
  done
  twin_clean "$PROG"
  grep -q '^2 of 2 clients got their reply$' "$T/out" || fail "$(basename "$PROG"): $(cat "$T/out")"
done
exit 0
