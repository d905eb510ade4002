#!/bin/sh
# test-outputs-same.sh - the outputs of the checked-in test traces stay byte
# for byte what they were: the report (Markdown and --json), the dashboard's
# data (the page's base64 blocks: its model, not its script) and the exports
# (csv, jsonl, jsonl-events, perfetto), against tests/data/outputs/, made
# with main's build before a change that should not move them. A change that
# means to move them regenerates the files (CT_OUTPUTS_MAKE=1) and says why
# in its commit.
# Traces: every tests/data/report/*.txt scenario (gen.awk) and the reference
# engine's trace.
. "$(dirname "$0")/lib/check.sh"
set -u
B=$(realpath "${COROTRACER:?run me through tests/run.sh}")
exp=$(pwd)/tests/data/outputs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/t"
for f in tests/data/report/*.txt; do
  awk -f tests/data/report/gen.awk "$f" >"$tmp/t/$(basename "$f" .txt).jsonl"
done
cp tests/data/reference-engine-trace.jsonl "$tmp/t/reference-engine.jsonl"
# The outputs name the trace by the path given: the same relative one each time.
cd "$tmp" || exit 1
# section TITLE FILE: FILE under its title in the current .out, as text, or
# as its sha256 and size when it is binary or large (the reference trace's
# exports: a copy of the trace would triple it here).
section() {
  echo "== $1"
  if [ "$(wc -c <"$2")" -le 16384 ] && ! grep -q '[^[:print:][:space:]]' "$2"; then cat "$2"
  else echo "sha256 $(sha256sum <"$2" | cut -d' ' -f1), $(wc -c <"$2") bytes"; fi
}
# outputs NAME: every output of t/NAME.jsonl into $tmp/NAME.out, one
# section each.
outputs() {
  t=t/$1.jsonl o=$tmp/$1.out
  : >"$o"
  "$B" report "$t" --json "$tmp/f.json" >"$tmp/r.md" 2>/dev/null
  { section "report (exit $?)" "$tmp/r.md"; section "report --json" "$tmp/f.json"; } >>"$o"
  "$B" html "$t" -o "$tmp/d.html" >/dev/null 2>&1
  rc=$?
  sed -n '/x-corotracer-data/,$p' "$tmp/d.html" >"$tmp/data"
  section "html data (exit $rc)" "$tmp/data" >>"$o"
  rm -rf "$tmp/csv"
  "$B" export csv "$t" -o "$tmp/csv" -q >/dev/null 2>&1
  echo "== export csv (exit $?)" >>"$o"
  for c in "$tmp"/csv/*; do section "$(basename "$c")" "$c"; done >>"$o"
  for x in jsonl jsonl-events perfetto; do
    "$B" export $x "$t" -o "$tmp/x" -q >/dev/null 2>&1
    section "export $x (exit $?)" "$tmp/x" >>"$o"
  done
  rm -f "$tmp/f.json" "$tmp/r.md" "$tmp/d.html" "$tmp/data" "$tmp/x"
}
n=0
for t in t/*.jsonl; do
  name=$(basename "$t" .jsonl)
  outputs "$name"
  if [ "${CT_OUTPUTS_MAKE:-}" = 1 ]; then
    cp "$tmp/$name.out" "$exp/$name.out"
  else
    [ -f "$exp/$name.out" ] || fail "no $exp/$name.out (CT_OUTPUTS_MAKE=1 makes it)"
    diff -u "$exp/$name.out" "$tmp/$name.out" >"$tmp/diff" || { head -n 60 "$tmp/diff"; fail "$name: the outputs moved"; }
  fi
  n=$((n + 1))
done
echo "ok: $n traces, their report, dashboard data and exports as before"
