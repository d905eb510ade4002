#!/bin/sh
# test-engine-security.sh - runtime files are private while the target runs
# (0700 directory, shm unreachable by another uid), pre-placed symlinks or files
# at --shm/--sock are refused without touching what they point to, and runtime
# files are gone after the run: normal exit, target killed, engine SIGTERMed.
. "$(dirname "$0")/lib/engine.sh"

# as_nobody CMD...: run CMD as uid/gid 65534 (works as root only).
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
other_uid=no
# The positive control proves a failure below means "denied", not "setpriv broken".
[ "$(id -u)" = 0 ] && as_nobody sh -c 'exec 3< /dev/null' 2>/dev/null && other_uid=yes
# no_access_for_others FILE: mode has no group/other bits.
no_access_for_others() { case "$(stat -c %a "$1")" in *00) return 0 ;; *) return 1 ;; esac; }

# start_hold DIR [ENGINE OPTIONS]: engine + holding target; sets eng, tpid.
start_hold() {
  dd=$1; shift
  mkdir -p "$dd"
  "$COROTRACER" run --quiet "$@" -o "$dd/trace" -- "$TARGET" hold 3 "$dd" > "$dd/out" 2>&1 &
  eng=$!; bg_add $eng
  wait_file "$dd/ready" 20 $eng
  tpid=$(ready_val "$dd" pid); bg_add "$tpid"
}

# 1. Default runtime files while the target runs.
start_hold "$T/live"
shm=$(ready_val "$T/live" shm) sock=$(ready_val "$T/live" sock)
rdir=$(dirname "$sock")
[ "$(stat -c '%a %u' "$rdir")" = "700 $(id -u)" ] || fail "runtime dir $rdir is $(stat -c '%a %u' "$rdir"), want 700 owned by us"
[ -S "$sock" ] || fail "CTP_SOCK_PATH $sock is not a socket"
case "$shm" in
  /proc/*/fd/*)
    readlink "$shm" | grep -q '^/memfd:' || fail "CTP_SHM_PATH $shm is not a memfd: $(readlink "$shm")"
    ;;
  *)
    no_access_for_others "$shm" || fail "shm file $shm is mode $(stat -c %a "$shm")"
    ;;
esac
if [ $other_uid = yes ]; then
  as_nobody sh -c 'exec 3< "$1"' sh "$shm" 2>/dev/null && fail "another uid can open CTP_SHM_PATH $shm"
  as_nobody sh -c 'exec 3> "$1"' sh "$shm" 2>/dev/null && fail "another uid can open CTP_SHM_PATH $shm for writing"
  as_nobody ls "$rdir" > /dev/null 2>&1 && fail "another uid can list the runtime dir $rdir"
  echo "uid 65534 cannot open $shm nor list $rdir"
else
  echo "no other uid to test with (not root): checked modes only"
fi
# 2. ... and gone once the engine is SIGTERMed (the target goes with it).
kill -TERM $eng
wait $eng; rc=$?
[ $rc = 143 ] || fail "SIGTERM to the engine: exit $rc, want 143 (target killed by SIGTERM)"
wait_gone "$tpid" || fail "target $tpid survived the engine's SIGTERM"
[ -e "$rdir" ] && fail "runtime dir $rdir left after SIGTERM: $(ls -la "$rdir")"
echo "SIGTERM: 143, runtime dir removed"

# 3. Gone after the target is killed.
start_hold "$T/killed"
rdir=$(dirname "$(ready_val "$T/killed" sock)")
kill -KILL "$tpid"
wait $eng; rc=$?
[ $rc = 137 ] || fail "target killed: exit $rc, want 137"
[ -e "$rdir" ] && fail "runtime dir $rdir left after the target was killed"

# 4. Gone after a normal exit, with default and with explicit paths; explicit
#    ones are private while they exist.
d=$T/normal; mkdir "$d"
"$COROTRACER" run --quiet -o "$d/trace" -- "$TARGET" run 5 0 "$d" > "$d/out" 2>&1 || fail "normal run: exit $?: $(cat "$d/out")"
rdir=$(dirname "$(ready_val "$d" sock)")
[ -e "$rdir" ] && fail "runtime dir $rdir left after a normal exit"
start_hold "$T/explicit" --shm "$T/explicit/ctp.shm" --sock "$T/explicit/ctp.sock"
[ "$(ready_val "$T/explicit" shm) $(ready_val "$T/explicit" sock)" = "$T/explicit/ctp.shm $T/explicit/ctp.sock" ] ||
  fail "explicit paths not handed to the target: $(cat "$T/explicit/ready")"
[ -f "$T/explicit/ctp.shm" ] && no_access_for_others "$T/explicit/ctp.shm" ||
  fail "--shm file mode $(stat -c %a "$T/explicit/ctp.shm"), want 0600"
[ -S "$T/explicit/ctp.sock" ] && no_access_for_others "$T/explicit/ctp.sock" ||
  fail "--sock mode $(stat -c %a "$T/explicit/ctp.sock"), want no access for others"
kill -TERM "$tpid"
wait $eng
[ -e "$T/explicit/ctp.shm" ] || [ -e "$T/explicit/ctp.sock" ] && fail "explicit --shm/--sock left after the run"
echo "runtime files removed: normal exit, target killed, explicit paths"

# 5. Pre-placed symlinks (to a file, dangling) and files at --shm / --sock are
#    refused before the target runs, and what they point to is left alone.
d=$T/links; mkdir "$d"
echo precious > "$d/victim"
ln -s "$d/victim" "$d/shm-link"
ln -s "$d/victim" "$d/sock-link"
ln -s "$d/not-there" "$d/dangling"
echo precious > "$d/placed"
for c in "--shm shm-link" "--sock sock-link" "--shm dangling" "--sock dangling" "--shm placed" "--sock placed"; do
  set -- $c
  "$COROTRACER" run --quiet "$1" "$d/$2" -o "$d/trace" -- "$TARGET" touch "$d" > "$d/out" 2>&1; rc=$?
  [ $rc != 0 ] || fail "$1 $2: accepted (exit 0)"
  [ -e "$d/ran" ] && fail "$1 $2: the target ran"
  [ -s "$d/out" ] || fail "$1 $2: refused without a message"
  [ "$(cat "$d/victim") $(cat "$d/placed")" = "precious precious" ] || fail "$1 $2: a pre-placed file was modified"
  [ -e "$d/not-there" ] && fail "$1 $2: created the dangling symlink's target"
  [ -L "$d/shm-link" ] && [ -L "$d/sock-link" ] && [ -L "$d/dangling" ] || fail "$1 $2: removed a pre-placed symlink"
  echo "$1 $2: refused: $(head -n 1 "$d/out")"
done
