#!/bin/sh
# test-live-first.sh - `corotracer serve` of a trace larger than its first
# read (docs/DASHBOARD.md "Live view", "Detail on request"): the first /data
# comes from the trace's first part and says "analysing" with no finding (a
# part's findings are never shown as the run's); once the whole file is read
# (while a page follows the event stream), /data no longer says so and holds
# the findings `corotracer report` finds. Detail requests go to a worker:
# some whose client hangs up at once, then four at once, each get 200 or 503
# ("superseded" by a newer one), never anything else, and the server answers
# on after them.
set -u
: "${CT_BUILD:?run through tests/run.sh}" "${COROTRACER:?run through tests/run.sh}"
command -v curl > /dev/null 2>&1 || { echo "curl not installed"; exit 77; }
command -v python3 > /dev/null 2>&1 || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-live-first.XXXXXX") || exit 1
spid="" epid=""
trap '[ -z "$spid" ] || kill "$spid" 2>/dev/null; [ -z "$epid" ] || kill "$epid" 2>/dev/null; rm -rf "$tmp"' EXIT
CHECK_KEEP_GOING=1
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
# 16 MB of JSONL: twice the first read (8 MiB), with one finding.
"$CT_BUILD/bench/bench-report-gen" 100000 1000 > "$tmp/t.jsonl" || { fail "bench-report-gen"; check_done; }
"$COROTRACER" report "$tmp/t.jsonl" --json "$tmp/r.json" -o /dev/null || fail "report exit $?"

# blob FILE: the blob's findings, as "analysing BYTES SIZE" or "findings N".
blob() {
  python3 - "$1" << 'EOF'
import json, struct, sys, zlib
b = zlib.decompress(open(sys.argv[1], 'rb').read())
assert b[-4:] == b'CTD1', 'no magic'
n = struct.unpack('<I', b[-8:-4])[0]
f = json.loads(b[-8 - n:-8])['findings']
a = f.get('analysing')
print('analysing %d %d' % (a['bytes'], a['size']) if a else 'findings %d' % len(f['findings']))
EOF
}

serve_start "$tmp/t.jsonl" "$tmp/log"
[ -n "$url" ] || { fail "no URL printed: $(cat "$tmp/log")"; check_done; }
base=${url%%/?token=*} token=${url##*token=}
size=$(wc -c < "$tmp/t.jsonl")
curl -s --max-time 60 -o "$tmp/d1" "$base/data?token=$token" || fail "the first /data"
# shellcheck disable=SC2046 # its words are the fields
set -- $(blob "$tmp/d1")
if [ "${1:-}" = analysing ]; then
  [ "$2" -lt "$3" ] && [ "$3" = "$size" ] || fail "the first /data: read $2 of $3 B, want less than all of $size"
else
  fail "the first /data of $size B: '$*', want 'analysing' (read from its first part)"
fi

# A page follows: the rest is read between requests, and the whole data follows.
curl -s -N --max-time 300 -o /dev/null "$base/events?token=$token" & epid=$!
want=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['findings']))" "$tmp/r.json")
got=""
for _ in $(seq 600); do
  curl -s --max-time 60 -o "$tmp/d2" "$base/data?token=$token" && got=$(blob "$tmp/d2")
  [ "${got%% *}" = findings ] && break
  sleep 0.5
done
[ "$got" = "findings $want" ] || fail "the whole /data: '$got', want 'findings $want' (report's)"

# Detail requests that hang up at once, their answers still being made, then
# four at once (as many as may be pending from one address: a fifth would push
# out the oldest, docs/SECURITY.md): each answered 200, or 503 superseded (the
# worker's queue full, a newer request pushed out the oldest waiting).
lanes=$(seq -s, 1 1000)
for i in 1 2 3; do
  curl -s --max-time 0.01 -o /dev/null "$base/detail?token=$token&t0=$i&t1=30000000000&lanes=$lanes"
done
for i in 1 2 3 4; do
  curl -s --max-time 120 -o "$tmp/det$i" -w '%{http_code}' \
    "$base/detail?token=$token&t0=$((i * 1000))&t1=20000000000&lanes=$lanes" > "$tmp/code$i" &
done
wait_for=0
while [ $wait_for -lt 600 ] && [ "$(cat "$tmp"/code* 2>/dev/null | wc -c)" -lt 12 ]; do
  sleep 0.2
  wait_for=$((wait_for + 1))
done
for i in 1 2 3 4; do
  code=$(cat "$tmp/code$i")
  case $code in
    200) ;;
    503) grep -q "^detail: superseded" "$tmp/det$i" || fail "detail $i: 503 '$(cat "$tmp/det$i")', want superseded" ;;
    *) fail "detail $i: HTTP '$code', want 200 or 503" ;;
  esac
done
# The worker may still be answering the requests whose clients hung up (a
# sanitized or loaded server slowly): 503 is an answer, for a while; the
# server must come back to 200 once they are done.
tries=0
while :; do
  code=$(curl -s --max-time 60 -o /dev/null -w '%{http_code}' "$base/detail?token=$token&t0=0&t1=5&lanes=1")
  [ "$code" = 503 ] && [ $tries -lt 300 ] || break
  tries=$((tries + 1))
  sleep 0.2
done
[ "$code" = 200 ] || fail "a detail request after the crowd: HTTP $code, want 200 (after $tries busy answers)"
code=$(curl -s --max-time 60 -o /dev/null -w '%{http_code}' "$base/detail?token=$token&t0=9&t1=5&lanes=1")
[ "$code" = 400 ] || fail "a bad detail request after the crowd: HTTP $code, want 400"
kill "$epid" 2>/dev/null
epid=""
kill "$spid"
wait "$spid"
spid=""
check_done
