#!/bin/sh
# test-html.sh - `corotracer html` and `corotracer serve` without a browser,
# in every build (sanitizers included): bad input gives one line and exit 2;
# on the report's scenarios, the reference fixture and stdin the page holds
# the data (decoded by tests/browser/decode.mjs with node's zlib) with the
# report's findings exactly; over the span budget the coroutines a finding
# names keep every span and the rows of the others are pruned (counted),
# and with no finding naming one the trace is read once;
# serve answers /data with the token only, and following a growing trace
# its findings stay exactly the report's.
. "$(dirname "$0")/lib/report.sh"
. "$(dirname "$0")/lib/serve.sh"
command -v node >/dev/null 2>&1 || skip "node not installed (sh scripts/install-deps.sh)"
CT=$COROTRACER
dec() { node tests/browser/decode.mjs "$@"; }

bad() {
  name=$1 want=$2; shift 2
  "$CT" "$@" > "$tmp/out" 2> "$tmp/err"; rc=$?
  [ $rc -eq 2 ] || fail "$name: exit $rc, want 2"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "$name: stderr is not one line: $(cat "$tmp/err")"
  grep -q "^corotracer: .*$want" "$tmp/err" || fail "$name: stderr '$(cat "$tmp/err")' lacks '$want'"
}
bad missing "No such file" html "$tmp/nope.jsonl" -o "$tmp/x.html"
: > "$tmp/empty.jsonl"
bad empty "empty file, not a trace" html "$tmp/empty.jsonl" -o "$tmp/x.html"
head -c 65536 "$CT" > "$tmp/binary.jsonl"
bad binary "binary.jsonl:[0-9]*: not a corotracer trace" html "$tmp/binary.jsonl" -o "$tmp/x.html"
bad unknown-option "unknown option: --frob" html "$tmp/empty.jsonl" --frob
bad no-trace "no trace given" html
bad serve-addr "expected \[ADDR:\]PORT" serve "$tmp/empty.jsonl" --addr 1.2.3:80
bad serve-missing "No such file" serve "$tmp/nope.jsonl"
[ ! -e "$tmp/x.html" ] || fail "a page was written for bad input"

for s in lost-wakeup deadlock race blocker violations v1 killed lost-events; do
  gen $s
  "$CT" report "$tmp/$s.jsonl" -o /dev/null --json "$tmp/$s.json"
  "$CT" html "$tmp/$s.jsonl" -o "$tmp/$s.html" || { fail "$s: html exit $?"; continue; }
  dec page "$tmp/$s.html" "$tmp/$s.json" >"$tmp/$s.dec" || fail "$s: $(cat "$tmp/$s.dec")"
done
"$CT" html "$tmp/lost-wakeup.jsonl" -o /nonexistent/dir/x.html 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "/nonexistent/dir/x.html" "$tmp/err" || fail "unwritable output: $(cat "$tmp/err")"
ref=$(dirname "$0")/data/reference-engine-trace.jsonl
[ -f "$ref" ] || { fail "$ref missing"; check_done; }
cp "$ref" "$tmp/ref.jsonl"
"$CT" report "$tmp/ref.jsonl" -o /dev/null --json "$tmp/ref.json"
"$CT" html "$tmp/ref.jsonl" -o "$tmp/ref.html" || fail "reference fixture: html exit $?"
dec page "$tmp/ref.html" "$tmp/ref.json" >"$tmp/ref.dec" || fail "reference fixture: $(cat "$tmp/ref.dec")"
# stdin: one pass, same data.
# An output that is not a regular file (a FIFO, /dev/null) is written in
# place, never replaced by a rename.
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.out" &
cpid=$!
"$CT" html "$tmp/deadlock.jsonl" -o "$tmp/fifo" || fail "fifo: html exit $?"
# A rename would leave the reader waiting on the old FIFO forever.
[ -p "$tmp/fifo" ] || { kill $cpid; fail "fifo: replaced by a regular file"; }
wait $cpid
grep -q '<html' "$tmp/fifo.out" || fail "fifo: no page came through"
"$CT" html - -o "$tmp/stdin.html" <"$tmp/deadlock.jsonl" || fail "stdin: html exit $?"
sed 's|"path":"[^"]*"|"path":"stdin"|' "$tmp/deadlock.json" >"$tmp/stdin.json"
dec page "$tmp/stdin.html" "$tmp/stdin.json" >"$tmp/stdin.dec" || fail "stdin: $(cat "$tmp/stdin.dec")"

# Over the budget: two passes; the coroutines of findings keep all their spans.
if [ -x "$CT_BUILD/bench/bench-report-gen" ]; then
  "$CT_BUILD/bench/bench-report-gen" 20000 300 >"$tmp/big.jsonl"
  "$CT" report "$tmp/big.jsonl" -o /dev/null --json "$tmp/big.json"
  "$CT" html "$tmp/big.jsonl" -o "$tmp/big-full.html" || fail "big: html exit $?"
  "$CT" html "$tmp/big.jsonl" -o "$tmp/big-small.html" --span-budget 3000 || fail "big, small budget: html exit $?"
  echo '{"summarized":false,"pruned":false}' >"$tmp/e1.json"
  printf '{"summarized":true,"kept_full":"%s"}' "$tmp/big-full.html" >"$tmp/e2.json"
  dec page "$tmp/big-full.html" "$tmp/big.json" "$tmp/e1.json" >"$tmp/b1.dec" || fail "big: $(cat "$tmp/b1.dec")"
  dec page "$tmp/big-small.html" "$tmp/big.json" "$tmp/e2.json" >"$tmp/b2.dec" || fail "big, small budget: $(cat "$tmp/b2.dec")"
  # ... and the rows of finished coroutines no finding names go (memory
  # bounded), counted: past the budget for longer than the ring of the
  # newest spans (docs/DASHBOARD.md "Scale") holds them.
  "$CT_BUILD/bench/bench-report-gen" 60000 300 >"$tmp/long.jsonl"
  "$CT" report "$tmp/long.jsonl" -o /dev/null --json "$tmp/long.json"
  "$CT" html "$tmp/long.jsonl" -o "$tmp/long-small.html" --span-budget 3000 || fail "long, small budget: html exit $?"
  echo '{"summarized":true,"pruned":true}' >"$tmp/e3.json"
  dec page "$tmp/long-small.html" "$tmp/long.json" "$tmp/e3.json" >"$tmp/b3.dec" || fail "long, small budget: $(cat "$tmp/b3.dec")"
  cat "$tmp/b2.dec"
fi
# Over the budget with no finding naming a coroutine: one pass (a second one
# would rebuild the same model), the spans past the budget summarized.
if [ -x "$CT_BUILD/tests/lib/sdk-writer" ]; then
  "$CT" run --quiet --lossless -o "$tmp/spaced.ctrace" -- "$CT_BUILD/tests/lib/sdk-writer" spaced 1 2000 0 \
    "$tmp/spaced.w" >"$tmp/spaced.out" 2>&1 || fail "spaced: run exit $?: $(cat "$tmp/spaced.out")"
  "$CT" report "$tmp/spaced.ctrace" -o /dev/null --json "$tmp/spaced.json"
  "$CT" html "$tmp/spaced.ctrace" -o "$tmp/spaced.html" --span-budget 100 --stats 2>"$tmp/spaced.err" ||
    fail "spaced: html exit $?"
  grep -q ' 1 pass(es), [0-9]* spans ([1-9][0-9]* summarized)' "$tmp/spaced.err" ||
    fail "spaced: want one pass with spans summarized: $(cat "$tmp/spaced.err")"
  dec page "$tmp/spaced.html" "$tmp/spaced.json" >"$tmp/spaced.dec" || fail "spaced: $(cat "$tmp/spaced.dec")"
fi

# serve: the same data over HTTP, with the token only; SIGTERM ends it.
serve_start "$tmp/deadlock.jsonl" "$tmp/serve.err"
if [ -n "$url" ]; then
  i=0 # the first data is built right after start
  dec serve "$url" "$tmp/deadlock.json" >"$tmp/serve.dec" || { sleep 1; dec serve "$url" "$tmp/deadlock.json" >"$tmp/serve.dec"; } ||
    fail "serve: $(cat "$tmp/serve.dec")"
else
  fail "serve printed no URL: $(cat "$tmp/serve.err")"
fi
# A port in use: run --serve says so and does not start the program.
sport=$(echo "$url" | sed -n 's|http://127.0.0.1:\([0-9]*\)/.*|\1|p')
"$CT" run --quiet --serve "127.0.0.1:$sport" -o "$tmp/busy.jsonl" -- sh -c "touch '$tmp/ran'" 2>"$tmp/busy.err"; rc=$?
[ $rc -eq 1 ] && grep -q "^corotracer: --serve 127.0.0.1:$sport: Address already in use$" "$tmp/busy.err" ||
  fail "run --serve on a busy port: exit $rc: $(cat "$tmp/busy.err")"
[ ! -e "$tmp/ran" ] || fail "run --serve on a busy port started the program"
kill -TERM $spid
i=0
while kill -0 $spid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 $spid 2>/dev/null && { kill -KILL $spid; fail "serve ignored SIGTERM"; }
wait $spid; rc=$?
[ $rc -eq 0 ] || fail "serve exit status $rc after SIGTERM"
# run --serve: the engine starts the server, prints the URL, stops it at the end.
if [ -x "$CT_BUILD/examples/hello" ]; then
  "$CT" run --quiet --serve 127.0.0.1:0 -o "$tmp/hello.jsonl" -- "$CT_BUILD/examples/hello" --pace-us 2000 \
    >"$tmp/hello.out" 2>"$tmp/hello.err"; rc=$?
  [ $rc -eq 0 ] || fail "run --serve: exit $rc: $(cat "$tmp/hello.err")"
  grep -q "^corotracer: live dashboard at http://127.0.0.1:[0-9]*/?token=[0-9a-f]\{32\}$" "$tmp/hello.err" ||
    fail "run --serve: no URL line: $(cat "$tmp/hello.err")"
  grep -q '"type":"end"' "$tmp/hello.jsonl" || fail "run --serve: the trace has no end line"
  # Its page names every site the coroutine table shows, the create sites of
  # coroutines that never suspended included (not in the report's sites).
  "$CT" report "$tmp/hello.jsonl" -o /dev/null --json "$tmp/hello.json"
  "$CT" html "$tmp/hello.jsonl" -o "$tmp/hello.html" || fail "hello: html exit $?"
  echo '{"summarized":false,"symbolized":true}' >"$tmp/e3.json"
  dec page "$tmp/hello.html" "$tmp/hello.json" "$tmp/e3.json" >"$tmp/hello.dec" || fail "hello: $(cat "$tmp/hello.dec")"
fi
# serve follows a growing trace incrementally: a snapshot taken while a run
# over the blocker threshold is still going must not count it twice (the
# report's build closes such runs), so the final data's findings are still
# exactly those of report --json on the whole file.
cat >"$tmp/grow.txt" <<'TXT'
meta
create 1 0 100
resume 1 10 100
create 2 5 102
resume 2 6 102
suspend 2 7 102 6000
wake 2 500 103 0
resume 2 501 102
suspend 2 502 102 6000
suspend 1 1000 100 5000
wake 1 1001 101 0
resume 1 1002 100
destroy 1 1003 100
wake 2 1004 103 0
resume 2 1005 102
destroy 2 1006 102
end 1100 code 0
TXT
awk -f "$data/gen.awk" "$tmp/grow.txt" >"$tmp/grow-all.jsonl" || fail "grow: gen.awk"
"$CT" report "$tmp/grow-all.jsonl" -o /dev/null --json "$tmp/grow.json"
grep -q '"kind":"blocker"' "$tmp/grow.json" || fail "grow: the scenario has no blocker finding"
n=$(grep -n '"ts":1000500000000' "$tmp/grow-all.jsonl" | cut -d: -f1) # up to the wake at 500 ms
head -n "$n" "$tmp/grow-all.jsonl" >"$tmp/grow.jsonl"
serve_start "$tmp/grow.jsonl" "$tmp/grow.err"
gpid=$spid gurl=$url
if [ -n "$gurl" ]; then
  node tests/browser/sse-client.mjs "$gurl" >"$tmp/grow.client" 2>&1 &
  cpid=$!
  sleep 2.5 # a snapshot of the partial trace (the run of coroutine 1 open for 490 ms)
  tail -n +"$((n + 1))" "$tmp/grow-all.jsonl" >>"$tmp/grow.jsonl"
  sleep 3 # the next snapshot, of the whole trace
  dec serve "$gurl" "$tmp/grow.json" >"$tmp/grow.dec" || fail "serve of a growing trace: $(cat "$tmp/grow.dec")"
  kill $cpid 2>/dev/null
  wait $cpid 2>/dev/null
else
  fail "serve (growing) printed no URL: $(cat "$tmp/grow.err")"
fi
kill -TERM $gpid
wait $gpid
finish test-html
