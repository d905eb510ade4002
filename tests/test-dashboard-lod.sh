#!/bin/sh
# test-dashboard-lod.sh - the whole run at any zoom (docs/DASHBOARD.md "Level
# of detail"): a 1.2·10^6-event trace (bench-coswitch, 1 thread switching
# among 100 coroutines, 400,000 switches, under --lossless: no event lost) is
# larger than the span
# budget; its page, in Chromium (tests/browser/lod.mjs), draws the lanes
# over the end of the run zoomed out, exact spans in a window of at most 1 ms
# at the end zoomed in with the mouse, the summary in the middle; the same
# trace through `serve`: the page asks for the middle's exact spans (GET
# /detail) and draws them; bad detail requests get 400 and one line.
# One thread: the lanes shown first (in id order) run until the end. With two,
# a loaded machine may run the threads one after the other, and the first
# thread's lanes are then empty over the second's stretch.
. "$(dirname "$0")/lib/check.sh"
set -u
CT=${COROTRACER:?run me through tests/run.sh}
B=${CT_BUILD:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/browser.sh"
browser_setup
art=$B/test-artifacts
mkdir -p "$art"
"$CT" run --quiet --lossless -o "$tmp/t.ctrace" -- "$B/bench/bench-coswitch" -n 400000 1 100 0 >"$tmp/out" 2>&1 ||
  fail "bench-coswitch under the engine: $(cat "$tmp/out")"
grep -q "dropped 0" "$tmp/out" || fail "events dropped under --lossless: $(cat "$tmp/out")"
"$CT" html "$tmp/t.ctrace" -o "$tmp/d.html" || fail "html exit $?"
node tests/browser/lod.mjs "file://$tmp/d.html" "$art/dashboard-lod" || fail "the page's level of detail"
. "$(dirname "$0")/lib/serve.sh"
serve_start "$tmp/t.ctrace" "$tmp/serve.err"
[ -n "$url" ] || { kill "$spid"; fail "serve printed no URL: $(cat "$tmp/serve.err")"; }
node tests/browser/lod.mjs "$url" "$art/dashboard-lod-served"; rc=$?
kill "$spid"
wait "$spid" 2>/dev/null
[ $rc -eq 0 ] || fail "the served page's detail on request"
echo "ok"
