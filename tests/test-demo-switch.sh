#!/bin/sh
# test-demo-switch.sh - the demo scheduler's yield, recorded with one
# corotracer_switch (one stamp, one publish), through our engine (--lossless,
# v2 rings): a switch between the two yielders is three consecutive event
# lines, the suspend and wake of the one that yielded and the resume of the
# other, all with one ts (the engine orders equal stamps by ring order); the
# counts are exact; and the report judges the trace as it did the separate
# calls': no findings, nothing it could not judge.
. "$(dirname "$0")/lib/engine.sh"
BDS="$CT_BUILD/bench/bench-demo-switch"
[ -x "$BDS" ] || fail "$BDS missing"
n=1000 # yields per coroutine, after a warm-up of n / 10 (bench-demo-switch's LOAD mode)

"$COROTRACER" run --quiet --lossless -o "$T/t.jsonl" -- "$BDS" $n 0 yield >"$T/out" ||
  fail "engine or bench-demo-switch failed"
grep -q '^yield switches_per_sec=.* traced=1 ' "$T/out" || fail "not traced: $(cat "$T/out")"
[ "$("$CTJL" -t end lost < "$T/t.jsonl")" = 0 ] || fail "events lost in --lossless mode"

# Every yield is a suspend and a wake (from 0: the worker, no coroutine) of
# one coroutine, consecutive and with one ts; when the other coroutine was
# queued, followed by its resume, same ts (a triple). Lines that share a ts
# come in exactly that order. Exact counts (lossless): 2 x iterations yields
# per run (the warm-up's and the measured one). Each yielder starts only once
# both are spawned (bench-demo-switch), so every yield finds the other one
# queued: every wake is a triple.
"$CTJL" -e probe_id kind ts from < "$T/t.jsonl" >"$T/ev"
got=$(awk '
  { id[NR] = $1; k[NR] = $2; ts[NR] = $3; from[NR] = $4 }
  END {
    rank["suspend"] = 1; rank["wake"] = 2; rank["resume"] = 3
    for (i = 2; i <= NR; i++) {
      if (k[i] == "wake") {
        w++
        if (!(k[i-1] == "suspend" && id[i-1] == id[i] && ts[i-1] == ts[i] && from[i] == 0)) bad++
        else if (i < NR && k[i+1] == "resume" && ts[i+1] == ts[i] && id[i+1] != id[i]) t++
      }
      if (ts[i] == ts[i-1] && !(rank[k[i-1]] && rank[k[i]] > rank[k[i-1]])) order++
    }
    print w + 0, bad + 0, order + 0, t + 0
  }' "$T/ev")
want=$((2 * (n + n / 10)))
[ "$got" = "$want 0 0 $want" ] ||
  fail "'wakes, wakes not right after their suspend, equal stamps out of order, triples' = '$got', want '$want 0 0 $want'"

"$COROTRACER" report "$T/t.jsonl" $untimed --fail-on info -o "$T/r.md" --json "$T/f.json" ||
  fail "report found something (exit $?): $(sed -n '/## Findings/,/## Suspension/p' "$T/r.md")"
grep -q '"not_judged":{"resume_running":0,"resume_without_wake":0,"after_destroy":0,"resume_after_return":0}' "$T/f.json" ||
  fail "the report could not judge every event: $(grep -o '"not_judged":{[^}]*}' "$T/f.json")"
grep -q '"resumes":'$((2 * (n + n / 10) + 4)) "$T/f.json" || fail "resumes: $(grep -o '"resumes":[0-9]*' "$T/f.json")"
echo "demo-switch: $want yields recorded as suspend, wake (and resume) with one stamp; report: no findings"
