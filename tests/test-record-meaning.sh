#!/bin/sh
# test-record-meaning.sh - one meaning per record (src/analysis/record.h):
# the report, the dashboard and the export read the same trace the same way.
# Coroutine 1 is relabelled ("first" then "renamed"), destroyed, and its id
# reused by a coroutine labelled "second" that is left parked forever:
# - the report: 2 coroutines, 1 reused id, the lost wakeup names "second";
# - the dashboard: a row per incarnation, "renamed" (the last label given)
#   and "second";
# - the export: one row for id 1, 2 incarnations, the last one's label.
# Then records that cannot be true (issue #34 N5): an end whose lost count
# and exit code no process can have, and a second end, are damage named in
# one line, not facts; the first end stays. A flight dump's 300 snapshot
# labels are all kept (N7).
. "$(dirname "$0")/lib/check.sh"
set -u
B=${COROTRACER:?run me through tests/run.sh}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -f tests/data/report/gen.awk <<'T' >"$tmp/gen.jsonl" || fail "gen.awk"
meta
create 1 0 100
raw {"type":"coroutine","probe_id":1,"station":1,"pid":4242,"label":"renamed"}
resume 1 1 100
suspend 1 2 100 1234 ptr 7000
wake 1 3 100 0
resume 1 4 100
destroy 1 5 100
create 1 6 100
resume 1 7 100
suspend 1 8 100 1234 ptr 7000
end 3000 code 0
T
# The labels: gen.awk writes "conn" on each create's coroutine line.
awk '/"type":"coroutine"/ && /"label":"conn"/ { n++; sub(/"label":"conn"/, n == 1 ? "\"label\":\"first\"" : "\"label\":\"second\"") } { print }' \
  "$tmp/gen.jsonl" >"$tmp/t.jsonl"
"$B" report "$tmp/t.jsonl" --json "$tmp/f.json" >"$tmp/r.md" || fail "report"
grep -q '"coroutines":2,' "$tmp/f.json" && grep -q '"reused_ids":1,' "$tmp/f.json" ||
  fail "report: not 2 coroutines with 1 reused id: $(grep '"trace"' "$tmp/f.json")"
grep -q '{"probe_id":1,"incarnation":2,"label":"second","wait":"ptr"' "$tmp/f.json" ||
  fail "report: the lost wakeup does not name incarnation 2 'second': $(grep probe_id "$tmp/f.json")"
"$B" export csv "$tmp/t.jsonl" -o "$tmp/csv" -q || fail "export csv"
row=$(grep '^00ff,testbox,1,' "$tmp/csv/coroutines.csv")
[ "$(echo "$row" | cut -d, -f4,8,9)" = "second,2,suspended" ] ||
  fail "export: id 1 is not 'second', 2 incarnations, suspended: $row"
if command -v node >/dev/null 2>&1; then
  "$B" html "$tmp/t.jsonl" -o "$tmp/d.html" >/dev/null || fail "html"
  node tests/browser/decode.mjs rows "$tmp/d.html" >"$tmp/rows" || { cat "$tmp/rows"; fail "decode the dashboard"; }
  [ "$(cat "$tmp/rows")" = "1 renamed
1 second" ] || fail "dashboard: not a row per incarnation, 'renamed' and 'second': $(cat "$tmp/rows")"
else
  echo "node not installed: the dashboard's rows not checked (sh scripts/install-deps.sh)"
fi

# Records that cannot be true: appended to a complete run.
cp "$tmp/t.jsonl" "$tmp/bad.jsonl"
printf '%s\n' '{"type":"end","ts":1003000000000,"exit":{"code":-2147483649},"events":100,"harvested":100,"lost":18446744073709551615}' >>"$tmp/bad.jsonl"
"$B" report "$tmp/bad.jsonl" --json "$tmp/bad.json" >"$tmp/bad.md" 2>"$tmp/bad.err"
n=$(wc -l <"$tmp/bad.jsonl")
[ "$(wc -l <"$tmp/bad.err")" = 1 ] && grep -q "bad.jsonl: line $n: end: a second end record" "$tmp/bad.err" ||
  fail "a second end: not one line naming it: $(cat "$tmp/bad.err")"
grep -q -- '- \*\*End\*\*: exited with code 0$' "$tmp/bad.md" || fail "the second end overrode the first: $(grep End "$tmp/bad.md")"
grep -q '"malformed":1,' "$tmp/bad.json" || fail "the second end is not counted as a malformed line"
# The same values in the only end: each field named.
grep -v '"type":"end"' "$tmp/t.jsonl" >"$tmp/one.jsonl"
printf '%s\n' '{"type":"end","ts":1003000000000,"exit":{"code":-2147483649},"events":100,"harvested":100,"lost":0}' >"$tmp/code.jsonl"
printf '%s\n' '{"type":"end","ts":1003000000000,"exit":{"code":0},"events":100,"harvested":100,"lost":18446744073709551615}' >"$tmp/lost.jsonl"
for v in code lost; do
  cat "$tmp/one.jsonl" "$tmp/$v.jsonl" >"$tmp/v.jsonl"
  n=$(wc -l <"$tmp/v.jsonl")
  "$B" report "$tmp/v.jsonl" >"$tmp/v.md" 2>"$tmp/v.err"
  case $v in
    code) want="end: exit code -2147483649 is not one" ;;
    lost) want="end: lost 18446744073709551615 and harvested 100 do not add up" ;;
  esac
  grep -q "v.jsonl: line $n: $want" "$tmp/v.err" || fail "$v: not named: $(cat "$tmp/v.err")"
  grep -q -- "- \*\*Damaged\*\*: line $n: end" "$tmp/v.md" || fail "$v: the report does not say it is damaged"
  ! grep -q -- '- \*\*End\*\*: exited' "$tmp/v.md" || fail "$v: the impossible end taken as fact: $(grep End "$tmp/v.md")"
done
# A flight dump's snapshot labels are kept however many there are (#34 N7):
# 300 coroutines alive before the window, labelled co-0..co-299; co-299 is
# parked and never woken, and its lost wakeup names it.
{
  sed -n 1p "$tmp/t.jsonl" # meta
  i=0
  while [ $i -lt 300 ]; do
    if [ $i -lt 299 ]; then st='"state":"created","ts":1000000000000,"ev":0'
    else st='"state":"suspended","ts":1000001000000,"tid":100,"ev":2,"site":"0x0000000000001234","wait":"ptr","obj":"0x0000000000007000"'; fi
    printf '{"type":"snapshot","probe_id":%d,"station":%d,"pid":4242,"birth_ts":1000000000000,"label":"co-%d","create_site":"0x000000000000a000","parent":0,%s}\n' \
      $((i + 1)) $((i + 1)) $i "$st"
    i=$((i + 1))
  done
  printf '%s\n' '{"probe_id":1,"tid":100,"addr":"0x0000000000000000","seq":4,"is_active":true,"ts":1000002000000,"kind":"resume","ev":1}'
  printf '%s\n' '{"type":"window","start_ts":1000002000000,"end_ts":1000002000000,"bytes":100,"dropped_bytes":100,"dropped_chunks":1,"dropped_ts":1000001500000,"snapshot":300,"ts":1003000000000,"trigger":"SIGUSR1"}'
} >"$tmp/dump.jsonl"
"$B" report "$tmp/dump.jsonl" --json "$tmp/dump.json" >"$tmp/dump.md" || fail "report of the dump"
grep -q '{"probe_id":300,[^}]*"label":"co-299","wait":"ptr"' "$tmp/dump.json" ||
  fail "the dump's snapshot label co-299 is lost: $(grep '"probe_id":300' "$tmp/dump.json")"
echo "ok: report, dashboard and export agree on labels and incarnations; impossible end records are damage"
