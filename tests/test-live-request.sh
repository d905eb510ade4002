#!/bin/sh
# test-live-request.sh - the live view's request parsing (issue #34 N9,
# docs/SECURITY.md "The live view"): `corotracer serve` of a fixed trace;
# the token must be the one parameter named token, exactly ours (a repeated
# one, `?token=bad&token=GOOD`, is refused, either order); a request that
# cannot be HTTP gets its 400 at once, not silence until the request timeout;
# a detail request with a bad parameter gets 400 and one line.
set -u
: "${CT_BUILD:?run through tests/run.sh}" "${COROTRACER:?run through tests/run.sh}"
CLIENT=$CT_BUILD/tests/lib/live-client
command -v curl > /dev/null 2>&1 || { echo "curl not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-live-request.XXXXXX") || exit 1
spid=""
trap '[ -z "$spid" ] || kill "$spid" 2>/dev/null; rm -rf "$tmp"' EXIT
CHECK_KEEP_GOING=1
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
data=$(dirname "$0")/data/report
awk -f "$data/gen.awk" "$data/deadlock.txt" > "$tmp/t.jsonl" || fail "gen.awk"

serve_start "$tmp/t.jsonl" "$tmp/log"
[ -n "$url" ] || { fail "no URL printed: $(cat "$tmp/log")"; check_done; }
port=$(echo "$url" | sed 's|http://127.0.0.1:\([0-9]*\)/.*|\1|')
token=$(echo "$url" | sed 's|.*token=||')
base=http://127.0.0.1:$port

# status QUERY WANT: the page's HTTP status for that query.
status() {
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 "$base/$1") || true
  [ "$code" = "$2" ] || fail "/$1: HTTP $code, want $2"
}
status "?token=$token" 200
status "?x=1&token=$token&y=2" 200
status "?token=bad&token=$token" 403
status "?token=$token&token=bad" 403
status "?token=$token&token=$token" 403
status "?token&token=$token" 403
status "?token=${token}0" 403
status "?xtoken=$token" 403
status "?token=" 403

# The detail request (docs/DASHBOARD.md "Detail on request"): its parameters
# checked (400, one line naming the field), a good one answered from the file
# (under the sanitizers too: the window's index and the query's parsing).
status "detail?token=$token&t0=0&t1=100000000000&lanes=1,2" 200
status "detail?token=$token&t0=0&t1=100000000000&lanes=1,2,99999999999999999999" 400
status "detail?token=$token&t0=-5&t1=10&lanes=1" 400
status "detail?token=$token&t0=10&t1=5&lanes=1" 400
status "detail?token=$token&t0=0&t1=10&lanes=" 400
status "detail?token=$token&t0=0&t1=10" 400
status "detail?t0=0&t1=10&lanes=1" 403
curl -s --max-time 30 "$base/detail?token=$token&t0=0&t1=9&lanes=1,x" > "$tmp/why"
[ "$(wc -l < "$tmp/why")" -eq 1 ] && grep -q "^detail: lanes: id 2 (byte 2): not a whole number$" "$tmp/why" ||
  fail "detail, a bad id: '$(cat "$tmp/why")'"

# raw NAME BYTES WANT: BYTES sent (printf's escapes), the connection left
# open: the reply's status line must be WANT, whenever it comes (before the
# fix, none came: the server dropped the connection at its timeout).
raw() {
  # shellcheck disable=SC2059 # the bytes are printf's format on purpose
  printf "$2" | "$CLIENT" "$port" --raw > "$tmp/reply" 2>&1
  first=$(head -n 1 "$tmp/reply" | tr -d '\r')
  [ "$first" = "$3" ] || fail "$1: reply '$first', want '$3'"
}
raw garbage 'garbage\n' "HTTP/1.1 400 Bad Request"
raw binary '\001\377\376\000\n' "HTTP/1.1 400 Bad Request"
raw "lowercase method" 'get / HTTP/1.1\r\n' "HTTP/1.1 400 Bad Request"
raw "bare newlines" "GET /?token=$token HTTP/1.1\nHost: 127.0.0.1:$port\n\n" "HTTP/1.1 400 Bad Request"
raw "no version" "GET /?token=$token\r\n\r\n" "HTTP/1.1 400 Bad Request"
raw "a NUL in a header" "GET /?token=$token HTTP/1.1\r\nHost: 127.0.0.1:$port\r\nX: a\000b\r\n\r\n" \
  "HTTP/1.1 400 Bad Request"
raw "a whole request" "GET /?token=$token HTTP/1.1\r\nHost: 127.0.0.1:$port\r\n\r\n" "HTTP/1.1 200 OK"
raw "POST" "POST /?token=$token HTTP/1.1\r\nHost: 127.0.0.1:$port\r\n\r\n" \
  "HTTP/1.1 405 Method Not Allowed"
kill "$spid"
wait "$spid"
spid=""
check_done
