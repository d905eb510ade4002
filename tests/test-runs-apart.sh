#!/bin/sh
# test-runs-apart.sh - a trace of two `corotracer run --append` runs is never
# read as one run: the report has one section per run (its Markdown, its
# JSON's "runs"), each as the report of that run alone; every export keys
# each run's rows by its own run id (SQLite, CSV, JSONL, Perfetto's process
# tracks); the dashboard shows the last run or --run N, never both merged,
# and the live view (serve) the last run.
. "$(dirname "$0")/lib/export.sh"
. "$(dirname "$0")/lib/serve.sh"
command -v sqlite3 > /dev/null || skip "sqlite3 (the CLI, to read back) not installed"
two=$tmp/two.jsonl
for i in 1 2; do
  timeout 60 "$COROTRACER" run --quiet --append -o "$two" -- "$CT_BUILD/examples/hello" --pace-us 200 \
    > "$tmp/run.out" 2>&1 || { cat "$tmp/run.out"; fail "corotracer run --append ($i)"; check_done; }
done
[ "$(grep -c '"type":"meta"' "$two")" = 2 ] || { fail "two runs expected in $two"; check_done; }
# Each run alone, for the expected values.
awk -v f="$tmp/run" '/"type":"meta"/ { n++ } { print > (f n ".jsonl") }' "$two"
id1=$("$ctjl" -t meta run_id < "$tmp/run1.jsonl") id2=$("$ctjl" -t meta run_id < "$tmp/run2.jsonl")
n1=$(expect_events "$tmp/run1.jsonl" | wc -l) n2=$(expect_events "$tmp/run2.jsonl" | wc -l)
[ "$id1" != "$id2" ] || fail "the two runs have one id: $id1"

# The report: a section per run, each the report of its run alone.
"$COROTRACER" report "$two" -o "$tmp/two.md" --json "$tmp/two.json" || fail "report: exit $?"
[ "$(grep -c '^# corotracer report: run [12] of 2$' "$tmp/two.md")" = 2 ] ||
  fail "report: no section per run: $(grep '^# ' "$tmp/two.md")"
for k in 1 2; do
  eval id=\$id$k n=\$n$k
  grep -q "$n events, .*run \`$id\`" "$tmp/two.md" || fail "report: run $k ($id, $n events) not reported apart: $(grep Trace "$tmp/two.md")"
  grep -q "\"events\":$n,.*\"run\":$k,\"runs\":2,\"run_id\":\"$id\"" "$tmp/two.json" ||
    fail "report --json: run $k ($id, $n events): $(grep -o '"trace":{[^}]*' "$tmp/two.json" | head -2)"
done
head -c 9 "$tmp/two.json" | grep -q '^{"runs":\[' || fail "report --json: not {\"runs\":[...]}"

# Exports: each run's rows under its own id.
db=$tmp/two.db
"$COROTRACER" export sqlite "$two" -o "$db" -q || fail "sqlite export: exit $?"
got=$(sqlite3 "$db" "SELECT run_id, events FROM runs ORDER BY rowid" | tr '\n' ' ')
[ "$got" = "$id1|$n1 $id2|$n2 " ] || fail "sqlite runs: '$got', want '$id1|$n1 $id2|$n2 '"
got=$(sqlite3 "$db" "SELECT run_id, count(*) FROM events GROUP BY run_id ORDER BY min(line)" | tr '\n' ' ')
[ "$got" = "$id1|$n1 $id2|$n2 " ] || fail "sqlite events: '$got'"
"$COROTRACER" export csv "$two" -o "$tmp/csv" -q || fail "csv export: exit $?"
[ "$(cut -d, -f1 "$tmp/csv/runs.csv" | tr -d '\r' | tr '\n' ' ')" = "run_id $id1 $id2 " ] ||
  fail "csv runs: $(cat "$tmp/csv/runs.csv")"
"$COROTRACER" export jsonl-events "$two" -o "$tmp/two.out.jsonl" -q || fail "jsonl export: exit $?"
[ "$("$ctjl" run_id < "$tmp/two.out.jsonl" | uniq -c | awk '{ printf "%s|%s ", $2, $1 }')" = "$id1|$n1 $id2|$n2 " ] ||
  fail "jsonl: run_id column: $("$ctjl" run_id < "$tmp/two.out.jsonl" | uniq -c)"
"$COROTRACER" export perfetto "$two" -o "$tmp/two.pftrace" -q || fail "perfetto export: exit $?"
for id in "$id1" "$id2"; do
  grep -qa "(run $(echo "$id" | cut -c1-12)" "$tmp/two.pftrace" || fail "perfetto: no process track for run $id"
done

# The dashboard: the last run by default, --run 1 the first; each with the
# findings of its run's section of the report.
if command -v node > /dev/null 2>&1; then
  for k in 2 1; do
    eval id=\$id$k n=\$n$k
    opt=; [ $k = 1 ] && opt="--run 1"
    "$COROTRACER" html "$two" -o "$tmp/d$k.html" $opt 2> "$tmp/err" || fail "html $opt: exit $?"
    grep -q "holds 2 runs .*shows run $k" "$tmp/err" || fail "html $opt: no note of the runs: $(cat "$tmp/err")"
    node -e 'const fs = require("fs"); const [, f, k, o] = process.argv;
      fs.writeFileSync(o, JSON.stringify(JSON.parse(fs.readFileSync(f)).runs[k - 1]))' \
      "$tmp/two.json" $k "$tmp/run$k.json"
    node "$(dirname "$0")/browser/decode.mjs" page "$tmp/d$k.html" "$tmp/run$k.json" > "$tmp/dec" ||
      fail "html $opt: $(cat "$tmp/dec")"
    grep -q "^ok: run $id, $n events," "$tmp/dec" || fail "html $opt: not run $k alone: $(cat "$tmp/dec")"
  done
  "$COROTRACER" html "$two" -o "$tmp/d3.html" --run 3 2> "$tmp/err" && fail "html --run 3 of 2 runs accepted"
  grep -q "the trace holds 2 runs" "$tmp/err" || fail "html --run 3: $(cat "$tmp/err")"
  # The live view follows the last run.
  serve_start "$two" "$tmp/serve.err"
  if [ -n "$url" ]; then
    node "$(dirname "$0")/browser/decode.mjs" serve "$url" "$tmp/run2.json" > "$tmp/dec" || {
      sleep 1
      node "$(dirname "$0")/browser/decode.mjs" serve "$url" "$tmp/run2.json" > "$tmp/dec"
    } || fail "serve: $(cat "$tmp/dec")"
    grep -q "run $id2, $n2 events," "$tmp/dec" || fail "serve: not the last run alone: $(cat "$tmp/dec")"
  else
    fail "serve printed no URL: $(cat "$tmp/serve.err")"
  fi
  kill "$spid"
  wait "$spid"
fi
finish test-runs-apart
