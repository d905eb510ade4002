#!/bin/sh
# test-cpp-trace.sh - the C++ SDK under the engine: test-cpp-forms (every build
# variant: g++/clang++, -O2/-O0) records exactly the expected events per
# coroutine, and the parked coroutine's site is its co_await line.
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
park_line=$(grep -n '// PARK-SITE' "$SRC" | head -n 1 | cut -d: -f1)

n=0
for bin in "$CT_BUILD"/tests/test-cpp-forms "$CT_BUILD"/tests/test-cpp-forms-*; do
  [ -x "$bin" ] || continue
  n=$((n + 1))
  tr="$T/$(basename "$bin").jsonl"
  "$COROTRACER" run --quiet -o "$tr" -- "$bin" 200 > "$T/out" 2>&1 || fail "$bin under the engine: $(cat "$T/out")"
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
  awk '$1 == "bool" && $3 == "suspend" { s = $4 } $1 == "bool" && $3 == "wake" { exit ($4 != s) }' "$T/ev" ||
    fail "$bin: bool's wake site is not its suspend site"
  for c in void other own throws; do
    [ "$(awk -v c=$c '$1 == c && $3 == "suspend" { print $4 }' "$T/ev" | sort -u | wc -l)" = 2 ] ||
      fail "$bin: $c: two co_await expressions, not two suspend sites"
  done

  # The site names the co_await line, through the trace's module map, as in
  # the report; and in the report's findings once it makes them.
  set -- $("$CT_BUILD/tests/test-cpp-sym" "$tr" "$park_site")
  case "$1:$2" in */test-cpp-forms.cpp:$park_line) ;;
    *) fail "$bin: parked site $park_site symbolizes to '$*', want test-cpp-forms.cpp:$park_line" ;; esac
  if "$COROTRACER" report --json "$tr" > "$T/findings.json" 2>/dev/null &&
     grep -q '"lost_wakeup"' "$T/findings.json"; then
    tr -d '\n' < "$T/findings.json" | grep -o "{ *\"site\": *\"$park_site\"[^}]*}" > "$T/site.json"
    grep -q 'test-cpp-forms.cpp"' "$T/site.json" && grep -Eq "\"line\": *$park_line[,} ]" "$T/site.json" ||
      fail "$bin: report does not name test-cpp-forms.cpp:$park_line for site $park_site: $(cat "$T/findings.json")"
  fi
done
[ $n -gt 0 ] || fail "no test-cpp-forms binary in $CT_BUILD/tests"
echo "$n variants checked"
