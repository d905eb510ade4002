#!/bin/sh
# test-outputs-safe.sh - every output (the trace, html, report -o/--json, the
# exports) is created safely (docs/SECURITY.md "Outputs", issue #24 items 3
# and 4): links planted by another user at the final names and at the old
# predictable temporary names never redirect a write to a victim file,
# --append refuses a link and a hard link, a link at the CSV directory is
# refused, and under umask 000 every output is 0600 (the CSV directory 0700).
set -u
: "${CT_BUILD:?run through tests/run.sh}" "${COROTRACER:?run through tests/run.sh}"
CT=$COROTRACER
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-outputs.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
CHECK_KEEP_GOING=1 # fail counts and goes on; check_done ends the test
. "$(dirname "$0")/lib/check.sh"
data=$(dirname "$0")/data/report
umask 000
awk -f "$data/gen.awk" "$data/deadlock.txt" > "$tmp/t.jsonl" || { fail "gen.awk"; check_done; }
T=$tmp/t.jsonl

# The victims: a 0600 file and a directory outside the shared directory. The
# shared directory is world-writable but not sticky: fs.protected_symlinks
# never applies there, so a planted link is followed by open() whatever the
# sysctl says, and only corotracer's own care protects the victim. Tests run
# as root: permission bits do not stop root, so the checks are "victim
# unchanged" and the modes through stat.
victim=$tmp/victim
printf 'secret\n' > "$victim"
chmod 600 "$victim"
vdir=$tmp/vdir
mkdir "$vdir"
printf 'keep\n' > "$vdir/runs.csv"
sh=$tmp/shared
mkdir "$sh"
chmod 777 "$sh"
other=$(id -u nobody 2>/dev/null || echo 65534)
# A link of ours is followed (we made it: docs/SECURITY.md, "Outputs"): the
# hostile user's links need another owner, which only root can give them.
[ "$(id -u)" = 0 ] || skip "not root: cannot plant links owned by another user"
# plant LINK TARGET: a link owned by another user, as the hostile local
# user's would be.
plant() {
  ln -s "$2" "$1" || fail "ln -s $1"
  chown -h "$other" "$1" || fail "chown -h $1"
}
# plant_tmp OUT: links at today's OUT.tmp<pid> for the next pids.
plant_tmp() {
  last=$(cat /proc/sys/kernel/ns_last_pid 2>/dev/null || echo 0)
  i=1
  while [ $i -le 150 ]; do
    ln -s "$victim" "$1.tmp$((last + i))" 2>/dev/null
    i=$((i + 1))
  done
}
intact() { # intact WHAT: the victims are as they were (then restored, for the next check)
  [ "$(cat "$victim")" = secret ] || fail "$1: the victim file was written: $(head -c 60 "$victim")"
  [ "$(stat -c %a "$victim")" = 600 ] || fail "$1: the victim's mode changed"
  [ "$(cat "$vdir/runs.csv")" = keep ] || fail "$1: the victim directory's file was written"
  [ "$(ls -A "$vdir")" = runs.csv ] || fail "$1: files appeared in the victim directory: $(ls -A "$vdir" | tr '\n' ' ')"
  printf 'secret\n' > "$victim"
  chmod 600 "$victim"
  rm -rf "$vdir"
  mkdir "$vdir"
  printf 'keep\n' > "$vdir/runs.csv"
}
regular() { # regular PATH WHAT: written, a regular file of mode 0600, not a link
  if [ -L "$1" ] || [ ! -f "$1" ]; then
    fail "$2: $1 is not a regular file"
  elif [ "$(stat -c %a "$1")" != 600 ]; then
    fail "$2: $1 has mode $(stat -c %a "$1") under umask 000, want 600"
  fi
}
runs() { # runs WHAT CMD...: CMD exits 0
  what=$1
  shift
  "$@" > "$tmp/out" 2> "$tmp/err" || fail "$what: exit $?: $(cat "$tmp/err")"
}
refused() { # refused WHAT CMD...: CMD fails, naming the file
  what=$1
  shift
  if "$@" > "$tmp/out" 2> "$tmp/err"; then fail "$what: accepted"; fi
  grep -q "corotracer: " "$tmp/err" || fail "$what: no error line: $(cat "$tmp/err")"
}

echo "== 1. links at the final names and at predictable temporary names"
plant "$sh/trace.jsonl" "$victim"
runs "run -o link" "$CT" run --quiet -o "$sh/trace.jsonl" -- true
intact "run -o link"
regular "$sh/trace.jsonl" "run -o link"
grep -q '"type":"end"' "$sh/trace.jsonl" || fail "run -o link: the trace has no end record"

for out in d.html e.jsonl p.pftrace r.md r.json v1.jsonl; do
  plant "$sh/$out" "$victim"
  plant_tmp "$sh/$out"
done
runs "html -o link" "$CT" html "$T" -o "$sh/d.html"
runs "report -o/--json link" "$CT" report "$T" -o "$sh/r.md" --json "$sh/r.json"
runs "export jsonl-events link" "$CT" export jsonl-events "$T" -o "$sh/e.jsonl"
runs "export perfetto link" "$CT" export perfetto "$T" -o "$sh/p.pftrace"
runs "export jsonl-v1 link" "$CT" export jsonl-v1 "$T" -o "$sh/v1.jsonl"
intact "html, report, export jsonl/perfetto/jsonl-v1 over links"
for out in d.html e.jsonl p.pftrace r.md r.json v1.jsonl; do regular "$sh/$out" "$out over a link"; done

# CSV: a directory the other user made, links at the table names and at the
# old fixed temporary names .TABLE.csv.tmp.
mkdir "$sh/csvd"
chmod 777 "$sh/csvd"
chown "$other" "$sh/csvd"
tables="runs coroutines events sites findings finding_coroutines"
for t in $tables; do
  plant "$sh/csvd/$t.csv" "$victim"
  plant "$sh/csvd/.$t.csv.tmp" "$victim"
done
runs "export csv over links" "$CT" export csv "$T" -o "$sh/csvd"
intact "export csv over links"
for t in $tables; do regular "$sh/csvd/$t.csv" "csv $t"; done
# A link at the directory itself: refused, nothing written through it.
plant "$sh/csvl" "$vdir"
refused "export csv -o link-to-dir" "$CT" export csv "$T" -o "$sh/csvl"
intact "export csv -o link-to-dir"

# SQLite: a link at the database's name is refused; links at its side files
# (-journal, -wal, -shm) are not followed.
plant "$sh/db.sqlite" "$victim"
refused "export sqlite over a link" "$CT" export sqlite "$T" -o "$sh/db.sqlite"
for x in journal wal shm; do plant "$sh/w.sqlite-$x" "$victim"; done
"$CT" export sqlite "$T" -o "$sh/w.sqlite" > /dev/null 2>&1
intact "export sqlite over links"
# An existing database is written into: another user's is refused (they
# would read the rows), and so is a hard link to a victim database.
mkdir "$tmp/dbs"
"$CT" export sqlite "$T" -o "$tmp/dbs/db.sqlite" > /dev/null 2>&1 || fail "export sqlite to make a database"
cp "$tmp/dbs/db.sqlite" "$sh/theirs.sqlite"
chown "$other" "$sh/theirs.sqlite"
refused "export sqlite into another user's database" "$CT" export sqlite "$T" -o "$sh/theirs.sqlite"
ln "$tmp/dbs/db.sqlite" "$sh/hard.sqlite"
sum=$(cksum < "$tmp/dbs/db.sqlite")
refused "export sqlite into a hard link" "$CT" export sqlite "$T" -o "$sh/hard.sqlite"
[ "$(cksum < "$tmp/dbs/db.sqlite")" = "$sum" ] || fail "export sqlite into a hard link: the database changed"

echo "== 2. --append: no link, no hard link"
plant "$sh/a.jsonl" "$victim"
refused "run --append -o link" "$CT" run --quiet --append -o "$sh/a.jsonl" -- true
ln "$victim" "$sh/h.jsonl" || fail "ln"
refused "run --append -o hard-link" "$CT" run --quiet --append -o "$sh/h.jsonl" -- true
intact "run --append over links"
runs "run -o hard-link" "$CT" run --quiet -o "$sh/h.jsonl" -- true
intact "run -o hard-link (replaced, not written into)"
regular "$sh/h.jsonl" "run -o hard-link"
runs "run --append -o new" "$CT" run --quiet --append -o "$tmp/app.jsonl" -- true
runs "run --append -o existing" "$CT" run --quiet --append -o "$tmp/app.jsonl" -- true
[ "$(grep -c '"type":"end"' "$tmp/app.jsonl")" = 2 ] || fail "--append: want 2 end records"

echo "== 3. modes under umask 000"
printf 'old\n' > "$tmp/old.jsonl"
chmod 644 "$tmp/old.jsonl"
runs "run -o an old 0644 trace" "$CT" run --quiet -o "$tmp/old.jsonl" -- true
regular "$tmp/old.jsonl" "run over an old 0644 trace"
regular "$tmp/app.jsonl" "run --append, new file"
runs "export csv new dir" "$CT" export csv "$T" -o "$tmp/csvnew"
[ "$(stat -c %a "$tmp/csvnew")" = 700 ] || fail "CSV directory mode $(stat -c %a "$tmp/csvnew"), want 700"
for t in $tables; do regular "$tmp/csvnew/$t.csv" "csv $t"; done
runs "export sqlite new" "$CT" export sqlite "$T" -o "$tmp/new.sqlite"
regular "$tmp/new.sqlite" "export sqlite"
runs "html new" "$CT" html "$T" -o "$tmp/new.html"
regular "$tmp/new.html" "html"

echo "== 4. links of ours, devices and pipes are written in place"
printf 'old\n' > "$tmp/mine.html"
ln -s "$tmp/mine.html" "$tmp/mylink.html"
runs "html -o a link of ours" "$CT" html "$T" -o "$tmp/mylink.html"
[ -L "$tmp/mylink.html" ] || fail "html -o a link of ours: the link was replaced"
grep -q '<html' "$tmp/mine.html" || fail "html -o a link of ours: its file was not written"
"$CT" report "$T" -o /dev/null --json /dev/stdout > "$tmp/redir.json" ||
  fail "report --json /dev/stdout into a file: exit $?"
grep -q '"corotracer-findings"' "$tmp/redir.json" || fail "report --json /dev/stdout into a file"
[ -L /dev/stdout ] || fail "/dev/stdout is no longer a link"
runs "report -o /dev/null" "$CT" report "$T" -o /dev/null --json /dev/null
runs "run -o /dev/null" "$CT" run --quiet -o /dev/null -- true
runs "run --append -o /dev/null" "$CT" run --quiet --append -o /dev/null -- true
"$CT" export jsonl-events "$T" -o /dev/stdout 2> /dev/null | grep -q '"run_id"' || fail "export jsonl -o /dev/stdout into a pipe"
"$CT" report "$T" -o /dev/null --json /dev/stdout | grep -q '"corotracer-findings"' ||
  fail "report --json /dev/stdout into a pipe"
[ -c /dev/null ] || fail "/dev/null is no longer a device"

echo "== 5. no temporary file left behind"
left=$(find "$sh" "$tmp/csvnew" -name '.*.tmp' -type f)
[ -z "$left" ] || fail "temporary files left: $left"
check_done
echo "ok"
