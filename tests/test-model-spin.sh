#!/bin/sh
# test-model-spin.sh - check tests/model/lossless.pml with spin: the ring
# publish/consume, the engine's sleep and wake-up byte, the lossless futex
# wait: no invalid end state (lost wake-up), no assertion (lost, overwritten or
# out-of-order event). Then two broken variants (no sleep re-scan; no re-check
# after announcing a waiter) must be caught, so the check can fail.
. "$(dirname "$0")/lib/check.sh"
command -v spin >/dev/null 2>&1 || skip "spin not installed (scripts/install-deps.sh)"
model="$(cd "$(dirname "$0")" && pwd)/model/lossless.pml"
T=$(mktemp -d "${TMPDIR:-/tmp}/ct-spin.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
# verify [-DVARIANT]: prints pan's summary; exit status = pan found errors.
verify() {
  rm -f pan pan.* ./*.trail
  spin -a "$@" "$model" > spin.out 2>&1 || { cat spin.out; fail "spin -a $*"; }
  cc -O2 -DSAFETY -o pan pan.c 2> cc.out || { cat cc.out; fail "cc pan.c"; }
  ./pan -m100000 > pan.out 2>&1
  grep -E "errors:|states, stored|invalid end|assertion violated|depth too small" pan.out
  grep -q "errors: 0" pan.out && ! grep -q "depth too small" pan.out
}
verify || fail "the protocol model has errors (see above)"
for bug in -DBUG_NO_RESCAN -DBUG_NO_RECHECK; do
  if verify "$bug"; then fail "spin did not catch the broken variant $bug"; fi
done
echo "ok: model verified; both broken variants caught"
