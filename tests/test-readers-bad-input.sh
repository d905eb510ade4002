#!/bin/sh
# test-readers-bad-input.sh - one exit rule for empty and damaged inputs
# across every reader (docs/TRACE_FORMAT.md, "Bad input"; issue #34 N8):
# report, html and every export of an empty file, of a file with no trace
# line (JSONL), of a binary header alone and of a binary trace cut in its
# first chunk each exit 2 with the one line that says why (the same line in
# every reader) and write no output. And `corotracer dump --pid` of a pid no
# process has says "no such process" (N9).
set -u
: "${COROTRACER:?run through tests/run.sh}"
CT=$COROTRACER
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-readers-bad-input.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
CHECK_KEEP_GOING=1
. "$(dirname "$0")/lib/check.sh"

: > "$tmp/empty"
printf 'garbage\n{"not":"a trace"}\n' > "$tmp/no-trace-line"
hdr='\211CTRACE\n\001\000\000\000\000\000\000\000'
# shellcheck disable=SC2059 # the bytes are printf's format on purpose
printf "$hdr" > "$tmp/header-alone"
# shellcheck disable=SC2059
{ printf "$hdr"; head -c 100 "$(dirname "$0")/fuzz/corpus/ctrace/hello-chunks"; } > "$tmp/cut-first-chunk"

# expect FILE LINE: every reader of FILE exits 2, says LINE (after
# "corotracer: FILE") and nothing else, and leaves no output.
expect() {
  for r in "report" "html" "export jsonl" "export jsonl-v1" "export jsonl-events" "export csv" \
    "export sqlite" "export perfetto"; do
    rm -rf "$tmp/out"
    # shellcheck disable=SC2086 # r is the subcommand and its format
    "$CT" $r "$tmp/$1" -o "$tmp/out" > "$tmp/stdout" 2> "$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "$r $1: exit $rc, want 2"
    [ "$(cat "$tmp/err")" = "corotracer: $tmp/$1$2" ] ||
      fail "$r $1: said '$(cat "$tmp/err")', want 'corotracer: $tmp/$1$2'"
    [ ! -e "$tmp/out" ] || fail "$r $1: wrote an output"
    [ ! -s "$tmp/stdout" ] || fail "$r $1: wrote to stdout: $(head -c 200 "$tmp/stdout")"
  done
}
expect empty ": empty file, not a trace"
expect header-alone ": offset 16: no chunk after the file header: no record"
expect cut-first-chunk ": offset 16: truncated: the last chunk is cut (100 bytes)"
# A file of lines, none of them a trace's: line 1 named, as not a trace.
for r in "report" "html" "export jsonl" "export jsonl-v1" "export jsonl-events" "export csv" \
  "export sqlite" "export perfetto"; do
  # shellcheck disable=SC2086
  "$CT" $r "$tmp/no-trace-line" -o "$tmp/out" 2> "$tmp/err"
  rc=$?
  [ $rc -eq 2 ] || fail "$r no-trace-line: exit $rc, want 2"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "$r no-trace-line: said $(cat "$tmp/err")"
  grep -q "^corotracer: $tmp/no-trace-line:1: not a corotracer trace" "$tmp/err" ||
    fail "$r no-trace-line: said '$(cat "$tmp/err")'"
  [ ! -e "$tmp/out" ] || fail "$r no-trace-line: wrote an output"
done

# A --pack trace (docs/ROUTE1.md: CHK5 chunks, pack entries), whole, cut and with
# bytes flipped: every reader reads it (exit 0) or exits 2 with one line saying why
# (a cut chunk, a checksum); never a crash (a signal: exit 128 or more), never two
# lines, never an output left behind by a refusal. Two: the fuzzers' seed (one chunk
# of hand-sized packs) and a run's (several chunks, long packs).
# shellcheck disable=SC2059
{ printf "$hdr"; cat "$(dirname "$0")/fuzz/corpus/ctrace/pack-chunks"; } > "$tmp/pack-seed"
"$CT" run --quiet --lossless --pack -o "$tmp/pack-run" -- "$CT_BUILD/tests/lib/sdk-writer" yield 2 20 200 \
  "$tmp/w" > /dev/null || fail "the --pack run: exit $?"
grep -qa CHK5 "$tmp/pack-run" || fail "the --pack run wrote no pack chunk"
# reads FILE: every reader of FILE reads it or refuses it in one line (refused:
# how many refused).
reads() {
  refused=0
  for r in "report" "html" "export jsonl" "export jsonl-v1" "export jsonl-events" "export csv" \
    "export sqlite" "export perfetto"; do
    rm -rf "$tmp/out"
    # shellcheck disable=SC2086
    "$CT" $r "$tmp/$1" -o "$tmp/out" > /dev/null 2> "$tmp/err"
    rc=$?
    case $rc in
      0) ;;
      2)
        refused=$((refused + 1))
        [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q "^corotracer: $tmp/$1" "$tmp/err" ||
          fail "$r $1: exit 2 saying '$(head -c 300 "$tmp/err")', want one line"
        [ ! -e "$tmp/out" ] || fail "$r $1: exit 2 and wrote an output"
        ;;
      *) fail "$r $1: exit $rc: $(head -c 300 "$tmp/err")" ;;
    esac
  done
}
for t in pack-seed pack-run; do
  size=$(wc -c < "$tmp/$t")
  reads $t
  [ $refused = 0 ] || fail "$t (whole): $refused readers refused it"
  for at in 17 31 40 100 $((size / 3)) $((size / 2)) $((size - 40)) $((size - 1)); do
    [ $at -lt "$size" ] || continue
    head -c $at "$tmp/$t" > "$tmp/$t.cut$at"
    reads $t.cut$at
    cp "$tmp/$t" "$tmp/$t.flip$at"
    b=$(od -An -tu1 -j $at -N1 "$tmp/$t" | tr -d ' ')
    # shellcheck disable=SC2059
    printf "$(printf '\\%03o' $((b ^ 0x5a)))" | dd of="$tmp/$t.flip$at" bs=1 seek=$at conv=notrunc 2> /dev/null
    cmp -s "$tmp/$t" "$tmp/$t.flip$at" && fail "$t: byte $at not flipped"
    reads $t.flip$at
  done
done

# A pid beyond the system's largest is no process's.
max=$(cat /proc/sys/kernel/pid_max 2> /dev/null || echo 4194304)
"$CT" dump --pid $((max + 1)) 2> "$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "dump --pid $((max + 1)): exit $rc, want 1"
[ "$(cat "$tmp/err")" = "corotracer: dump: $((max + 1)): no such process" ] ||
  fail "dump --pid $((max + 1)): said '$(cat "$tmp/err")'"
check_done
