#!/bin/sh
# test-report-reuse.sh - issue #10's acceptance: a correct scheduler that
# frees its coroutines and reuses their memory (examples/pool: ids are
# addresses, so 10^5 coroutines share a few hundred ids; each records its
# final suspend) under `corotracer run`: the report has no error or warning.
# --lossless: the events go through per-thread rings (v2), which a fast writer
# can overrun in default mode; lossless mode makes every count below exact.
# CT_POOL_COROUTINES: fewer, for a quick run.
. "$(dirname "$0")/lib/report.sh"
pool=$CT_BUILD/examples/pool
n=${CT_POOL_COROUTINES:-100000}
[ -x "$pool" ] || { CHECK_KEEP_GOING=0; fail "$pool not built"; }
# ASan's quarantine would keep freed memory from the next malloc: no reuse.
ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=0" \
  timeout 600 "$COROTRACER" run --quiet --lossless -n $((n + 64)) -o "$tmp/t.jsonl" -- "$pool" "$n" > "$tmp/out" 2>&1 ||
  { rc=$?; cat "$tmp/out"; CHECK_KEEP_GOING=0; fail "corotracer run exit $rc"; }
grep -q "^pool: $n coroutines, $((n / 2)) items, $((n * 11 / 2)) events recorded, 0 dropped" "$tmp/out" ||
  fail "pool: $(cat "$tmp/out")"
"$COROTRACER" report "$tmp/t.jsonl" $untimed --json "$tmp/f.json" --fail-on warning > "$tmp/r.md" 2> "$tmp/err" ||
  fail "report exit $? (a warning or error finding, or a failure): $(cat "$tmp/err"; grep '^###' "$tmp/r.md")"
num() { grep -o "\"$1\":[0-9]*" "$tmp/f.json" | head -n 1 | sed 's/.*://'; }
[ "$(num coroutines)" = "$n" ] || fail "coroutines $(num coroutines), want $n (each incarnation one)"
[ "$(num events)" = "$((n * 11 / 2))" ] || fail "events $(num events), want $((n * 11 / 2))"
[ "$(num returned)" = "$n" ] || fail "returned $(num returned), want $n"
[ "$(num lost_events)" = 0 ] || fail "events lost: $(num lost_events)"
reused=$(num reused_ids)
# glibc's malloc hands nearly every freed coroutine to the next one; the
# sanitizers' allocators fewer (ASan without quarantine: about a fifth).
want=$((n / 2)); [ -n "${CT_SAN:-}" ] && want=$((n / 100))
[ "${reused:-0}" -gt $want ] || fail "reused_ids '$reused' (want > $want): malloc did not reuse the freed coroutines?"
grep -q '^No findings\.' "$tmp/r.md" || fail "findings: $(grep '^###' "$tmp/r.md")"
grep -q "Reused ids.*: $reused coroutines" "$tmp/r.md" || fail "Markdown does not show the reused ids"
# The consumer parks with corotracer_suspend(co->trace, NULL, ...): the site
# is the line of that call in pool.c, not the SDK's inline wrapper.
line=$(grep -n 'corotracer_suspend(co->trace, NULL' "$(dirname "$0")/../examples/pool/pool.c" | cut -d: -f1)
# clang (the TSan build) folds consumer()'s two suspend calls, the park and the
# exit, into one call instruction, which its line table gives line 0.
[ "${CT_SAN:-}" = tsan ] && line="\\($line\\|0\\)"
grep -q "^| \`consumer (pool.c:$line)\` | $((n / 2)) |" "$tmp/r.md" ||
  fail "suspension site not consumer (pool.c:$line): $(grep '^| \`' "$tmp/r.md" | head -n 3)"
finish test-report-reuse
