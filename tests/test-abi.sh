#!/bin/sh
# test-abi.sh - the shared library exports exactly the public API: every dynamic
# symbol it defines is declared in a header under include/, and every function
# the C header declares is exported.
set -eu
so="$CT_BUILD/lib/libcorotracer.so"
[ -f "$so" ] || { echo "missing $so"; exit 1; }
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort -u)
[ -n "$exported" ] || { echo "no exported symbols in $so"; exit 1; }
fail=0
for sym in $exported; do
  if ! grep -qw -- "$sym" include/*.h; then
    echo "exported but not in a public header: $sym"; fail=1
  fi
done
# Functions declared with COROTRACER_API in corotracer.h must be exported.
declared=$(sed -n 's/^COROTRACER_API[^(]*[ *]\([a-z_][a-z0-9_]*\)(.*/\1/p' include/corotracer.h | sort -u)
[ -n "$declared" ] || { echo "found no COROTRACER_API declarations in include/corotracer.h"; exit 1; }
for sym in $declared; do
  echo "$exported" | grep -qx -- "$sym" || { echo "declared but not exported: $sym"; fail=1; }
done
# Internal prefixes must never leak.
if echo "$exported" | grep -E '^(ct_|uv_|_Z)'; then echo "internal symbols exported (above)"; fail=1; fi
[ $fail -eq 0 ] && echo "abi: $(echo "$exported" | wc -l) exported symbols, all public"
exit $fail
