#!/bin/sh
# test-format.sh - the C sources follow .clang-format: `clang-format --dry-run
# -Werror` passes on every C and C++ file of the tree (found, not listed, so a
# new file is checked too). Reformat with `clang-format -i FILE`; lines whose
# numbers a test records stay as written between `// clang-format off` / `on`.
. "$(dirname "$0")/lib/check.sh"
command -v clang-format >/dev/null 2>&1 || skip "clang-format not installed (scripts/install-deps.sh)"
# Every C/C++ file of the tree, from its top (where tests run), but for the
# build outputs, git's and npm's folders.
files=$(find . \( -path ./build -o -path ./.git -o -name node_modules \) -prune -o \
  -type f \( -name '*.[ch]' -o -name '*.cpp' -o -name '*.hpp' \) -print | sed 's|^\./||' | sort)
[ -n "$files" ] || fail "no C file found"
n=0
for f in $files; do
  n=$((n + 1))
  clang-format --dry-run -Werror "$f" 2>"${TMPDIR:-/tmp}/format.$$" || {
    head -n 20 "${TMPDIR:-/tmp}/format.$$"
    rm -f "${TMPDIR:-/tmp}/format.$$"
    fail "$f is not formatted (clang-format -i $f)"
  }
done
rm -f "${TMPDIR:-/tmp}/format.$$"
echo "ok: $n files formatted"
