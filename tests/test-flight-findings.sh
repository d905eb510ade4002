#!/bin/sh
# test-flight-findings.sh - issue #21: live findings as flight triggers
# (run --flight --dump-on lost_wakeup). The demo server with --bug under a
# reconnect storm strands coroutines in conn_read: a dump is written within
# --stuck-ms + 1 s of the first fd the server closed without a wake (its own
# log line), and the report of that dump names conn_read at its sch_read
# line. The fixed server under the same flags and load writes no dump.
set -u
CT=${COROTRACER:?}
. "$(dirname "$0")/lib/demo.sh"
demo_need redis-benchmark redis-cli
STUCK_MS=1000
read_line=$(grep -n 'sch_read(fd' examples/demo/resp_server.c | head -n 1 | cut -d: -f1)
[ -n "$read_line" ] || fail "cannot find the sch_read call in examples/demo/resp_server.c"
now_ms() { echo $(($(date +%s%N) / 1000000)); }

echo "== 1. --bug: a dump on the first lost wakeup"
d=$tmp/bug
start "$d" "$CT" run --quiet --flight 16M --dump-on lost_wakeup --stuck-ms $STUCK_MS \
  -o "$d/dump.ctrace" -- "$SRV" --port 0 --port-file "$d/port" --bug
timeout -k 2 8 redis-benchmark -h 127.0.0.1 -p "$port" -c 50 -n 2000 -k 0 -t ping --csv \
  >"$d/bench.csv" 2>&1 &
bench=$!
t_lost="" t_dump="" i=0
while [ $i -lt 500 ] && [ -z "$t_dump" ]; do # 10 s at most
  [ -z "$t_lost" ] && grep -q 'closed fd .* without waking coroutine' "$d/log" && t_lost=$(now_ms)
  [ -e "$d/dump.ctrace" ] && t_dump=$(now_ms)
  sleep 0.02
  i=$((i + 1))
done
wait $bench
[ -n "$t_lost" ] || { cat "$d/log"; fail "the bug never fired under the benchmark"; }
[ -n "$t_dump" ] || { cat "$d/log"; fail "no dump within 10 s of the benchmark's start"; }
late=$((t_dump - t_lost))
echo "   first lost wakeup seen at +0, the dump at +$late ms (budget $((STUCK_MS + 1000)) ms)"
[ $late -le $((STUCK_MS + 1000)) ] || fail "the dump came $late ms after the first lost wakeup"
sleep 1
stop
[ $rc -eq 0 ] || fail "engine exit status $rc"
grep -q "^corotracer: $d/dump.ctrace: flight dump on lost_wakeup: " "$d/log" ||
  fail "no dump line: $(grep corotracer "$d/log")"
[ ! -e "$d/dump.ctrace.1" ] || fail "a second dump for the same finding in one window"
timeout 60 "$CT" report "$d/dump.ctrace" -o "$d/report.md" || fail "report of the dump: exit $?"
grep -q "^### 1\\. \\[error\\] .* suspended forever" "$d/report.md" ||
  fail "the dump's report has no lost wakeup first: $(grep '^###' "$d/report.md")"
grep -q "conn_read (resp_server.c:$read_line)" "$d/report.md" ||
  fail "the dump's report does not name conn_read (resp_server.c:$read_line)"

echo "== 2. fixed: the same flags and load, no dump"
d=$tmp/fixed
start "$d" "$CT" run --quiet --flight 16M --dump-on lost_wakeup --stuck-ms $STUCK_MS \
  -o "$d/dump.ctrace" -- "$SRV" --port 0 --port-file "$d/port"
timeout 60 redis-benchmark -h 127.0.0.1 -p "$port" -c 50 -n 2000 -k 0 -t ping,get --csv \
  >"$d/bench.csv" 2>&1 || fail "redis-benchmark did not complete against the fixed server"
# Then a light load, one client at a time: the acceptor's last parks are at
# its accept, as an idle server's are. (Right after a burst that filled the
# connection slots, its last park before going idle may follow a wait for a
# slot, and the report's likely-idle rule, "woken 3 times in a row at the
# site it parks at", docs/REPORT.md, then calls it a lost wakeup, as the
# live view does: docs/FLIGHT.md "Live findings".)
for i in 1 2 3 4; do
  [ "$(timeout 10 redis-cli -h 127.0.0.1 -p "$port" PING)" = PONG ] || fail "PING $i"
done
sleep $(((STUCK_MS + 1500) / 1000)).5 # past the threshold, idle: the acceptor waits
stop
[ $rc -eq 0 ] || fail "engine exit status $rc"
[ ! -e "$d/dump.ctrace" ] || fail "the fixed server got a dump: $(grep corotracer "$d/log")"
grep -q "flight dump" "$d/log" && fail "a dump line for the fixed server: $(cat "$d/log")"
echo "ok"
