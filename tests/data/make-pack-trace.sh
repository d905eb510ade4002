#!/bin/sh
# make-pack-trace.sh - (re)make tests/data/pack-2026-11.ctrace, the checked-in trace of the
# pack format (docs/ROUTE1.md: `corotracer run`'s default binary trace, hot switches packed
# by the probe), and what tests/test-pack-readers.sh compares every reader of it with:
#   pack-2026-11.jsonl.gz   its `export jsonl` (gzip -n: the same bytes for the same lines)
#   pack-2026-11.report.md  its report, without the Trace line (it names the file read)
# The shape: `sdk-writer switch 2 8 6`, 2 threads of 8 coroutines handed the thread in
# turn for 6 rounds (yields, packed; waits on fds, pointers and coroutines, wakes by a
# coroutine: records), then each returns and is destroyed: 350 events, ~8 KB.
# Run from the repository's top after `make all`; BUILD (default build/default) names
# the build. A new trace only when the format changes on purpose: the old file is what
# old traces look like, and the test's point is that a reader still reads it. When a
# reader's output changes on purpose (the report's wording, a JSONL key), `--outputs`
# remakes the two expected files from the trace as it is, without a new run.
# The target runs from a temporary directory removed after the run, as the old traces'
# did (/ct-fixture-gone): its module lines name a file that is gone, so no reader
# symbolizes its sites, and the report does not change with the build's addresses.
set -eu
B="${BUILD:-build/default}"
DATA=tests/data
[ -x "$B/bin/corotracer" ] && [ -x "$B/tests/lib/sdk-writer" ] || {
  echo "make-pack-trace.sh: build $B first (make all), and run me from the repository's top" >&2
  exit 1
}
# outputs: the expected files from the checked-in trace.
outputs() {
  "$B/bin/corotracer" export jsonl "$DATA/pack-2026-11.ctrace" -o - -q | gzip -9n > "$DATA/pack-2026-11.jsonl.gz"
  "$B/bin/corotracer" report "$DATA/pack-2026-11.ctrace" | grep -v '^- \*\*Trace\*\*' > "$DATA/pack-2026-11.report.md"
}
if [ "${1:-}" = --outputs ]; then
  outputs
  exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/ct-fixture-gone.XXXXXX")
trap 'rm -rf "$T"' EXIT
cp "$B/tests/lib/sdk-writer" "$T/sdk-writer"
# The default run (packs); a run that lost events (a loaded machine) is tried again.
for try in 1 2 3 4 5; do
  "$B/bin/corotracer" run --quiet -o "$T/t.ctrace" -- "$T/sdk-writer" switch 2 8 6 "$T/w" > /dev/null
  "$B/bin/corotracer" export jsonl "$T/t.ctrace" -o "$T/t.jsonl" -q
  grep -q '"type":"end".*"events":'"$(cat "$T/w")"',"harvested":'"$(cat "$T/w")"',"lost":0,' "$T/t.jsonl" && break
  echo "make-pack-trace.sh: run $try lost events, again" >&2
  [ "$try" -lt 5 ] || exit 1
done
rm "$T/sdk-writer"
cp "$T/t.ctrace" "$DATA/pack-2026-11.ctrace"
outputs
echo "make-pack-trace.sh: $DATA/pack-2026-11.ctrace, $(wc -c < "$DATA/pack-2026-11.ctrace") bytes, $(cat "$T/w") events"
