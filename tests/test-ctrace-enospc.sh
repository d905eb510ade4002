#!/bin/sh
# test-ctrace-enospc.sh - issue #24 item 5: a full disk (a 2 MB tmpfs) under
# both formats. The engine says so in one line and exits 1; the trace ends
# on a whole record, its last one the cut marker ("type":"cut", reason
# ENOSPC), and the report says the trace was cut by ENOSPC: no malformed
# line, no byte offset complaint. Needs root (mount); skipped otherwise.
. "$(dirname "$0")/lib/engine.sh"
SDKW="$CT_BUILD/tests/lib/sdk-writer"
[ "$(id -u)" = 0 ] || skip "not root: cannot mount a small tmpfs"
mkdir "$T/fs"
mount -t tmpfs -o size=2m tmpfs "$T/fs" 2> "$T/err" || skip "mount tmpfs: $(cat "$T/err")"
ct_cleanup() {
  for p in $BG; do kill -KILL "$p" 2>/dev/null; done
  umount "$T/fs" 2>/dev/null
  rm -rf "$T"
}
for f in ctrace jsonl; do
  # ~2 bytes an event in binary, ~150 in JSONL: both well past 2 MB, when none is
  # lost: --lossless (a loaded CI lost most of the burst once, the trace stayed
  # under 2 MB and the engine exited 0).
  n=3000000
  [ $f = jsonl ] && n=100000
  "$COROTRACER" run --quiet --lossless -o "$T/fs/t.$f" -- "$SDKW" spaced 1 $n 0 "$T/w" > /dev/null 2> "$T/err"
  rc=$?
  [ $rc = 1 ] || fail "$f: engine exit $rc, want 1: $(cat "$T/err")"
  [ "$(wc -l < "$T/err")" = 1 ] && grep -q "^corotracer: $T/fs/t.$f: No space left on device" "$T/err" ||
    fail "$f: not one line about ENOSPC: $(cat "$T/err")"
  [ "$("$CTJL" type reason < "$T/fs/t.$f" 2> "$T/err2" | tail -n 1)" = "cut ENOSPC" ] ||
    fail "$f: the last record is not the cut marker: $("$CTJL" type < "$T/fs/t.$f" | tail -n 2)"
  [ -s "$T/err2" ] && fail "$f: the trace does not end on a whole record: $(cat "$T/err2")"
  [ $f = jsonl ] && [ "$(tail -c 1 "$T/fs/t.$f" | od -An -c | tr -d ' ')" != '\n' ] && fail "jsonl: no final newline"
  "$COROTRACER" report "$T/fs/t.$f" > "$T/r.md" 2> "$T/err" || fail "$f: report exit $?"
  [ -s "$T/err" ] && fail "$f: the report complained: $(cat "$T/err")"
  grep -q 'cut by ENOSPC' "$T/r.md" || fail "$f: the report does not say cut by ENOSPC: $(grep End "$T/r.md")"
  grep -q 'malformed' "$T/r.md" && fail "$f: the report found malformed lines"
  grep -q '[1-9][0-9]* events' "$T/r.md" || fail "$f: the events before the cut are not reported"
  echo "   $f: $(wc -c < "$T/fs/t.$f") bytes, cut by ENOSPC, reported"
  rm -f "$T/fs/t.$f"
done
echo "test-ctrace-enospc: ok"
