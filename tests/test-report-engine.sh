#!/bin/sh
# test-report-engine.sh - the report on a real trace: examples/hello (a PIE)
# under `corotracer run`. Every event and coroutine the probe recorded is read
# back, nothing is malformed or lost, no error is found, and every suspension
# site is symbolized to a line of hello.c that calls block().
. "$(dirname "$0")/lib/report.sh"
hello=$CT_BUILD/examples/hello
src=$(dirname "$0")/../examples/hello/hello.c
[ -x "$hello" ] || { CHECK_KEEP_GOING=0; fail "$hello not built"; }

timeout 60 "$COROTRACER" run --quiet --lossless -o "$tmp/t.jsonl" -- "$hello" --events "$tmp/ev" --pace-us 1000 > "$tmp/out" 2>&1 ||
  { rc=$?; cat "$tmp/out"; CHECK_KEEP_GOING=0; fail "corotracer run exit $rc"; }
"$COROTRACER" report "$tmp/t.jsonl" --json "$tmp/f.json" --fail-on error > "$tmp/r.md" 2> "$tmp/err" ||
  fail "report exit $? (an error finding, or a failure): $(cat "$tmp/err"; grep '^###' "$tmp/r.md")"

num() { grep -o "\"$1\":[0-9]*" "$tmp/f.json" | head -n 1 | sed 's/.*://'; }
[ "$(num events)" = "$(grep -c '^ev ' "$tmp/ev")" ] || fail "events $(num events), the probe recorded $(grep -c '^ev ' "$tmp/ev")"
[ "$(num coroutines)" = "$(grep -c '^co ' "$tmp/ev")" ] || fail "coroutines $(num coroutines), the probe made $(grep -c '^co ' "$tmp/ev")"
[ "$(num malformed)" = 0 ] || fail "malformed lines in a trace of ours"
[ "$(num lost_events)" = 0 ] || fail "events lost"

# Top-level suspension sites, one per line: each a block() call in hello.c.
grep '^ {"site"' "$tmp/f.json" > "$tmp/sites"
[ "$(wc -l < "$tmp/sites")" -ge 2 ] || fail "fewer than 2 suspension sites: $(cat "$tmp/sites")"
while read -r s; do
  fn=$(echo "$s" | sed -n 's/.*"function":"\([^"]*\)".*/\1/p')
  file=$(echo "$s" | sed -n 's/.*"file":"\([^"]*\)".*/\1/p')
  line=$(echo "$s" | sed -n 's/.*"line":\([0-9]*\).*/\1/p')
  case "$file" in *hello.c) ;; *) fail "site not in hello.c: $s"; continue ;; esac
  sed -n "${line}p" "$src" | grep -q 'block(' || fail "$fn at hello.c:$line is not a block() call: $(sed -n "${line}p" "$src")"
  grep -q "\`$fn (hello.c:$line)\`" "$tmp/r.md" || fail "Markdown lacks $fn (hello.c:$line)"
done < "$tmp/sites"

finish test-report-engine
