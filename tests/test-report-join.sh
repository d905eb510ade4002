#!/bin/sh
# test-report-join.sh - a join (COROTRACER_WAIT_COROUTINE) through the engine
# into both trace formats: "main" stuck behind its stuck "consumer" is one
# finding with the chain, at the program's lines; the correct run has none.
. "$(dirname "$0")/lib/engine.sh"
PROG="$CT_BUILD/tests/lib/join-prog"

# trace MODE FORMAT: run the program (--bug or --ok), trace and report it.
trace() {
  out="$T/$1.$2"
  "$COROTRACER" run --quiet --lossless --format "$2" -o "$out" -- "$PROG" "--$1" ||
    fail "$1 $2: run failed"
  "$COROTRACER" report "$out" --json "$T/$1-$2.json" > "$T/$1-$2.md" 2> "$T/$1-$2.err" ||
    fail "$1 $2: report failed: $(cat "$T/$1-$2.err")"
}

for fmt in ctrace jsonl; do
  trace bug $fmt
  j="$T/bug-$fmt.json"
  n=$(grep -o '"kind":"lost_wakeup","severity":"error","count":[0-9]*' "$j" | sed 's/.*://')
  [ "$n" = 2 ] || fail "bug $fmt: lost_wakeup count '$n', want 2 (consumer, and main behind it)"
  [ "$(grep -o '"kind":"[a-z_]*","severity":"error"' "$j" | wc -l)" = 1 ] ||
    fail "bug $fmt: not one error finding: $(grep -o '"kind":"[a-z_]*","severity":"[a-z]*"' "$j")"
  grep -q '1 coroutine suspended forever: nobody woke them; 1 more waits for them to finish' "$j" ||
    fail "bug $fmt: title"
  grep -q '"label":"main","wait":"coroutine","obj":[0-9]*,' "$j" || fail "bug $fmt: main's wait"
  grep -q 'it waits for coroutine [0-9]* (consumer), which waits on ptr cond (join-prog.c:[0-9]*): stuck behind it' "$j" ||
    fail "bug $fmt: main's chain"
  grep -q 'coroutine [0-9]* (main) waits for coroutine [0-9]* (consumer), which waits on ptr' "$j" ||
    fail "bug $fmt: the finding's chain"
  grep -q 'join-prog.c:' "$T/bug-$fmt.md" || fail "bug $fmt: sites not at the program's lines"
  if grep -q 'Malformed\|"malformed":[1-9]' "$j"; then fail "bug $fmt: malformed lines"; fi

  trace ok $fmt
  j="$T/ok-$fmt.json"
  ! grep -q '"severity":"error"' "$j" || fail "ok $fmt: an error finding: $(grep -o '"title":"[^"]*"' "$j")"
done
check_done
echo "test-report-join: ok"
