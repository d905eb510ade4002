#!/bin/sh
# test-engine-signals.sh - SIGTERM and SIGINT sent to the engine reach the
# target's whole process group: with -cmd, the shell and the child it started
# both die (no orphan), and the engine exits with the shell's status (128+sig).
. "$(dirname "$0")/lib/engine.sh"

env --default-signal=INT true 2>/dev/null ||
  skip "env --default-signal is missing (coreutils < 8.31): cannot undo the INT-ignore of background jobs"
for c in "TERM 15" "INT 2"; do
  set -- $c
  d=$T/$1; mkdir "$d"
  # A background job of a non-interactive shell starts with INT ignored;
  # env puts it back to default so the engine sees the signal as a user would.
  env --default-signal=INT "$COROTRACER" -n 8 -out "$d/trace" -cmd "'$TARGET' hold 3 '$d' & wait" > "$d/out" 2>&1 &
  eng=$!; bg_add $eng
  wait_file "$d/ready" 20 $eng
  child=$(ready_val "$d" pid); bg_add "$child"
  sh_pid=$(children_of $eng)
  [ -n "$sh_pid" ] || fail "SIG$1: no shell under the engine"
  kill -"$1" $eng
  wait $eng; rc=$?
  [ $rc = $((128 + $2)) ] || fail "SIG$1: engine exit $rc, want $((128 + $2)): $(cat "$d/out")"
  wait_gone "$child" || fail "SIG$1: the shell's child $child survived (orphaned)"
  wait_gone "$sh_pid" || fail "SIG$1: the shell $sh_pid survived"
  "$CTJL" -t end exit < "$d/trace" | grep -q "^{\"signal\":$2," ||
    fail "SIG$1: end record exit is $("$CTJL" -t end exit < "$d/trace")"
  echo "SIG$1: engine exit $rc, shell and child gone, end record says signal $2"
done
