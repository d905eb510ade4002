#!/bin/sh
# test-export-perfetto.sh - `corotracer export perfetto`: the file decodes as
# protobuf (protoc --decode_raw), and tests/data/export/pftrace.awk finds
# declared tracks, interned names, time order, balanced slices per track and
# flows that start once and terminate once. Counts match the trace: a thread
# track per OS thread, an async track per coroutine, a run slice per resume,
# a suspended slice per suspend, a flow per wake followed by a run; sites
# become source locations (hello.c). Lines in harvest order come out in time
# order. The reference's own trace (v1, torn records) converts too; a damaged
# binary trace says so (the process name, an instant where the reading stopped).
. "$(dirname "$0")/lib/export.sh"
command -v protoc > /dev/null || skip "protoc (protobuf-compiler) not installed"
awkf=$(dirname "$0")/data/export/pftrace.awk
ref=$(dirname "$0")/data/reference-engine-trace.jsonl

# check NAME TRACE: exports, decodes and compares; prints the summary.
check() {
  "$COROTRACER" export perfetto "$2" -o "$tmp/$1.pftrace" -q || { fail "$1: export exit $?"; return; }
  protoc --decode_raw < "$tmp/$1.pftrace" > "$tmp/$1.txt" || { fail "$1: protoc cannot decode it"; return; }
  awk -f "$awkf" "$tmp/$1.txt" > "$tmp/$1.sum"
  grep '^FAIL' "$tmp/$1.sum" | head -n 5 | while read -r l; do echo "$1: $l"; done
  grep -q '^FAIL' "$tmp/$1.sum" && fail "$1: invalid trace"
  tr=$2
  set -- $1 $(tail -n 1 "$tmp/$1.sum")
  name=$1 packets=$3 threads=$5 coros=$7 runs=$9 susps=${11} flows=${13}
  # kind, derived from is_active for a v1 line (as the model does).
  "$ctjl" -e kind tid probe_id is_active < "$tr" |
    awk '$1 == "-" { $1 = $4 == "true" ? "resume" : "suspend" } { print }' > "$tmp/ev"
  [ "$packets" -gt 1 ] || fail "$name: $packets packets"
  [ "$threads" = "$(awk '{print $2}' "$tmp/ev" | sort -u | wc -l)" ] || fail "$name: $threads thread tracks"
  [ "$runs" = "$(grep -c '^resume ' "$tmp/ev")" ] || fail "$name: $runs run slices, $(grep -c '^resume ' "$tmp/ev") resumes"
  [ "$susps" = "$(grep -c '^suspend ' "$tmp/ev")" ] || fail "$name: $susps suspended slices, $(grep -c '^suspend ' "$tmp/ev") suspends"
  echo "$name: $(tail -n 1 "$tmp/$name.sum")"
  FLOWS=$flows COROS=$coros
}
check hello "$hello"
[ "$FLOWS" -ge 1 ] && [ "$FLOWS" -le "$(grep -c '^wake ' "$tmp/ev")" ] || fail "hello: $FLOWS flows for $(grep -c '^wake ' "$tmp/ev") wakes"
[ "$COROS" = "$( { "$ctjl" -e probe_id < "$hello"; "$ctjl" -t coroutine probe_id < "$hello"; } | sort -u | wc -l)" ] ||
  fail "hello: $COROS coroutine tracks"
grep -q 'hello\.c' "$tmp/hello.txt" || fail "hello: no source location in hello.c"
grep -q '"coroutine [0-9]* reader"' "$tmp/hello.txt" || fail "hello: run slices not named by coroutine and label"
check lw "$lw"
grep -q '"fd 12 @ ' "$tmp/lw.txt" || fail "lw: the suspended slice is not named by its wait object"
# Harvest order is not time order: a trace whose blocks of 2000 event lines
# hold the even coroutines' lines first (each coroutine's lines still in its
# order) gives a trace in time order with the same slices and flows.
"$CT_BUILD/bench/bench-report-gen" 30000 300 > "$tmp/gen.jsonl"
awk -F'"probe_id":' '!/^\{"probe_id"/ { print; next }
  { n++; id = $2 + 0; if (id % 2) odd[n] = $0; else print }
  n == 2000 { for (i = 1; i <= n; i++) if (i in odd) print odd[i]; n = 0; delete odd }
  END { for (i = 1; i <= n; i++) if (i in odd) print odd[i] }' "$tmp/gen.jsonl" > "$tmp/mixed.jsonl"
cmp -s "$tmp/gen.jsonl" "$tmp/mixed.jsonl" && fail "mixed: the lines were not reordered"
check gen "$tmp/gen.jsonl"
check mixed "$tmp/mixed.jsonl"
[ "$(tail -n 1 "$tmp/mixed.sum")" = "$(tail -n 1 "$tmp/gen.sum")" ] ||
  fail "mixed: $(tail -n 1 "$tmp/mixed.sum"), in time order: $(tail -n 1 "$tmp/gen.sum")"
# A damaged binary trace: what came before the damage, its process named
# "..., trace damaged" and an instant saying where; a clean one has neither.
damaged_trace
check damaged "$dmg"
grep -q '^ *6: "traced program (run [0-9a-f]*\( on [^"]*\)\?, trace damaged)"$' "$tmp/damaged.txt" ||
  fail "damaged: the process is not named as damaged: $(grep 'traced program' "$tmp/damaged.txt")"
grep -q "^ *2: \"trace damaged: offset $dmg_off: truncated: the last chunk is cut (" "$tmp/damaged.txt" ||
  fail "damaged: no 'trace damaged: offset $dmg_off' instant"
grep -q 'trace damaged' "$tmp/hello.txt" && fail "hello: a clean trace said to be damaged"
v1=$(grep -v '"probe_id":0,' "$ref" > "$tmp/ref.jsonl"; echo "$tmp/ref.jsonl")
check reference "$v1"
finish test-export-perfetto
