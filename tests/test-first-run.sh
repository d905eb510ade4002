#!/bin/sh
# test-first-run.sh - the README's "First run" on a fresh clone: its lines as
# written (make as `make -j2`), from a `git clone` of this repository in a temp
# dir, so a build that only works in a used tree (a goal left over, a file not
# committed) fails here. CT_FIRST_RUN_REV: the commit to clone (HEAD).
# A fresh Debian machine as far as the packages go: dpkg-query says nothing is
# installed, so `make` must ask apt-get for the build's packages first (a
# stand-in records the request; the packages are really here, so the build
# goes on) and only those: no servers, browsers or emulators on a first run.
. "$(dirname "$0")/lib/check.sh"
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
rev=${CT_FIRST_RUN_REV:-HEAD}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-first-run.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v git > /dev/null || skip "git not installed"
git -C "$repo" rev-parse --verify -q "$rev^{commit}" > /dev/null || skip "not a git checkout: $repo"
git clone -q --no-checkout "$repo" "$tmp/clone" && git -C "$tmp/clone" checkout -q "$(git -C "$repo" rev-parse "$rev")" ||
  fail "git clone $repo"
# The fenced block under "## First run" in the clone's README.
sed -n '/^## First run/,/^## /p' "$tmp/clone/README.md" | sed -n '/^```sh/,/^```/p' | sed '1d;$d' > "$tmp/lines"
[ -s "$tmp/lines" ] || fail "no First run block in README.md"
grep -q '^make$' "$tmp/lines" && grep -q 'corotracer run' "$tmp/lines" && grep -q 'corotracer report' "$tmp/lines" ||
  fail "First run is not make, run, report: $(cat "$tmp/lines")"
mkdir "$tmp/bin"
printf '#!/bin/sh\nexit 1\n' > "$tmp/bin/dpkg-query"
printf '#!/bin/sh\necho "$*" >> "%s"\n' "$tmp/apt-get.log" > "$tmp/bin/apt-get"
printf '#!/bin/sh\nexec "$@"\n' > "$tmp/bin/sudo"
chmod +x "$tmp/bin/dpkg-query" "$tmp/bin/apt-get" "$tmp/bin/sudo"
n=0
while IFS= read -r line; do
  n=$((n + 1))
  [ "$line" = make ] && line="make -j2" # cheap: no sanitizers, two jobs
  echo "\$ $line"
  # As a newcomer types it: not with `make check`'s O=, SAN= or MAKEFLAGS.
  (cd "$tmp/clone" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u O -u SAN -u CC -u CXX \
    PATH="$tmp/bin:$PATH" sh -c "$line") > "$tmp/out.$n" 2>&1 < /dev/null
  rc=$?
  [ $rc -eq 0 ] || { tail -n 20 "$tmp/out.$n"; fail "line $n of First run: $line (exit $rc)"; }
done < "$tmp/lines"
grep -qs '^install .* libdw-dev .*libpq-dev .*libmariadb-dev' "$tmp/apt-get.log" ||
  fail "make on a fresh machine did not install the build's packages first: apt-get $(cat "$tmp/apt-get.log" 2>/dev/null)"
! grep -qE ' (postgresql|mariadb-server|chromium|qemu-user)( |$)' "$tmp/apt-get.log" ||
  fail "make installs more than the build needs: apt-get $(cat "$tmp/apt-get.log")"
# The report went to stdout: it must be one, over a trace with events.
grep -q '^# corotracer report' "$tmp/out.$n" || { cat "$tmp/out.$n"; fail "no report"; }
grep -q 'events, [1-9][0-9]* coroutines' "$tmp/out.$n" || { cat "$tmp/out.$n"; fail "no events traced"; }
# What the README's commands wrote is ignored by git: a newcomer's clone stays clean.
left=$(git -C "$tmp/clone" status --porcelain)
[ -z "$left" ] || fail "First run leaves files git does not ignore: $left"
echo "test-first-run: ok"
