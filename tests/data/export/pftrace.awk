# pftrace.awk - checks `protoc --decode_raw` output of a Perfetto trace
# written by `corotracer export perfetto`. Prints one "FAIL: ..." line per
# problem, then a summary line:
#   packets P threads T coros C run_begins R susp_begins S flows F instants I
# Checks: the first packet clears incremental state; every track event is on
# a declared track, names interned before use; timestamps never go back;
# begin/end balanced per track (never below zero, zero at the end); every flow
# id starts once and terminates once, after it starts.
function fail(m) { print "FAIL: " m; bad++ }
/^1 \{$/ { depth = 1; npk++; inte = 0; delete f; next }
{
  line = $0; sub(/^ +/, "", line)
}
line ~ /\{$/ {
  split(line, a, " "); path[depth] = a[1]; depth++
  if (depth == 2 && a[1] == "11") { ev = 1; type = 0; track = ""; iid = ""; delete fl; delete tf; nfl = 0; ntf = 0 }
  if (depth == 2 && a[1] == "60") { desc = 1; duuid = ""; kind = "" }
  if (depth == 3 && desc && (a[1] == "3" || a[1] == "4")) kind = a[1]
  if (depth == 3 && path[1] == "12" && a[1] == "2") { en = 1; eniid = ""; }
  next
}
line == "}" {
  depth--
  if (depth == 0) {
    if (npk == 1 && f13 != 1) fail("first packet does not clear incremental state (13: " f13 ")")
    f13 = ""
    next
  }
  if (depth == 1 && path[1] == "11" && ev) {
    ev = 0
    if (!(track in declared)) fail("packet " npk ": track event on undeclared track " track)
    if (type == 1 || type == 3) { if (!(iid in names)) fail("packet " npk ": name iid " iid " not interned") }
    if (type == 1) { open[track]++; if (track + 0 < 4294967296) runs++; else susps++ }
    else if (type == 2) { open[track]--; if (open[track] < 0) fail("packet " npk ": end without begin on track " track) }
    else if (type == 3) instants++
    else fail("packet " npk ": track event type " type)
    if (ts < lastts) fail("packet " npk ": timestamp goes back")
    lastts = ts
    for (k = 1; k <= nfl; k++) { if (fl[k] in started) fail("flow " fl[k] " started twice"); started[fl[k]] = npk; flows++ }
    for (k = 1; k <= ntf; k++) { if (!(tf[k] in started)) fail("flow " tf[k] " terminated before it started"); if (tf[k] in ended) fail("flow " tf[k] " terminated twice"); ended[tf[k]] = 1 }
  }
  if (depth == 1 && path[1] == "60" && desc) {
    desc = 0; declared[duuid] = 1
    if (kind == "4") threads++; else if (kind == "") coros++
  }
  if (depth == 2 && en) { en = 0 }
  next
}
depth == 1 && line ~ /^8: / { ts = substr(line, 4) + 0 }
depth == 1 && line ~ /^13: / { f13 = substr(line, 5) + 0 }
depth == 2 && ev && line ~ /^9: / { type = substr(line, 4) + 0 }
depth == 2 && ev && line ~ /^11: / { track = substr(line, 5) }
depth == 2 && ev && line ~ /^10: / { iid = substr(line, 5) }
depth == 2 && ev && line ~ /^47: / { fl[++nfl] = substr(line, 5) }
depth == 2 && ev && line ~ /^48: / { tf[++ntf] = substr(line, 5) }
depth == 2 && desc && line ~ /^1: / { duuid = substr(line, 4) }
depth == 3 && en && line ~ /^1: / { names[substr(line, 4)] = 1 }
END {
  for (t in open) if (open[t] != 0) fail("track " t ": " open[t] " slices left open")
  for (x in started) if (!(x in ended)) fail("flow " x " never terminates")
  printf "packets %d threads %d coros %d run_begins %d susp_begins %d flows %d instants %d\n",
    npk, threads, coros, runs, susps, flows, instants
}
