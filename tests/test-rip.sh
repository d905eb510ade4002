#!/bin/sh
# test-rip.sh - `corotracer rip` on rings of a killed program: by function, by
# thread, counter wrap, exit markers, live reads, gzip/zlib copies, PIE,
# non-PIE, DSO, the portable capture, and a librip-style ring without module
# map.
set -u
: "${CT_BUILD:?}" "${COROTRACER:?}"
T=$CT_BUILD/tests/lib
tmp=$(mktemp -d)
trap 'kill -KILL $pid 2>/dev/null; rm -rf "$tmp"' EXIT
pid=
. "$(dirname "$0")/lib/check.sh"
# CT_RUN: a command prefix that runs the test programs (tests/arm/check.sh sets
# it to qemu-aarch64; the reader stays native and opens the ELF files).

# start PROG RING: run the test program until it is ready (it keeps running).
start() {
  ${CT_RUN-} "$1" "$2" >"$2.out" 2>&1 &
  pid=$!
  i=0
  until grep -q '^ready$' "$2.out"; do
    kill -0 $pid 2>/dev/null || { cat "$2.out"; fail "$1 died"; }
    i=$((i + 1)); [ $i -lt 300 ] || fail "$1 not ready after 30 s"
    sleep 0.1
  done
}
stop() { kill -KILL $pid; wait $pid 2>/dev/null; pid=; }
line() { awk -v k="$1" '$1 == "line" && $2 == k { print $3 }' "$tmp/pie.out"; }
# rip ARGS...: the reader, which must succeed and print nothing on stderr.
rip() {
  "$COROTRACER" rip "$@" >"$tmp/stdout" 2>"$tmp/stderr" || { cat "$tmp/stderr"; fail "rip $* failed"; }
  [ ! -s "$tmp/stderr" ] || { cat "$tmp/stderr"; fail "rip $* wrote on stderr"; }
  cat "$tmp/stdout"
}
has() { grep -qxF -- "$2" "$1" || { echo "--- $1:"; cat "$1"; fail "no line: $2"; }; }

start "$T/rip-prog-pie" "$tmp/pie"
P=rip-prog.c
A=$(line park_a) B=$(line park_b) W=$(line wrap) D=$(line wrap_done) X=$(line exit)
R=$(line resume) M=$(line main) L=$(line dso) S=$(line spin)
[ -n "$A" ] && [ -n "$L" ] || fail "no site lines from the program"

# While the spinner thread keeps writing: every read orders its rings.
for i in 1 2 3 4 5; do
  rip -e "$T/rip-prog-pie" -r "$tmp/pie" -t | grep -qE "^spinner\[9\]: (\{[0-9]+\}$P:$S, ){31}\{[0-9]+\}$P:$S\$" ||
    fail "live read $i: $(cat "$tmp/stdout")"
done
stop

# By function: newest snapshot of each live thread, largest group first.
rip -e "$T/rip-prog-pie" -r "$tmp/pie" >"$tmp/func"
head -n 1 "$tmp/func" | grep -q '^park : 3 threads, 2 locations: ' || fail "park is not first: $(cat "$tmp/func")"
grep '^park ' "$tmp/func" | grep -qF "$P:$A (2)" || fail "park_a: $(cat "$tmp/func")"
grep '^park ' "$tmp/func" | grep -qF "$P:$B (1)" || fail "park_b: $(cat "$tmp/func")"
has "$tmp/func" "wrap_done : 1 thread, 1 location: $P:$D (1)"
has "$tmp/func" "resume_step : 1 thread, 1 location: $P:$R (1)"
has "$tmp/func" "main_wait : 1 thread, 1 location: $P:$M (1)"
has "$tmp/func" "dso_park : 1 thread, 1 location: rip-dso.c:$L (1)"
has "$tmp/func" "spin_step : 1 thread, 1 location: $P:$S (1)"
[ "$(wc -l <"$tmp/func")" -eq 6 ] || fail "6 functions expected: $(cat "$tmp/func")"
rip -e "$T/rip-prog-pie" -r "$tmp/pie" -v | grep '^park ' | grep -qE "$P:$A<0x[0-9a-f]+> \[2, 3\]" ||
  fail "-v: thread ids of park_a"

# By thread: 301 snapshots in the wrapper (the counter wrapped past 255): the
# ring holds counters 13..44, the last one in wrap_done.
exp="wrapper[5]: "
c=13
while [ $c -le 43 ]; do exp="$exp{$c}$P:$W, "; c=$((c + 1)); done
exp="$exp{44}$P:$D"
rip -e "$T/rip-prog-pie" -r "$tmp/pie" -t >"$tmp/thr"
has "$tmp/thr" "$exp"
# The resumer started at slot 30 and counter 250: both wrap.
exp="resumer[8]: "
for c in 250 251 252 253 254 255 0 1 2; do exp="$exp{$c}$P:$R, "; done
has "$tmp/thr" "$exp{3}$P:$R"
has "$tmp/thr" "parker[4]: {0}$P:$B"
has "$tmp/thr" "dso[7]: {0}rip-dso.c:$L"
! grep -q '^exiter' "$tmp/thr" || fail "exited thread shown without -v"
[ "$(wc -l <"$tmp/thr")" -eq 8 ] || fail "8 live threads expected"
# The spinner was killed mid-loop: its 32 counters are consecutive (mod 256).
grep "^spinner" "$tmp/thr" | tr -c "0-9\n" " " | awk '{ for (i = 2; i <= NF; i += 2) { if (i > 2 && $i != (p + 1) % 256) exit 1; p = $i; n++ } } END { exit n != 32 }' ||
  fail "spinner counters: $(grep "^spinner" "$tmp/thr")"
# -v: exited threads (ending in EXIT) and addresses.
rip -e "$T/rip-prog-pie" -r "$tmp/pie" -t -v >"$tmp/thrv"
grep -qE "^exiter\[6\]: \{0\}$P:$X<0x[0-9a-f]+>, EXIT$" "$tmp/thrv" || fail "-t -v: exiter: $(cat "$tmp/thrv")"

# Compressed copies read the same (their module map is found through the
# name without .gz / .zz).
gzip -c "$tmp/pie" >"$tmp/pie.gz"
${CT_RUN-} "$T/rip-prog-nopie" zlib "$tmp/pie" "$tmp/pie.zz" || fail "zlib copy"
for f in pie.gz pie.zz; do
  rip -e "$T/rip-prog-pie" -r "$tmp/$f" | cmp -s - "$tmp/func" || fail "$f differs"
  rip -e "$T/rip-prog-pie" -r "$tmp/$f" -t -v | cmp -s - "$tmp/thrv" || fail "$f -t -v differs"
done

# The portable address capture (a call, for CPUs other than x86-64 and
# AArch64) names the same lines.
start "$T/rip-prog-generic" "$tmp/generic"
stop
rip -e "$T/rip-prog-generic" -r "$tmp/generic" | cmp -s - "$tmp/func" || fail "generic capture differs"

# librip's default: rip_init(0) uses the tid, the file is sized for pid_max
# (sparse: the reader visits its data extents only). The writer exited.
${CT_RUN-} "$T/rip-prog-pie" tid "$tmp/tid" >"$tmp/tid.out" || fail "tid mode"
read -r _ tid tline <"$tmp/tid.out"
[ "$(wc -c <"$tmp/tid")" -eq $(($(cat /proc/sys/kernel/pid_max) * 320)) ] || fail "ring not sized by pid_max"
[ "$(rip -e "$T/rip-prog-pie" -r "$tmp/tid" -t)" = "tid[$tid]: {0}$P:$tline" ] || fail "tid ring: $(cat "$tmp/stdout")"

# A fixed-address executable: same view; and without its module map (a ring
# as librip writes it) the executable still symbolizes at its own addresses.
start "$T/rip-prog-nopie" "$tmp/nopie"
stop
rip -e "$T/rip-prog-nopie" -r "$tmp/nopie" | cmp -s - "$tmp/func" || fail "non-PIE differs"
rm "$tmp/nopie.maps"
rip -e "$T/rip-prog-nopie" -r "$tmp/nopie" >"$tmp/nomap"
has "$tmp/nomap" "wrap_done : 1 thread, 1 location: $P:$D (1)"
grep -q '^UNKNOWN : 1 thread, 1 location: 0x' "$tmp/nomap" || fail "DSO site without map: $(cat "$tmp/nomap")"
# A PIE without its map: a warning, not an error.
rm "$tmp/pie.maps"
"$COROTRACER" rip -e "$T/rip-prog-pie" -r "$tmp/pie" >/dev/null 2>"$tmp/stderr" || fail "PIE without map"
grep -q "^corotracer: $tmp/pie.maps: no module map" "$tmp/stderr" || fail "no warning: $(cat "$tmp/stderr")"
echo "ok"
