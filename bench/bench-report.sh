#!/bin/sh
# bench-report.sh - `corotracer report` throughput (MB/s of wall time and of CPU
# time) and peak RSS on generated traces, against `cat > /dev/null` and `wc -l`
# on the same file in the same run.
# Usage: O=build/x [RUNS=5] [ALIVE=1000] [MODE=ref|ref-sites] [BASE=other/corotracer]
#          sh bench/bench-report.sh [EVENTS...]   (default 1e6 3e6 1e7)
# ALIVE: coroutines alive at a time (ours) or in all (MODE=ref: the reference
# format, a frame address per coroutine; ref-sites: 16 code addresses).
# BASE: a second report binary (e.g. an older build) timed on the same files,
# interleaved, for a ratio that the machine's load cancels out of.
# Ends with verdict lines against the targets (bench/run.sh collects them).
# Wall time is the whole command (start to exit, Markdown to /dev/null); CPU
# time is its user + system time (the shell's `times` for its children).
set -eu
O=${O:-build/default}
runs=${RUNS:-5}
[ $# -gt 0 ] || set -- 1000000 3000000 10000000
gen=$O/bench/bench-report-gen ct=$O/bin/corotracer
[ -x "$gen" ] && [ -x "$ct" ] || { echo "build first: make O=$O $gen $ct" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
now() { date +%s.%N; }
# The CPU seconds (user + system) of this shell's finished children so far,
# from `times` written to FILE (in this shell: a command substitution would
# be a subshell with children of its own).
child_cpu() {
  awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$1"
}
# secs CMD...: wall seconds of one run.
secs() {
  s=$(now); "$@" > /dev/null; e=$(now)
  echo "$s $e" | awk '{ printf "%.4f\n", $2 - $1 }'
}
# report BIN FILE TAG: one run of BIN's report; appends wall, CPU and peak
# RSS (kB, its own VmHWM from --stats) to $tmp/TAG.{wall,cpu,rss}.
report() {
  times > "$tmp/times0"
  s=$(now)
  "$1" report "$2" --stats -o /dev/null 2> "$tmp/stats"
  e=$(now)
  times > "$tmp/times1"
  c0=$(child_cpu "$tmp/times0") c1=$(child_cpu "$tmp/times1")
  echo "$s $e" | awk '{ printf "%.4f\n", $2 - $1 }' >> "$tmp/$3.wall"
  echo "$c0 $c1" | awk '{ printf "%.4f\n", $2 - $1 }' >> "$tmp/$3.cpu"
  sed -n 's/.*peak RSS \([0-9]*\) kB.*/\1/p' "$tmp/stats" >> "$tmp/$3.rss"
}
# summary TAG BYTES NAME: its medians.
summary() {
  w=$(median < "$tmp/$1.wall") c=$(median < "$tmp/$1.cpu") m=$(median < "$tmp/$1.rss")
  echo "$2 $w $c $m" | awk -v name="$3" '{
    printf "  %s: wall %.3f s = %.0f MB/s; CPU %.3f s = %.0f MB/s; peak RSS %.1f MB\n",
      name, $2, $1 / 1e6 / $2, $3, $1 / 1e6 / $3, $4 / 1024
    # The targets (docs/BENCHMARKS.md), for this build only.
    if (name == "report") {
      printf "verdict: report JSONL: target >= 300 MB/s, measured %.0f MB/s: %s\n",
        $1 / 1e6 / $2, $1 / 1e6 / $2 >= 300 ? "met" : "not met"
      printf "verdict: report peak RSS: target <= 100 MB, measured %.1f MB: %s\n",
        $4 / 1024, $4 / 1024 <= 100 ? "met" : "not met"
    } }'
}

for n in "$@"; do
  f=$tmp/trace-$n.jsonl
  "$gen" "$n" "${ALIVE:-1000}" ${MODE:-} > "$f"
  bytes=$(wc -c < "$f")
  cat "$f" > /dev/null # warm the page cache
  rm -f "$tmp"/*.wall "$tmp"/*.cpu "$tmp"/*.rss
  : > "$tmp/cat"; : > "$tmp/wc"
  i=0
  while [ $i -lt "$runs" ]; do
    secs cat "$f" >> "$tmp/cat"
    secs wc -l "$f" >> "$tmp/wc"
    report "$ct" "$f" rep
    [ -z "${BASE:-}" ] || report "$BASE" "$f" base
    i=$((i + 1))
  done
  c=$(median < "$tmp/cat") w=$(median < "$tmp/wc")
  echo "$n $bytes $c $w" | awk -v la="$(cut -d' ' -f1-3 /proc/loadavg)" '{
    printf "events %d, %.0f MB (load average %s): cat %.3f s = %.0f MB/s; wc -l %.3f s = %.0f MB/s\n",
      $1, $2 / 1e6, la, $3, $2 / 1e6 / $3, $4, $2 / 1e6 / $4 }'
  summary rep "$bytes" report
  if [ -n "${BASE:-}" ]; then
    summary base "$bytes" base
    echo "$(median < "$tmp/base.wall") $(median < "$tmp/rep.wall") $(median < "$tmp/base.cpu") $(median < "$tmp/rep.cpu")" |
      awk '{ printf "  base/report: wall time ratio %.2f, CPU time ratio %.2f\n", $1 / $2, $3 / $4 }'
  fi
  rm -f "$f"
done
