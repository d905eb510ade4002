#!/bin/sh
# test-model-spin.sh - check the protocol models with spin:
#   tests/model/lossless.pml  v1 extension: the ring publish/consume, the
#     engine's sleep and wake-up byte, the lossless futex wait
#   tests/model/rings.pml     v2: per-thread rings, the writers' relaxed look
#     at the sleep flag and the engine's timed wake, the lossless waits for
#     ring room and for a station, station reuse
#   tests/model/overwrite.pml the flight recorder's full ring: the writer
#     takes the oldest records back by CAS on tail, the engine claims what
#     it copied by CAS (every event kept or counted lost, once)
#   tests/model/openpack.pml  the open pack in the ring: taken by the engine
#     while open, the rest when published, a killed writer's at the end
#     (every switch once, in order)
# No invalid end state (lost wake-up), no assertion (lost, overwritten,
# out-of-order or stale event, early reuse). Then every broken variant of
# each model must be caught, so the check can fail.
. "$(dirname "$0")/lib/check.sh"
command -v spin >/dev/null 2>&1 || skip "spin not installed (scripts/install-deps.sh)"
models="$(cd "$(dirname "$0")" && pwd)/model"
T=$(mktemp -d "${TMPDIR:-/tmp}/ct-spin.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
# verify MODEL [-DVARIANT]: prints pan's summary; exit status = pan found errors.
verify() {
  model=$models/$1.pml
  shift
  rm -f pan pan.* ./*.trail
  spin -a "$@" "$model" > spin.out 2>&1 || { cat spin.out; fail "spin -a $* $model"; }
  cc -O2 -DSAFETY -o pan pan.c 2> cc.out || { cat cc.out; fail "cc pan.c"; }
  ./pan -m100000 > pan.out 2>&1
  grep -E "errors:|states, stored|invalid end|assertion violated|depth too small" pan.out
  grep -q "errors: 0" pan.out && ! grep -q "depth too small" pan.out
}
verify lossless || fail "lossless.pml has errors (see above)"
for bug in -DBUG_NO_RESCAN -DBUG_NO_RECHECK; do
  if verify lossless "$bug"; then fail "spin did not catch lossless.pml's broken variant $bug"; fi
done
verify overwrite || fail "overwrite.pml has errors (see above)"
for bug in -DBUG_NO_CONFIRM -DBUG_PLAIN_TAIL -DBUG_LATE_CLAIM -DBUG_TAIL_FIRST; do
  if verify overwrite "$bug"; then fail "spin did not catch overwrite.pml's broken variant $bug"; fi
done
verify rings || fail "rings.pml has errors (see above)"
for bug in -DBUG_EARLY_REUSE -DBUG_NO_RECHECK -DBUG_NO_TIMED_WAKE; do
  if verify rings "$bug"; then fail "spin did not catch rings.pml's broken variant $bug"; fi
done
verify openpack || fail "openpack.pml has errors (see above)"
verify openpack -DKILLED || fail "openpack.pml -DKILLED has errors (see above)"
for bug in -DBUG_NO_REST -DBUG_COUNT_FIRST -DBUG_OPEN_STALE; do
  if verify openpack "$bug"; then fail "spin did not catch openpack.pml's broken variant $bug"; fi
done
echo "ok: the four models verified; every broken variant caught"
