#!/bin/sh
# test-thresholds-agree.sh - one threshold, one verdict, whichever reader
# judges the trace: tests/lib/short-wait parks a coroutine 300 ms (at least),
# never wakes it, then destroys it. With --stuck-ms 200, `report`, the page
# `html` writes (its findings decoded), `serve`'s /data and `export sqlite`'s
# findings table all judge it a lost wakeup; with the default (1000 ms) none
# does; each reader's findings are the report's with the same options. A bad
# value: one line naming the option, exit 2, in each subcommand.
. "$(dirname "$0")/lib/report.sh"
. "$(dirname "$0")/lib/serve.sh"
command -v node > /dev/null 2>&1 || skip "node not installed (sh scripts/install-deps.sh)"
command -v sqlite3 > /dev/null || skip "sqlite3 (the CLI, to read back) not installed"
CT=$COROTRACER
prog=$CT_BUILD/tests/lib/short-wait
[ -x "$prog" ] || { fail "$prog not built"; check_done; }
t=$tmp/t.ctrace
"$CT" run --quiet --lossless -o "$t" -- "$prog" > "$tmp/run.out" 2>&1 ||
  { fail "corotracer run exit $?: $(cat "$tmp/run.out")"; check_done; }
dec() { node tests/browser/decode.mjs "$@"; }
lost() { grep -o '"kind":"lost_wakeup"' "$1" | wc -l | tr -d ' '; }
sq() { sqlite3 "$tmp/$1.db" "$2"; }

# judge NAME OPTION...: the report's JSON, the page and the SQLite export of
# the trace judged with OPTION..., in $tmp/NAME.{json,html,db}.
judge() {
  name=$1
  shift
  "$CT" report "$@" "$t" -o /dev/null --json "$tmp/$name.json" 2> "$tmp/$name.err" ||
    fail "$name: report exit $?: $(cat "$tmp/$name.err")"
  "$CT" html "$@" "$t" -o "$tmp/$name.html" 2> "$tmp/$name.err" ||
    fail "$name: html exit $?: $(cat "$tmp/$name.err")"
  "$CT" export sqlite "$t" -o "$tmp/$name.db" -q "$@" 2> "$tmp/$name.err" ||
    fail "$name: export exit $?: $(cat "$tmp/$name.err")"
}
judge judged --stuck-ms 200
judge default
[ "$(lost "$tmp/judged.json")" = 1 ] || fail "report --stuck-ms 200: no lost wakeup"
[ "$(lost "$tmp/default.json")" = 0 ] || fail "report: a lost wakeup under the default threshold"
dec page "$tmp/judged.html" "$tmp/judged.json" > "$tmp/dec.out" ||
  fail "html --stuck-ms 200: not the report's findings: $(cat "$tmp/dec.out")"
dec page "$tmp/default.html" "$tmp/default.json" > "$tmp/dec.out" ||
  fail "html: not the report's findings: $(cat "$tmp/dec.out")"
! dec page "$tmp/default.html" "$tmp/judged.json" > /dev/null ||
  fail "the default page holds --stuck-ms 200's findings"
[ "$(sq judged "SELECT count(*) FROM findings WHERE kind = 'lost_wakeup'")" = 1 ] ||
  fail "export --stuck-ms 200: findings: $(sq judged 'SELECT kind, title FROM findings')"
sq judged "SELECT evidence FROM findings WHERE kind = 'lost_wakeup'" | grep -q 'longer than 200.0 ms' ||
  fail "export --stuck-ms 200: evidence: $(sq judged 'SELECT evidence FROM findings')"
[ "$(sq default "SELECT count(*) FROM findings")" = 0 ] ||
  fail "export: findings under the default threshold: $(sq default 'SELECT kind FROM findings')"

# serve: the live view's findings, judged as the report's.
serve_start "$t" "$tmp/serve.err" --stuck-ms 200
if [ -n "$url" ]; then # the first data is built right after start
  dec serve "$url" "$tmp/judged.json" > "$tmp/serve.dec" ||
    { sleep 1; dec serve "$url" "$tmp/judged.json" > "$tmp/serve.dec"; } ||
    fail "serve --stuck-ms 200: $(cat "$tmp/serve.dec")"
else
  fail "serve printed no URL: $(cat "$tmp/serve.err")"
fi
kill -TERM $spid
wait $spid

# Bad values: one line naming the option, exit 2, nothing written.
bad() {
  want=$1
  shift
  "$CT" "$@" > /dev/null 2> "$tmp/bad.err"
  st=$?
  [ $st -eq 2 ] || fail "$*: exit $st, want 2"
  [ "$(wc -l < "$tmp/bad.err")" -eq 1 ] || fail "$*: not one line: $(cat "$tmp/bad.err")"
  grep -q -- "^corotracer: .*$want wants a number of milliseconds from 1 to 86400000, not '" "$tmp/bad.err" ||
    fail "$*: $(cat "$tmp/bad.err")"
}
bad --stuck-ms report --stuck-ms 12x "$t"
bad --runnable-ms html "$t" -o "$tmp/bad.html" --runnable-ms 0
bad --blocker-ms export sqlite "$t" -o "$tmp/bad.db" --blocker-ms=-5
bad --stuck-ms serve "$t" --stuck-ms 86400001
bad --stuck-ms run --stuck-ms '' -- true
[ ! -e "$tmp/bad.html" ] && [ ! -e "$tmp/bad.db" ] || fail "bad value: an output was written"
finish test-thresholds-agree
