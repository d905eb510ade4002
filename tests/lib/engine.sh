# engine.sh - shell helpers for the engine's tests (tests/test-engine-*.sh).
# Source it after setting nothing; it sets:
#   T        a fresh temp dir, removed on exit together with the processes in BG
#   CTJL     tests/lib/ctjl (JSONL field printer), TARGET tests/lib/ct-target,
#   HELLO    examples/hello, COROTRACER the engine (from tests/run.sh)
# and defines (besides fail and skip, from check.sh) wait_file, wait_gone, bg_add, same_reports, line_type, ready_val,
# check_trace_ends, children_of.
: "${CT_BUILD:?run me through tests/run.sh}" "${COROTRACER:?run me through tests/run.sh}"
case "$COROTRACER" in /*) ;; *) COROTRACER="$PWD/$COROTRACER" ;; esac
case "$CT_BUILD" in /*) ;; *) CT_BUILD="$PWD/$CT_BUILD" ;; esac
CTJL="$CT_BUILD/tests/lib/ctjl"
TARGET="$CT_BUILD/tests/lib/ct-target"
HELLO="$CT_BUILD/examples/hello"
BG=""
T=$(mktemp -d "${TMPDIR:-/tmp}/ct-engine-test.XXXXXX") || exit 1
ct_cleanup() {
  for p in $BG; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap ct_cleanup EXIT
trap 'exit 1' INT TERM HUP

. "$(dirname "$0")/lib/check.sh"
# same_reports BIN JSONL: `corotracer report` of a run's binary trace and of its
# JSONL agree (the Markdown but its Trace line; the findings JSON but bytes and
# path); leaves the binary's report in $T/b.md.
same_reports() {
  "$COROTRACER" report "$1" --json "$T/b.json" > "$T/b.md" 2> "$T/err" || fail "report of the binary: exit $?"
  [ -s "$T/err" ] && fail "report of the binary said: $(cat "$T/err")"
  "$COROTRACER" report "$2" --json "$T/j.json" > "$T/j.md" || fail "report of the JSONL: exit $?"
  grep -v '^- \*\*Trace\*\*' "$T/b.md" > "$T/b.cmp"
  grep -v '^- \*\*Trace\*\*' "$T/j.md" > "$T/j.cmp"
  diff "$T/b.cmp" "$T/j.cmp" > "$T/diff" || fail "the reports differ: $(head -20 "$T/diff")"
  sed 's/"bytes":[0-9]*//; s/"path":"[^"]*"//' "$T/b.json" > "$T/b.jcmp"
  sed 's/"bytes":[0-9]*//; s/"path":"[^"]*"//' "$T/j.json" > "$T/j.jcmp"
  cmp -s "$T/b.jcmp" "$T/j.jcmp" || fail "the JSON findings differ"
}
# Remember a background pid to kill at exit (if still there).
bg_add() { BG="$BG $1"; }

# wait_file FILE [SECONDS [PID]]: until FILE exists (default 20 s), else fail;
# fail at once if process PID (the engine) is gone before.
wait_file() {
  n=$(( ${2:-20} * 20 ))
  while [ ! -e "$1" ]; do
    n=$((n - 1)); [ $n -gt 0 ] || fail "timed out waiting for $1"
    [ -z "${3:-}" ] || kill -0 "$3" 2>/dev/null || fail "process $3 ended before $1 appeared"
    sleep 0.05
  done
}
# wait_gone PID [SECONDS]: until process PID no longer exists; 1 if it stays.
wait_gone() {
  n=$(( ${2:-10} * 20 ))
  while kill -0 "$1" 2>/dev/null; do
    n=$((n - 1)); [ $n -gt 0 ] || return 1
    sleep 0.05
  done
  return 0
}
# line_type FILE N: the "type" of line N of FILE ("-" for an event line); a
# binary trace's records count as its JSONL lines (ctjl converts).
line_type() { "$CTJL" type < "$1" | sed -n "${2}p"; }
# ready_val DIR KEY: a value from the ct-target ready file.
ready_val() { awk -v k="$2" '$1 == k { print $2 }' "$1/ready"; }
# check_trace_ends FILE: first line is meta, last line is end; else fail.
check_trace_ends() {
  [ "$(line_type "$1" 1)" = meta ] || fail "$1: first line is not a meta record: $(head -n 1 "$1")"
  [ "$(line_type "$1" '$')" = end ] || fail "$1: last line is not an end record: $(tail -n 1 "$1")"
}
# children_of PID: pids whose parent is PID (from /proc, no procps needed).
children_of() { cat /proc/[0-9]*/stat 2>/dev/null | awk -v p="$1" '$4 == p { print $1 }'; }
