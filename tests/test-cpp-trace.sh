#!/bin/sh
# test-cpp-trace.sh - the C++ SDK under the engine: test-cpp-forms (every build
# variant: g++/clang++, -O2/-O0) records exactly the expected events per
# coroutine, and the report names the parked coroutine's co_await line.
. "$(dirname "$0")/lib/engine.sh"
SRC="$(cd "$(dirname "$0")" && pwd)/test-cpp-forms.cpp"

# Kinds per coroutine label, in ev order (the forms in test-cpp-forms.cpp).
cat > "$T/want" <<'LIST'
again create destroy
again create destroy
awaits_child create suspend wake resume destroy
bool create suspend resume suspend wake resume destroy
child create destroy
other create suspend resume suspend resume destroy
own create suspend resume suspend resume destroy
parked create suspend
throws create suspend resume suspend resume destroy
void create suspend resume suspend resume destroy
LIST
# lost_wakeup FINDINGS: the lost_wakeup finding's counts, symbolized sites and
# coroutines (label, wait kind) from the report's JSON, one per line.
lost_wakeup() {
  tr -d '\n' < "$1" | sed 's/{"kind":/\n&/g' | grep '^{"kind":"lost_wakeup"' |
    grep -o '"count":[0-9]*\|"site":"0x[0-9a-f]*","function":"[^"]*","file":"[^"]*","line":[0-9]*\|"label":"[^"]*","wait":"[a-z]*"'
}
park_line=$(grep -n '// PARK-SITE' "$SRC" | head -n 1 | cut -d: -f1)

n=0
for bin in "$CT_BUILD"/tests/test-cpp-forms "$CT_BUILD"/tests/test-cpp-forms-*; do
  [ -x "$bin" ] || continue
  n=$((n + 1))
  tr="$T/$(basename "$bin").jsonl"
  "$COROTRACER" run --quiet --lossless -o "$tr" -- "$bin" 200 > "$T/out" 2>&1 || fail "$bin under the engine: $(cat "$T/out")"
  grep -q '^recorded 44 dropped 0$' "$T/out" || fail "$bin: probe not attached: $(cat "$T/out")"
  check_trace_ends "$tr"
  got=$("$CTJL" -t end events harvested lost < "$tr")
  [ "$got" = "44 44 0" ] || fail "$bin: end record events/harvested/lost: $got"

  # Ids are unique (even for a frame reusing a destroyed one's memory); then
  # "label ev kind site wait obj probe_id" per event, and kinds per coroutine.
  "$CTJL" -t coroutine probe_id label < "$tr" > "$T/labels"
  [ "$(cut -d' ' -f1 "$T/labels" | sort -u | wc -l)" = 10 ] || fail "$bin: not 10 distinct probe_ids: $(cat "$T/labels")"
  "$CTJL" -e probe_id ev kind site wait obj < "$tr" |
    awk 'NR == FNR { l[$1] = $2; next } { id = $1; $1 = l[$1]; print $0, id }' "$T/labels" - > "$T/ev"
  awk '{ if ($2 != n[$NF]++) { print "ev gap: " $0; exit 1 } k[$NF] = k[$NF] " " $3; l[$NF] = $1 }
       END { for (c in k) print l[c] k[c] }' "$T/ev" | sort > "$T/got" || fail "$bin: $(cat "$T/got")"
  diff "$T/want" "$T/got" > "$T/diff" || fail "$bin: events per coroutine differ (< want, > trace):
$(cat "$T/diff")"

  # The parked one says what it waits for; bool's "not suspended after all"
  # wake carries the site of its own suspend; the sites of one coroutine's
  # distinct co_await expressions differ.
  set -- $(awk '$1 == "parked" && $3 == "suspend" { print $5, $6, $4 }' "$T/ev")
  [ "$1 $2" = "fd 42" ] || fail "$bin: parked suspend: wait/obj '$1 $2', want 'fd 42'"
  park_site=$3
  # awaits_child waits for its child (WaitOn::coroutine): the child's id.
  set -- $(awk '$1 == "awaits_child" && $3 == "suspend" { w = $5 " " $6 } $1 == "child" && $3 == "create" { c = $NF }
    END { print w, c }' "$T/ev")
  [ "$1 $2" = "coroutine $3" ] || fail "$bin: awaits_child suspend: wait/obj '$1 $2', want 'coroutine $3' (the child)"
  awk '$1 == "bool" && $3 == "suspend" { s = $4 } $1 == "bool" && $3 == "wake" { exit ($4 != s) }' "$T/ev" ||
    fail "$bin: bool's wake site is not its suspend site"
  for c in void other own throws; do
    [ "$(awk -v c=$c '$1 == c && $3 == "suspend" { print $4 }' "$T/ev" | sort -u | wc -l)" = 2 ] ||
      fail "$bin: $c: two co_await expressions, not two suspend sites"
  done

  # The report names the co_await line as the parked coroutine's site.
  "$COROTRACER" report "$tr" --json "$T/findings.json" -o "$T/report.md" || fail "$bin: report failed"
  lost_wakeup "$T/findings.json" > "$T/lw"
  grep -q "^\"site\":\"$park_site\",\"function\":\"[^\"]*\",\"file\":\"[^\"]*test-cpp-forms.cpp\",\"line\":$park_line\$" "$T/lw" &&
    [ "$(grep '"label"' "$T/lw")" = '"label":"parked","wait":"fd"' ] ||
    fail "$bin: want a lost_wakeup of 'parked' at test-cpp-forms.cpp:$park_line ($park_site); report says:
$(cat "$T/lw")"
done
[ $n -gt 0 ] || fail "no test-cpp-forms binary in $CT_BUILD/tests"
echo "$n variants checked"
