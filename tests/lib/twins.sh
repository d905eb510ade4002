# twins.sh - for the tests of the examples that come as a bug build (--bug) and
# its correct twin (examples/fiber/pool.cpp, notify.cpp, ...). Source it after
# tests/lib/engine.sh.
#
# bug_names PROG SRC WANT...: runs PROG --bug traced (it must exit 0) and
# reports; each WANT, "marker=N", must be in the first finding as a site at
# SRC's line holding marker, with N coroutines ("(pool.cpp:46)`: 6
# coroutines"); no site may be one of our adapters' (include/corotracer/).
# The report is left in $T/bug.md.
#
# Both report with the timing findings off (a run without a suspend, a wait
# for a thread, past a minute): on a loaded machine the kernel alone can stop
# a thread for more than their 100 ms, and neither is what the examples show.
TWINS_UNTIMED="--blocker-ms 60000 --runnable-ms 60000"
bug_names() {
  prog=$1 src=$2
  shift 2
  "$COROTRACER" run --quiet --lossless -o "$T/bug.ctrace" -- "$prog" --bug > "$T/out" 2>&1 ||
    fail "$(basename "$prog") --bug: $(cat "$T/out")"
  "$COROTRACER" report "$T/bug.ctrace" $TWINS_UNTIMED -o "$T/bug.md" || fail "report failed"
  sed -n '/^### 1\. /,/^### 2\./p' "$T/bug.md" > "$T/f1"
  for w in "$@"; do
    line=$(grep -nF "${w%=*}" "$src" | head -n 1 | cut -d: -f1)
    n=${w##*=}
    want="($(basename "$src"):$line)\`: $n coroutine"
    [ "$n" = 1 ] || want="${want}s"
    grep -qF "$want" "$T/f1" || fail "want '$want' in the first finding; report says:
$(grep -A8 '^### ' "$T/bug.md")"
  done
  grep -Eq '(boost_fiber|asio|user_site)\.hpp:' "$T/bug.md" &&
    fail "an adapter's own line named: $(grep -E '(boost_fiber|asio|user_site)\.hpp:' "$T/bug.md")"
  return 0
}

# twin_clean PROG: runs PROG traced (it must exit 0); its report has no finding.
twin_clean() {
  "$COROTRACER" run --quiet --lossless -o "$T/ok.ctrace" -- "$1" > "$T/out" 2>&1 ||
    fail "$(basename "$1"): $(cat "$T/out")"
  "$COROTRACER" report "$T/ok.ctrace" $TWINS_UNTIMED -o "$T/ok.md" || fail "report failed"
  grep -q '^### ' "$T/ok.md" && fail "findings in the correct twin: $(grep -A6 '^### ' "$T/ok.md")"
  return 0
}
