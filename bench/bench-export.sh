#!/bin/sh
# bench-export.sh - `corotracer export` throughput (rows/s, all tables; time
# includes loading the trace) per target on a generated trace, against
# `corotracer report` on the same file in the same run (the parse baseline),
# and the reference's method for comparison: one INSERT statement per row
# piped through the sqlite3 / psql / mariadb command-line clients
# (autocommit), on the first REF_ROWS events. Servers: throwaway PostgreSQL
# and MariaDB in a temp dir (tests/lib/dbserver.sh).
# Usage: O=build/x [RUNS=3] [REF_ROWS=20000] sh bench/bench-export.sh [EVENTS]   (default 1e6)
# Needs /usr/bin/time (Debian package time) besides the servers and clients.
set -u
O=${O:-build/default}
runs=${RUNS:-3} refrows=${REF_ROWS:-20000} n=${1:-1000000}
gen=$O/bench/bench-report-gen ct=$O/bin/corotracer
[ -x "$gen" ] && [ -x "$ct" ] || { echo "build first: make O=$O" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-export.XXXXXX")
chmod 755 "$tmp"
. "$(dirname "$0")/../tests/lib/dbserver.sh"
trap 'pg_stop "$tmp/pg"; my_stop "$tmp/my"; rm -rf "$tmp"' EXIT
pg_start "$tmp/pg" > "$tmp/pgstart.log" 2>&1 || { cat "$tmp/pgstart.log"; echo "PostgreSQL did not start" >&2; exit 1; }
my_start "$tmp/my" > "$tmp/mystart.log" 2>&1 || { cat "$tmp/mystart.log"; echo "MariaDB did not start" >&2; exit 1; }
export MYSQL_PWD=secret

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
secs() {
  s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N)
  echo "$s $e" | awk '{ printf "%.4f\n", $2 - $1 }'
}

f=$tmp/trace.jsonl
"$gen" "$n" 1000 > "$f"
echo "trace: $n events, $(wc -c < "$f") bytes; load: $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$tmp/rep"
for i in $(seq "$runs"); do secs "$ct" report "$f" -o /dev/null >> "$tmp/rep"; done
rep=$(median < "$tmp/rep")
echo "report (parse + analysis baseline): $rep s"

# run NAME RESET ARGS...: RESET empties the target, then `corotracer export
# ARGS` runs; median wall and CPU (user + sys of the exporter) seconds of RUNS
# runs; rows from its summary line. Then once more without RESET: the run is
# replaced (DELETE of its rows, insert again).
run() {
  name=$1 reset=$2; shift 2
  : > "$tmp/t"
  for i in $(seq "$runs"); do
    $reset
    /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$ct" export "$@" 2> "$tmp/sum" || { cat "$tmp/sum"; return; }
    awk '{ print $1, $2 + $3 }' "$tmp/time" >> "$tmp/t"
  done
  rows=$(sed -n 's/^corotracer: export [a-z0-9-]*: \([0-9]*\) .*/\1/p' "$tmp/sum")
  wall=$(cut -d' ' -f1 "$tmp/t" | median) cpu=$(cut -d' ' -f2 "$tmp/t" | median)
  again=-
  if [ "$reset" != true ]; then
    /usr/bin/time -f '%e' -o "$tmp/time" "$ct" export "$@" 2> /dev/null && again=$(cat "$tmp/time")
  fi
  echo "$name $rows $wall $cpu $rep $again" | awk '{
    printf "%-9s %8d rows: %6.2f s wall = %7.0f rows/s, exporter CPU %5.2f s (%.1f x report wall); re-export (replace) %s s\n",
      $1, $2, $3, $2 / $3, $4, $3 / $5, $6 }'
}
tables="runs, coroutines, events, sites, findings, finding_coroutines"
reset_sqlite() { rm -f "$tmp/t.db" "$tmp/t.db-wal" "$tmp/t.db-shm"; }
reset_pg() { psql -X -q -c "DROP TABLE IF EXISTS $tables" 2> /dev/null; }
reset_my() { mariadb --no-defaults -S "$tmp/my/sock" -u ct ct -e "DROP TABLE IF EXISTS $tables"; }
run sqlite reset_sqlite sqlite "$f" -o "$tmp/t.db"
run postgres reset_pg postgres "$f"
run mysql reset_my mysql "$f" --socket "$tmp/my/sock" --db-user ct --db-name ct
run csv true csv "$f" -o "$tmp/csv"
run jsonl true jsonl-events "$f" -o "$tmp/d.jsonl"
run perfetto true perfetto "$f" -o "$tmp/t.pftrace"

# The reference's method: INSERT ... VALUES (...); one per row, through the CLI.
"$ct" export csv "$f" -o "$tmp/csv" -q
head -n $((refrows + 1)) "$tmp/csv/events.csv" | tail -n +2 | tr -d '\r' | awk -F, '{
  printf "INSERT INTO ref_events (run_id, host, probe_id, tid, ts, kind, addr, seq) VALUES (\x27%s\x27, \x27%s\x27, %s, %s, %s, \x27%s\x27, \x27%s\x27, %s);\n", $1, $2, $4, $5, $6, $9, $12, $13 }' > "$tmp/ins.sql"
ddl="CREATE TABLE ref_events (run_id TEXT, host TEXT, probe_id BIGINT, tid BIGINT, ts BIGINT, kind TEXT, addr TEXT, seq BIGINT);"
ref() {
  name=$1; shift
  : > "$tmp/t"
  for i in $(seq "$runs"); do
    "$@" -c "DROP TABLE IF EXISTS ref_events" > /dev/null 2>&1 || true
    s=$(date +%s.%N); "$@" < "$tmp/ins.sql" > /dev/null 2>&1; e=$(date +%s.%N)
    echo "$s $e" | awk '{ printf "%.4f\n", $2 - $1 }' >> "$tmp/t"
  done
  echo "$name $refrows $(median < "$tmp/t")" | awk '{ printf "%-10s %8d rows in %6.2f s = %8.0f rows/s  (reference method: one INSERT per row via the CLI)\n", $1, $2, $3, $2 / $3 }'
}
sqlite_cli() {
  if [ "${1:-}" = -c ]; then rm -f "$tmp/ref.db"; return; fi
  { echo "$ddl"; cat; } | sqlite3 "$tmp/ref.db"
}
psql_cli() {
  if [ "${1:-}" = -c ]; then psql -X -q -c "$2"; return; fi
  { echo "$ddl"; cat; } | psql -X -q
}
my_cli() {
  if [ "${1:-}" = -c ]; then mariadb --no-defaults -S "$tmp/my/sock" -u ct ct -e "$2"; return; fi
  { echo "$ddl"; cat; } | mariadb --no-defaults -S "$tmp/my/sock" -u ct ct
}
ref sqlite-cli sqlite_cli
ref psql-cli psql_cli
ref mysql-cli my_cli
