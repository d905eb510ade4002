#!/bin/sh
# test-live-limits.sh - the live view under silent and slow clients (issue #24
# item 10, docs/SECURITY.md "The live view"): `corotracer serve` of a fixed
# trace; 16 connections that send nothing and 4 slowloris ones (a header line
# every 500 ms, never the end) must not keep out a real request beside them,
# and the server must drop them all within its request timeout (5 s); then 40
# silent connections at once, and a real request still gets in at once.
set -u
: "${CT_BUILD:?run through tests/run.sh}" "${COROTRACER:?run through tests/run.sh}"
CT=$COROTRACER
CLIENT=$CT_BUILD/tests/lib/live-client
command -v curl > /dev/null 2>&1 || { echo "curl not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-live-limits.XXXXXX") || exit 1
pid="" cpid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; [ -z "$cpid" ] || kill "$cpid" 2>/dev/null; rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/check.sh"
data=$(dirname "$0")/data/report
awk -f "$data/gen.awk" "$data/deadlock.txt" > "$tmp/t.jsonl" || fail "gen.awk"

"$CT" serve "$tmp/t.jsonl" --addr 127.0.0.1:0 2> "$tmp/log" &
pid=$!
i=0
url=""
while [ -z "$url" ] && [ $i -lt 100 ]; do
  sleep 0.1
  url=$(sed -n 's/^corotracer: dashboard of .* at //p' "$tmp/log")
  i=$((i + 1))
done
[ -n "$url" ] || fail "no URL printed: $(cat "$tmp/log")"
port=$(echo "$url" | sed 's|http://127.0.0.1:\([0-9]*\)/.*|\1|')
token=$(echo "$url" | sed 's|.*token=||')
base=http://127.0.0.1:$port

# get WHAT PATH: a real request answered 200 within 3 s (less than the
# request timeout: it must get in beside the hostile clients, not after them).
get() {
  code=$(curl -s -o "$tmp/body" -w '%{http_code}' --max-time 3 "$base$2") || true
  [ "$code" = 200 ] || fail "$1: HTTP '$code' ($(head -c 80 "$tmp/body" 2>/dev/null))"
}
# hostile SILENT SLOW: starts the clients, waits until they are connected.
hostile() {
  rm -f "$tmp/clients"
  "$CLIENT" "$port" "$1" "$2" 15 > "$tmp/clients" 2>&1 &
  cpid=$!
  i=0
  while ! grep -q ready "$tmp/clients" 2> /dev/null && [ $i -lt 50 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  grep -q ready "$tmp/clients" || fail "the clients did not connect: $(cat "$tmp/clients")"
  sleep 0.5 # the server has accepted them
}
# dropped: the server closed every hostile connection within the client's 15 s.
dropped() {
  wait "$cpid"
  rc=$?
  cpid=""
  [ $rc -eq 0 ] || fail "hostile connections still open after 15 s: $(tail -n 1 "$tmp/clients")"
  echo "   $(tail -n 1 "$tmp/clients")"
}

echo "== 1. 16 silent and 4 slowloris connections, and a real request beside them"
hostile 16 4
get "the page" "/?token=$token"
grep -q '<html' "$tmp/body" || fail "the page: no HTML"
get "the data" "/data?token=$token"
curl -s -N --max-time 2 "$base/events?token=$token" > "$tmp/events"
grep -q '^event: tick' "$tmp/events" || fail "the event stream: no tick"
dropped

echo "== 2. 40 silent connections at once"
hostile 40 0
get "the page, beside 40 silent connections" "/?token=$token"
dropped
get "the page, afterwards" "/?token=$token"
kill "$pid"
wait "$pid"
pid=""
echo "ok"
