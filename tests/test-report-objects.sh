#!/bin/sh
# test-report-objects.sh - a wait object named, not shown as an address:
# tests/lib/short-wait's waiter parks on the global `mailbox` (named by its
# symbol and the line that defines it), and with `heap` on a malloc'd object
# the worker parked on first (named by that first wait's site), in the
# Markdown table and the JSON's obj_name; with `leave`, the waiter left
# parked names its object's last wake (the worker's, by main's thread, before
# it parked). --stuck-ms 200 judges the waiter (parked 300 ms at least) on
# any load.
. "$(dirname "$0")/lib/report.sh"
prog=$CT_BUILD/tests/lib/short-wait
src=$(dirname "$0")/lib/short-wait.c
[ -x "$prog" ] || { fail "$prog not built"; check_done; }
def=$(grep -n 'MAILBOX-DEF' "$src" | cut -d: -f1)
park=$(grep -n 'PARK-SITE' "$src" | cut -d: -f1)
wake=$(grep -n 'WAKE-SITE' "$src" | cut -d: -f1)
# trace NAME ARGS...: traced, then reported into $tmp/NAME.md and .json.
trace() {
  name=$1; shift
  "$COROTRACER" run --quiet --lossless -o "$tmp/$name.ctrace" -- "$prog" "$@" > "$tmp/$name.out" 2>&1 ||
    { fail "$name: corotracer run exit $?: $(cat "$tmp/$name.out")"; return; }
  "$COROTRACER" report --stuck-ms 200 "$tmp/$name.ctrace" --json "$tmp/$name.json" > "$tmp/$name.md" 2> "$tmp/$name.err" ||
    fail "$name: report exit $?: $(cat "$tmp/$name.err")"
}
trace global
grep -q "^| [0-9]* | waiter | mailbox (short-wait.c:$def) | \`*park (short-wait.c:$park)" "$tmp/global.md" ||
  fail "global: mailbox (short-wait.c:$def) not named: $(grep '| waiter |' "$tmp/global.md")"
grep -q '"label":"waiter","wait":"ptr","obj":"0x[0-9a-f]*",.*"obj_name":"mailbox (short-wait.c:'"$def"')"' "$tmp/global.json" ||
  fail "global: no obj_name in the JSON: $(grep -o '"label":"waiter"[^}]*' "$tmp/global.json")"
trace heap heap
grep -q "^| [0-9]* | waiter | heap, first waited on at park (short-wait.c:$park) |" "$tmp/heap.md" ||
  fail "heap: first wait not named: $(grep '| waiter |' "$tmp/heap.md")"
grep -q '"obj_name":"heap, first waited on at park (short-wait.c:'"$park"')"' "$tmp/heap.json" ||
  fail "heap: no obj_name in the JSON"
# Destroyed while waiting: its object's last wake too (the worker's, before).
grep -q "^| [0-9]* | waiter | .*destroyed at main (short-wait.c:[0-9]*); its object's last wake: at +[0-9.]* [mu]*s by a plain thread (tid [0-9]*) at main (short-wait.c:$wake), before it parked |" "$tmp/heap.md" ||
  fail "heap: the object's last wake not named: $(grep '| waiter |' "$tmp/heap.md")"
grep -q "| waiter | mailbox .*; no coroutine parked on its object was ever woken |" "$tmp/global.md" ||
  fail "global: the object's wakes not said: $(grep '| waiter |' "$tmp/global.md")"
trace leave leave
grep -q "^| [0-9]* | waiter | heap, first waited on at park (short-wait.c:$park) | .*; its object's last wake: at +[0-9.]* [mu]*s by a plain thread (tid [0-9]*) at main (short-wait.c:$wake), before it parked" "$tmp/leave.md" ||
  fail "leave: the object's last wake not named: $(grep '| waiter |' "$tmp/leave.md")"
grep -q '"obj_last_wake":{"from":0,"ts":[0-9]*,"at_ns":[0-9]*,"tid":[0-9]*,"site":{[^}]*"function":"main","file":"[^"]*short-wait.c","line":'"$wake"',' "$tmp/leave.json" ||
  fail "leave: no obj_last_wake in the JSON"
finish test-report-objects
