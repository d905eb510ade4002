#!/bin/sh
# test-asio-echo.sh - the Asio adapter (include/corotracer/asio.hpp, switched on by
# -DASIO_CUSTOM_HANDLER_TRACKING) on examples/asio: with --bug (a timer used as
# an event nobody fires) the report finds the drainer's async_wait, dropped
# unrun when the io_context is destroyed, a lost completion at its line in
# echo.cpp, waiting on the timer; the accept loop's accept, dropped the same
# way but parked like an idle loop, is in no finding; with --skip-frames
# '*drain', the drainer at main's call of drain(); without the bug, no finding
# at all.
. "$(dirname "$0")/lib/engine.sh"
PROG="$CT_BUILD/examples/asio-echo"
[ -x "$PROG" ] || skip "standalone Asio not installed (libasio-dev)"
SRC="$(dirname "$0")/../examples/asio/echo.cpp"
wait_line=$(grep -n 'the drainer waits here' "$SRC" | cut -d: -f1)

"$COROTRACER" run --quiet --lossless -o "$T/bug.jsonl" -- "$PROG" --bug > "$T/out" 2>&1 ||
  fail "asio-echo --bug: $(cat "$T/out")"
grep -q '^80 echoes (want 80), still running$' "$T/out" || fail "asio-echo --bug: $(cat "$T/out")"
"$COROTRACER" report "$T/bug.jsonl" --json "$T/findings.json" -o "$T/report.md" || fail "report failed"
tr -d '\n' < "$T/findings.json" | sed 's/{"kind":/\n&/g' | grep '^{"kind":"lost_completion"' > "$T/lw"
# coroutine lines: label, wait kind, site's function:line, likely_idle or not.
grep -o '"sites":\[[^]]*\]' "$T/lw" | head -n 1 | grep -o '"function":"[^"]*","file":"[^"]*","line":[0-9]*' |
  sed 's/"function":"\([^"]*\)","file":"\([^"]*\)","line":\([0-9]*\)/\1|\2|\3/' > "$T/sites"
sed 's/,"obj_last_wake":{[^{}]*{[^{}]*}}//g' "$T/lw" | grep -o '{"probe_id":[^{}]*}' | sed 's/.*"label":"\([^"]*\)","wait":"\([a-z]*\)".*"site_index":\([0-9]*\).*/\1 \2 \3 &/' |
  awk '{ idle = index($0, "\"likely_idle\":true") ? "idle" : "lost"; print $1, $2, $3, idle }' > "$T/coros"
# Files as the compiler wrote them (clang: absolute); functions without
# (anonymous namespace)::. The accept loop, idle, by its function only: clang
# leaves its inlined Asio code without an inlined scope, so its line is Asio's.
awk 'NR == FNR { split($0, f, "|"); sub(/.*::/, "", f[1]); sub(/.*examples\//, "examples/", f[2])
                 fn[NR - 1] = f[1] " " f[2] ":" f[3]; next }
  { site = fn[$3]; if ($1 == "async_accept") sub(/ .*/, "", site); print $1, $2, site, $4 }' \
  "$T/sites" "$T/coros" | sort > "$T/got"
printf '%s\n' "async_wait ptr drain examples/asio/echo.cpp:$wait_line lost" > "$T/want"
cmp -s "$T/got" "$T/want" || fail "want the drainer lost at its line, and no accept loop:
$(cat "$T/want")
got:
$(cat "$T/got")
$(grep -A8 '^### ' "$T/report.md")"

# --skip-frames: drain() is inlined into main(); skipped, the site is main's
# call of it.
again=$(grep -n '^  drain(done, acc);' "$SRC" | cut -d: -f1)
"$COROTRACER" report "$T/bug.jsonl" --skip-frames 'nothing::*,*drain' -o "$T/skip.md" || fail "report --skip-frames failed"
grep -q "^- \`main (echo.cpp:$again)\`: 1 coroutine, suspended" "$T/skip.md" ||
  fail "--skip-frames '*drain': want the drainer at main (echo.cpp:$again); got:
$(grep '^- ' "$T/skip.md")"

"$COROTRACER" run --quiet --lossless -o "$T/ok.jsonl" -- "$PROG" > "$T/out" 2>&1 || fail "asio-echo: $(cat "$T/out")"
grep -q '^80 echoes (want 80), finished$' "$T/out" || fail "asio-echo: $(cat "$T/out")"
"$COROTRACER" report "$T/ok.jsonl" $untimed --json "$T/findings.json" -o "$T/report.md" || fail "report failed"
tr -d '\n' < "$T/findings.json" | grep -q '"kind":' && fail "findings without the bug:
$(grep -A6 '^### ' "$T/report.md")"
exit 0
