#!/bin/sh
# test-fleet-pg.sh - issue #36: dumps shipped from several hosts into one
# PostgreSQL (started here: temp dir, Unix socket, no TCP) and grouped by root
# cause. Three simulated hosts (their own UTS namespace each, so the engine's
# meta names them apart) run, at once, a program with one lost wakeup and one
# with another under `run --flight --dump-on lost_wakeup --ship URL`: `fleet`
# shows two groups of 3 runs on 3 hosts. Then: a file shipped again adds
# nothing; the server stopped while a dump is made: it waits in the spool and
# ships when the server is back; a shipper SIGKILLed midway, restarted:
# neither lost nor duplicated; hostile labels, paths and command lines round
# trip exactly; the password (only in the URL) appears in no output.
set -u
: "${CT_BUILD:?run through tests/run.sh}" "${COROTRACER:?run through tests/run.sh}"
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/dbserver.sh"
CHECK_KEEP_GOING=1
CT=$COROTRACER
command -v psql > /dev/null || skip "psql not installed"
[ "$(id -u)" = 0 ] && unshare -u true 2> /dev/null || skip "needs root and unshare -u (simulated host names)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-fleet.XXXXXX") || exit 1
chmod 755 "$tmp"
pg=$tmp/pg
trap 'pg_stop "$pg"; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
pg_start "$pg" > "$tmp/pg-start.log" 2>&1 || { rc=$?; cat "$tmp/pg-start.log"; [ $rc = 77 ] && exit 77; fail "PostgreSQL did not start"; check_done; }
# The password only in the URL: libpq's environment holds none.
PW=secret
URL="postgresql:///ct?host=$pg&user=ct&password=$PW"
unset PGPASSWORD
q() { PGPASSWORD=$PW psql -X -q -At -F ' ' -c "$1" 2>&1; }
# Waits (60 s at most) until the query's answer is $2.
wait_for() {
  i=0
  while [ "$(q "$1")" != "$2" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
  [ "$(q "$1")" = "$2" ] || fail "waited 60 s for '$1' to be $2: $(q "$1")"
}
# Hostile text: the program's path (a directory named with quotes, a
# backslash, a pipe, UTF-8; not a newline, which /proc/PID/maps, where the
# engine reads module paths, shows as \012) and its label (quotes, tab,
# newline, a pipe, a backslash, UTF-8).
dir="$tmp/bin 'q' \"d\" \\ | $(printf '\303\251')"
mkdir -p "$dir" && cp "$CT_BUILD/tests/lib/fleet-prog" "$dir/" || { fail "copy fleet-prog"; check_done; }
prog=$dir/fleet-prog
label=$(printf 'we "ird"\t\\ |\nx \303\251')
line_a=$(grep -n 'corotracer_suspend' tests/lib/fleet-prog.c | sed -n 1p | cut -d: -f1)
line_b=$(grep -n 'corotracer_suspend' tests/lib/fleet-prog.c | sed -n 2p | cut -d: -f1)

echo "== 0. a database with the export's tables only (export postgres) takes shipped dumps"
"$CT_BUILD/bench/bench-report-gen" 2000 10 > "$tmp/small.jsonl" || fail "bench-report-gen"
PGPASSWORD=$PW "$CT" export postgres "$tmp/small.jsonl" -q || fail "export postgres: exit $?"
[ "$(q "SELECT to_regclass('dumps') IS NULL")" = t ] || fail "dumps made by export"

echo "== 1. three hosts at once, two bugs each"
# One host: both programs, each a flight recorder dumping on its lost wakeup.
host_runs() {
  h=$1
  mkdir -p "$tmp/$h"
  unshare -u sh -c '
    hostname "$1"
    for bug in a b; do
      "$2" run --quiet --flight 4M --dump-on lost_wakeup --ship "$3" --ship-spool "$4/spool" \
        -o "$4/$bug.ctrace" -- "$5" $bug 2000 "$6" || echo "run $bug: exit $?"
    done' sh "fleet-$h" "$CT" "$URL" "$tmp/$h" "$prog" "$label" > "$tmp/$h/log" 2>&1
}
for h in h1 h2 h3; do host_runs $h & done
wait
for h in h1 h2 h3; do
  for bug in a b; do [ -e "$tmp/$h/$bug.ctrace" ] || fail "$h: no dump of bug $bug: $(cat "$tmp/$h/log")"; done
done
wait_for "SELECT count(*) FROM dumps" 6
wait_for "SELECT count(DISTINCT host) FROM dumps" 3
[ "$(q "SELECT version FROM corotracer_schema WHERE part = 'fleet'")" = 1 ] || fail "schema version: $(q 'SELECT * FROM corotracer_schema')"
"$CT" fleet --db "$URL" --json > "$tmp/fleet.json" 2> "$tmp/fleet.err" || fail "fleet --json: exit $?: $(cat "$tmp/fleet.err")"
"$CT" fleet --db "$URL" --since 1h > "$tmp/fleet.md" 2>> "$tmp/fleet.err" || fail "fleet: exit $?: $(cat "$tmp/fleet.err")"
python3 - "$tmp/fleet.json" "$line_a" "$line_b" << 'PY' || fail "fleet --json: $(cat "$tmp/fleet.json")"
import json, sys
d = json.load(open(sys.argv[1]))
lw = [g for g in d["groups"] if g["kind"] == "lost_wakeup"]
assert len(lw) == 2, lw
by = {g["function"]: g for g in lw}
for fn, line in (("park_a", sys.argv[2]), ("park_b", sys.argv[3])):
    g = by[fn]
    assert (g["runs"], g["hosts"], g["dumps"]) == (3, 3, 3), g
    assert g["host_names"] == ["fleet-h1", "fleet-h2", "fleet-h3"], g
    assert g["file"].endswith("fleet-prog.c") and str(g["line"]) == line, g
    assert g["first_seen_wall_ns"] <= g["last_seen_wall_ns"], g
    assert g["worst_run_id"].startswith(g["worst_trace_run_id"] + "/"), g
PY
grep -q "| lost_wakeup | park_a (.*fleet-prog.c:$line_a) | .* | 3 | 3 | 3 |" "$tmp/fleet.md" || fail "fleet markdown: $(cat "$tmp/fleet.md")"
"$CT" fleet --db "$URL" --json --host fleet-h2 > "$tmp/fleet-h2.json" || fail "fleet --host: exit $?"
python3 -c 'import json,sys; g=[g for g in json.load(open(sys.argv[1]))["groups"] if g["kind"]=="lost_wakeup"]; assert len(g)==2 and all(x["hosts"]==1 and x["runs"]==1 for x in g), g' \
  "$tmp/fleet-h2.json" || fail "fleet --host fleet-h2: $(cat "$tmp/fleet-h2.json")"

echo "== 1b. serve --db: the groups, a dump's dashboard, a file elsewhere, the token"
command -v curl > /dev/null || fail "curl not installed (scripts/install-deps.sh)"
"$CT" serve --db "$URL" --addr 127.0.0.1:0 2> "$tmp/serve.err" &
spid=$!
i=0; until grep -q "groups at http" "$tmp/serve.err" || [ $i -gt 300 ]; do sleep 0.1; i=$((i + 1)); done
base=$(sed -n 's|.*groups at \(http://[0-9.:]*\)/?token=.*|\1|p' "$tmp/serve.err")
token=$(sed -n 's|.*groups at http://.*/?token=\([0-9a-f]*\)$|\1|p' "$tmp/serve.err")
[ -n "$base" ] && [ -n "$token" ] || fail "serve --db printed no URL: $(cat "$tmp/serve.err")"
get() { curl -s -o "$tmp/$1" -w '%{http_code} %{redirect_url}' --max-time 60 "$2"; }
[ "$(get page.html "$base/?token=$token")" = "200 " ] || fail "serve --db: the groups' page: $(cat "$tmp/page.html")"
for fn in "park_a (.*fleet-prog.c:$line_a)" "park_b (.*fleet-prog.c:$line_b)"; do
  grep -q "<tr class=\"group\"><td>[0-9]*</td><td class=\"kind\">lost_wakeup</td><td class=\"site\">$fn</td><td class=\"file\">[^<]*fleet-prog</td><td class=\"runs\">3</td><td class=\"hosts\">3</td><td class=\"dumps\">3</td>" \
    "$tmp/page.html" || fail "serve --db: no group of 3 runs on 3 hosts at $fn: $(cat "$tmp/page.html")"
done
# The program's hostile path, escaped once, exactly.
esc=$(printf '%s' "$prog" | sed "s/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/\"/\&quot;/g; s/'/\&#39;/g")
[ "$(grep -cF "<td class=\"file\">$esc</td>" "$tmp/page.html")" = 2 ] || fail "serve --db: the executable's path, escaped: $esc: $(cat "$tmp/page.html")"
[ "$(grep -c '<td class="kind">lost_wakeup</td>' "$tmp/page.html")" = 2 ] || fail "serve --db: lost_wakeup groups: $(cat "$tmp/page.html")"
# A dump of fleet-h1, its file here as shipped: the dashboard of `serve FILE`.
link=$(grep -o 'href="/run?[^"]*host=fleet-h1"' "$tmp/page.html" | head -1 | sed 's/^href="//; s/"$//; s/&amp;/\&/g')
[ -n "$link" ] || fail "serve --db: no link to a dump of fleet-h1: $(cat "$tmp/page.html")"
to=$(get run.txt "$base$link")
case $to in
"303 http://127.0.0.1:"*"/?token="*) ;;
*) fail "serve --db: $link: $to $(cat "$tmp/run.txt")" ;;
esac
run=${to#303 }
[ "$(get run.html "$run")" = "200 " ] && grep -q "<title>corotracer dashboard</title>" "$tmp/run.html" || fail "the dump's dashboard: $(head -c 300 "$tmp/run.html")"
[ "$(get run.data "${run%%/?token=*}/data?token=${run##*token=}")" = "200 " ] || fail "the dump's /data: $(head -c 300 "$tmp/run.data")"
# The page's data (zlib): the dump's findings at its site, and its file's path.
python3 -c 'import sys, zlib; d = zlib.decompress(open(sys.argv[1], "rb").read()); assert b"park_" in d and sys.argv[2].encode() in d, d[:300]' \
  "$tmp/run.data" "$tmp/h1/" || fail "the dump's /data: no park_ site or no $tmp/h1/ file"
# A dump of fleet-h2 whose file is gone from here: where it is, plainly.
mkdir "$tmp/h2-away" && mv "$tmp"/h2/*.ctrace "$tmp/h2-away/"
link=$(grep -o 'href="/run?[^"]*host=fleet-h2"' "$tmp/page.html" | head -1 | sed 's/^href="//; s/"$//; s/&amp;/\&/g')
[ "$(get away.html "$base$link")" = "200 " ] || fail "serve --db: $link: $(cat "$tmp/away.html")"
grep -q "its file is on another host: <b>fleet-h2</b>, at <code>$tmp/h2/[ab].ctrace</code>" "$tmp/away.html" ||
  fail "serve --db: a file elsewhere said: $(cat "$tmp/away.html")"
mv "$tmp"/h2-away/* "$tmp/h2/"
# A path that holds another file now (a later run's dump): not opened as this dump.
link=$(grep -o 'href="/run?[^"]*host=fleet-h3"' "$tmp/page.html" | head -1 | sed 's/^href="//; s/"$//; s/&amp;/\&/g')
for f in a b; do cp "$tmp/h3/$f.ctrace" "$tmp/h3/$f.shipped" && cp "$tmp/h1/$f.ctrace" "$tmp/h3/$f.ctrace"; done
[ "$(get other.html "$base$link")" = "200 " ] && grep -q "its file is on another host: <b>fleet-h3</b>" "$tmp/other.html" ||
  fail "serve --db: a rewritten file opened as the dump: $(cat "$tmp/other.html")"
for f in a b; do mv "$tmp/h3/$f.shipped" "$tmp/h3/$f.ctrace"; done
# The token: none, a wrong one, a repeated one: 403, also for /run.
for u in "/" "/?token=0123456789abcdef0123456789abcdef" "/?token=$token&token=$token" "$(printf '%s' "$link" | sed "s/token=$token&//")"; do
  [ "$(get denied.txt "$base$u")" = "403 " ] || fail "serve --db without the token: $u: $(cat "$tmp/denied.txt")"
done
kill $spid; wait $spid || fail "serve --db: exit $? at SIGTERM: $(cat "$tmp/serve.err")"
grep -q "$PW" "$tmp"/page.html "$tmp"/run.html "$tmp/serve.err" && fail "serve --db shows the password"

echo "== 2. hostile text round-trips"
exe=$(q "SELECT DISTINCT executable FROM fleet_findings WHERE kind = 'lost_wakeup'")
[ "$exe" = "$prog" ] || fail "executable: '$exe' (want '$prog')"
got=$(q "SELECT DISTINCT label FROM coroutines WHERE label LIKE 'we%'")
[ "$got" = "$label" ] || fail "label: '$got' (want '$label')"
got=$(q "SELECT DISTINCT command::jsonb->>3 FROM dumps")
[ "$got" = "$label" ] || fail "command line: '$got' (want '$label')"
got=$(q "SELECT DISTINCT command::jsonb->>0 FROM dumps")
[ "$got" = "$prog" ] || fail "command's program: '$got' (want '$prog')"

echo "== 3. the same file again adds nothing"
before=$(q "SELECT (SELECT count(*) FROM dumps) || ' ' || (SELECT count(*) FROM events)")
"$CT" ship "$tmp/h1/a.ctrace" --to "$URL" 2> "$tmp/again.err" || fail "ship again: exit $?: $(cat "$tmp/again.err")"
grep -q "shipped before: nothing added" "$tmp/again.err" || fail "ship again said: $(cat "$tmp/again.err")"
[ "$(q "SELECT (SELECT count(*) FROM dumps) || ' ' || (SELECT count(*) FROM events)")" = "$before" ] || fail "shipping again added rows"

echo "== 3b. without --flight: the trace, at exit"
out=$("$CT" run --quiet --ship "$URL" --ship-spool "$tmp/spool-full-trace" -o "$tmp/full.ctrace" -- "$prog" a 100 x 2>&1) ||
  fail "run --ship without --flight: $out"
wait_for "SELECT count(*) FROM dumps WHERE file = '$tmp/full.ctrace' AND dump_trigger IS NULL" 1

echo "== 4. the server away: the dump waits in the spool, ships when it is back"
pg_stop "$pg"
mkdir -p "$tmp/h4"
# Through a pipe: the shipper, retrying, must not hold it (the run returns at once).
t0=$(date +%s)
unshare -u sh -c 'hostname fleet-h4; "$1" run --quiet --flight 4M --dump-on lost_wakeup --ship "$2" --ship-spool "$3/spool" -o "$3/a.ctrace" -- "$4" a 2000 x 2>&1' \
  sh "$CT" "$URL" "$tmp/h4" "$prog" | cat > "$tmp/h4/log" || fail "run with the server down: $(cat "$tmp/h4/log")"
[ $(($(date +%s) - t0)) -lt 30 ] || fail "the run's pipe was held $(($(date +%s) - t0)) s (by the shipper?)"
i=0; until grep -q "dumps wait in" "$tmp/h4/spool/log" 2> /dev/null || [ $i -gt 300 ]; do sleep 0.1; i=$((i + 1)); done
grep -q "1 dumps wait in $tmp/h4/spool, retrying" "$tmp/h4/spool/log" || fail "no spooling line: $(cat "$tmp/h4/spool/log" "$tmp/h4/log")"
[ "$(ls "$tmp/h4/spool" | grep -c '^[0-9]*-[0-9]*$')" = 1 ] || fail "spool: $(ls -la "$tmp/h4/spool")"
[ "$(stat -c %a "$tmp/h4/spool")" = 700 ] || fail "spool mode $(stat -c %a "$tmp/h4/spool")"
pg_as "'$PGBIN/pg_ctl' -D '$pg/data' -l '$pg/log' -w -t 60 -o \"-k $pg -c listen_addresses=''\" start" > /dev/null 2>&1 || fail "restart"
wait_for "SELECT count(*) FROM dumps WHERE host = 'fleet-h4'" 1
i=0; while [ -n "$(ls "$tmp/h4/spool" | grep '^[0-9]*-[0-9]*$')" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -z "$(ls "$tmp/h4/spool" | grep '^[0-9]')" ] || fail "spool not drained: $(ls "$tmp/h4/spool")"

echo "== 5. a shipper SIGKILLed midway, then again: once"
"$CT_BUILD/bench/bench-report-gen" 400000 200 > "$tmp/big.jsonl" || fail "bench-report-gen"
nev=$(grep -c '"kind"' "$tmp/big.jsonl")
for delay in 0.3 1.5; do
  sp=$tmp/spool-kill-$delay
  "$CT" ship --spool "$sp" --add "$tmp/big.jsonl" --to "$URL" 2> "$tmp/kill.err" &
  pid=$!
  sleep $delay
  kill -9 $pid 2> /dev/null
  wait $pid 2> /dev/null
  "$CT" ship --spool "$sp" --to "$URL" 2>> "$tmp/kill.err" || fail "ship after the kill: $(cat "$tmp/kill.err")"
  [ -z "$(ls "$sp" | grep '^[0-9]')" ] || fail "spool not drained after the kill: $(ls "$sp")"
  [ "$(q "SELECT count(*) FROM dumps WHERE file = '$tmp/big.jsonl'")" = 1 ] || fail "big: $(q 'SELECT run_id, file FROM dumps')"
  [ "$(q "SELECT count(*) FROM events e JOIN dumps d USING (run_id, host) WHERE d.file = '$tmp/big.jsonl'")" = "$nev" ] ||
    fail "big's events after the kill at $delay s: $(q "SELECT count(*) FROM events")"
done
# A spool entry whose export committed before the kill (the entry not yet
# removed): found shipped, removed, nothing added.
sp=$tmp/spool-done
"$CT" ship --spool "$sp" --add "$tmp/h1/b.ctrace" --to "$URL" 2> "$tmp/done.err" || fail "ship --add: $(cat "$tmp/done.err")"
grep -q "shipped as run" "$tmp/done.err" && fail "h1/b shipped twice: $(cat "$tmp/done.err")"
[ "$(q "SELECT count(*) FROM dumps WHERE file = '$tmp/h1/b.ctrace'")" = 1 ] || fail "h1/b: $(q 'SELECT file FROM dumps')"

echo "== 6. the spool: bounded, counted, private"
sp=$tmp/spool-full
away="postgresql:///ct?host=$tmp/nowhere&user=ct&password=$PW"
"$CT" ship --spool "$sp" --spool-max 1 --add "$tmp/h1/a.ctrace" --to "$away" 2> "$tmp/full1.err" && fail "shipped to nowhere"
grep -q "1 dumps wait in $sp\$" "$tmp/full1.err" || fail "first into the spool said: $(cat "$tmp/full1.err")"
"$CT" ship --spool "$sp" --spool-max 1 --add "$tmp/h1/b.ctrace" --to "$away" 2> "$tmp/full2.err" && fail "a full spool took more"
grep -q "spool $sp full (1 entries): not queued (1 dropped so far)" "$tmp/full2.err" || fail "full spool said: $(cat "$tmp/full2.err")"
[ "$(cat "$sp/dropped")" = 1 ] || fail "dropped count: $(cat "$sp/dropped")"
chmod 755 "$sp"
"$CT" ship --spool "$sp" --to "$URL" 2> "$tmp/open.err" && fail "a spool others may enter was used"
grep -q "not a private spool" "$tmp/open.err" || fail "open spool said: $(cat "$tmp/open.err")"
chmod 700 "$sp"
"$CT" ship --spool "$sp" --to "$URL" 2> "$tmp/full3.err" || fail "draining: $(cat "$tmp/full3.err")"
[ -z "$(ls "$sp" | grep '^[0-9]')" ] || fail "spool not drained: $(ls "$sp")"

echo "== 7. bad input and a wrong password: one line, no password"
printf 'not a trace\n' > "$tmp/bad.txt"
"$CT" ship "$tmp/bad.txt" --to "$URL" 2> "$tmp/bad.err"; rc=$?
[ $rc = 2 ] && [ "$(wc -l < "$tmp/bad.err")" = 1 ] || fail "bad file: exit $rc: $(cat "$tmp/bad.err")"
"$CT" ship "$tmp/h1/a.ctrace" --to "postgresql:///ct?host=$pg&user=ct&password=wrong$PW" 2> "$tmp/wrong.err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l < "$tmp/wrong.err")" = 1 ] || fail "wrong password: exit $rc: $(cat "$tmp/wrong.err")"
grep -q "password authentication failed" "$tmp/wrong.err" || fail "wrong password said: $(cat "$tmp/wrong.err")"
"$CT" ship "$tmp/h1/a.ctrace" --to "postgresql://ct:$PW@[::1" 2> "$tmp/badurl.err" && fail "a bad URL accepted"
"$CT" fleet --db "postgresql://ct:$PW@%zz/ct" 2> "$tmp/badurl2.err" && fail "a bad URL accepted by fleet"
for f in "$tmp"/*.err "$tmp"/*.json "$tmp"/*.md "$tmp"/h*/log "$tmp"/h*/spool/log "$tmp"/h*/*.ctrace; do
  grep -q "$PW" "$f" && fail "the password shows in $f: $(grep -a "$PW" "$f" | head -3)"
done
[ "$(q "SELECT count(*) FROM dumps WHERE command LIKE '%$PW%' OR file LIKE '%$PW%'")" = 0 ] || fail "the password is in the database"
check_done
echo "test-fleet-pg: ok"
