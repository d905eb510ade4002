#!/bin/sh
# test-format.sh - the C sources follow .clang-format: `clang-format --dry-run
# -Werror` passes on every C file of the paths below. Reformat with
# `clang-format -i FILE`. The list grows as areas are reformatted (each in a
# commit of its own, no other change); the goal is every C file of the tree.
. "$(dirname "$0")/lib/check.sh"
command -v clang-format >/dev/null 2>&1 || skip "clang-format not installed (scripts/install-deps.sh)"
FORMATTED="src/rip include/rip.h include/rip-writer.h include/rip-pc-x86_64.h
  include/rip-pc-aarch64.h include/rip-pc-generic.h include/librip.h tests/fuzz
  tests/lib/check.h tests/lib/rip-prog.c tests/lib/rip-dso.c tests/lib/librip-prog.c
  tests/test-rip-api.c tests/test-symbolize.c tests/test-demo-sched.c tests/test-trace.c
  tests/test-map.c tests/test-hist.c
  src/analysis/trace.c src/analysis/trace.h src/analysis/map.c src/analysis/map.h
  src/analysis/hist.c src/analysis/hist.h src/analysis/model.h src/analysis/state.c
  src/analysis/findings.h src/analysis/findings_stuck.c src/analysis/findings_tables.c
  src/analysis/write_md.c src/analysis/write_json.c src/analysis/report_main.c
  src/export src/cli/commands.h include/corotracer.h include/corotracer.hpp examples bench
  tests/test-cpp-forms.cpp tests/test-demo-ctx.c tests/lib/ctjl.c tests/lib/probe-noinline.c
  src/cli/args.c src/cli/args.h tests/test-args.c"
# shellcheck disable=SC2086 # FORMATTED is a list of paths
files=$(find $FORMATTED -name '*.[ch]' -o -name '*.cpp' -o -name '*.hpp' | sort)
[ -n "$files" ] || fail "no C file found in: $FORMATTED"
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
