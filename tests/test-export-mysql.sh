#!/bin/sh
# test-export-mysql.sh - `corotracer export mysql` into a real MariaDB started
# here (mariadb-install-db + mariadbd, datadir and Unix socket in a temp dir,
# no networking), a password user, stopped at the end. Round trips, exported
# twice (no duplicates), two hosts side by side, the hostile table name, a
# wrong password and a failure mid-export that leave nothing written, the
# password from MYSQL_PWD and from an option file.
. "$(dirname "$0")/lib/export.sh"
. "$(dirname "$0")/lib/dbserver.sh"
my=$tmp/my
cleanup_hook() { my_stop "$my"; }
my_start "$my" || { rc=$?; [ $rc = 77 ] && exit 77; fail "MariaDB did not start"; check_done; }
q() { mariadb --no-defaults -S "$my/sock" -u root -N -B ct -e "$1" | sed 's/\t/ /g; s/\\n/\n/g; s/\\t/\t/g'; }
export MYSQL_PWD=secret
ex() { "$COROTRACER" export mysql "$@" --socket "$my/sock" --db-user ct --db-name ct; }

ex "$hello" -q || fail "export of hello: exit $?"
ex "$hello" -q || fail "second export of hello: exit $?"
# The password from an option file instead ([client] of ~/.my.cnf).
printf '[client]\npassword=secret\n' > "$tmp/my.cnf"
(unset MYSQL_PWD; HOME=$tmp; cp "$tmp/my.cnf" "$tmp/.my.cnf"; "$COROTRACER" export mariadb "$lw" -q -mysql-socket "$my/sock" -db-user ct -db-name ct) ||
  fail "export with the password in ~/.my.cnf: exit $?"
check_roundtrip "mysql hello" q "$hello"
check_roundtrip "mysql lw" q "$lw"
[ "$(q 'SELECT count(*) FROM runs')" = 2 ] || fail "runs: $(q 'SELECT run_id, host FROM runs')"
[ "$(q "SELECT label FROM coroutines WHERE probe_id = 9")" = "$(printf 'we,ird "q"\nx\ty')" ] ||
  fail "label not kept: $(q 'SELECT label FROM coroutines WHERE probe_id = 9')"

# Escapes and a byte that is not UTF-8 in a label: stored as the same valid text.
ex "$txt" -q || fail "export of txt (escapes, invalid UTF-8): exit $?"
check_text mysql q "HEX(label)"

check_two_hosts mysql q ex
check_two_runs mysql q ex
check_hostile mysql q ex '`x"; DROP TABLE y; --`'
damaged_trace
check_damaged mysql q ex
check_upgrade mysql q ex
# A backquote in the name is doubled, not closing the quote.
ex "$hello" -q --table 'x`; DROP TABLE y; --' || fail "hostile table name with a backquote: exit $?"
[ "$(q 'SELECT a FROM y')" = 42 ] || fail "table y was touched"
[ "$(q 'SELECT count(*) FROM `x``; DROP TABLE y; --`')" = "$(expect_events "$hello" | wc -l)" ] || fail "backquoted hostile-named table lacks the events"

# A wrong password: one line, exit 1, nothing written.
before=$(q 'SELECT count(*) FROM events')
MYSQL_PWD=wrong ex "$hello" --run-id wrongpw --prefix wp_ 2> "$tmp/err" && fail "wrong password accepted"
[ "$(wc -l < "$tmp/err")" = 1 ] && grep -q "Access denied" "$tmp/err" || fail "wrong password message: $(cat "$tmp/err")"
[ "$(q "SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'wp\\_%'")" = 0 ] || fail "wrong password: tables created"
# Failing mid-export, after the events (a sites table without the columns): the rows are rolled back.
q 'CREATE TABLE bad_sites (run_id varchar(255), host varchar(255))'
ex "$lw" --prefix bad_ --run-id midfail 2> "$tmp/err" && fail "export into a bad table succeeded"
[ "$(wc -l < "$tmp/err")" = 1 ] || fail "mid-export failure message: $(cat "$tmp/err")"
[ "$(q "SELECT count(*) FROM bad_events")" = 0 ] || fail "failed export left rows in bad_events"
[ "$(q 'SELECT count(*) FROM events')" = "$before" ] || fail "events changed by failed exports"
finish test-export-mysql
