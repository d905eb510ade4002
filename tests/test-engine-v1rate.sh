#!/bin/sh
# test-engine-v1rate.sh - issue #11: a v1-only SDK (tests/lib/v1-writer, built
# from the cTP v1 facts, not our probe) on one thread, 16 coroutines x 200
# events, 5, 20 and 100 us between events, beside a CPU hog: not one event
# lost in any run. docs/ENGINE.md "Bound" says why this rate is guaranteed.
# CT_V1RATE_RUNS runs per gap (default 50, as issue #11 asks; 8 in sanitizer builds).
. "$(dirname "$0")/lib/engine.sh"
V1W="$CT_BUILD/tests/lib/v1-writer"
[ -x "$V1W" ] || fail "$V1W missing"
runs=${CT_V1RATE_RUNS:-50}
[ -z "$CT_SAN" ] || runs=${CT_V1RATE_RUNS:-8}
# The bound of docs/ENGINE.md is the optimized engine's: a sanitized engine
# spends several times longer on each scan and line, longer than 16 rings at
# 5 us take to fill (640 us), so sanitizer builds check the 20 and 100 us gaps.
gaps="5000 20000 100000"
[ -z "$CT_SAN" ] || gaps="20000 100000"

# The load the bound must survive: a CPU hog beside the engine and the writer.
yes >/dev/null &
bg_add $!

# A run that lost events counts as the engine's fault unless the system kept
# the engine away longer than the bound allows: the end record's
# wake_late_max_us (how much longer than it asked a nap lasted, or how long
# after the first event of a sleep the scan came) must then exceed the ring's
# fill time (8 events x 16 coroutines x gap) minus the 250 us nap cap. Such a
# run is repeated (at most $runs times in all) and reported; any other loss fails.
n=0 delayed=0
for i in $(seq 1 "$runs"); do
  for gap in $gaps; do
   while :; do
    tr="$T/t-$gap-$i.jsonl"
    "$COROTRACER" -n 64 --quiet -o "$tr" -- "$V1W" 16 200 "$gap" > "$T/out" ||
      fail "run $i gap ${gap}ns: engine or writer failed: $(cat "$T/out")"
    [ "$(cat "$T/out")" = "written 3200" ] || fail "run $i: writer says $(cat "$T/out")"
    got=$("$CTJL" -t end events harvested lost sched < "$tr")
    echo "$gap $("$CTJL" -t end engine_cpu_us < "$tr")" >> "$T/cpu"
    late=$("$CTJL" -t end wake_late_max_us < "$tr")
    case "$got" in
      "3200 3200 0 fifo") ;;
      "3200 "*" fifo")
        allow=$(( (8 * 16 * gap - 250000) / 1000 ))
        if [ "$late" -gt "$allow" ] && [ $delayed -lt "$runs" ]; then
          delayed=$((delayed + 1))
          echo "run $i gap $gap: '$got' with the engine kept away ${late} us by the system (> $allow us): repeated"
          continue
        fi
        fail "run $i, ${gap} ns between events: end record 'events harvested lost sched' = '$got', want '3200 3200 0 fifo'; the system kept the engine away at most ${late} us (allowed ${allow} us), so the loss is the engine's
$("$CTJL" -t station_end probe_id lost < "$tr" | awk '$2 > 0' | head -n 5)" ;;
      *" normal") skip "the engine could not get SCHED_FIFO here (no CAP_SYS_NICE/RLIMIT_RTPRIO): the bound of docs/ENGINE.md does not hold" ;;
      *) fail "run $i, ${gap} ns between events: end record 'events harvested lost sched' = '$got', want '3200 3200 0 fifo'
$("$CTJL" -t station_end probe_id lost < "$tr" | awk '$2 > 0' | head -n 5)" ;;
    esac
    # Every event is in the file, in order per coroutine (ev 0..199 each).
    "$CTJL" -e probe_id ev is_active < "$tr" | awk '
      { want = n[$1]++; act = (want % 2) ? "true" : "false"
        if ($2 != want || $3 != act) { print "coroutine " $1 ": ev " $2 " is_active " $3 ", want ev " want " " act; exit 1 } }
      END { for (c in n) k++; if (k != 16) { print k " coroutines"; exit 1 }
            for (c in n) if (n[c] != 200) { print "coroutine " c ": " n[c] " events"; exit 1 } }' > "$T/why" ||
      fail "run $i gap $gap: event lines: $(cat "$T/why")"
    rm -f "$tr"
    n=$((n + 1))
    break
   done
  done
done
# The engine's CPU per run (median per gap), for docs/ENGINE.md.
for gap in $gaps; do
  awk -v g=$gap '$1 == g { print $2 }' "$T/cpu" | sort -n | awk -v g=$gap '{ v[NR] = $1 }
    END { m = v[int((NR + 1) / 2)]; printf "gap %d ns: engine CPU median %d us per run = %.1f%% of the nominal writing time (3200 x gap)\n", g, m, m * 100000 / (3200 * g) }'
done
echo "runs repeated because the system kept the engine away beyond the bound: $delayed"
echo "ok: $n runs (16 coroutines x 200 events each), none lost, beside a CPU hog"
