#!/bin/sh
# test-export-memory.sh - `corotracer export` streams: a 10^7-event JSONL
# trace (476k coroutines over its length) and a 10^7-event binary trace (a
# real run, --lossless) exported to SQLite and to CSV each stay under 200 MB
# peak RSS (the whole trace held in memory took ~3 GB). About a minute and
# 4 GB of TMPDIR (the 1.6 GB trace, then the CSV files or the database).
set -u
. "$(dirname "$0")/lib/check.sh"
: "${CT_BUILD:?run through tests/run.sh}" "${COROTRACER:?run through tests/run.sh}"
[ -x /usr/bin/time ] || skip "/usr/bin/time (Debian package time) not installed"
gen=$CT_BUILD/bench/bench-report-gen
[ -x "$gen" ] || fail "$gen not built"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-export-memory.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
CHECK_KEEP_GOING=1
n=10000000 limit_kb=204800
"$gen" $n 1000 > "$tmp/t.jsonl" || fail "bench-report-gen: exit $?"
# export FORMAT OUT [TRACE]: peak RSS (KB) within the limit, every event written.
export_rss() {
  /usr/bin/time -f %M -o "$tmp/rss" "$COROTRACER" export "$1" "${3:-$tmp/t.jsonl}" -o "$2" 2> "$tmp/err" ||
    { fail "export $1: exit $?: $(cat "$tmp/err")"; return; }
  kb=$(tail -n 1 "$tmp/rss")
  echo "export $1: $kb KB peak RSS; $(cat "$tmp/err")"
  [ "$kb" -le $limit_kb ] || fail "export $1: $kb KB peak RSS, over $limit_kb KB"
  grep -q "events $n," "$tmp/err" || fail "export $1: not $n events: $(cat "$tmp/err")"
}
export_rss csv "$tmp/csv"
rm -rf "$tmp/csv"
export_rss sqlite "$tmp/t.db"
rm -f "$tmp/t.db" "$tmp/t.jsonl"
# The binary trace (the engine's default): 2 threads x 5*10^6 events.
"$COROTRACER" run --quiet --lossless -o "$tmp/t.ctrace" -- "$CT_BUILD/tests/lib/sdk-writer" spaced 2 5000000 0 \
  "$tmp/w" > /dev/null || fail "run: exit $?"
[ "$("$CT_BUILD/tests/lib/ctjl" -t end events lost < "$tmp/t.ctrace")" = "$n 0" ] ||
  fail "binary trace: not $n events, 0 lost: $("$CT_BUILD/tests/lib/ctjl" -t end events lost < "$tmp/t.ctrace")"
export_rss csv "$tmp/csv" "$tmp/t.ctrace"
rm -rf "$tmp/csv"
export_rss sqlite "$tmp/t.db" "$tmp/t.ctrace"
check_done
echo "test-export-memory: ok"
