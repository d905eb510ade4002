#!/bin/sh
# test-cpp-task-readers.sh - the readers beside the report name the line that
# destroyed a task as the report does (examples/cpp/task_erase.cpp --bug: its
# owner erases two waiting tasks, whose destructors are inlined into the
# erase): the dashboard (`corotracer html`: each destroyed coroutine's
# destroy site, decoded by tests/browser/decode.mjs) and the exports' site
# table (`corotracer export csv`, sites.csv; SQL and Perfetto share it) name
# main at the erase's line, task_erase.cpp:N (N from the source), not
# ~Task or ~promise_type. Every build variant, as test-cpp-task.sh.
. "$(dirname "$0")/lib/engine.sh"
command -v node >/dev/null 2>&1 || skip "node not installed (sh scripts/install-deps.sh)"
DEC="$(cd "$(dirname "$0")" && pwd)/browser/decode.mjs"
SRC="$(cd "$(dirname "$0")/.." && pwd)/examples/cpp/task_erase.cpp"
erase=$(grep -n 'pending.erase(i);' "$SRC" | head -n 1 | cut -d: -f1)
want="main [^ ]*examples/cpp/task_erase.cpp:$erase"
n=0

for PROG in "$CT_BUILD"/examples/cpp-task-erase "$CT_BUILD"/examples/cpp-task-erase-*; do
  [ -x "$PROG" ] || continue
  n=$((n + 1))
  "$COROTRACER" run --quiet --lossless -o "$T/bug.ctrace" -- "$PROG" --bug > "$T/out" 2>&1 ||
    fail "$PROG --bug: $(cat "$T/out")"
  "$COROTRACER" report "$T/bug.ctrace" --stuck-ms 10 --json "$T/findings.json" -o /dev/null ||
    fail "report failed"
  # The report's destroyers: "probe_id address function file:line" of each
  # coroutine the lost_wakeup finding names.
  tr -d '\n' < "$T/findings.json" | sed 's/{"kind":/\n&/g' | grep '^{"kind":"lost_wakeup"' |
    grep -o '"probe_id":[0-9]*\|"destroyed":{[^}]*"site":{[^}]*}' |
    sed 's/^"probe_id":\([0-9]*\)$/\1/; s/^"destroyed":.*"site":{"site":"\(0x[0-9a-f]*\)","function":"\([^"]*\)","file":"\([^"]*\)","line":\([0-9]*\).*/\1 \2 \3:\4/' |
    paste -d' ' - - | sort > "$T/report.by"
  [ "$(grep -c " $want\$" "$T/report.by")" = 2 ] ||
    fail "$PROG: the report's destroyers are not both main task_erase.cpp:$erase:
$(cat "$T/report.by")"

  # The dashboard: the same coroutines, the same sites, the same names.
  "$COROTRACER" html "$T/bug.ctrace" --stuck-ms 10 -o "$T/page.html" || fail "html: exit $?"
  node "$DEC" destroyers "$T/page.html" | sort > "$T/page.by" || fail "$(cat "$T/page.by")"
  [ "$(grep -c -F -x -f "$T/report.by" "$T/page.by")" = 2 ] ||
    fail "$PROG: the dashboard names the destroyers otherwise than the report; report:
$(cat "$T/report.by")
page:
$(cat "$T/page.by")"

  # The export's site table: each destroyer's address named as the report names it.
  rm -rf "$T/csv"
  "$COROTRACER" export csv "$T/bug.ctrace" -o "$T/csv" -q || fail "export csv: exit $?"
  for site in $(cut -d' ' -f2 "$T/report.by" | sort -u); do
    grep -q "^[^,]*,[^,]*,[0-9]*,$site,main,[^,]*examples/cpp/task_erase.cpp,$erase," "$T/csv/sites.csv" ||
      fail "$PROG: sites.csv does not name $site main task_erase.cpp:$erase:
$(grep "$site" "$T/csv/sites.csv")"
  done
done
[ "$n" -gt 0 ] || fail "no $CT_BUILD/examples/cpp-task-erase* built"
check_done
