# demo.sh - shell helpers for the tests that run the demo server (the ones
# that source it). Source it first; it sets B (the build), SRV (the demo
# server) and tmp (a fresh temp dir, removed on exit together with the server
# still running, if any) and defines demo_need, start and stop (fail and skip
# come from check.sh). DEMO_WAIT, in tenths of a second (default 100), bounds
# both the wait for the server's port and for its exit: sanitizer builds need
# more.
B=${CT_BUILD:?run me through tests/run.sh}
SRV=$B/examples/demo/resp_server
DEMO_WAIT=${DEMO_WAIT:-100}
tmp=$(mktemp -d)
pid=""
demo_cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap demo_cleanup EXIT
. "$(dirname "$0")/lib/check.sh"

# demo_need TOOL...: the test's prerequisites: skip (77) without one of the
# tools, fail without the demo server built, or corotracer when the test uses
# it (CT set).
demo_need() {
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 || skip "$t not installed (sh scripts/install-deps.sh)"
  done
  [ -x "$SRV" ] || fail "$SRV not built"
  [ -z "${CT:-}" ] || [ -x "$CT" ] || fail "$CT not built"
}

# start DIR CMD...: run CMD in the background (its pid in $pid), wait for DIR/port.
start() {
  dir=$1; shift
  mkdir -p "$dir"
  "$@" >"$dir/out" 2>"$dir/log" &
  pid=$!
  i=0
  while [ ! -s "$dir/port" ]; do
    i=$((i + 1))
    [ $i -le "$DEMO_WAIT" ] && kill -0 "$pid" 2>/dev/null || { cat "$dir/log"; fail "server did not start: $*"; }
    sleep 0.1
  done
  port=$(cat "$dir/port")
}

# stop: SIGTERM, wait at most DEMO_WAIT tenths of a second; sets $rc to the exit status.
stop() {
  kill -TERM "$pid"
  i=0
  while kill -0 "$pid" 2>/dev/null && [ $i -lt "$DEMO_WAIT" ]; do sleep 0.1; i=$((i + 1)); done
  kill -0 "$pid" 2>/dev/null && fail "no exit $((DEMO_WAIT / 10)) s after SIGTERM"
  wait "$pid"
  rc=$?
  pid=""
}
