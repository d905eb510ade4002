#!/bin/sh
# test-dashboard-nav.sh - the dashboard's navigation and lanes at scale in
# Chromium (tests/browser/nav.mjs, web/nav.js): clicking a finding lands at
# its moment with its coroutines selected; a shift-drag range filters the
# coroutine, site and finding tables and Esc clears it; N/P step through the
# selection's wakes, G jumps to where a stuck coroutine stopped; the URL's hash
# reopens the same view, offline and through `serve`; 10^4 coroutines get
# lanes grouped by label and the lane search finds one of them (screenshot:
# $CT_BUILD/test-artifacts/dashboard-nav-lanes.png).
. "$(dirname "$0")/lib/check.sh"
set -u
CT=${COROTRACER:?run me through tests/run.sh}
tmp=$(mktemp -d)
spid=
trap '[ -n "$spid" ] && kill $spid 2>/dev/null; rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/browser.sh"
browser_setup

echo "== 1. three coroutines: 1 stranded at +10 ms, 2 only before +50 ms, 3 woken at +1.0, +1.4, +2.9 s"
awk -f tests/data/report/gen.awk <<'T' >"$tmp/a.jsonl" || fail "gen.awk"
meta
create 1 0 100
create 2 0 100
create 3 0 101
resume 1 1 100
suspend 1 10 100 1234 fd 5
resume 2 11 100
suspend 2 15 100 2000 ptr ab
wake 2 20 100 0
resume 2 21 100
suspend 2 30 100 2000 ptr ab
wake 2 40 100 0
resume 2 41 100
exit 2 45 100 2000
destroy 2 50 100
resume 3 1 101
suspend 3 3 101 3000 fd 7
wake 3 1000 101 0
resume 3 1001 101
suspend 3 1100 101 3000 fd 7
wake 3 1400 101 0
resume 3 1401 101
suspend 3 1500 101 3000 fd 7
wake 3 2900 101 0
resume 3 2901 101
exit 3 2950 101 3000
destroy 3 2960 101
end 3000 code 0
T
"$CT" report "$tmp/a.jsonl" -o /dev/null --json "$tmp/a.json" || fail "report exit $?"
"$CT" html "$tmp/a.jsonl" -o "$tmp/a.html" || fail "html exit $?"
# The same data through serve, for the URL's view in the live page.
: >"$tmp/serve.err"
"$CT" serve "$tmp/a.jsonl" --addr 127.0.0.1:0 2>"$tmp/serve.err" &
spid=$!
n=0
until url=$(sed -n 's/^corotracer: dashboard of .* at \(http:.*\)$/\1/p' "$tmp/serve.err") && [ -n "$url" ]; do
  n=$((n + 1)); [ $n -lt 400 ] || fail "serve printed no URL: $(cat "$tmp/serve.err")"
  kill -0 $spid 2>/dev/null || { fail "serve exited: $(cat "$tmp/serve.err")"; check_done; }
  sleep 0.05
done
node tests/browser/nav.mjs views "$tmp/a.html" "$tmp/a.json" "$url" || fail "navigation"

echo "== 2. 10^4 coroutines: conn-1 … conn-9900, worker-9901 … worker-10000"
awk 'BEGIN { print "meta"
  for (i = 1; i <= 10000; i++) { t = i * 0.2
    printf "create %d %.2f 100\nresume %d %.2f 100\nsuspend %d %.2f 100 a100 fd %d\n", i, t, i, t + 0.01, i, t + 0.05, i
    printf "wake %d %.2f 100 0\nresume %d %.2f 100\nexit %d %.2f 100 a100\ndestroy %d %.2f 100\n", i, t + 0.1, i, t + 0.11, i, t + 0.15, i, t + 0.16 }
  print "end 2100 code 0" }' | awk -f tests/data/report/gen.awk |
  awk '/"type":"coroutine"/ { id = $0; sub(/.*"probe_id":/, "", id); sub(/,.*/, "", id)
                              sub(/"label":"conn"/, "\"label\":\"" (id + 0 > 9900 ? "worker-" : "conn-") id "\"") } { print }' \
  >"$tmp/b.jsonl" || fail "the 10^4 trace"
grep -q '"label":"conn-7777"' "$tmp/b.jsonl" || fail "no conn-7777 label in the trace"
"$CT" html "$tmp/b.jsonl" -o "$tmp/b.html" || fail "html exit $?"
mkdir -p "$CT_BUILD/test-artifacts"
node tests/browser/nav.mjs lanes "$tmp/b.html" "$CT_BUILD/test-artifacts/dashboard-nav-lanes.png" || fail "lanes at scale"
check_done
echo "ok"
