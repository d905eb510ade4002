#!/bin/sh
# test-demo-san.sh - the seed's premise, checked: with --bug the demo server
# strands coroutines under a reconnect storm, and ASan (with LeakSanitizer
# and UBSan) or TSan report nothing, because no memory is misused. Runs in the
# sanitizer builds only (SAN=asan, SAN=tsan).
set -u
DEMO_WAIT=200 # sanitized, the server starts and drains slower
. "$(dirname "$0")/lib/demo.sh"
[ -n "${CT_SAN:-}" ] || fail "plain build: this test checks a sanitizer build (Makefile TESTS_SAN)"
demo_need redis-benchmark

start "$tmp/bug" "$SRV" --port 0 --port-file "$tmp/bug/port" --bug
timeout -k 2 8 redis-benchmark -h 127.0.0.1 -p "$port" -c 50 -n 2000 -k 0 -t ping -q >/dev/null 2>&1
stop
stranded=$(grep -c 'closed fd .* without waking coroutine' "$tmp/bug/log")
grep -v 'closed fd .* without waking coroutine' "$tmp/bug/log"
[ "$stranded" -ge 1 ] || fail "the bug never fired"
grep -qE 'Sanitizer|runtime error' "$tmp/bug/log" && fail "$CT_SAN reported something"
[ $rc -eq 0 ] || fail "exit status $rc"
echo "ok: $stranded coroutines stranded, $CT_SAN silent, exit 0"
