#!/bin/sh
# test-abi.sh - the shared library exports exactly the public API: every dynamic
# symbol it defines is declared in a header under include/, and every function
# the C header declares is exported; and the static library (whose internal
# globals a statically linked program sees too) defines only corotracer_* and
# corotracer__* (internal) globals, and rip_* should librip ever join it.
set -eu
CHECK_KEEP_GOING=1 # list every wrong symbol, then fail
. "$(dirname "$0")/lib/check.sh"
so="$CT_BUILD/lib/libcorotracer.so"
[ -f "$so" ] || { CHECK_KEEP_GOING=0; fail "missing $so"; }
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort -u)
[ -n "$exported" ] || { CHECK_KEEP_GOING=0; fail "no exported symbols in $so"; }
for sym in $exported; do
  if ! grep -qw -- "$sym" include/*.h; then
    fail "exported but not in a public header: $sym"
  fi
done
# Functions declared with COROTRACER_API in corotracer.h must be exported.
declared=$(sed -n 's/^COROTRACER_API[^(]*[ *]\([a-z_][a-z0-9_]*\)(.*/\1/p' include/corotracer.h | sort -u)
[ -n "$declared" ] || { CHECK_KEEP_GOING=0; fail "found no COROTRACER_API declarations in include/corotracer.h"; }
for sym in $declared; do
  echo "$exported" | grep -qx -- "$sym" || fail "declared but not exported: $sym"
done
# Internal prefixes must never leak.
if echo "$exported" | grep -E '^(ct_|uv_|_Z)'; then fail "internal symbols exported (above)"; fi
# The static library: every defined global symbol, internal ones included.
a="$CT_BUILD/lib/libcorotracer.a"
if [ -f "$a" ]; then
  globals=$(nm --defined-only "$a" | awk 'NF == 3 && $2 ~ /^[A-Z]$/ {print $3}' | sort -u)
  [ -n "$globals" ] || fail "no global symbols in $a"
  for sym in $globals; do
    case "$sym" in
    corotracer_* | rip_*) ;;
    __odr_asan.* | __asan_* | __tsan_* | __ubsan_*) ;; # the sanitizers' own, in their builds
    *) fail "global symbol of $a without the corotracer_/corotracer__/rip_ prefix: $sym" ;;
    esac
  done
else
  fail "missing $a"
fi
check_done
echo "abi: static library: $(echo "$globals" | wc -l) globals, all prefixed"
echo "abi: $(echo "$exported" | wc -l) exported symbols, all public"
