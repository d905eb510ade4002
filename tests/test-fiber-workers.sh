#!/bin/sh
# test-fiber-workers.sh - the Boost.Fiber adapter (include/corotracer/boost_fiber.hpp)
# on examples/fiber: with --bug (notify_one where notify_all is needed) the
# report finds the workers left parked, lost at the cv.wait line of worker()
# in the user's file, waiting on the condition variable: an error, not likely
# idle, though each was woken there many times (another worker on the same
# condition variable was woken after they parked); without the bug, no
# finding at all (the main fiber's teardown included); with too few stations,
# the untraced fibers are named in the finding's title.
. "$(dirname "$0")/lib/engine.sh"
PROG="$CT_BUILD/examples/fiber-workers"
[ -x "$PROG" ] || skip "Boost.Fiber not installed (libboost-fiber-dev)"
SRC="$(dirname "$0")/../examples/fiber/workers.cpp"
line=$(grep -n 'workers park here' "$SRC" | cut -d: -f1)

"$COROTRACER" run --quiet --lossless -o "$T/bug.jsonl" -- "$PROG" --bug > "$T/out" 2>&1 ||
  fail "fiber-workers --bug: $(cat "$T/out")"
stuck=$(sed -n 's/.*, \([0-9]*\) fibers never finished$/\1/p' "$T/out")
[ "${stuck:-0}" -gt 0 ] || fail "the bug did not show: $(cat "$T/out")"
"$COROTRACER" report "$T/bug.jsonl" --json "$T/findings.json" -o "$T/report.md" || fail "report failed"
tr -d '\n' < "$T/findings.json" | sed 's/{"kind":/\n&/g' | grep '^{"kind":"lost_wakeup"' > "$T/lw"
grep -q "\"severity\":\"error\",\"count\":$stuck," "$T/lw" &&
  grep -o '"sites":\[[^]]*\]' "$T/lw" | head -n 1 | grep -o '"function":"[^"]*","file":"[^"]*","line":[0-9]*' > "$T/sites" &&
  [ "$(wc -l < "$T/sites")" = 1 ] &&
  grep -q "^\"function\":\"[^\"]*worker\",\"file\":\"\([^\"]*/\)\{0,1\}examples/fiber/workers.cpp\",\"line\":$line\$" "$T/sites" &&
  [ "$(grep -o '"coroutines":\[.*\], *"related"' "$T/lw" | head -n 1 |
    grep -o '"label":"[^"]*","wait":"[a-z]*"' | sort | uniq -c | tr -s ' ')" = \
    " $stuck \"label\":\"fiber\",\"wait\":\"ptr\"" ] ||
  fail "want an error: $stuck fibers lost at worker (workers.cpp:$line) waiting on the cv; report says:
$(grep -A8 '^### ' "$T/report.md")"

"$COROTRACER" run --quiet --lossless -o "$T/ok.jsonl" -- "$PROG" > "$T/out" 2>&1 || fail "fiber-workers: $(cat "$T/out")"
grep -q ', 0 fibers never finished$' "$T/out" || fail "fiber-workers: $(cat "$T/out")"
"$COROTRACER" report "$T/ok.jsonl" $untimed --json "$T/findings.json" -o "$T/report.md" || fail "report failed"
tr -d '\n' < "$T/findings.json" | grep -q '"kind":' && fail "findings without the bug:
$(grep -A6 '^### ' "$T/report.md")"

# --join: main joins the stuck workers (COROTRACER_WAIT_COROUTINE from the
# adapter's join hook): one finding, main behind a worker with the chain, at
# the join line; no deadlock (main was the cv's only notifier).
jline=$(grep -n 'w.join();' "$SRC" | head -n 1 | cut -d: -f1)
"$COROTRACER" run --quiet --lossless -o "$T/join.jsonl" -- "$PROG" --bug --join > "$T/out" 2>&1 ||
  fail "fiber-workers --bug --join: $(cat "$T/out")"
"$COROTRACER" report "$T/join.jsonl" $untimed --json "$T/join.json" -o "$T/join.md" || fail "report failed"
[ "$(grep -c '^### ' "$T/join.md")" = 1 ] &&
  grep -q '^### 1\. \[error\] [0-9]* coroutines suspended forever: nobody woke them; 1 more waits for them to finish' "$T/join.md" &&
  grep -q '"label":"main","wait":"coroutine","obj":[0-9]*,' "$T/join.json" &&
  grep -q "\"function\":\"main\",\"file\":\"[^\"]*workers.cpp\",\"line\":$jline" "$T/join.json" &&
  grep -q 'it waits for coroutine [0-9]* (fiber), which waits on ptr 0x[0-9a-f]*: stuck behind it' "$T/join.json" ||
  fail "--join: want one lost_wakeup finding with main behind a worker (join at workers.cpp:$jline):
$(grep -A12 '^### ' "$T/join.md")"

# Too few stations (the default covers 10^5): the finding says how many
# coroutines went untraced, and what to do.
"$COROTRACER" run --quiet -n 2 -o "$T/n2.jsonl" -- "$PROG" > "$T/out" 2>&1 || fail "fiber-workers -n 2: $(cat "$T/out")"
"$COROTRACER" report "$T/n2.jsonl" -o "$T/n2.md" || fail "report failed"
grep -q '^### .*the trace is incomplete: 3 coroutines untraced (no station free)' "$T/n2.md" &&
  grep -q 'run again with `corotracer run -n N`' "$T/n2.md" || fail "-n 2: $(grep -A2 '^### ' "$T/n2.md")"
exit 0
