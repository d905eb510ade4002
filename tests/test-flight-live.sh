#!/bin/sh
# test-flight-live.sh - issue #21 item 5: the live view of a flight recorder
# (`run --flight SIZE --serve ADDR`) follows the window in memory, shows it
# and marks each dump (docs/FLIGHT.md "Live view"). One page's event stream
# (curl) watches a lossless flow of 1.5 x 10^6 events (3 us apart, ~1 MB/s)
# through a 1 MiB window, ticks every 500 ms:
#  - the ticks carry the window: trace dropped before it, its start and SIZE;
#  - the view's aggregate stays bounded: it starts over from the window once
#    it has taken SIZE, so it never holds more than about two windows of
#    events (~2 bytes an event), far fewer than the burst's;
#  - a SIGUSR1 dump, then `corotracer dump --pid`: each is marked (trigger,
#    file written, no error); the page's data (/data) is served;
#  - the run's end: a last tick says it ended.
. "$(dirname "$0")/lib/engine.sh"
SDKW="$CT_BUILD/tests/lib/sdk-writer"
command -v curl > /dev/null 2>&1 || { echo "curl not installed"; exit 77; }
d=$T/live; mkdir "$d"
: > "$d/err"; : > "$d/ticks"

"$COROTRACER" run --lossless --flight 1M --serve 127.0.0.1:0 -o "$d/f.ctrace" -- \
  sh -c "while [ ! -e '$d/go' ]; do sleep 0.05; done;
         '$SDKW' spaced 1 1500000 3000 '$d/w' && touch '$d/burst' &&
         while [ ! -e '$d/stop' ]; do sleep 0.05; done" > /dev/null 2> "$d/err" &
eng=$!; bg_add $eng
n=0
until url=$(sed -n 's/^corotracer: live dashboard at //p' "$d/err") && [ -n "$url" ]; do
  n=$((n + 1)); [ $n -lt 200 ] || fail "no dashboard URL: $(cat "$d/err")"
  kill -0 $eng 2> /dev/null || fail "the engine exited: $(cat "$d/err")"
  sleep 0.05
done
base=${url%%/\?*}
token=${url##*token=}
curl -sN --max-time 120 "$base/events?token=$token" > "$d/ticks" 2>&1 &
bg_add $!

# last_tick: the newest complete tick's JSON.
last_tick() { grep '^data: ' "$d/ticks" | tail -n 1 | sed 's/^data: //'; }
# field NAME [JSON]: the first number NAME holds.
field() { printf '%s\n' "${2:-$(last_tick)}" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" | head -n 1; }
# wait_tick PATTERN: until a tick matches.
wait_tick() {
  n=0
  until grep '^data: ' "$d/ticks" | grep -q "$1"; do
    n=$((n + 1)); [ $n -lt 600 ] || fail "no tick with $1: $(last_tick)"
    sleep 0.05
  done
}

echo "== 1. the window before the burst"
wait_tick '"window":{'
t=$(last_tick)
echo "   $t" | cut -c 1-240
[ "$(field size "$t")" = 1048576 ] || fail "window size: $t"
printf '%s' "$t" | grep -q '"dumps":\[\]' || fail "dumps before any: $t"

echo "== 2. a burst of 4 x 10^6 events through a 1 MiB window"
max=0
touch "$d/go"
wait_file "$d/burst" 120 $eng
# The view catches up with the window (a tick every 500 ms); meanwhile, and
# after, the aggregate never held more than about two windows.
n=0
while :; do
  t=$(last_tick)
  ev=$(field events "$t")
  [ "${ev:-0}" -gt "$max" ] && max=$ev
  [ "$(field dropped_bytes "$t")" -gt 0 ] && [ "$(field span "$t")" -gt 0 ] && [ "$(field lost "$t")" = 0 ] && break
  n=$((n + 1)); [ $n -lt 200 ] || fail "the window never showed drops: $t"
  sleep 0.1
done
for ev in $(grep '^data: ' "$d/ticks" | sed -n 's/.*"events":\([0-9]*\).*/\1/p'); do
  [ "$ev" -gt "$max" ] && max=$ev
done
echo "   $(printf '%s' "$t" | sed 's/.*"window"/"window"/' | cut -c 1-200)"
echo "   the view's aggregate held at most $max events (the burst: 1500000)"
[ "$max" -gt 0 ] && [ "$max" -le 1000000 ] || fail "the aggregate held $max events: not bounded by the window"

echo "== 3. dumps are marked"
kill -USR1 $eng
wait_file "$d/f.ctrace" 30 $eng
wait_tick '"trigger":"SIGUSR1"'
"$COROTRACER" dump --pid $eng > /dev/null 2>&1 || fail "corotracer dump --pid: exit $?"
wait_file "$d/f.ctrace.1" 30 $eng
wait_tick 'f.ctrace.1","error":0'
t=$(last_tick)
printf '%s' "$t" | grep -q "\"dumps\":\[{\"t\":[0-9]*,\"ago\":[0-9]*,\"trigger\":\"SIGUSR1\",\"path\":\"$d/f.ctrace\",\"error\":0," ||
  fail "the first dump's mark: $t"
[ "$(field ndumps "$t")" = 2 ] || fail "window.ndumps: $t"
echo "   $(printf '%s' "$t" | sed 's/.*"dumps":\[/"dumps":[/')"
code=$(curl -s -o "$d/data" -w '%{http_code}' --max-time 30 "$base/data?token=$token")
[ "$code" = 200 ] && [ -s "$d/data" ] || fail "/data: HTTP $code"
"$COROTRACER" report "$d/f.ctrace" > /dev/null 2>&1 || fail "report of the SIGUSR1 dump: exit $?"

echo "== 4. the end"
touch "$d/stop"
wait $eng || fail "engine exit $?: $(cat "$d/err")"
wait_tick '"ended":true'
grep "^data: " "$d/ticks" | sed "s/,\"window.*//" | cut -c 1-200
echo ok
