#!/bin/sh
# test-demo-e2e.sh - the demo end to end: the RESP server answers redis-cli
# and completes redis-benchmark; with --bug, under `corotracer run`, the
# report's findings JSON names the stranded coroutines, the function and
# file:line of the read they park in, and their fds, exactly as the server's
# own log of fds closed without a wake; with the bug off, no lost wakeup, and
# every coroutine that returned recorded its exit before its destroy.
set -u
CT=${COROTRACER:?}
. "$(dirname "$0")/lib/demo.sh"
demo_need redis-benchmark redis-cli

# cli ARGS...: one redis-cli command, bounded.
cli() { timeout 10 redis-cli -h 127.0.0.1 -p "$port" "$@"; }

# bench_csv FILE: every test of a redis-benchmark --csv output, with its rps
# ("PING_INLINE 12345.67"); fails unless each has a positive rate.
bench_csv() {
  tr -d '"' <"$1" | awk -F, '$1 != "test" && NF > 1 {print $1, $2}' >"$1.rps"
  [ -s "$1.rps" ] || { cat "$1"; fail "no redis-benchmark results in $1"; }
  awk '$2 + 0 <= 0 {bad = 1} END {exit bad}' "$1.rps" || { cat "$1"; fail "zero throughput in $1"; }
}

# The objects of the lost_wakeup finding, one per line (the JSON cut at braces).
lost_wakeup_objects() {
  tr '{}' '\n\n' <"$1" | awk '/"kind":"/ {on = /"kind":"lost_wakeup"/} on'
}
# key NAME: the value of "NAME": on each input line that has it.
key() { sed -n "s/.*\"$1\":\\([^,}]*\\).*/\\1/p"; }

# Where conn_read calls sch_read: the line the report must name.
read_line=$(grep -n 'sch_read(fd' examples/demo/resp_server.c | head -n 1 | cut -d: -f1)
[ -n "$read_line" ] || fail "cannot find the sch_read call in examples/demo/resp_server.c"

echo "== 1. untraced, bug off: redis-cli and redis-benchmark"
start "$tmp/plain" "$SRV" --port 0 --port-file "$tmp/plain/port"
[ "$(cli PING)" = PONG ] || fail "PING"
[ "$(cli SET greeting hello)" = OK ] || fail "SET"
[ "$(cli GET greeting)" = hello ] || fail "GET"
[ "$(cli ECHO "a b")" = "a b" ] || fail "ECHO"
cli INCR counter >/dev/null && cli INCR counter >/dev/null
[ "$(cli INCR counter)" = 3 ] || fail "INCR"
[ "$(cli INCR greeting)" = "ERR value is not an integer or out of range" ] || fail "INCR on a string"
[ "$(cli DEL greeting counter nothing)" = 2 ] || fail "DEL"
[ -z "$(cli GET greeting)" ] || fail "GET after DEL"
timeout 60 redis-benchmark -h 127.0.0.1 -p "$port" -c 20 -n 2000 -t ping,set,get,incr --csv >"$tmp/plain/bench.csv" 2>&1 ||
  fail "redis-benchmark did not complete"
bench_csv "$tmp/plain/bench.csv"
sed 's/^/   rps /' "$tmp/plain/bench.csv.rps"
stop
[ $rc -eq 0 ] || fail "server exit status $rc after SIGTERM"
grep -q "fds closed without waking" "$tmp/plain/log" || fail "no summary on SIGTERM"

echo "== 2. traced, --bug: light load works, a reconnect storm strands coroutines"
start "$tmp/bug" "$CT" run --quiet -n 20000 -o "$tmp/bug/trace.jsonl" -- \
  "$SRV" --port 0 --port-file "$tmp/bug/port" --bug
for i in 1 2 3; do [ "$(cli PING)" = PONG ] || fail "PING $i under light load with --bug"; done
grep -q 'closed fd .* without waking coroutine' "$tmp/bug/log" && fail "the bug fired under light load"
# With the bug the benchmark stalls: bound it, and say so.
timeout -k 2 6 redis-benchmark -h 127.0.0.1 -p "$port" -c 50 -n 2000 -k 0 -t ping --csv >"$tmp/bug/bench.csv" 2>&1
echo "   redis-benchmark exit status $? (124: stalled, stopped after 6 s)"
sleep 1
stop
[ $rc -eq 0 ] || fail "engine exit status $rc (server should exit 0 on SIGTERM)"
grep 'closed fd .* without waking coroutine' "$tmp/bug/log" |
  sed 's/.*closed fd \([0-9]*\) .* coroutine \([0-9]*\).*/\2 \1/' | sort >"$tmp/bug/closed"
nclosed=$(wc -l <"$tmp/bug/closed")
[ "$nclosed" -ge 1 ] || { cat "$tmp/bug/log"; fail "the bug never fired under the benchmark"; }
timeout 60 "$CT" report "$tmp/bug/trace.jsonl" -o "$tmp/bug/report.md" --json "$tmp/bug/findings.json" ||
  fail "report exit status $?"
lost_wakeup_objects "$tmp/bug/findings.json" >"$tmp/bug/lw"
# Coroutines whose evidence lost events land in a second, warning-level
# lost_wakeup finding: add the findings (and their conn_read sites) up.
sum() { awk '{s += $1} END {if (NR) print s}'; }
count=$(grep '"kind":"lost_wakeup"' "$tmp/bug/lw" | key count | sum)
[ -n "$count" ] && [ "$count" -ge 1 ] || fail "no lost_wakeup finding; findings: $(grep -o '"kind":"[a-z_]*"' "$tmp/bug/findings.json" | tr '\n' ' ')"
site=$(grep '"function":"conn_read"' "$tmp/bug/lw" | head -n 1)
[ -n "$site" ] || fail "no lost_wakeup site names conn_read: $(grep '"site":' "$tmp/bug/lw")"
file=$(echo "$site" | key file | tr -d '"')
line=$(echo "$site" | key line)
site_count=$(grep '"function":"conn_read"' "$tmp/bug/lw" | key count | sum)
case "$file" in */resp_server.c | resp_server.c) ;; *) fail "conn_read site file is '$file'" ;; esac
[ "$line" = "$read_line" ] || fail "conn_read site line $line, the sch_read call is on line $read_line"
[ "$site_count" = "$nclosed" ] || fail "conn_read site counts $site_count coroutines, the server closed $nclosed fds"
# The stranded coroutines and their fds, against the server's own log.
grep '"wait":"fd"' "$tmp/bug/lw" | while read -r l; do
  echo "$(echo "$l" | key probe_id) $(echo "$l" | key obj)"
done | sort >"$tmp/bug/found"
if ! cmp -s "$tmp/bug/found" "$tmp/bug/closed"; then
  echo "coroutine fd (report) vs coroutine fd (server log):"
  diff "$tmp/bug/found" "$tmp/bug/closed" | head -n 20
  fail "the report's stuck coroutines and fds differ from the fds the server closed without waking"
fi
grep -q '"exit":{"code":0}' "$tmp/bug/findings.json" || fail "findings do not record the program's exit code 0"
echo "   lost_wakeup: $count coroutines; conn_read at $file:$line holds $site_count, each with the fd the server closed"

echo "== 3. traced, bug off: the benchmark completes, no lost wakeup"
start "$tmp/fixed" "$CT" run --quiet -n 20000 -o "$tmp/fixed/trace.jsonl" -- \
  "$SRV" --port 0 --port-file "$tmp/fixed/port"
timeout 60 redis-benchmark -h 127.0.0.1 -p "$port" -c 50 -n 2000 -k 0 -t ping,get --csv >"$tmp/fixed/bench.csv" 2>&1 ||
  fail "redis-benchmark did not complete against the fixed server"
bench_csv "$tmp/fixed/bench.csv"
sed 's/^/   rps /' "$tmp/fixed/bench.csv.rps"
sleep 0.5
stop
[ $rc -eq 0 ] || fail "engine exit status $rc"
timeout 60 "$CT" report "$tmp/fixed/trace.jsonl" -o "$tmp/fixed/report.md" --json "$tmp/fixed/findings.json" ||
  fail "report exit status $?"
grep -q '"format":"corotracer-findings"' "$tmp/fixed/findings.json" || fail "not a findings file"
grep -q '"kind":"lost_wakeup"' "$tmp/fixed/findings.json" && {
  lost_wakeup_objects "$tmp/fixed/findings.json" | head -n 20
  fail "lost_wakeup reported with the bug off"
}
grep -q 'closed fd .* without waking coroutine' "$tmp/fixed/log" && fail "the fixed server closed fds without waking"
# Coroutines that returned recorded it (corotracer_exit) before their destroy:
# every destroy whose coroutine lost no event just before follows an exit.
awk -F'"kind":"' 'NF > 1 {
    split($2, k, "\""); id = $0; sub(/.*"probe_id":/, "", id); sub(/,.*/, "", id)
    ev = $0; sub(/.*"ev":/, "", ev); sub(/[,}].*/, "", ev)
    if (k[1] == "destroy") { if (ev == next_ev[id] && last[id] != "exit") bad++; n++ }
    last[id] = k[1] == "suspend" && /"wait":"exit"/ ? "exit" : k[1]; next_ev[id] = ev + 1
  } END { printf "   %d destroys, %d without an exit before them\n", n, bad; exit !(n > 0 && bad == 0) }' \
  "$tmp/fixed/trace.jsonl" || fail "finished coroutines do not record corotracer_exit before their destroy"
echo "ok"
