#!/bin/sh
# test-export-files.sh - `corotracer export` to files: SQLite (round trip of a
# real trace and of one with findings, twice without duplicates, two hosts side
# by side, a hostile table name, a failed export that leaves nothing behind),
# CSV (RFC 4180, loaded back), JSONL with derived columns, jsonl-v1 (the
# reference's keys only, read back by the report), the reference's spelling
# and bad usage; a damaged binary trace's runs.damaged (SQLite, CSV; an older
# runs table upgraded) and its JSONL conversion.
. "$(dirname "$0")/lib/export.sh"
command -v sqlite3 > /dev/null || skip "sqlite3 (the CLI, to read back) not installed"
db=$tmp/t.db
sq() { sqlite3 -separator ' ' "$db" "$1"; }

# SQLite round trips, each exported twice: the second replaces the first.
for t in "$hello" "$lw"; do
  "$COROTRACER" export sqlite "$t" -o "$db" -q || fail "sqlite export of $t: exit $?"
  "$COROTRACER" export sqlite "$t" -o "$db" -q || fail "sqlite second export of $t: exit $?"
  check_roundtrip "sqlite $(basename "$t")" sq "$t"
done
[ "$(sq 'SELECT count(*) FROM runs')" = 2 ] || fail "sqlite: 2 runs expected: $(sq 'SELECT run_id, host FROM runs')"
[ "$(sq "SELECT label FROM coroutines WHERE probe_id = 9 AND run_id = '00ff'")" = "$(printf 'we,ird "q"\nx\ty')" ] ||
  fail "sqlite: label not kept: $(sq "SELECT label FROM coroutines WHERE probe_id = 9")"
[ "$(sqlite3 "$db" 'PRAGMA journal_mode')" = wal ] || fail "sqlite: not in WAL mode"
sq "SELECT name FROM sqlite_master WHERE type = 'index'" | grep -q events_i0 || fail "sqlite: no index on events"
# The sites of hello are symbolized.
[ "$(sq "SELECT count(*) FROM sites WHERE file LIKE '%hello.c' AND line > 0")" -ge 2 ] ||
  fail "sqlite: hello's sites not symbolized: $(sq 'SELECT * FROM sites')"
# finding_coroutines name the lost coroutine (1, parked on fd 12).
[ "$(sq "SELECT probe_id, wait, obj FROM finding_coroutines f JOIN findings g USING (run_id, host, finding) WHERE g.kind = 'lost_wakeup'")" = "1 fd 12" ] ||
  fail "sqlite: lost_wakeup coroutine: $(sq 'SELECT * FROM finding_coroutines')"

# Escapes and invalid UTF-8 in a label: the same valid text everywhere.
"$COROTRACER" export sqlite "$txt" -o "$db" -q || fail "sqlite export of txt: exit $?"
check_text sqlite sq 'hex(label)'
"$COROTRACER" report "$txt" --json "$tmp/txt.json" > "$tmp/txt.md" || fail "report of txt: exit $?"
for f in "$tmp/txt.json" "$tmp/txt.md"; do
  iconv -f UTF-8 -t UTF-8 "$f" > /dev/null 2>&1 || fail "report of txt: $f is not valid UTF-8"
done
grep -qF "\"label\":\"$(printf '%s' "$txt_label" | sed 's/\\/\\\\/')\"" "$tmp/txt.json" ||
  fail "report --json of txt: label $(grep -ao '"label":"[^"]*"' "$tmp/txt.json" | head -1)"
grep -qF "$txt_label" "$tmp/txt.md" || fail "report of txt: no label $txt_label in the Markdown"
"$COROTRACER" export perfetto "$txt" -o "$tmp/txt.pftrace" -q || fail "perfetto export of txt: exit $?"
grep -qaF "coroutine 1 $txt_label" "$tmp/txt.pftrace" || fail "perfetto: the track of coroutine 1 is not named with txt_label"

exs() { "$COROTRACER" export sqlite "$@" -o "$db"; }
check_two_hosts sqlite sq exs
check_two_runs sqlite sq exs
check_hostile sqlite sq exs '"x""; DROP TABLE y; --"'
# A damaged binary trace: its runs row says so (the clean ones do not); an
# older database's runs table gets the column.
damaged_trace
check_damaged sqlite sq exs
check_upgrade sqlite sq exs

# A failure mid-export (a sites table of another shape) writes nothing.
sq 'CREATE TABLE bad_sites (run_id TEXT, host TEXT)'
if "$COROTRACER" export sqlite "$hello" -o "$db" --prefix bad_ 2> "$tmp/err"; then fail "sqlite: export into a bad table succeeded"; fi
[ "$(wc -l < "$tmp/err")" = 1 ] && grep -q "bad_sites\|sites\|INSERT\|column" "$tmp/err" || fail "sqlite: failure message: $(cat "$tmp/err")"
[ -z "$(sq "SELECT name FROM sqlite_master WHERE name = 'bad_events'")" ] || fail "sqlite: failed export left bad_events behind"

# The reference's spelling and defaults (events table coro_trace_events).
"$COROTRACER" -export sqlite -in "$hello" -sqlite-out "$tmp/ref.db" 2> "$tmp/sum" || fail "-export sqlite: exit $?"
grep -q '^corotracer: export sqlite: [0-9]* rows' "$tmp/sum" || fail "no one-line summary: $(cat "$tmp/sum")"
[ "$(sqlite3 "$tmp/ref.db" 'SELECT count(*) FROM coro_trace_events')" = "$(expect_events "$hello" | wc -l)" ] ||
  fail "-export sqlite: coro_trace_events"

# The reference engine's own trace (no meta, torn records): events without the
# torn lines, a run id from its content (the same on a second export).
ref=$(dirname "$0")/data/reference-engine-trace.jsonl
[ -f "$ref" ] || { fail "$ref missing"; check_done; }
db=$tmp/ref2.db
"$COROTRACER" export sqlite "$ref" -o "$db" -q || fail "reference trace: exit $?"
"$COROTRACER" export sqlite "$ref" -o "$db" -q || fail "reference trace, again: exit $?"
n=$(grep -vc '"probe_id":0,' "$ref")
[ "$(sq 'SELECT count(*) FROM events')" = "$n" ] || fail "reference trace: $(sq 'SELECT count(*) FROM events') events, $n expected"
[ "$(sq "SELECT count(*), source, skipped_lines, run_id LIKE 'content-%' FROM runs")" = "1 reference $(grep -c '"probe_id":0,' "$ref") 1" ] ||
  fail "reference trace: runs: $(sq 'SELECT * FROM runs')"
[ "$(sq "SELECT count(*) FROM events WHERE kind NOT IN ('suspend', 'resume')")" = 0 ] || fail "reference trace: kinds not derived"

# CSV: one file per table, header, CRLF, quoting; loaded back into SQLite.
"$COROTRACER" export csv "$lw" -o "$tmp/csv" -q || fail "csv export: exit $?"
for t in runs coroutines events sites findings finding_coroutines; do
  [ -f "$tmp/csv/$t.csv" ] || fail "csv: no $t.csv"
done
head -n 1 "$tmp/csv/events.csv" | grep -q "^run_id,host,line,probe_id,tid,ts,.*$(printf '\r')\$" || fail "csv: events header: $(head -n 1 "$tmp/csv/events.csv")"
db=$tmp/csv.db
for t in events coroutines runs findings; do
  sqlite3 "$db" ".import --csv $tmp/csv/$t.csv $t" || fail "csv: sqlite3 cannot import $t.csv"
done
# Imported CSV has '' for NULL.
sq "UPDATE events SET site = NULL WHERE site = ''"
check_roundtrip csv sq "$lw"
[ "$(sq "SELECT label FROM coroutines WHERE probe_id = 9")" = "$(printf 'we,ird "q"\nx\ty')" ] ||
  fail "csv: label with comma, quotes, newline not read back: $(sq 'SELECT label FROM coroutines WHERE probe_id = 9')"
# Stdin from a pipe (read twice through a temporary copy): the same rows.
cat "$lw" | "$COROTRACER" export csv - -o "$tmp/csvp" -q || fail "csv export from a pipe: exit $?"
for t in events coroutines sites findings; do
  cmp -s "$tmp/csv/$t.csv" "$tmp/csvp/$t.csv" || fail "csv from a pipe: $t.csv differs"
done
"$COROTRACER" export csv "$txt" -o "$tmp/csvt" -q || fail "csv export of txt: exit $?"
sqlite3 "$db" ".import --csv $tmp/csvt/coroutines.csv coroutines" || fail "csv: sqlite3 cannot import txt's coroutines.csv"
check_text csv sq 'hex(label)'
# The damage in runs.csv too: its last column, empty for a clean run ($lw's above).
"$COROTRACER" export csv "$dmg" -o "$tmp/csvd" -q 2> /dev/null || fail "csv export of a damaged trace: exit $?"
sqlite3 "$db" ".import --csv --skip 1 $tmp/csvd/runs.csv runs" || fail "csv: sqlite3 cannot import the damaged trace's runs.csv"
[ "$(head -n 1 "$tmp/csvd/runs.csv")" = "$(head -n 1 "$tmp/csv/runs.csv")" ] && head -n 1 "$tmp/csv/runs.csv" | grep -q ',damaged.$' ||
  fail "csv: runs.csv header: $(head -n 1 "$tmp/csvd/runs.csv")"
[ "$(sq "SELECT count(*) FROM runs WHERE run_id = '00ff' AND damaged = ''")" = 1 ] || fail "csv: damaged of a clean run: $(sq "SELECT damaged FROM runs WHERE run_id = '00ff'")"
case $(sq "SELECT damaged FROM runs WHERE run_id = '$dmg_rid'") in
"offset $dmg_off: truncated: the last chunk is cut ("*"events lost up to the cut"*) ;;
*) fail "csv: damaged of the damaged trace: $(sq "SELECT damaged FROM runs WHERE run_id = '$dmg_rid'")" ;;
esac

# jsonl-events: one object per event line, the derived columns added.
"$COROTRACER" export jsonl-events "$hello" -o "$tmp/d.jsonl" -q || fail "jsonl export: exit $?"
"$ctjl" probe_id tid ts kind addr site < "$tmp/d.jsonl" > "$tmp/got"
expect_events "$hello" > "$tmp/exp"
cmp -s "$tmp/exp" "$tmp/got" || fail "jsonl: events differ: $(diff "$tmp/exp" "$tmp/got" | head -3)"
[ "$("$ctjl" run_id < "$tmp/d.jsonl" | sort -u)" = "$("$ctjl" -t meta run_id < "$hello")" ] || fail "jsonl: run_id column"
"$ctjl" wall_ns rel_ns < "$tmp/d.jsonl" | grep -q -- '-' && fail "jsonl: wall_ns or rel_ns missing"

# jsonl of a damaged binary trace: the lines before the damage, then the file
# ends; without its end line, which the report of it says (exit 0, the offset on stderr).
"$COROTRACER" export jsonl "$dmg" -o "$tmp/dmg.jsonl" -q 2> "$tmp/err" || fail "jsonl export of a damaged trace: exit $?"
grep -q ": offset $dmg_off: truncated" "$tmp/err" || fail "jsonl of a damaged trace: stderr: $(cat "$tmp/err")"
[ "$("$ctjl" -e probe_id < "$tmp/dmg.jsonl" | wc -l)" = "$("$ctjl" -e probe_id < "$dmg" 2> /dev/null | wc -l)" ] ||
  fail "jsonl of a damaged trace: not the events before the damage"
grep -q '"type":"end"' "$tmp/dmg.jsonl" && fail "jsonl of a damaged trace: an end line"
"$COROTRACER" report "$tmp/dmg.jsonl" 2> /dev/null | grep -q '^- \*\*End\*\*: no end line: the trace was cut short' ||
  fail "jsonl of a damaged trace: the report of it does not say it was cut"

# jsonl-v1: event lines only (no wakes), exactly the reference's keys.
"$COROTRACER" export jsonl-v1 "$hello" -o "$tmp/v1.jsonl" -q || fail "jsonl-v1 export: exit $?"
n=$("$ctjl" -e kind < "$hello" | grep -vc '^wake$')
[ "$(wc -l < "$tmp/v1.jsonl")" = "$n" ] || fail "jsonl-v1: $(wc -l < "$tmp/v1.jsonl") lines, expected $n"
grep -Evq '^\{"probe_id":[1-9][0-9]*,"tid":[1-9][0-9]*,"addr":"0x[0-9a-f]{16}","seq":[0-9]+,"is_active":(true|false),"ts":[1-9][0-9]*\}$' "$tmp/v1.jsonl" &&
  fail "jsonl-v1: a line not in the reference's form: $(grep -Ev '^\{"probe_id":[1-9]' "$tmp/v1.jsonl" | head -1)"
"$COROTRACER" report "$tmp/v1.jsonl" --json "$tmp/v1f.json" > /dev/null || fail "report of jsonl-v1 output"
grep -q '"malformed":0' "$tmp/v1f.json" || fail "jsonl-v1: the report finds malformed lines"

# An output that is not a regular file (a FIFO here; /dev/null in real life)
# is written in place, never replaced by a renamed temporary file.
mkfifo "$tmp/fifo"
cat "$tmp/fifo" > "$tmp/fifo.out" &
"$COROTRACER" export jsonl-v1 "$hello" -o "$tmp/fifo" -q || fail "jsonl-v1 into a FIFO: exit $?"
wait
[ -p "$tmp/fifo" ] || fail "the FIFO was replaced by a file"
cmp -s "$tmp/fifo.out" "$tmp/v1.jsonl" || fail "the FIFO got other bytes than the file"

# A progress bar on a terminal (script gives one), none when stderr is a file.
if command -v script > /dev/null; then
  script -qec "'$COROTRACER' export csv '$hello' -o '$tmp/pcsv'" "$tmp/typescript" > /dev/null 2>&1 ||
    fail "export under script: exit $?"
  grep -q 'export csv \[#*\] 100%' "$tmp/typescript" || fail "no progress bar on a terminal: $(cat "$tmp/typescript")"
  "$COROTRACER" export csv "$hello" -o "$tmp/pcsv" 2> "$tmp/err"
  grep -q '100%' "$tmp/err" && fail "a progress bar with stderr in a file"
fi

# Bad input and usage: one line, non-zero exit, no output file.
echo 'not a trace' > "$tmp/bad.jsonl"
"$COROTRACER" export sqlite "$tmp/bad.jsonl" -o "$tmp/bad.db" 2> "$tmp/err" && fail "export of a non-trace succeeded"
grep -q "bad.jsonl:1: not a corotracer trace" "$tmp/err" || fail "non-trace message: $(cat "$tmp/err")"
[ -e "$tmp/bad.db" ] && fail "a database was created for a non-trace"
"$COROTRACER" export parquet "$hello" 2> "$tmp/err" && fail "unknown format accepted"
grep -q "unknown format" "$tmp/err" || fail "unknown format message: $(cat "$tmp/err")"
"$COROTRACER" export sqlite "$tmp/missing.jsonl" -o "$tmp/m.db" 2> "$tmp/err" && fail "missing trace accepted"
grep -q "missing.jsonl: No such file" "$tmp/err" || fail "missing trace message: $(cat "$tmp/err")"
# A file target without its file: a usage error (2) before the trace is read.
for f in "sqlite|no database file given (-o FILE or -sqlite-out FILE)" \
  "csv|no output directory given (-o DIR or -csv-out DIR)"; do
  "$COROTRACER" export "${f%%|*}" "$tmp/missing.jsonl" 2> "$tmp/err"
  rc=$?
  [ $rc = 2 ] || fail "export ${f%%|*} without -o: exit $rc, want 2"
  [ "$(cat "$tmp/err")" = "corotracer: export: ${f%%|*}: ${f#*|}" ] ||
    fail "export ${f%%|*} without -o: $(cat "$tmp/err")"
done
"$COROTRACER" export perfetto "$hello" -o "$tmp/nodir/x.pftrace" 2> "$tmp/err" && fail "unwritable output accepted"
[ "$(wc -l < "$tmp/err")" = 1 ] || fail "unwritable output: $(cat "$tmp/err")"
finish test-export-files
