#!/bin/sh
# test-flight-packts.sh - a flight window of packs says the times it holds:
# a pass's chunk of packs only (a scheduler's yields, docs/ROUTE1.md) gave
# the window no first or last time (the encoder counted ordinary events
# only), so a dump's window record and its note ("S s of trace") named the
# span of the few ordinary events left in it, and --flight-age never
# dropped such a chunk. Here a 4 MiB window the run turns over many times:
# the dump's window record must cover every event the dump holds
# (start_ts <= the first event's ts, end_ts >= the last's).
. "$(dirname "$0")/lib/engine.sh"
SDKW="$CT_BUILD/tests/lib/sdk-writer"

"$COROTRACER" run --flight 4M --dump-on exit -o "$T/d.ctrace" -- "$SDKW" yield 2 40 300000 "$T/w" \
  2> "$T/err" || fail "flight run: exit $? ($(cat "$T/err"))"
[ -s "$T/d.ctrace" ] || fail "no exit dump: $(cat "$T/err")"
"$COROTRACER" export jsonl "$T/d.ctrace" -q -o "$T/d.jsonl" || fail "export: exit $?"
win=$(grep '^{"type":"window"' "$T/d.jsonl") || fail "the dump has no window record"
start=$(echo "$win" | sed -n 's/.*"start_ts":\([0-9]*\).*/\1/p')
end=$(echo "$win" | sed -n 's/.*"end_ts":\([0-9]*\).*/\1/p')
# The events' first and last ts (event lines have "kind"; snapshot lines,
# older, are "type" lines).
span=$(grep '"kind":"' "$T/d.jsonl" | sed -n 's/.*"ts":\([0-9]*\).*/\1/p' |
  sort -n | sed -n '1p;$p' | tr '\n' ' ')
set -- $span
[ $# -eq 2 ] || fail "no events in the dump"
echo "window $start .. $end, events $1 .. $2"
[ "${start:-0}" -gt 0 ] && [ "$start" -le "$1" ] || fail "window start_ts $start after the first event's $1"
[ "${end:-0}" -ge "$2" ] || fail "window end_ts $end before the last event's $2"
echo "ok"
