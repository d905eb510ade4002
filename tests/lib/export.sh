# export.sh - shell helpers for the export tests (tests/test-export-*.sh).
# Source it from a test run by tests/run.sh; it sets
#   tmp     a fresh temp dir (removed on exit, after cleanup_hook)
#   hello   a real trace: examples/hello under `corotracer run` ($tmp/hello.jsonl)
#   lw      a synthetic trace with findings and a hostile label ($tmp/lw.jsonl)
# and defines fail, finish, expect_events, and check_roundtrip (below).
set -u
: "${CT_BUILD:?run through tests/run.sh}" "${COROTRACER:?run through tests/run.sh}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-export.XXXXXX") || exit 1
chmod 755 "$tmp" # database servers run as their own users read and write here
cleanup_hook() { :; }
trap 'cleanup_hook; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
# The kit's fail (tests/lib/check.sh), going on after a failure: finish ends the
# test (`fail MSG; check_done` for a failure the test cannot go on after).
. "$(dirname "$0")/lib/check.sh"
CHECK_KEEP_GOING=1
finish() {
  check_done
  echo "$1: ok"
}
ctjl=$CT_BUILD/tests/lib/ctjl
[ -x "$ctjl" ] || { fail "$ctjl not built"; check_done; }

timeout 60 "$COROTRACER" run --quiet -o "$tmp/hello.jsonl" -- "$CT_BUILD/examples/hello" --pace-us 200 \
  > "$tmp/run.out" 2>&1 || { cat "$tmp/run.out"; fail "corotracer run"; check_done; }
hello=$tmp/hello.jsonl
# Findings (lost wakeup, leak, blocker) and a label with a comma, quotes and
# a newline: a CSV's and a database's hard case.
awk -f "$(dirname "$0")/data/report/gen.awk" "$(dirname "$0")/data/report/lost-wakeup.txt" > "$tmp/lw.jsonl"
printf '%s\n' '{"type":"coroutine","probe_id":9,"station":1,"pid":1,"birth_ts":0,"label":"we,ird \"q\"\nx\ty","create_site":"0x0000000000000100","parent":0}' \
  >> "$tmp/lw.jsonl"
lw=$tmp/lw.jsonl
# The same run as 00fe, its coroutine 1 labelled with \u escapes (a surrogate
# pair, U+00E9, U+0000) and a byte that is not UTF-8: every target stores the
# same valid UTF-8, txt_label (docs/EXPORT.md, "Text").
txt=$tmp/txt.jsonl
LAB="emoji \\ud83d\\ude00 \\u00e9 a\\u0000b $(printf '\377')" awk '
  NR == 1 { sub(/"run_id":"00ff"/, "\"run_id\":\"00fe\"") }
  !done && /"type":"coroutine","probe_id":1,/ && (i = index($0, "\"label\":\"conn\"")) {
    $0 = substr($0, 1, i + 8) ENVIRON["LAB"] substr($0, i + 13); done = 1
  }
  { print }' "$lw" > "$txt"
txt_label=$(printf 'emoji \360\237\230\200 \303\251 a\\u0000b \357\277\275')
txt_hex=$(printf '%s' "$txt_label" | od -An -tx1 | tr -d ' \n' | tr a-f A-F)

# expect_events TRACE: the event lines as the tests select them back.
expect_events() { "$ctjl" -e probe_id tid ts kind addr site < "$1"; }
EVSQL="probe_id, tid, ts, kind, addr, coalesce(site, '-')"

# check_roundtrip NAME Q TRACE: Q is a command that runs one SQL statement and
# prints its rows, columns separated by one space. The run of TRACE must be in
# the database once: its run row, every event line in order with the same
# fields, one coroutine row per coroutine, the report's findings.
check_roundtrip() {
  name=$1 q=$2 trace=$3
  rid=$("$ctjl" -t meta run_id < "$trace")
  [ -n "$rid" ] && [ "$rid" != - ] || { fail "$name: $trace has no run id"; return; }
  w="WHERE run_id = '$rid'"
  [ "$($q "SELECT count(*) FROM runs $w")" = 1 ] || fail "$name: runs rows for $rid: $($q "SELECT count(*) FROM runs $w")"
  expect_events "$trace" > "$tmp/exp"
  $q "SELECT $EVSQL FROM events $w ORDER BY line + 0" > "$tmp/got"
  [ -s "$tmp/exp" ] || fail "$name: no events in $trace"
  cmp -s "$tmp/exp" "$tmp/got" || fail "$name: events differ from the JSONL: $(diff "$tmp/exp" "$tmp/got" | head -5)"
  nco=$( { "$ctjl" -e probe_id < "$trace"; "$ctjl" -t coroutine probe_id < "$trace"; } | sort -u | wc -l)
  [ "$($q "SELECT count(*) FROM coroutines $w")" = "$nco" ] || fail "$name: coroutines $($q "SELECT count(*) FROM coroutines $w"), the trace has $nco"
  [ "$($q "SELECT sum(events) FROM coroutines $w")" = "$(wc -l < "$tmp/exp")" ] || fail "$name: coroutines.events does not add up"
  "$COROTRACER" report "$trace" --json "$tmp/f.json" > /dev/null 2>&1
  kinds=$(grep -o '^{"kind":"[a-z_]*"' "$tmp/f.json" | sed 's/.*:"\(.*\)"/\1/' | tr '\n' ' ')
  got=$($q "SELECT kind FROM findings $w ORDER BY finding + 0" | tr '\n' ' ')
  [ "$got" = "$kinds" ] || fail "$name: findings '$got', the report has '$kinds'"
}

# check_two_hosts NAME Q EX: the run of $lw exported again as from another
# host (EX: the export command, taking TRACE and options) sits beside it.
check_two_hosts() {
  sed 's/"host":"testbox"/"host":"otherbox"/' "$lw" > "$tmp/lw2.jsonl"
  $3 "$tmp/lw2.jsonl" -q || fail "$1: export of host 2"
  got=$($2 "SELECT host, count(*) FROM events WHERE run_id = '00ff' GROUP BY host ORDER BY host")
  [ "$got" = "$(printf 'otherbox 19\ntestbox 19')" ] || fail "$1: two hosts: $got"
}

# check_hostile NAME Q EX QUOTED: events exported into a table named
# x"; DROP TABLE y; -- (QUOTED: that name quoted in Q's SQL) land there, and
# table y is untouched.
check_hostile() {
  $2 'CREATE TABLE y (a INTEGER)'
  $2 'INSERT INTO y VALUES (42)'
  $3 "$hello" -q --table 'x"; DROP TABLE y; --' || fail "$1: hostile table name: exit $?"
  [ "$($2 'SELECT a FROM y')" = 42 ] || fail "$1: table y was touched"
  [ "$($2 "SELECT count(*) FROM $4")" = "$(expect_events "$hello" | wc -l)" ] ||
    fail "$1: the hostile-named table lacks the events"
}

# check_text NAME Q HEX: the label of $txt's coroutine 1 is txt_label, as bytes
# (HEX: the database's expression for label as uppercase hex).
check_text() {
  got=$($2 "SELECT $3 FROM coroutines WHERE run_id = '00fe' AND probe_id = 1")
  [ "$got" = "$txt_hex" ] || fail "$1: label of escapes and invalid UTF-8 stored as $got, want $txt_hex"
}

# check_two_runs NAME Q EX: a file of two runs ($lw, then $txt: run ids 00ff and
# 00fe, as run --append writes them) exported twice into tables tr_*: each run
# once, under its own id, with its own events.
check_two_runs() {
  cat "$lw" "$txt" > "$tmp/tworuns.jsonl"
  $3 "$tmp/tworuns.jsonl" -q --prefix tr_ || fail "$1: export of two runs: exit $?"
  $3 "$tmp/tworuns.jsonl" -q --prefix tr_ || fail "$1: second export of two runs: exit $?"
  got=$($2 "SELECT run_id, events FROM tr_runs ORDER BY run_id")
  [ "$got" = "$(printf '00fe 19\n00ff 19')" ] || fail "$1: runs of a two-run file: $got"
  got=$($2 "SELECT run_id, count(*) FROM tr_events GROUP BY run_id ORDER BY run_id")
  [ "$got" = "$(printf '00fe 19\n00ff 19')" ] || fail "$1: events of a two-run file: $got"
}

# damaged_trace: sets dmg, a binary trace of hello cut 10 bytes short (its last
# chunk torn: the readers load what came before it), dmg_off, the byte offset
# the reader names, and dmg_rid, its run id.
damaged_trace() {
  timeout 60 "$COROTRACER" run --quiet -o "$tmp/whole.ctrace" -- "$CT_BUILD/examples/hello" --pace-us 200 \
    > "$tmp/run.out" 2>&1 || { cat "$tmp/run.out"; fail "corotracer run -o .ctrace"; check_done; }
  dmg=$tmp/dmg.ctrace
  head -c $(($(wc -c < "$tmp/whole.ctrace") - 10)) "$tmp/whole.ctrace" > "$dmg"
  dmg_off=$("$ctjl" -e probe_id < "$dmg" 2>&1 > /dev/null | sed -n 's/.*: offset \([0-9]*\): truncated.*/\1/p')
  dmg_rid=$("$ctjl" -t meta run_id < "$dmg" 2> /dev/null)
  [ -n "$dmg_off" ] && [ -n "$dmg_rid" ] || { fail "damaged_trace: offset '$dmg_off', run id '$dmg_rid'"; check_done; }
}

# check_damaged NAME Q EX: the run of $dmg (damaged_trace) exported (exit 0,
# the reader's line on stderr) carries the damage in runs.damaged: the offset,
# what was wrong, the losses up to the cut; its events before the cut are
# there. The clean runs already exported ($hello's) have none (NULL; CSV: '').
check_damaged() {
  $3 "$dmg" -q 2> "$tmp/err" || fail "$1: export of a damaged trace: exit $?"
  grep -q ": offset $dmg_off: truncated" "$tmp/err" || fail "$1: damaged trace: no line on stderr: $(cat "$tmp/err")"
  got=$($2 "SELECT damaged FROM runs WHERE run_id = '$dmg_rid'")
  case $got in
  "offset $dmg_off: truncated: the last chunk is cut ("*" bytes); "*" events lost up to the cut (the end line, which holds the totals, is missing)") ;;
  *) fail "$1: runs.damaged of the damaged trace: '$got'" ;;
  esac
  [ "$($2 "SELECT count(*) FROM events WHERE run_id = '$dmg_rid'")" = "$("$ctjl" -e probe_id < "$dmg" 2> /dev/null | wc -l)" ] ||
    fail "$1: damaged trace: the events before the cut: $($2 "SELECT count(*) FROM events WHERE run_id = '$dmg_rid'")"
  hrid=$("$ctjl" -t meta run_id < "$hello")
  [ "$($2 "SELECT count(*) FROM runs WHERE run_id = '$hrid' AND coalesce(damaged, '') = ''")" = 1 ] ||
    fail "$1: runs.damaged of a clean trace: '$($2 "SELECT damaged FROM runs WHERE run_id = '$hrid'")'"
}

# check_upgrade NAME Q EX: a runs table of an older corotracer (no damaged
# column) gets the column, and the damaged run's text in it, on the next
# export; a second export into it works too.
check_upgrade() {
  $2 "CREATE TABLE old_runs (run_id varchar(255), host varchar(255), trace text, source text, target_pid bigint, start_ts bigint, end_ts bigint, start_wall_ns bigint, duration_ns bigint, events bigint, lost_events bigint, skipped_lines bigint, coroutines bigint, threads bigint, exit_code bigint, exit_signal bigint, findings bigint)"
  $3 "$dmg" -q --prefix old_ 2> /dev/null || fail "$1: export into an older runs table: exit $?"
  $3 "$dmg" -q --prefix old_ 2> /dev/null || fail "$1: second export into an upgraded runs table: exit $?"
  got=$($2 "SELECT count(*), min(damaged) FROM old_runs")
  case $got in
  "1 offset $dmg_off: truncated"*) ;;
  *) fail "$1: older runs table after the export: '$got'" ;;
  esac
}
