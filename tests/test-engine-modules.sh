#!/bin/sh
# test-engine-modules.sh - a process that attaches, records a suspend and
# exits at once still gets module lines, and every site of its events lies in
# the module of its own executable (so the report can symbolize it). Without
# the attach acknowledgement (docs/PROTOCOL.md "Attach") its /proc/PID/maps is
# often gone before the engine reads it. 50 runs in a row, each must pass.
. "$(dirname "$0")/lib/engine.sh"

RUNS=${CT_MODULES_RUNS:-50}
i=0
while [ $i -lt "$RUNS" ]; do
  i=$((i + 1))
  tr="$T/trace$i.jsonl"
  "$COROTRACER" run --quiet -n 4 -o "$tr" -- "$TARGET" quick > "$T/out" 2> "$T/err" ||
    fail "run $i: corotracer run -- ct-target quick exited $?: $(cat "$T/err")"
  check_trace_ends "$tr"
  pid=$("$CTJL" -t process pid < "$tr" | head -n 1)
  [ -n "$pid" ] || fail "run $i: no process line"
  # Modules of the target's own executable: "start end" in decimal.
  "$CTJL" -t module pid start end path < "$tr" |
    awk -v p="$pid" -v exe="$TARGET" '$1 == p && $4 == exe { print $2, $3 }' > "$T/mods"
  [ -s "$T/mods" ] || fail "run $i: no module line of $TARGET for pid $pid:
$(grep '"type"' "$tr")"
  sites=$("$CTJL" -e kind site < "$tr" | awk '$1 == "create" || $1 == "suspend" { print $2 }')
  [ "$(echo "$sites" | wc -w)" = 2 ] || fail "run $i: want a create and a suspend site, got: $sites"
  for s in $sites; do
    a=$(($s))
    ok=0
    while read -r lo hi; do
      [ "$a" -ge $((lo)) ] && [ "$a" -lt $((hi)) ] && ok=1
    done < "$T/mods"
    [ $ok = 1 ] || fail "run $i: site $s is in no module of $TARGET:
$(cat "$T/mods")"
  done
  rm -f "$tr"
done
echo "modules: ok ($RUNS runs)"
