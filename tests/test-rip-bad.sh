#!/bin/sh
# test-rip-bad.sh - `corotracer rip` on hand-made rings: ordering and exit
# markers exactly, and bad input (truncated, corrupt, unorderable, usage)
# giving one line naming the file, exit 2, never a crash.
set -u
: "${COROTRACER:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/check.sh"
E=$COROTRACER # any ELF file does: the addresses below are in none of its code
# (it is a PIE and these rings have no module map: the reader warns, hence 2>/dev/null)

# u64 ADDR CTR: one entry, little-endian (ADDR < 256).
u64() { printf "\\$(printf %03o "$1")\\000\\000\\000\\000\\000\\000\\$(printf %03o "$2")"; }
zeros() { head -c "$1" /dev/zero; }
exitm() { printf '\377\377\377\377\377\377\377\377'; }
# record NAME ENTRY...: a 320-byte record (ENTRY: "addr:ctr", "exit" or "0").
record() {
  printf %s "$1"; zeros $((64 - ${#1})); shift
  for e in "$@"; do
    case $e in
      exit) exitm ;;
      0) zeros 8 ;;
      *) u64 "${e%:*}" "${e#*:}" ;;
    esac
  done
  zeros $((8 * (32 - $#)))
}

# Record 0 unused; record 1 wrapped: slots 0-1 hold counters 32-33, slots 2-31
# counters 2-31; record 2 ran 3 snapshots then exited; record 3 is all zero.
{
  zeros 320
  set -- 33:32 34:33; c=2; while [ $c -le 31 ]; do set -- "$@" $((c + 1)):$c; c=$((c + 1)); done
  record w "$@"
  record gone 16:254 17:255 18:0 exit
  zeros 320
} >"$tmp/ring"
[ "$(wc -c <"$tmp/ring")" -eq 1280 ] || fail "bad fixture"
exp="w[1]: "; c=2
while [ $c -le 32 ]; do exp="$exp{$c}$(printf %#x $((c + 1))), "; c=$((c + 1)); done
"$COROTRACER" rip -e "$E" -r "$tmp/ring" -t >"$tmp/out" 2>/dev/null || fail "valid ring rejected"
[ "$(cat "$tmp/out")" = "$exp{33}0x22" ] || fail "order: $(cat "$tmp/out")"
"$COROTRACER" rip -e "$E" -r "$tmp/ring" -t -v 2>/dev/null | grep -qxF "gone[2]: {254}0x10<0x10>, {255}0x11<0x11>, {0}0x12<0x12>, EXIT" ||
  fail "exit marker"
"$COROTRACER" rip -e "$E" -r "$tmp/ring" >"$tmp/out" 2>/dev/null
[ "$(cat "$tmp/out")" = "UNKNOWN : 1 thread, 1 location: 0x22 (1)" ] || fail "by function: $(cat "$tmp/out")"

# bad NAME EXPECTED-MESSAGE ARGS...: exit 2 and exactly one line on stderr.
bad() {
  name=$1 msg=$2; shift 2
  "$COROTRACER" rip "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc -eq 2 ] || fail "$name: exit $rc, expected 2: $(cat "$tmp/err")"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$name: not one line: $(cat "$tmp/err")"
  grep -qF -- "$msg" "$tmp/err" || fail "$name: $(cat "$tmp/err"), expected: $msg"
  [ ! -s "$tmp/out" ] || fail "$name: output on stdout"
}

head -c 1000 "$tmp/ring" >"$tmp/short"
bad truncated "corotracer: $tmp/short: size 1000 is not a multiple of 320 bytes: record 3 is truncated" \
  -e "$E" -r "$tmp/short"
{ zeros 320; record x 5:5 6:9; } >"$tmp/unordered"
bad unordered "corotracer: $tmp/unordered: record 1: entries cannot be ordered" -e "$E" -r "$tmp/unordered"
gzip -c "$tmp/short" >"$tmp/short.gz"
bad gz-truncated-record "corotracer: $tmp/short.gz: decompressed size 1000 is not a multiple of 320" \
  -e "$E" -r "$tmp/short.gz"
gzip -n -c "$tmp/ring" >"$tmp/ring.gz" # -n: no name, the stream starts at byte 10
head -c 30 "$tmp/ring.gz" >"$tmp/cut.gz"
bad gz-cut "corotracer: $tmp/cut.gz: truncated compressed stream" -e "$E" -r "$tmp/cut.gz"
{ head -c 10 "$tmp/ring.gz"; printf "\\377"; tail -c +12 "$tmp/ring.gz"; } >"$tmp/bad.gz"
bad gz-corrupt "corotracer: $tmp/bad.gz: bad compressed stream" -e "$E" -r "$tmp/bad.gz"
printf 'x\234garbage' >"$tmp/bad.zz"
bad zlib-corrupt "corotracer: $tmp/bad.zz: bad compressed stream" -e "$E" -r "$tmp/bad.zz"
bad missing "corotracer: $tmp/none: No such file or directory" -e "$E" -r "$tmp/none"
bad not-elf "corotracer: $tmp/ring: not an ELF file" -e "$tmp/ring" -r "$tmp/ring"
printf 'not a map\n' >"$tmp/ring.maps"
bad bad-map "corotracer: $tmp/ring.maps: not a rip module map" -e "$E" -r "$tmp/ring"
bad no-exe "the executable (-e) must be given" -r "$tmp/ring"
bad unknown-option "corotracer: rip: bad option" -e "$E" -tx
bad no-value "corotracer: rip: bad option" -r "$tmp/ring" -e
bad extra-argument "corotracer: rip: unexpected argument" -e "$E" -- "$tmp/ring"
bad duplicate "corotracer: rip: duplicate option -e" -e"$E" -e "$E"
echo "ok"
