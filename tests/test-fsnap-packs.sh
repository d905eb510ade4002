#!/bin/sh
# test-fsnap-packs.sh - the flight snapshot's tracker takes a dropped chunk's
# packs switch by switch (ctr_stream_walk: no expansion into events, no merge
# in time with the chunk's other entries, a fact older than a coroutine's own
# not applied: flight_snap.c on_event). Its snapshot lines must be the ones
# the decoder's merged expansion gives (bench-fsnap -x), byte for byte, after
# every prefix of chunks a window can have dropped: traces of many coroutines
# on several threads in random order, coroutines handed between threads
# (migrate; handoff: the baton's resume published at once by one thread while
# its suspend sits in another's open pack, so the chunk's order is not the
# time's), waits among yields, and short-lived coroutines, one after another
# (churn) or overlapping (server).
. "$(dirname "$0")/lib/engine.sh"
SDKW="$CT_BUILD/tests/lib/sdk-writer"
FSNAP="$CT_BUILD/bench/bench-fsnap"
COSW="$CT_BUILD/bench/bench-coswitch"

# trace NAME CMD...: a lossless packed trace of CMD in $T/NAME.ctrace.
trace() {
  n=$1
  shift
  "$COROTRACER" run --quiet --lossless -o "$T/$n.ctrace" -- "$@" > "$T/$n.out" 2>&1 ||
    fail "$n under the engine: exit $? ($(tail -3 "$T/$n.out"))"
}

# same NAME [all]: both paths' lines after the first c chunks, for c = 1, 3,
# 5, 8, ... (Fibonacci; with all, every c) up to the whole trace; fails when
# no snapshot had a line to compare.
same() {
  n=$1 a=1 b=2 c=1 lines=0 prev=-1
  while :; do
    "$FSNAP" -R 1 -c $c "$T/$n.ctrace" > "$T/new" 2> "$T/new.err" || fail "$n -c $c: $(cat "$T/new.err")"
    "$FSNAP" -x -R 1 -c $c "$T/$n.ctrace" > "$T/old" 2> "$T/old.err" || fail "$n -x -c $c: $(cat "$T/old.err")"
    sort "$T/new" > "$T/new.s"
    sort "$T/old" > "$T/old.s"
    cmp -s "$T/new.s" "$T/old.s" ||
      fail "$n: the snapshot after $c chunks differs from the expansion's: $(diff "$T/old.s" "$T/new.s" | head -6)"
    lines=$((lines + $(wc -l < "$T/new")))
    fed=$(sed -n 's/^bench-fsnap: \([0-9]*\) chunk bytes.*/\1/p' "$T/new.err")
    [ "$fed" = "$prev" ] && break # past the last chunk
    prev=$fed
    if [ "${2:-}" = all ]; then
      c=$((c + 1))
    else
      c=$((a + b))
      a=$b
      b=$c
    fi
  done
  [ $lines -gt 0 ] || fail "$n: no snapshot line compared"
  echo "$n: $lines snapshot lines the same"
}

trace random "$COSW" -r -n 150000 3 300 0
same random
trace migrate "$SDKW" migrate 3 40 4000 "$T/w1"
same migrate
trace handoff "$SDKW" handoff 2 30 60 "$T/w2"
same handoff
trace yield "$SDKW" yield 3 60 3000 "$T/w3"
same yield
# One short-lived coroutine after another: alive at a chunk's end only when the
# end falls inside its 4 events (~17 bytes with its like coroutine entry), so
# every prefix is compared (with 20,000 coroutines and Fibonacci prefixes, 0 to
# 4 lines a run: one ASan run beside a CPU hog had none).
trace churn "$SDKW" churn 100000 "$T/w4"
same churn all
# Short-lived coroutines overlapping: 2 threads x 16 requests in flight.
trace server "$SDKW" server 2 16 3000 0 "$T/w5"
same server
echo "ok"
