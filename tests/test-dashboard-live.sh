#!/bin/sh
# test-dashboard-live.sh - `corotracer run --serve 127.0.0.1:0` on the demo
# server with the lost-wakeup bug, into the default binary trace (the live
# view decodes the chunks appended since its last look): the engine listens
# on that address only;
# tests/browser/live.mjs checks the token, the Host check and no CORS, then
# watches the page's stuck-coroutine count rise while redis-benchmark drives
# the server into the bug, and the final data once the run ends. Screenshots:
# $CT_BUILD/test-artifacts/dashboard-live.png, dashboard-live-ended.png.
set -u
CT=${COROTRACER:?}
. "$(dirname "$0")/lib/demo.sh"
demo_need redis-benchmark
command -v ss >/dev/null 2>&1 || skip "ss not installed (iproute2)"
. "$(dirname "$0")/lib/browser.sh"
browser_setup
art=$B/test-artifacts
mkdir -p "$art"

echo "== 1. bad --serve values"
"$CT" run --serve 10.0.0.300:80 -- true 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "expects \[ADDR:\]PORT" "$tmp/err" || { cat "$tmp/err"; fail "bad address: exit $rc"; }
"$CT" run --serve 70000 -- true 2>"$tmp/err"; [ $? -eq 2 ] || fail "port 70000 accepted"

echo "== 2. the demo server under run --serve 127.0.0.1:0"
start "$tmp/live" "$CT" run --quiet --serve 127.0.0.1:0 -n 20000 -o "$tmp/live/trace.ctrace" -- \
  "$SRV" --port 0 --port-file "$tmp/live/port" --bug
url=$(sed -n 's/^corotracer: live dashboard at //p' "$tmp/live/log")
[ -n "$url" ] || { cat "$tmp/live/log"; fail "no dashboard URL printed"; }
echo "   $url" | sed 's/token=.*/token=.../'
uport=$(echo "$url" | sed 's|http://127.0.0.1:\([0-9]*\)/.*|\1|')
# The engine's listening sockets (IPv4 and IPv6): the one asked for, nothing else.
listens=$(ss -ltnpH | grep "pid=$pid," | awk '{print $4}')
[ "$listens" = "127.0.0.1:$uport" ] || fail "the engine listens on: $listens (want only 127.0.0.1:$uport)"
echo "   the engine listens on $listens only"

echo "== 3. Chromium"
# live.mjs ends the run itself (SIGTERM to the engine) once the count rose.
node tests/browser/live.mjs "$url" "$port" "$art/dashboard-live.png" "$pid" || fail "live browser checks"
i=0
while kill -0 "$pid" 2>/dev/null && [ $i -lt "$DEMO_WAIT" ]; do sleep 0.1; i=$((i + 1)); done
kill -0 "$pid" 2>/dev/null && fail "the engine did not exit after SIGTERM"
wait "$pid"; rc=$?; pid=""
[ $rc -eq 0 ] || fail "engine exit status $rc"
[ "$(head -c 1 "$tmp/live/trace.ctrace" | od -An -tx1 | tr -d ' ')" = 89 ] || fail "the trace is not binary"
"$B/tests/lib/ctjl" -t end type < "$tmp/live/trace.ctrace" | grep -q end || fail "the trace has no end record"
echo "ok"
