#!/bin/sh
# test-demo-san.sh - the seed's premise, checked: with --bug the demo server
# strands coroutines under a reconnect storm, and ASan (with LeakSanitizer
# and UBSan) or TSan report nothing, because no memory is misused. Runs in the
# sanitizer builds only (SAN=asan, SAN=tsan).
set -u
B=${CT_BUILD:?run me through tests/run.sh}
SRV=$B/examples/demo/resp_server
[ -n "${CT_SAN:-}" ] || { echo "plain build: this test checks a sanitizer build (Makefile TESTS_SAN)"; exit 1; }
command -v redis-benchmark >/dev/null 2>&1 || { echo "redis-benchmark not installed"; exit 77; }
[ -x "$SRV" ] || { echo "FAIL: $SRV not built"; exit 1; }
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$SRV" --port 0 --port-file "$tmp/port" --bug >"$tmp/out" 2>"$tmp/log" &
pid=$!
i=0
while [ ! -s "$tmp/port" ]; do
  i=$((i + 1)); [ $i -le 200 ] && kill -0 "$pid" 2>/dev/null || { cat "$tmp/log"; fail "server did not start"; }
  sleep 0.1
done
timeout -k 2 8 redis-benchmark -h 127.0.0.1 -p "$(cat "$tmp/port")" -c 50 -n 2000 -k 0 -t ping -q >/dev/null 2>&1
kill -TERM "$pid"
i=0
while kill -0 "$pid" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 "$pid" 2>/dev/null && fail "no exit 20 s after SIGTERM"
wait "$pid"
rc=$?
pid=""
stranded=$(grep -c 'closed fd .* without waking coroutine' "$tmp/log")
grep -v 'closed fd .* without waking coroutine' "$tmp/log"
[ "$stranded" -ge 1 ] || fail "the bug never fired"
grep -qE 'Sanitizer|runtime error' "$tmp/log" && fail "$CT_SAN reported something"
[ $rc -eq 0 ] || fail "exit status $rc"
echo "ok: $stranded coroutines stranded, $CT_SAN silent, exit 0"
