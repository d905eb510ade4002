#!/bin/sh
# test-engine-hostile.sh - a hostile target (tests/lib/scribbler): it writes
# random bytes (seeded) over its whole shared mapping mid-run and goes on
# tracing. Default and --lossless, rings and --rings 0, SEEDS seeds each. In
# every run the program exits on its own within four times its normal time (the
# same mode without the scribble, slowest of two runs) + --lossless-ms + 15 s
# (a spin or a wait per event takes the 60 s of the timeout; the slack is for a
# loaded 2-core machine, where 2 s was once 1.7 s short of the time taken); the
# engine neither crashes nor trips a sanitizer, exits 1 (the trace is not to
# be trusted), and writes a trace whose end record says the target corrupted
# the tracer's memory, with no count above the events the program wrote. The
# report says so too. Then CSEEDS seeds per mode that write random words over
# the counters only (stations' ev_claimed, harvested_ev, v2_lost; rings'
# lost), padding untouched: only the values' plausibility can tell. On 958b127 a lossless run on rings spun forever, and
# the end record said "lost":13502572249533253056 with exit 0 (issue #24).
# Last, `--pack` (default and --lossless, SEEDS seeds each, binary trace): the
# scribbler's "packs" mode, a thread that writes rogue packs into its own ring
# (bad nrec, nbytes, nent, span, ts0, zero byte, garbage entries, a station no
# coroutine has, a pack straddling head, valid ones among them): the engine
# neither crashes nor hangs, says nothing but one-line messages, counts the
# packs it refuses (bad_records), and its trace reads to its end record, whose
# events are harvested + lost (the report does not call it damaged), with
# every event of the honest coroutines in it under --lossless.
. "$(dirname "$0")/lib/engine.sh"
SCR="$CT_BUILD/tests/lib/scribbler"
[ -x "$SCR" ] || fail "$SCR missing"
SEEDS=${CT_HOSTILE_SEEDS:-20}
CSEEDS=5
EVENTS=20000
MS=200 # --lossless-ms
COUNTS="events harvested lost untraced_coroutines ring_lost no_ring past_gen bad_records ring_gap"

# run SEED MODE...: one engine run; sets rc, written, ms. A hang ends at 60 s
# (timeout), which the time check then fails. $what: "counters" or empty.
what=""
OUT="$T/t.jsonl"
run() {
  seed=$1
  shift
  rm -f "$T/out" "$OUT"
  timeout -s KILL 60 "$COROTRACER" run --quiet --lossless-ms $MS -n 16 "$@" -o "$OUT" -- \
    "$SCR" "$seed" $EVENTS "$T/out" $what > "$T/err" 2>&1
  rc=$?
  ! grep -q 'Sanitizer\|runtime error' "$T/err" || fail "seed $seed $*: sanitizer: $(cat "$T/err")"
  [ -s "$T/out" ] || fail "seed $seed $*: the program did not finish (engine exit $rc): $(cat "$T/err")"
  set -- $(cat "$T/out")
  written=$2
  ms=$4
  honest=${6:-}
}

n=0
for mode in "" "--lossless" "--rings 0" "--lossless --rings 0"; do
  # The normal time: the slowest of two runs without a scribble.
  base=0
  for k in 1 2; do
    # shellcheck disable=SC2086
    run 0 $mode
    [ $rc = 0 ] || fail "no scribble, '$mode': engine exit $rc: $(cat "$T/err")"
    [ "$("$CTJL" -t end error < "$T/t.jsonl")" = - ] ||
      fail "no scribble, '$mode': end record has an error: $(tail -n 1 "$T/t.jsonl")"
    [ "$ms" -le "$base" ] || base=$ms
  done
  limit=$((4 * base + MS + 15000))
  seed=1
  while [ $seed -le $((SEEDS + CSEEDS)) ]; do
    what=""
    [ $seed -le "$SEEDS" ] || what=counters
    # shellcheck disable=SC2086
    run $seed $mode
    [ "$ms" -le $limit ] || fail "seed $seed $what '$mode': the program took $ms ms, more than $limit"
    [ $rc = 1 ] || fail "seed $seed '$mode': engine exit $rc, want 1: $(cat "$T/err")"
    grep -q "wrote over the tracer's shared memory" "$T/err" ||
      fail "seed $seed '$mode': the engine did not say so: $(cat "$T/err")"
    check_trace_ends "$T/t.jsonl"
    err=$("$CTJL" -t end error < "$T/t.jsonl")
    [ "$err" = "the target corrupted the tracer's shared memory" ] ||
      fail "seed $seed '$mode': end record error is '$err'"
    # shellcheck disable=SC2086
    for v in $("$CTJL" -t end $COUNTS < "$T/t.jsonl") \
      $("$CTJL" -t station_end events harvested lost < "$T/t.jsonl"); do
      [ "$v" = - ] || [ "$v" -le "$written" ] ||
        fail "seed $seed '$mode': a count of $v, above the $written events written: $(tail -n 1 "$T/t.jsonl")"
    done
    if [ $seed = 1 ]; then
      "$COROTRACER" report "$T/t.jsonl" > "$T/report.md" 2>&1
      grep -q "memory_corrupted" "$T/report.md" ||
        fail "'$mode': the report does not say the memory was corrupted: $(head -n 20 "$T/report.md")"
    fi
    seed=$((seed + 1))
    n=$((n + 1))
  done
  what=""
  echo "'$mode': $SEEDS seeds + $CSEEDS over the counters, normal time ${base} ms, all within $limit ms"
done
# --pack: rogue packs in a ring of the target's own.
OUT="$T/t.ctrace"
what=packs
np=0
for mode in "--pack" "--pack --lossless"; do
  base=0
  for k in 1 2; do
    # shellcheck disable=SC2086
    run 0 $mode
    [ $rc = 0 ] || fail "no rogue, '$mode': engine exit $rc: $(cat "$T/err")"
    [ "$ms" -le "$base" ] || base=$ms
  done
  limit=$((4 * base + MS + 15000))
  bad=0
  seed=1
  while [ $seed -le "$SEEDS" ]; do
    # shellcheck disable=SC2086
    run $seed $mode
    [ "$ms" -le $limit ] || fail "seed $seed '$mode': the program took $ms ms, more than $limit"
    [ $rc = 0 ] || [ $rc = 1 ] || fail "seed $seed '$mode': engine exit $rc: $(cat "$T/err")"
    ! grep -v '^corotracer: ' "$T/err" | grep -q . ||
      fail "seed $seed '$mode': the engine said more than one-line messages: $(cat "$T/err")"
    "$CTJL" type < "$OUT" > "$T/types" 2> "$T/rerr" || fail "seed $seed '$mode': the trace does not read"
    [ -s "$T/rerr" ] && fail "seed $seed '$mode': reading the trace said: $(cat "$T/rerr")"
    check_trace_ends "$OUT"
    # shellcheck disable=SC2086
    for v in $("$CTJL" -t end $COUNTS < "$OUT") \
      $("$CTJL" -t station_end events harvested lost < "$OUT"); do
      [ "$v" = - ] || [ "$v" -le "$written" ] ||
        fail "seed $seed '$mode': a count of $v, above the $written events written: $("$CTJL" -t end $COUNTS < "$OUT")"
    done
    # The end's totals add up (a refused pack's events are lost, not
    # harvested), and the report takes them.
    set -- $("$CTJL" -t end events harvested lost < "$OUT")
    [ "$1" = $(($2 + $3)) ] || fail "seed $seed '$mode': end events $1, harvested $2 + lost $3"
    "$COROTRACER" report "$OUT" > "$T/report.md" 2>&1 || fail "seed $seed '$mode': report: $(head -n 5 "$T/report.md")"
    ! grep -q 'Damaged' "$T/report.md" ||
      fail "seed $seed '$mode': the report calls the trace damaged: $(grep 'Damaged' "$T/report.md")"
    b=$("$CTJL" -t end bad_records < "$OUT")
    [ "$b" = - ] || bad=$((bad + b))
    if [ "$mode" != "${mode#*lossless}" ]; then
      # Every event of the honest coroutines (not the rogue's) is in the trace;
      # more may be: a rogue entry's `to` may name an honest station (no gen
      # in an entry: docs/ROUTE1.md "Remaining" 6).
      rogue=$("$CTJL" -t coroutine probe_id label < "$OUT" | awk '$2 == "rogue" { print $1 "" }')
      got=$("$CTJL" -e probe_id < "$OUT" | awk -v r="$rogue" '($1 "") != (r "")' | wc -l)
      [ "$got" -ge "$honest" ] || fail "seed $seed '$mode': $got events of the honest coroutines, want $honest"
    fi
    seed=$((seed + 1))
    np=$((np + 1))
  done
  [ $bad -gt 0 ] || fail "'$mode': no rogue pack counted among the bad records in $SEEDS seeds"
  echo "'$mode': $SEEDS seeds of rogue packs, $bad bad records counted, normal time ${base} ms, all within $limit ms"
done
echo "ok: $n hostile runs, each flagged, bounded and with no count above the events written; $np with rogue packs, each bounded, counted and readable"
