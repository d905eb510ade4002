#!/bin/sh
# test-export-pg.sh - `corotracer export postgres` into a real PostgreSQL
# started here (initdb + pg_ctl, data and Unix socket in a temp dir, no TCP),
# password authentication (scram), stopped at the end. Round trips of a real
# trace and of one with findings, exported twice (no duplicates), two hosts
# side by side, the hostile table name, a wrong password and a failure
# mid-export that leave nothing written, libpq's environment (PGHOST...).
. "$(dirname "$0")/lib/export.sh"
. "$(dirname "$0")/lib/dbserver.sh"
command -v psql > /dev/null || skip "psql not installed"
pg=$tmp/pg
cleanup_hook() { pg_stop "$pg"; }
pg_start "$pg" || { rc=$?; [ $rc = 77 ] && exit 77; fail "PostgreSQL did not start"; check_done; }
q() { psql -X -q -At -F ' ' -c "$1"; }
ex() { "$COROTRACER" export postgres "$@"; }

# Settings from the environment, then from the options.
ex "$hello" -q || fail "export of hello: exit $?"
ex "$hello" -q || fail "second export of hello: exit $?"
(unset PGHOST PGUSER PGDATABASE; "$COROTRACER" export postgresql "$lw" -q --db-host "$pg" --db-user ct --db-name ct --sslmode disable) ||
  fail "export with options: exit $?"
check_roundtrip "postgres hello" q "$hello"
check_roundtrip "postgres lw" q "$lw"
[ "$(q 'SELECT count(*) FROM runs')" = 2 ] || fail "runs: $(q 'SELECT run_id, host FROM runs')"
[ "$(q "SELECT label FROM coroutines WHERE probe_id = 9")" = "$(printf 'we,ird "q"\nx\ty')" ] ||
  fail "label not kept: $(q 'SELECT label FROM coroutines WHERE probe_id = 9')"
[ "$(q "SELECT count(*) FROM pg_indexes WHERE tablename = 'events'")" = 2 ] || fail "events indexes: $(q "SELECT indexname FROM pg_indexes")"

# Escapes and a byte that is not UTF-8 in a label: stored as the same valid text.
ex "$txt" -q || fail "export of txt (escapes, invalid UTF-8): exit $?"
check_text postgres q "upper(encode(convert_to(label, 'UTF8'), 'hex'))"

check_two_hosts postgres q ex
check_two_runs postgres q ex
check_hostile postgres q ex '"x""; DROP TABLE y; --"'
damaged_trace
check_damaged postgres q ex
check_upgrade postgres q ex

# Many hosts into one database at once: four exports start together into
# tables that do not exist yet; all succeed (the advisory lock serializes the
# CREATE TABLEs that would otherwise collide), each run lands once.
for h in a b c d; do
  sed "s/\"host\":\"testbox\"/\"host\":\"host-$h\"/" "$lw" > "$tmp/lw-$h.jsonl"
  ex "$tmp/lw-$h.jsonl" -q --prefix cc_ 2> "$tmp/cc-$h.err" &
done
wait
for h in a b c d; do [ -s "$tmp/cc-$h.err" ] && fail "concurrent export $h: $(cat "$tmp/cc-$h.err")"; done
[ "$(q "SELECT count(*), count(DISTINCT host) FROM cc_events")" = "76 4" ] || fail "concurrent exports: $(q 'SELECT host, count(*) FROM cc_events GROUP BY host')"

# A wrong password: one line, exit 1, nothing written.
before=$(q 'SELECT count(*) FROM events')
PGPASSWORD=wrong ex "$hello" --run-id wrongpw --prefix wp_ 2> "$tmp/err" && fail "wrong password accepted"
[ "$(wc -l < "$tmp/err")" = 1 ] && grep -q "password authentication failed" "$tmp/err" || fail "wrong password message: $(cat "$tmp/err")"
[ "$(q "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'wp_%'")" = 0 ] || fail "wrong password: tables created"
# An unreachable server.
PGHOST=$tmp/nowhere ex "$hello" 2> "$tmp/err" && fail "unreachable server accepted"
[ "$(wc -l < "$tmp/err")" = 1 ] || fail "unreachable server message: $(cat "$tmp/err")"
# Failing mid-export, after the events (a sites table without the columns): rolled back entirely.
q 'CREATE TABLE bad_sites (run_id varchar(255), host varchar(255))'
ex "$lw" --prefix bad_ --run-id midfail 2> "$tmp/err" && fail "export into a bad table succeeded"
[ "$(wc -l < "$tmp/err")" = 1 ] || fail "mid-export failure message: $(cat "$tmp/err")"
[ "$(q "SELECT count(*) FROM pg_tables WHERE tablename = 'bad_events'")" = 0 ] || fail "failed export left bad_events"
[ "$(q 'SELECT count(*) FROM events')" = "$before" ] || fail "events changed by failed exports"
finish test-export-pg
