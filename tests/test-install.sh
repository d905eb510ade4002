#!/bin/sh
# test-install.sh - `make install PREFIX=...` gives a usable SDK: headers, both
# libraries and a pkg-config file with which a program builds with plain cc,
# links against the shared library, runs from any prefix without LD_LIBRARY_PATH
# (the .pc's rpath), and is traced by the installed binary.
set -eu
B=${CT_BUILD:?run me through tests/run.sh}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/check.sh"
make -s O="$B" install PREFIX="$tmp/prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "make install"; }
for f in include/corotracer.h include/corotracer.hpp include/rip.h include/librip.h lib/libcorotracer.a \
         lib/libcorotracer.so lib/libcorotracer.so.1 lib/pkgconfig/corotracer.pc bin/corotracer bin/corotracer-db; do
  [ -e "$tmp/prefix/$f" ] || fail "not installed: $f"
done
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
flags=$(pkg-config --cflags --libs corotracer) || fail "pkg-config corotracer"
# As a user would: the .pc's flags only, no -rpath, no LD_LIBRARY_PATH.
unset LD_LIBRARY_PATH
# shellcheck disable=SC2086 # flags are words
cc -std=c11 -Wall -Wextra -Werror -o "$tmp/hello" examples/hello/hello.c $flags -lpthread ||
  fail "hello does not build against the installed SDK"
ldd "$tmp/hello" | grep -q "$tmp/prefix/lib/libcorotracer.so" || { ldd "$tmp/hello"; fail "hello does not find the installed libcorotracer.so"; }
"$tmp/prefix/bin/corotracer" run --quiet --lossless -o "$tmp/trace.jsonl" -- "$tmp/hello" --pace-us 1000 >"$tmp/out" ||
  fail "installed corotracer run"
n=$(sed -n 's/.*the probe recorded \([0-9]*\) events.*/\1/p' "$tmp/out")
[ -n "$n" ] && [ "$n" -gt 0 ] || { cat "$tmp/out"; fail "hello did not report what it recorded"; }
grep -q "\"type\":\"end\".*\"harvested\":$n,\"lost\":0" "$tmp/trace.jsonl" ||
  { tail -n 1 "$tmp/trace.jsonl"; fail "the installed engine did not harvest hello's $n events"; }
# A database export from the installed corotracer runs in the corotracer-db
# installed beside it (src/common/commands.h "ct_db"); without it, one line.
"$tmp/prefix/bin/corotracer" export sqlite -q "$tmp/trace.jsonl" -o "$tmp/trace.db" ||
  fail "installed corotracer export sqlite"
[ -s "$tmp/trace.db" ] || fail "export sqlite through corotracer-db wrote nothing"
mkdir "$tmp/alone" && cp "$tmp/prefix/bin/corotracer" "$tmp/alone/"
if "$tmp/alone/corotracer" export sqlite "$tmp/trace.jsonl" -o "$tmp/alone.db" 2>"$tmp/err"; then
  fail "export sqlite without corotracer-db succeeded"
fi
grep -q "^corotracer: $tmp/alone/corotracer-db: No such file or directory" "$tmp/err" ||
  { cat "$tmp/err"; fail "export sqlite without corotracer-db: not the one-line error"; }
[ ! -e "$tmp/alone.db" ] || fail "export sqlite without corotracer-db left a file"
# One version everywhere, from include/corotracer.h.
v=$(sed -n 's/^#define COROTRACER_VERSION "\(.*\)"$/\1/p' include/corotracer.h)
[ -n "$v" ] || fail "no COROTRACER_VERSION in include/corotracer.h"
[ "$(pkg-config --modversion corotracer)" = "$v" ] || fail "corotracer.pc: $(pkg-config --modversion corotracer), header: $v"
[ "$("$tmp/prefix/bin/corotracer" --version)" = "corotracer $v" ] || fail "corotracer --version: not $v"
grep -q "^{\"type\":\"meta\",.*\"engine\":\"corotracer $v\"" "$tmp/trace.jsonl" || fail "trace meta: engine not $v"
echo "ok: installed SDK builds, links and traces; version $v everywhere"
