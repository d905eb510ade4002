#!/bin/sh
# test-rip-librip.sh - librip programs build unchanged: a program written
# against librip's API (tests/lib/librip-prog.c: "librip.h", its storage
# defined by hand) builds with our header and no library, no link flag, in
# the compilers' default mode and as gnu89 (librip's), and `corotracer rip`
# reads its ring back at the right lines, module map included.
set -u
: "${CT_BUILD:?run me through tests/run.sh}" "${COROTRACER:?run me through tests/run.sh}"
. "$(dirname "$0")/lib/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for cc in cc clang; do
  command -v $cc >/dev/null 2>&1 || continue
  for std in "" -std=gnu89; do
    n=$((n + 1))
    prog=$tmp/prog$n
    # shellcheck disable=SC2086 # std is one word or none
    $cc $std -g -Wall -Wextra -Werror -Iinclude -o "$prog" tests/lib/librip-prog.c \
      >"$tmp/cc.log" 2>&1 || { cat "$tmp/cc.log"; fail "$cc $std: does not build with no link flag"; }
    nm -u "$prog" | grep -w 'rip_[a-z_]*' && fail "$cc $std: undefined rip_ symbols (above)"
    "$prog" "$tmp/ring$n" >"$tmp/out" 2>&1 || fail "$cc $std: $(cat "$tmp/out")"
    read -r _ mtid mline <"$tmp/out"
    wtid=$(awk '$1 == "worker" { print $2 }' "$tmp/out") wline=$(awk '$1 == "worker" { print $3 }' "$tmp/out")
    [ -s "$tmp/ring$n.maps" ] || fail "$cc $std: no module map next to the ring"
    "$COROTRACER" rip -e "$prog" -r "$tmp/ring$n" -t -v >"$tmp/view" 2>"$tmp/err" ||
      fail "$cc $std: rip failed: $(cat "$tmp/err")"
    [ ! -s "$tmp/err" ] || fail "$cc $std: rip wrote on stderr: $(cat "$tmp/err")"
    grep -q "^main\[$mtid\]: {0}librip-prog.c:$mline" "$tmp/view" ||
      fail "$cc $std: main thread not at librip-prog.c:$mline: $(cat "$tmp/view")"
    grep -q "^worker\[$wtid\]: .*{1}librip-prog.c:$wline<0x[0-9a-f]*>, EXIT\$" "$tmp/view" ||
      fail "$cc $std: worker not at librip-prog.c:$wline: $(cat "$tmp/view")"
    # The worker exited (rip_exit): only -v shows it.
    "$COROTRACER" rip -e "$prog" -r "$tmp/ring$n" >"$tmp/view" 2>&1 || fail "$cc $std: rip failed"
    [ "$(cat "$tmp/view")" = "main : 1 thread, 1 location: librip-prog.c:$mline (1)" ] ||
      fail "$cc $std: default view: $(cat "$tmp/view")"
  done
done
[ $n -gt 0 ] || fail "no C compiler"
echo "ok: $n builds"
