#!/bin/sh
# test-build-link.sh - a program linked against the build tree's shared library
# (`-L build/default/lib -lcorotracer`) runs from there with LD_LIBRARY_PATH or
# -Wl,-rpath: the soname link libcorotracer.so.1 is in the build's lib/.
. "$(dirname "$0")/lib/check.sh"
set -u
B=${CT_BUILD:?run me through tests/run.sh}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-build-link.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
lib=$(cd "$B/lib" && pwd)
cc -std=c11 -Wall -Wextra -Werror -Iinclude -o "$tmp/hello" examples/hello/hello.c -L"$lib" -lcorotracer \
  -lpthread || fail "hello does not link against $lib"
cc -std=c11 -Wall -Wextra -Werror -Iinclude -o "$tmp/hello-rpath" examples/hello/hello.c -L"$lib" \
  -lcorotracer -lpthread -Wl,-rpath,"$lib" || fail "hello does not link against $lib with an rpath"
readelf -d "$tmp/hello" | grep -q 'NEEDED.*\[libcorotracer\.so\.1\]' || fail "hello does not need libcorotracer.so.1"
LD_LIBRARY_PATH=$lib "$tmp/hello" > "$tmp/out" 2>&1 || fail "LD_LIBRARY_PATH=$lib: hello: $(cat "$tmp/out")"
"$tmp/hello-rpath" > "$tmp/out" 2>&1 || fail "-Wl,-rpath,$lib: hello: $(cat "$tmp/out")"
grep -q 'consumer got 42' "$tmp/out" || fail "hello did not run through: $(cat "$tmp/out")"
echo "test-build-link: ok"
