#!/bin/sh
# test-report-rebuilt.sh - a trace read after its program was rebuilt: the
# module lines carry the file's GNU build id, so the report warns (Markdown
# and --json) and shows the rebuilt file's sites as module+offset instead of
# naming the new build's lines; the same file unchanged, or a trace without
# build ids (an older engine's), still names park()'s line.
. "$(dirname "$0")/lib/report.sh"
a=$CT_BUILD/tests/lib/rebuilt-prog-a
b=$CT_BUILD/tests/lib/rebuilt-prog-b
for p in "$a" "$b"; do
  [ -x "$p" ] || { fail "$p not built"; check_done; }
done
line=$(grep -n 'PARK-SITE' "$(dirname "$0")/lib/rebuilt-prog.c" | cut -d: -f1)
prog=$tmp/prog
cp "$a" "$prog" || { fail "cp"; check_done; }
# Both formats: the binary one is the default.
for fmt in ctrace jsonl; do
  "$COROTRACER" run --quiet --lossless -o "$tmp/t.$fmt" -- "$prog" > "$tmp/run.out" 2>&1 ||
    { fail "$fmt: corotracer run exit $?: $(cat "$tmp/run.out")"; check_done; }
done
grep -q '"type":"module",.*"path":"'"$prog"'","build_id":"[0-9a-f]\{16,\}"' "$tmp/t.jsonl" ||
  fail "no build id on the program's module line: $(grep '"module"' "$tmp/t.jsonl" | head -3)"

# report NAME TRACE: Markdown in $tmp/NAME.md, JSON in $tmp/NAME.json.
report() {
  "$COROTRACER" report "$2" --json "$tmp/$1.json" > "$tmp/$1.md" 2> "$tmp/$1.err" ||
    fail "$1: report exit $?: $(cat "$tmp/$1.err")"
}
named() { # named NAME: park's line is in both outputs, and no warning
  grep -q "\`park (rebuilt-prog.c:$line)\`" "$tmp/$1.md" || fail "$1: park (rebuilt-prog.c:$line) not named: $(grep '^| `' "$tmp/$1.md")"
  grep -q '"function":"park","file":"[^"]*rebuilt-prog.c","line":'"$line" "$tmp/$1.json" || fail "$1: park's line not in the JSON"
  ! grep -q 'rebuilt since the run' "$tmp/$1.md" || fail "$1: warned with the same file"
}
report same-ctrace "$tmp/t.ctrace"
named same-ctrace
report same-jsonl "$tmp/t.jsonl"
named same-jsonl
# An older engine's trace: no build id, symbolized as before.
sed 's/,"build_id":"[0-9a-f]*"//' "$tmp/t.jsonl" > "$tmp/old.jsonl"
! grep -q build_id "$tmp/old.jsonl" || fail "build ids left in old.jsonl"
report old "$tmp/old.jsonl"
named old

# Rebuilt (other code, so another build id): a warning naming the file, the
# site as module+offset, and no line of rebuilt-prog.c anywhere.
cp "$b" "$prog" || { fail "cp"; check_done; }
for fmt in ctrace jsonl; do
  report rebuilt-$fmt "$tmp/t.$fmt"
  grep -q "^- \*\*Warning: rebuilt since the run\*\*: \`$prog\` on disk has another build id" "$tmp/rebuilt-$fmt.md" ||
    fail "rebuilt-$fmt: no warning: $(sed -n '/## Overview/,/## Findings/p' "$tmp/rebuilt-$fmt.md")"
  grep -q '"rebuilt_modules":\["'"$prog"'"\]' "$tmp/rebuilt-$fmt.json" || fail "rebuilt-$fmt: no rebuilt_modules in the JSON"
  ! grep -q 'rebuilt-prog\.c' "$tmp/rebuilt-$fmt.md" "$tmp/rebuilt-$fmt.json" ||
    fail "rebuilt-$fmt: a line of the new build named: $(grep -h -o '[^`"]*rebuilt-prog\.c[^`"]*' "$tmp/rebuilt-$fmt.md" "$tmp/rebuilt-$fmt.json" | head -3)"
  grep -q '^| `prog+0x[0-9a-f]*` | 1 ' "$tmp/rebuilt-$fmt.md" ||
    fail "rebuilt-$fmt: park's site not shown as module+offset: $(grep '^| `' "$tmp/rebuilt-$fmt.md")"
done
finish test-report-rebuilt
