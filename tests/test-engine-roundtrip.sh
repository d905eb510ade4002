#!/bin/sh
# test-engine-roundtrip.sh - examples/hello under the engine: the trace holds
# exactly the events hello recorded (count, per-coroutine order, kinds, wait
# objects, sites, wakers, labels, create sites), in the reference's line format,
# with well-formed meta/end records; -n/-cmd/-out spelling; truncate vs --append.
. "$(dirname "$0")/lib/engine.sh"

# check_run TRACE EVENTS STATIONS: the whole comparison for one run of hello.
check_run() {
  tr=$1 ev=$2 st=$3
  check_trace_ends "$tr"
  [ "$(grep -c '"type":"meta"' "$tr")" = 1 ] || fail "$tr: expected one meta line"

  # The reference's keys, first, in its formats.
  bad=$("$CTJL" -e probe_id < "$tr" | wc -l)
  [ "$bad" -gt 0 ] || fail "$tr: no event lines"
  n=$(grep -v '"type"' "$tr" | grep -Evc \
    '^\{"probe_id":[0-9]+,"tid":[0-9]+,"addr":"0x[0-9a-f]{16}","seq":[0-9]*[02468],"is_active":(true|false),"ts":[1-9][0-9]*[,}]')
  [ "$n" = 0 ] || fail "$tr: $n event lines do not start with the reference's keys/formats:
$(grep -v '"type"' "$tr" | head -n 3)"
  # v1 meaning kept: is_active only on resume; addr = site, 0 on resume.
  "$CTJL" -e kind is_active addr site < "$tr" | awk '
    $1 == "resume" && ($2 != "true" || $3 != "0x0000000000000000" || $4 != "-") { print; bad = 1 }
    $1 != "resume" && ($2 != "false" || $3 != $4 || $3 == "0x0000000000000000") { print; bad = 1 }
    END { exit bad }' || fail "$tr: v1 fields inconsistent with kind (kind is_active addr site above)"

  # Events: same list, per coroutine in the same order (stable sort by probe_id
  # keeps the trace's order within a coroutine).
  grep '^ev ' "$ev" | cut -d' ' -f2- | sort -s -k1,1n > "$T/want"
  "$CTJL" -e probe_id ev kind site wait obj from parent < "$tr" | awk '
    $3 == "destroy" { if ($4 == "-" || $4 == "0x0000000000000000") { print "destroy without site: " $0 > "/dev/stderr"; exit 1 } $4 = "*" }
    { print }' | sort -s -k1,1n > "$T/got" || fail "$tr: bad destroy line"
  diff "$T/want" "$T/got" > "$T/diff" || fail "$tr: events differ from what hello recorded (< hello, > trace):
$(head -n 40 "$T/diff")"

  # Coroutine records: label, create site, parent; each before its first event.
  grep '^co ' "$ev" | cut -d' ' -f2- | sort > "$T/want"
  "$CTJL" -t coroutine probe_id label create_site parent < "$tr" | sort > "$T/got"
  diff "$T/want" "$T/got" > "$T/diff" || fail "$tr: coroutine records differ (< hello, > trace):
$(cat "$T/diff")"
  "$CTJL" type probe_id < "$tr" | awk '
    $1 == "coroutine" { seen[$2] = 1 }
    $1 == "-" && !seen[$2] { print "event of " $2 " before its coroutine line"; exit 1 }' ||
    fail "$tr: coroutine line must precede the coroutine's events"

  # meta: the documented fields.
  set -- $("$CTJL" -t meta format format_version stations target_pid engine_pid run_id poll_ms < "$tr")
  [ "$1 $2 $3" = "corotracer-trace 1 $st" ] || fail "$tr: meta format/version/stations: $1 $2 $3"
  case "$4$5" in *[!0-9]*) fail "$tr: meta pids not numbers: $4 $5" ;; esac
  echo "$6" | grep -Eq '^[0-9a-f]{32}$' || fail "$tr: meta run_id is not 128 bits of hex: $6"
  "$CTJL" -t meta clock command < "$tr" | grep -Eq '^\{"mono_ns":[0-9]+,"wall_ns":[0-9]+\} \[.*hello' ||
    fail "$tr: meta clock/command malformed: $("$CTJL" -t meta clock command < "$tr")"

  # station_end and end: totals agree with hello and with the lines.
  nev=$(grep -c '^ev ' "$ev")
  nco=$(grep -c '^co ' "$ev")
  got=$("$CTJL" -t end exit events harvested lost stations_used untraced_coroutines torn < "$tr")
  [ "$got" = "{\"code\":0} $nev $nev 0 $nco 0 0" ] ||
    fail "$tr: end record: got '$got', want '{\"code\":0} $nev $nev 0 $nco 0 0'"
  grep '^ev ' "$ev" | awk '{ n[$2]++ } END { for (c in n) print c, n[c], n[c], 0, "true" }' | sort > "$T/want"
  "$CTJL" -t station_end probe_id events harvested lost dead < "$tr" | sort > "$T/got"
  diff "$T/want" "$T/got" > "$T/diff" || fail "$tr: station_end records differ (< want, > trace):
$(cat "$T/diff")"
}

# Alone, hello runs untraced and says so.
env -u CTP_SHM_PATH -u CTP_SOCK_PATH -u CTP_MAX_STATIONS "$HELLO" > "$T/out" 2> "$T/err" || fail "hello alone exited $?"
grep -q '^hello: not traced' "$T/out" && grep -q 'recorded 0 events' "$T/out" && [ ! -s "$T/err" ] ||
  fail "hello alone: $(cat "$T/out" "$T/err")"

for bad in "--pace-us" "--pace-us x" "--pace-us -1" "--pace-us 1000001" "--nope 1"; do
  "$HELLO" $bad > /dev/null 2> "$T/err"
  rc=$?
  [ $rc = 2 ] && grep -q '^usage: hello' "$T/err" || fail "hello $bad: exit $rc, want 2 and usage: $(cat "$T/err")"
done

# Paced (--pace-us): hello's busiest coroutine writes 9 events, more than its
# ring holds; unpaced, an engine kept off the CPU that long loses a few.
"$COROTRACER" run --quiet --lossless -n 64 -o "$T/trace.jsonl" -- "$HELLO" --events "$T/events" --pace-us 1000 > "$T/out" 2> "$T/err" ||
  fail "corotracer run -- hello exited $?: $(cat "$T/err")"
grep -q '^hello: traced$' "$T/out" || fail "hello was not traced: $(cat "$T/out")"
[ -s "$T/err" ] && fail "--quiet, yet the engine printed: $(cat "$T/err")"
check_run "$T/trace.jsonl" "$T/events" 64

# The reference's spelling; an existing trace is truncated...
echo '{"stale":1}' > "$T/ref.jsonl"
"$COROTRACER" --lossless -n 16 -cmd "exec '$HELLO' --events '$T/events2' --pace-us 1000" -out "$T/ref.jsonl" > /dev/null 2> "$T/err" ||
  fail "corotracer -n 16 -cmd ... -out exited $?: $(cat "$T/err")"
grep -q stale "$T/ref.jsonl" && fail "an existing trace file was not truncated"
check_run "$T/ref.jsonl" "$T/events2" 16

# ... unless --append: the old run stays byte for byte, a second one follows.
cp "$T/ref.jsonl" "$T/before"
"$COROTRACER" run --quiet --lossless --append -o "$T/ref.jsonl" -- "$HELLO" --pace-us 1000 > /dev/null 2> "$T/err" ||
  fail "--append run exited $?: $(cat "$T/err")"
size=$(wc -c < "$T/before")
head -c "$size" "$T/ref.jsonl" | cmp -s - "$T/before" || fail "--append changed the existing lines"
[ "$("$CTJL" -t meta type < "$T/ref.jsonl" | wc -l) $("$CTJL" -t end type < "$T/ref.jsonl" | wc -l)" = "2 2" ] ||
  fail "--append: expected 2 meta and 2 end lines"
tail -c +"$((size + 1))" "$T/ref.jsonl" > "$T/second"
check_trace_ends "$T/second"
echo "roundtrip: ok ($(grep -c '^ev ' "$T/events") events)"
