#!/bin/sh
# test-pack-readers.sh - every reader on a trace whose writers packed their hot switches
# (corotracer run --pack; docs/ROUTE1.md "Remaining" 5). test-pack-roundtrip shows that
# such a trace's `export jsonl` is a JSONL run's (but for what timing changes); here:
# - the pack trace checked into tests/data (a run of 2026-11) reads as it did then;
# - `report` (Markdown and findings JSON), `export jsonl-v1`, `csv`, `sqlite` and
#   `perfetto` of the pack trace equal, byte for byte, those of its own `export jsonl`
#   (same events: a reader that read the packs differently from the decoder's lines shows);
# - the findings JSON of the pack run agrees with two JSONL runs of the same program
#   (--lossless) in every value the two JSONL runs agree in;
# - the live view's detail on request (`serve`, GET /detail), which decodes stretches of
#   the file from its middle, answers for the pack trace what it answers for the same
#   coroutines' lines in JSONL (it once read each stretch without the stations its packs
#   name: a window past the first chunk lost their switches).
CHECK_KEEP_GOING=1
. "$(dirname "$0")/lib/engine.sh"
. "$(dirname "$0")/lib/serve.sh"
SDKW="$CT_BUILD/tests/lib/sdk-writer"
command -v python3 > /dev/null 2>&1 || skip "python3 not installed"
spid=""
trap '[ -z "$spid" ] || kill "$spid" 2>/dev/null; ct_cleanup' EXIT

# outputs TRACE DIR: every reader's output of TRACE into DIR (read there as ./trace: a
# reader names its input's file, which must not differ).
outputs() {
  mkdir -p "$2"
  cp "$1" "$2/trace"
  (
    cd "$2" || exit 1
    "$COROTRACER" report trace -o report.md --json findings.json 2> err || fail "report $1: exit $?: $(cat err)"
    for f in "jsonl-v1 v1.jsonl" "csv csv" "sqlite db.sqlite" "perfetto t.pftrace"; do
      # shellcheck disable=SC2086 # its words are the format and the output
      set -- $f
      "$COROTRACER" export "$1" trace -o "$2" -q 2> err || fail "export $1 of $(pwd): exit $?: $(cat err)"
      [ -s err ] && fail "export $1 of $(pwd) said: $(cat err)"
    done
    rm trace err
    # The trace's size in bytes is the one thing a binary and a JSONL trace differ in.
    sed -i 's/"bytes":[0-9]*//' findings.json
    sed -i '/^- \*\*Trace\*\*/d' report.md
    sqlite3 db.sqlite .dump > db.sql 2> /dev/null && rm db.sqlite
    check_done > /dev/null
  ) || fail "outputs of $1"
}

# The checked-in pack trace (issue #32: old traces still read): tests/data/pack-2026-11.ctrace,
# a default run of `sdk-writer switch 2 8 6` (tests/data/make-pack-trace.sh remakes it and
# what it is compared with; `--outputs` only the latter, from the trace as it is). Its
# `export jsonl` is the one checked in with it, line for line; its report the one checked
# in; every other reader of it equals that reader of its JSONL.
echo "== the checked-in pack trace (tests/data/pack-2026-11.ctrace)"
DATA="$(dirname "$0")/data"
D="$DATA/pack-2026-11"
"$COROTRACER" export jsonl "$D.ctrace" -o "$T/d.jsonl" -q 2> "$T/err" ||
  fail "export jsonl of the pack trace: exit $?: $(cat "$T/err")"
[ -s "$T/err" ] && fail "export jsonl of the pack trace said: $(cat "$T/err")"
gzip -dc "$D.jsonl.gz" > "$T/d.want" || fail "gzip -dc $D.jsonl.gz: exit $?"
diff "$T/d.want" "$T/d.jsonl" > "$T/diff" ||
  fail "the pack trace's export jsonl is not the one checked in: $(head -c 600 "$T/diff")"
outputs "$D.ctrace" "$T/db"
outputs "$T/d.want" "$T/dj"
diff "$D.report.md" "$T/db/report.md" > "$T/diff" ||
  fail "the pack trace's report is not the one checked in: $(head -c 600 "$T/diff")"
diff -r "$T/db" "$T/dj" > "$T/diff" ||
  fail "the readers of the pack trace and of its checked-in JSONL differ: $(head -c 600 "$T/diff")"
[ "$fails" -eq 0 ] && echo "   export jsonl, report: as checked in; jsonl-v1, csv, sqlite, perfetto: as of its JSONL"

echo "== switch: 3 threads x 40 coroutines x 50 rounds, two JSONL runs and a --pack run"
for r in a b; do
  "$COROTRACER" run --quiet --lossless -o "$T/$r.jsonl" -- "$SDKW" switch 3 40 50 "$T/w" > /dev/null ||
    fail "JSONL run $r: exit $?"
done
"$COROTRACER" run --quiet --lossless --pack -o "$T/p.ctrace" -- "$SDKW" switch 3 40 50 "$T/w" > /dev/null ||
  fail "--pack run: exit $?"
grep -qa CHK5 "$T/p.ctrace" || fail "the --pack run wrote no pack chunk"
"$COROTRACER" export jsonl "$T/p.ctrace" -o "$T/p.jsonl" -q || fail "export jsonl: exit $?"
outputs "$T/p.ctrace" "$T/pb"
outputs "$T/p.jsonl" "$T/pj"
diff -r "$T/pb" "$T/pj" > "$T/diff" ||
  fail "the readers of the pack trace and of its JSONL differ: $(head -c 600 "$T/diff")"
echo "   report, jsonl-v1, csv, sqlite, perfetto: the pack trace's = its JSONL's"

# The findings JSON, flattened to one path=value a line: what runs a and b agree in,
# the pack run has too.
for r in a b p; do
  # shellcheck disable=SC2086 # untimed: options (check.sh), no finding judged by the clock
  "$COROTRACER" report $untimed "$T/$r.$([ $r = p ] && echo ctrace || echo jsonl)" --json "$T/$r.json" > /dev/null ||
    fail "report $r: exit $?"
done
python3 - "$T/a.json" "$T/b.json" "$T/p.json" > "$T/fdiff" << 'EOF' || fail "findings: $(head -c 600 "$T/fdiff")"
import json, re, sys
def flat(v, path, out):
    if isinstance(v, dict):
        for k in v:
            flat(v[k], path + "." + k, out)
    elif isinstance(v, list):
        out[path + "#"] = len(v)
        for i, x in enumerate(v):
            flat(x, "%s[%d]" % (path, i), out)
    else:
        out[path] = v
a, b, p = ({} for _ in range(3))
for d, f in zip((a, b, p), sys.argv[1:]):
    flat(json.load(open(f)), "", d)
# Times, and which coroutine a finding shows first, are timing's: two runs agree in
# a histogram's bucket or a finding's first coroutine by chance only.
timing = re.compile(r"_ns|_ts|\.ts$|probe_id|run_id|\.path$|\.bytes$|coroutines\[|idle_gaps")
bad = [k for k in a if k in b and a[k] == b[k] and p.get(k) != a[k] and not timing.search(k)]
vary = [k for k in a if k not in b or a[k] != b[k]]
for k in bad[:10]:
    print("%s: JSONL runs %r, pack run %r" % (k, a[k], p.get(k)))
print("   findings JSON: %d values, equal in the pack run but for %d the JSONL runs vary in" %
      (len(a), len(vary)), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

# Two --pack runs in one file (run --append): each run's station_end and end lines
# count its own pack events (the decoder's counts once ran on across the runs: the
# second end line said 36288 events of 18477 and report refused it).
echo "== --append: two --pack runs in one trace"
for r in 1 2; do
  "$COROTRACER" run --quiet --lossless --pack --append -o "$T/ap.ctrace" -- "$SDKW" yield 3 40 50 "$T/w$r" > /dev/null ||
    fail "append: run $r: exit $?"
done
"$COROTRACER" report "$T/ap.ctrace" > /dev/null 2> "$T/err" || fail "append: report: exit $?: $(cat "$T/err")"
[ -s "$T/err" ] && fail "append: report said: $(cat "$T/err")"
"$COROTRACER" export jsonl "$T/ap.ctrace" -o "$T/ap.jsonl" -q || fail "append: export: exit $?"
[ "$("$CTJL" -t end events harvested lost < "$T/ap.jsonl" | tr '\n' ' ')" = "$(cat "$T/w1") $(cat "$T/w1") 0 $(cat "$T/w2") $(cat "$T/w2") 0 " ] ||
  fail "append: end lines $("$CTJL" -t end events harvested lost < "$T/ap.jsonl" | tr '\n' ' '), the runs wrote $(cat "$T/w1") and $(cat "$T/w2")"
[ "$fails" -eq 0 ] && echo "   two runs of $(cat "$T/w1") and $(cat "$T/w2") events: each end line its own"

# A full disk under --append onto a torn --pack trace (sink_cut.c): the appended run's
# first write fails (ENOSPC), and so does its cut marker at the file's end (the torn
# trace ends on a page: no room freed); the cut goes back over the trace's chunks to
# the last whole one with room for the marker. It once walked CHK3 chunks only: at a
# --pack trace's first chunk it cut the file to nothing, the earlier run and its
# header with it. Needs root (mount a small tmpfs).
echo "== --append onto a torn --pack trace on a full disk"
if [ "$(id -u)" = 0 ] && mkdir "$T/fs" && mount -t tmpfs -o size=1m tmpfs "$T/fs" 2> "$T/err"; then
  ct_cleanup() {
    for p in $BG; do kill -KILL "$p" 2> /dev/null; done
    umount "$T/fs" 2> /dev/null
    rm -rf "$T"
  }
  t=$T/fs/t.ctrace
  "$COROTRACER" run --quiet --lossless --pack -o "$t" -- "$SDKW" yield 3 40 50 "$T/w" > /dev/null ||
    fail "enospc: the first run: exit $?"
  size=$(wc -c < "$t")
  truncate -s $((size / 4096 * 4096)) "$t" # torn in a chunk, ending on a page
  dd if=/dev/zero of="$T/fs/fill" bs=4096 2> /dev/null # the disk full
  "$COROTRACER" run --quiet --lossless --pack --append -o "$t" -- "$SDKW" yield 3 40 50 "$T/w" > /dev/null 2> "$T/err"
  rc=$?
  [ $rc = 1 ] && grep -q "No space left on device" "$T/err" || fail "enospc: the appended run: exit $rc: $(cat "$T/err")"
  [ "$(head -c 7 "$t" | tail -c 6)" = CTRACE ] || fail "enospc: the trace lost its file header ($(wc -c < "$t") bytes left)"
  [ "$("$CTJL" type reason < "$t" 2> "$T/err2" | tail -n 1)" = "cut ENOSPC" ] ||
    fail "enospc: the last record is not the cut marker: $("$CTJL" type < "$t" 2>&1 | tail -n 2)"
  "$COROTRACER" report "$t" > "$T/r.md" 2> "$T/err" || fail "enospc: report: exit $?: $(cat "$T/err")"
  grep -q 'cut by ENOSPC' "$T/r.md" || fail "enospc: the report does not say cut by ENOSPC"
  ev=$("$CTJL" -e ev < "$t" 2> /dev/null | wc -l)
  [ "$ev" -gt 0 ] || fail "enospc: the first run's events are gone"
  [ "$fails" -eq 0 ] && echo "   $(wc -c < "$t") bytes left of $size, $ev events, then the cut marker"
else
  echo "   (not root or no tmpfs: skipped)"
fi

# detail FILE LANES QUERY...: GET /detail of `serve FILE` for LANES and each QUERY (t0
# and t1), the answers in FILE.N.det; fails on any answer but 200.
detail() {
  f=$1 ids=$2
  shift 2
  serve_start "$f" "$f.err"
  [ -n "$url" ] || { fail "serve $f: no URL: $(cat "$f.err")"; return; }
  base=$(echo "$url" | sed 's|\(http://[^/]*\)/.*|\1|')
  tok=${url##*token=}
  # A page follows the event stream: the server reads the rest of the file (its
  # index by time grows with it) until /data no longer says "analysing".
  curl -s -N --max-time 300 -o /dev/null "$base/events?token=$tok" &
  epid=$!
  i=0
  until curl -s --max-time 60 -o "$f.data" "$base/data?token=$tok" && whole "$f.data"; do
    i=$((i + 1))
    [ $i -lt 600 ] || { fail "serve $f: the file is never read whole"; break; }
    sleep 0.2
  done
  kill "$epid" 2> /dev/null
  wait "$epid" 2> /dev/null
  n=0
  for q in "$@"; do
    n=$((n + 1))
    i=0
    while :; do # 503: the worker busy or no events read yet
      code=$(curl -s --max-time 60 -o "$f.$n.det" -w '%{http_code}' "$base/detail?token=$tok&$q&lanes=$ids")
      [ "$code" = 503 ] && [ $i -lt 100 ] || break
      i=$((i + 1))
      sleep 0.2
    done
    [ "$code" = 200 ] || fail "detail $f $q: HTTP $code: $(head -c 300 "$f.$n.det")"
  done
  # A burst, as a page's wheel makes: 4 windows of the whole run asked at once
  # (each its own query, so the last answer kept is no shortcut; 4: as many
  # connections as may wait from one address, docs/SECURITY.md). The worker
  # takes one, 2 wait; one more supersedes the oldest waiting (503
  # "superseded"), never itself: before, a full queue refused the newest
  # ("busy"), the window the page's view had stopped at.
  if [ -n "${burst:-}" ]; then
    cpids=
    for b in 1 2 3 4; do
      curl -s --max-time 120 -o "$f.b$b" -w '%{http_code}\n' \
        "$base/detail?token=$tok&t0=0&t1=$((span + 1000000000 + b))&lanes=$ids" > "$f.b$b.code" &
      cpids="$cpids $!"
    done
    wait $cpids
    ok=0 sup=0
    for b in 1 2 3 4; do
      case "$(cat "$f.b$b.code")" in
        200) ok=$((ok + 1)) ;;
        503) grep -q "^detail: superseded by a newer window" "$f.b$b" && sup=$((sup + 1)) ||
               fail "detail burst: request $b: 503 but not superseded: $(head -c 200 "$f.b$b")" ;;
        *) fail "detail burst: request $b: HTTP $(cat "$f.b$b.code"): $(head -c 200 "$f.b$b")" ;;
      esac
    done
    [ $ok -ge 1 ] || fail "detail burst: no request answered"
    echo "   a burst of 4 windows: $ok answered, $sup superseded"
  fi
  kill "$spid"
  wait "$spid"
  rc=$?
  spid=""
  [ $rc = 0 ] || fail "serve $f: exit $rc: $(tail -n 5 "$f.err")"
  grep -q "Sanitizer\|runtime error" "$f.err" && fail "serve $f: $(grep -m 3 "Sanitizer\|runtime error" "$f.err")"
}

# whole DATA: the /data blob DATA is the whole file's (not "analysing" a part).
whole() {
  python3 - "$1" << 'EOF'
import json, struct, sys, zlib
b = zlib.decompress(open(sys.argv[1], "rb").read())
n = struct.unpack("<I", b[-8:-4])[0]
sys.exit(b[-4:] != b"CTD1" or "analysing" in json.loads(b[-8 - n:-8])["findings"])
EOF
}

# blob A B JSONL: the two answers' data equal (decompressed), but for what the JSONL
# holds in lines of no coroutine (the run's meta line, read with the pack trace's first
# chunk only; the JSON's length at the end) and the count of lines read. The run's pid is
# on every row of both (co_pid): a binary trace's blocks after its first carry it from the
# file's index (before, those rows said 0).
blob() {
  python3 - "$1" "$2" "$3" << 'EOF'
import json, re, struct, sys, zlib
a, b = (re.sub(rb'"(lines|run_id|host)":("[^"]*"|[0-9]*)', b"",
               zlib.decompress(open(f, "rb").read())[:-8])
        for f in sys.argv[1:3])
sys.exit(0 if a == b else 1)
EOF
}

# events A: the events an answer's model read (its JSON's "events").
events() {
  python3 - "$1" << 'EOF'
import json, struct, sys, zlib
b = zlib.decompress(open(sys.argv[1], "rb").read())
n = struct.unpack("<I", b[-8:-4])[0]
print(json.loads(b[-8 - n:-8])["events"])
EOF
}

if command -v curl > /dev/null 2>&1; then
  echo "== detail on request: yield, 3 threads x 40 coroutines x 2000 rounds, --pack"
  "$COROTRACER" run --quiet --lossless --pack -o "$T/d.ctrace" -- "$SDKW" yield 3 40 2000 "$T/w" > /dev/null ||
    fail "detail: --pack run: exit $?"
  chunks=$(python3 -c '
import struct, sys
d, at, n = open(sys.argv[1], "rb").read(), 16, 0
while at + 16 <= len(d):
    n += d[at:at + 4] == b"CHK5"
    at += 16 + struct.unpack_from("<I", d, at + 4)[0]
print(n)' "$T/d.ctrace")
  [ "$chunks" -ge 2 ] || fail "detail: the pack trace has $chunks chunks, want several"
  "$COROTRACER" export jsonl "$T/d.ctrace" -o "$T/d.all" -q || fail "detail: export: exit $?"
  # A lane of each thread (the first, a middle and the last coroutine line), and
  # the JSONL of their lines only (the served file stays small: read at once).
  lanes=$("$CTJL" -t coroutine probe_id < "$T/d.all" | sort -n | sed -n '1p;60p;120p' | tr '\n' ,)
  lanes=${lanes%,}
  re=$(echo "$lanes" | sed 's/,/|/g')
  grep -E "^\{\"type\":\"(meta|process|module|end)\"|\"probe_id\":($re)," "$T/d.all" > "$T/d.jsonl"
  start=$("$CTJL" -e ts < "$T/d.all" | sort -n | head -1)
  end=$("$CTJL" -e ts < "$T/d.all" | sort -n | tail -1)
  span=$((end - start))
  # The whole run, and windows from the middle: at the lanes' events a third and two
  # thirds of the way through theirs (a thread's coroutines run in bursts).
  "$CTJL" -e probe_id ts < "$T/d.all" | awk -v l=",$lanes," 'index(l, "," $1 ",") { print $2 }' |
    sort -n > "$T/lane.ts"
  nts=$(wc -l < "$T/lane.ts")
  at1=$(sed -n "$((nts / 3))p" "$T/lane.ts")
  at2=$(sed -n "$((2 * nts / 3))p" "$T/lane.ts")
  q1="t0=0&t1=$((span + 1000000000))"
  q2="t0=$((at1 - start))&t1=$((at1 - start + span / 20))"
  q3="t0=$((at2 - start))&t1=$((at2 - start + span / 20))"
  burst=1
  detail "$T/d.ctrace" "$lanes" "$q1" "$q2" "$q3"
  burst=
  detail "$T/d.jsonl" "$lanes" "$q1"
  blob "$T/d.ctrace.1.det" "$T/d.jsonl.1.det" "$T/d.jsonl" ||
    fail "detail of the whole run: the pack trace's answer is not its JSONL's"
  # A window from the middle: its answer read at least the lanes' events in the window.
  for n in 2 3; do
    eval "q=\$q$n"
    t0=${q#t0=} t0=${t0%%&*} t1=${q#*t1=}
    want=$(awk -v a=$((start + t0)) -v b=$((start + t1)) '$1 >= a && $1 <= b { n++ } END { print n + 0 }' "$T/lane.ts")
    got=$(events "$T/d.ctrace.$n.det")
    [ "$want" -gt 0 ] && [ "$got" -ge "$want" ] ||
      fail "detail of $q: $got events read, the window holds $want of these lanes"
  done
  [ "$fails" -eq 0 ] && echo "   lanes $lanes, $span ns: the whole run's detail = the JSONL's; windows at 1/3, 2/3 of their events read whole"
else
  echo "   (curl not installed: no detail on request)"
fi
check_done
