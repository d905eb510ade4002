#!/bin/sh
# test-dashboard-waits.sh - a join and an exit in the dashboard, in Chromium
# (tests/browser/waits.mjs): coroutine 1 joins 2, is woken when 2 returns,
# then joins 3, which never comes. The page shows "waits on coroutine 2"
# (closed), "waits on coroutine 3" (until the end), 2's final suspend as
# "returned", and no pointer anywhere: the wait kinds come from the data's
# header (sp_flags, waits), with room for every CTP_WAIT_*.
. "$(dirname "$0")/lib/check.sh"
set -u
CT=${COROTRACER:?run me through tests/run.sh}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/browser.sh"
browser_setup
awk -f tests/data/report/gen.awk <<'T' >"$tmp/t.jsonl" || fail "gen.awk"
meta
create 1 0 100
create 2 1 100
create 3 1 101
resume 1 2 100
suspend 1 3 100 1234 co 2
resume 2 4 100
exit 2 5 100 5000
wake 1 6 100 2
resume 1 7 100
suspend 1 8 100 1234 co 3
resume 3 9 101
suspend 3 10 101 6000 fd 9
end 3000 code 0
T
"$CT" html "$tmp/t.jsonl" -o "$tmp/d.html" || fail "html exit $?"
node tests/browser/waits.mjs "$tmp/d.html" || fail "the page's waits"
echo "ok"
