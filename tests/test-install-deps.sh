#!/bin/sh
# test-install-deps.sh - scripts/install-deps.sh on a machine where nothing is
# installed (stand-ins for dpkg-query, apt-get and sudo record what it asks):
# `demo` asks for the build's packages and redis-tools (redis-benchmark) only,
# no server, browser, emulator or cross compiler; the default asks for all of
# them; `make help` lists the targets a newcomer types.
. "$(dirname "$0")/lib/check.sh"
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
printf '#!/bin/sh\nexit 1\n' >"$tmp/bin/dpkg-query"
printf '#!/bin/sh\necho "$*" >> "%s"\n' "$tmp/apt-get.log" >"$tmp/bin/apt-get"
printf '#!/bin/sh\nexec "$@"\n' >"$tmp/bin/sudo"
chmod +x "$tmp/bin/dpkg-query" "$tmp/bin/apt-get" "$tmp/bin/sudo"
asks() { # MODE: the install line asked for, in $tmp/asked
  rm -f "$tmp/apt-get.log"
  PATH="$tmp/bin:$PATH" sh scripts/install-deps.sh $1 >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "install-deps.sh $1"; }
  grep '^install' "$tmp/apt-get.log" >"$tmp/asked" || fail "install-deps.sh $1 installed nothing"
}
asks demo
grep -q ' redis-tools' "$tmp/asked" && grep -q ' libdw-dev' "$tmp/asked" || fail "demo: $(cat "$tmp/asked")"
! grep -qE ' (postgresql|mariadb-server|chromium|qemu-user|gcc-aarch64-linux-gnu|spin|protobuf-compiler)( |$)' "$tmp/asked" ||
  fail "demo installs more than it needs: $(cat "$tmp/asked")"
grep -q 'installing (demo):.*redis-tools' "$tmp/out" || fail "demo does not name what it installs: $(cat "$tmp/out")"
asks ""
grep -q ' mariadb-server' "$tmp/asked" && grep -q ' qemu-user' "$tmp/asked" && grep -q ' redis-tools' "$tmp/asked" ||
  fail "the default (make check) does not install the tests' packages: $(cat "$tmp/asked")"
! PATH="$tmp/bin:$PATH" sh scripts/install-deps.sh nonsense >/dev/null 2>&1 || fail "an unknown mode is accepted"
# The demo target installs through the demo mode, not the default.
make -n demo 2>/dev/null | grep -q 'install-deps.sh demo' || fail "make demo does not use install-deps.sh demo"
help=$(make -s help) || fail "make help"
for t in demo check test help install bench; do
  echo "$help" | grep -q "^make $t " || fail "make help does not list make $t: $help"
done
echo "ok: demo installs the build's packages and redis-tools only; make help lists the targets"
