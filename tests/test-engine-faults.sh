#!/bin/sh
# test-engine-faults.sh - what happens when things go wrong: the engine dies,
# the target is killed or crashes or never uses the SDK, CTP_* values are
# wrong, the program does not exist, the shm filesystem is full.
. "$(dirname "$0")/lib/engine.sh"

# end_exit TRACE: the raw exit object of the end record.
end_exit() { "$CTJL" -t end exit < "$1"; }
nevents() { "$CTJL" -e probe_id < "$1" | wc -l; }
# The sanitizers catch SIGSEGV themselves; let the crash be a crash.
crash_env() {
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:handle_segv=0:handle_abort=0" \
  TSAN_OPTIONS="${TSAN_OPTIONS:-}:handle_segv=0:handle_abort=0" "$@"
}

# 1. Engine SIGKILLed mid-run: the target runs to completion (it writes
#    done after its last event, the engine long gone) and exits 0: a shell
#    between the engine and the target records the target's real status.
d=$T/engine-killed; mkdir "$d"
"$COROTRACER" run --quiet -o "$d/trace" -- \
  sh -c '"$1" run 300 5000 "$2"; echo $? > "$2/.status.tmp" && mv "$2/.status.tmp" "$2/status"' \
  sh "$TARGET" "$d" > "$d/out" 2>&1 &
eng=$!; bg_add $eng
wait_file "$d/ready" 20 $eng
tpid=$(ready_val "$d" pid); bg_add "$tpid"
sleep 0.3
kill -KILL $eng
wait $eng; rc=$?
[ $rc = 137 ] || fail "engine-killed: engine exit $rc, want 137"
wait_file "$d/status" 30
[ "$(cat "$d/status")" = 0 ] || fail "engine-killed: target exit status $(cat "$d/status"), want 0: $(cat "$d/out")"
[ "$(cat "$d/done")" = "done 301" ] || fail "engine-killed: target did not complete: $(cat "$d/done" "$d/out")"
wait_gone "$tpid" || fail "engine-killed: target still running after it exited"
echo "engine killed: target completed, exit 0"

# 2. Target SIGKILLed: engine exits 137; the events written before the kill
#    and the end record are in the trace.
d=$T/target-killed; mkdir "$d"
"$COROTRACER" run --quiet -o "$d/trace" -- "$TARGET" hold 20 "$d" > "$d/out" 2>&1 &
eng=$!; bg_add $eng
wait_file "$d/ready" 20 $eng
kill -KILL "$(ready_val "$d" pid)"
wait $eng; rc=$?
[ $rc = 137 ] || fail "target-killed: engine exit $rc, want 137: $(cat "$d/out")"
check_trace_ends "$d/trace"
[ "$(nevents "$d/trace")" = 20 ] || fail "target-killed: $(nevents "$d/trace") events in the trace, want 20"
end_exit "$d/trace" | grep -q '^{"signal":9,"name":"SIGKILL"' || fail "target-killed: end exit is $(end_exit "$d/trace")"
echo "target killed: 137, 20 events, end record"

# 3. Target crashes: 139 (SIGSEGV) and 134 (abort), same checks.
for c in "segv 139 11 SIGSEGV" "abort 134 6 SIGABRT"; do
  set -- $c
  d=$T/crash-$1; mkdir "$d"
  crash_env "$COROTRACER" run --quiet -o "$d/trace" -- "$TARGET" crash "$1" 12 > "$d/out" 2>&1; rc=$?
  [ $rc = "$2" ] || fail "crash $1: engine exit $rc, want $2: $(cat "$d/out")"
  check_trace_ends "$d/trace"
  [ "$(nevents "$d/trace")" = 12 ] || fail "crash $1: $(nevents "$d/trace") events in the trace, want 12"
  end_exit "$d/trace" | grep -q "^{\"signal\":$3,\"name\":\"$4\"" || fail "crash $1: end exit is $(end_exit "$d/trace")"
done
echo "crashes: 139 and 134 with traces"

# 4. A target that never initialises the SDK: meta and end, nothing else.
d=$T/noinit; mkdir "$d"
"$COROTRACER" run --quiet -o "$d/trace" -- "$TARGET" noinit > "$d/out" 2>&1 || fail "noinit: exit $?: $(cat "$d/out")"
check_trace_ends "$d/trace"
[ "$("$CTJL" type < "$d/trace" | grep -cv '^meta$\|^end$\|^process$\|^module$')" = 0 ] ||
  fail "noinit: unexpected lines: $(cat "$d/trace")"
[ "$("$CTJL" -t end exit events < "$d/trace")" = '{"code":0} 0' ] || fail "noinit: end is $(tail -n 1 "$d/trace")"
echo "no SDK: meta + end"

# 5. CTP_* values wrong or missing, no engine: the target runs untraced and
#    the probe prints exactly one line on stderr (none when all are absent).
d=$T/env; mkdir "$d"
"$TARGET" mkshm "$d/good" 8 || fail "mkshm failed"
head -c $((1024 + 8 * 1024)) /dev/zero > "$d/zeros"
direct() { # direct NAME SHM STATIONS: run ct-target init with these values
  env -u CTP_SHM_PATH -u CTP_SOCK_PATH -u CTP_MAX_STATIONS \
    CTP_SHM_PATH="$2" CTP_SOCK_PATH="$d/no-such.sock" CTP_MAX_STATIONS="$3" \
    "$TARGET" init > "$d/$1.out" 2> "$d/$1.err"; rc=$?
  [ $rc = 0 ] || fail "env $1: target exit $rc: $(cat "$d/$1.err")"
  grep -q '^init -[1-9][0-9]* enabled 0$' "$d/$1.out" || fail "env $1: not refused: $(cat "$d/$1.out")"
  [ "$(wc -l < "$d/$1.err")" = 1 ] || fail "env $1: want exactly one stderr line, got:
$(cat "$d/$1.err")"
  echo "env $1: $(cat "$d/$1.err")"
}
direct bad-magic "$d/zeros" 8
direct more-stations "$d/good" 16
direct fewer-stations "$d/good" 4
direct unreadable "$d/missing/ctp.shm" 8
direct bad-count "$d/good" eight
env -u CTP_SHM_PATH -u CTP_SOCK_PATH -u CTP_MAX_STATIONS "$TARGET" init > "$d/absent.out" 2> "$d/absent.err" ||
  fail "env absent: target exit $?"
[ "$(cat "$d/absent.out")" = "init -2 enabled 0" ] || fail "env absent: $(cat "$d/absent.out")"
[ -s "$d/absent.err" ] && fail "env absent: stderr not empty: $(cat "$d/absent.err")"

# 6. A program that does not exist: a clear error and 127.
d=$T/noexec; mkdir "$d"
"$COROTRACER" run --quiet -o "$d/trace" -- "$d/no-such-program" > "$d/out" 2>&1; rc=$?
[ $rc = 127 ] || fail "missing program: exit $rc, want 127: $(cat "$d/out")"
grep -q 'no-such-program' "$d/out" || fail "missing program: the error does not name it: $(cat "$d/out")"
echo "missing program: 127: $(head -n 1 "$d/out")"

# 7. --shm on a full tmpfs: an error before the target starts. Needs a
#    private mount namespace (root, or a user namespace).
d=$T/full; mkdir "$d" "$d/mnt"
if unshare -m true 2>/dev/null; then us="unshare -m"
elif unshare -rm true 2>/dev/null; then us="unshare -rm"
else skip "full tmpfs case not run: neither 'unshare -m' nor 'unshare -rm' is allowed here (all other cases passed)"
fi
$us sh -c 'mount -t tmpfs -o size=64k ctfull "$1" && exec "$2" run --quiet --shm "$1/ctp.shm" -n 1024 -o "$3/trace" -- "$4" touch "$3"' \
  sh "$d/mnt" "$COROTRACER" "$d" "$TARGET" > "$d/out" 2>&1; rc=$?
[ $rc != 0 ] || fail "full tmpfs: exit 0"
[ -e "$d/ran" ] && fail "full tmpfs: the target ran"
grep -qi 'space\|full' "$d/out" || fail "full tmpfs: unclear error: $(cat "$d/out")"
echo "full tmpfs: exit $rc: $(head -n 1 "$d/out")"
