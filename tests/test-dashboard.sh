#!/bin/sh
# test-dashboard.sh - `corotracer html` on the demo's trace (server with the
# lost-wakeup bug under the engine, redis-benchmark stalled by it), opened
# from disk in Chromium (tests/browser/offline.mjs): no console error, no
# network request, a drawn timeline, the lost-wakeup finding selects exactly
# its coroutines, search by fd, an XSS label stays text. The screenshot is
# kept: $CT_BUILD/test-artifacts/dashboard.png. Also the command's errors.
set -u
CT=${COROTRACER:?}
. "$(dirname "$0")/lib/demo.sh"
demo_need redis-benchmark
. "$(dirname "$0")/lib/browser.sh"
browser_setup
art=$B/test-artifacts
mkdir -p "$art"

echo "== 1. errors: one line, non-zero exit"
"$CT" html "$tmp/missing.jsonl" -o "$tmp/x.html" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "missing.jsonl: No such file" "$tmp/err" || { cat "$tmp/err"; fail "missing trace: exit $rc"; }
echo "hello" >"$tmp/junk.txt"
"$CT" html "$tmp/junk.txt" -o "$tmp/x.html" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "junk.txt:1: not a corotracer trace" "$tmp/err" || { cat "$tmp/err"; fail "junk: exit $rc"; }
[ ! -e "$tmp/x.html" ] || fail "a page was written for a bad trace"
"$CT" html 2>"$tmp/err"; [ $? -eq 2 ] || fail "no trace: not a usage error"

echo "== 2. the demo's trace: the server with --bug, stalled by redis-benchmark"
start "$tmp/bug" "$CT" run --quiet -n 20000 -o "$tmp/bug/trace.jsonl" -- "$SRV" --port 0 --port-file "$tmp/bug/port" --bug
timeout -k 2 6 redis-benchmark -h 127.0.0.1 -p "$port" -c 50 -n 2000 -k 0 -t ping --csv >/dev/null 2>&1
sleep 1.5
stop
[ $rc -eq 0 ] || fail "engine exit status $rc"
# A label that would run script if it were pasted as markup: one coroutine
# record rewritten (the label is JSON-escaped in the trace, as engines write it).
xss='</script><img src=x onerror="window.__xss=1">'
victim=$(grep '"type":"coroutine"' "$tmp/bug/trace.jsonl" | grep '"label":"conn"' | tail -n 1 | sed 's/.*"probe_id":\([0-9]*\).*/\1/')
[ -n "$victim" ] || fail "no conn coroutine in the trace"
sed -i "/\"type\":\"coroutine\",\"probe_id\":$victim,/s|\"label\":\"conn\"|\"label\":\"</script><img src=x onerror=\\\\\"window.__xss=1\\\\\">\"|" "$tmp/bug/trace.jsonl"
grep -q 'onerror=\\"window' "$tmp/bug/trace.jsonl" || fail "could not plant the XSS label"
"$CT" report "$tmp/bug/trace.jsonl" -o /dev/null --json "$tmp/bug/findings.json" || fail "report exit $?"
"$CT" html "$tmp/bug/trace.jsonl" -o "$art/dashboard.html" || fail "html exit $?"
# The reference's spelling writes the same page.
"$CT" -html -out "$tmp/bug/trace.jsonl" -o "$tmp/ref.html" || fail "-html -out exit $?"
cmp -s "$tmp/ref.html" "$art/dashboard.html" || fail "-html -out wrote a different page"
# Self-contained: one file, no URL to fetch.
grep -qiE '(src|href)=["'"'"']?(https?:)?//' "$art/dashboard.html" && fail "the page references a URL"
grep -c . "$art/dashboard.html" >/dev/null
echo "   page: $(wc -c <"$art/dashboard.html") bytes"

echo "== 3. Chromium"
node tests/browser/offline.mjs "$art/dashboard.html" "$tmp/bug/findings.json" "$xss" "$art/dashboard.png" ||
  fail "browser checks"
echo "   screenshot: $art/dashboard.png"
echo "ok"
