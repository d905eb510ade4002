#!/bin/sh
# house.sh - the source tree drawn as a house, computed from its #include lines:
# rooms (the folders of src/ and include/), floors (layers: a file includes only
# rooms on floors below its own), arrows (includes between rooms), the arrows that
# run back up or across, and the circles (files that include each other through
# a chain, and whether the chain stays in one room). docs/ARCHITECTURE.md "Layers".
#
#   sh scripts/house.sh            print the house
#   sh scripts/house.sh --check    also exit 1 when an arrow runs back up or a
#                                  circle spans rooms (tests/test-house.sh)
#
# Run from the repository's root. POSIX sh and awk only (CI's fresh Debian).
set -eu

check=0
[ "${1:-}" = --check ] && check=1

# The floors, top first: "floor wing room...". A room includes rooms on lower
# floors only; the writer's wing (probe, engine) and the readers' wing (from the
# trace file down to the exports) never include each other: only the rooms of
# both wings compose them (run, cli) or serve them (format, common, include).
FLOORS='
7 both cli
6 both run
5 reader ship
4 reader html export
3 reader analysis rip
2 reader symbolize
2 writer engine probe
1 both format
0 both common include
'

# One "file line included" row per quoted #include of src/ (tabs between).
files=$(find src -name '*.[ch]' | LC_ALL=C sort)
# shellcheck disable=SC2086
grep -n '^#include "' $files | sed 's/:\([0-9]*\):#include "\([^"]*\)".*/	\1	\2/' |
  LC_ALL=C awk -F '\t' -v check="$check" -v floors="$FLOORS" '
function exists(p,   r, line) { r = (getline line < p) >= 0; close(p); return r }
function resolve(from, inc,   d) {
  if (inc ~ /\//) return exists("src/" inc) ? "src/" inc : "include/" inc
  d = from; sub(/\/[^\/]*$/, "", d)
  return exists(d "/" inc) ? d "/" inc : "include/" inc
}
function room(p,   a) {
  split(p, a, "/"); return a[1] == "include" ? "include" : a[2]
}
function module(p) { sub(/\.[ch]$/, "", p); return p }
# Tarjan: the strongly connected parts of the module graph.
function visit(v,   i, w, n, members) {
  idx[v] = low[v] = ++counter; stack[++sp] = v; on[v] = 1
  for (i = 1; i <= nout[v]; i++) {
    w = out[v, i]
    if (!(w in idx)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
    else if (on[w] && idx[w] < low[v]) low[v] = idx[w]
  }
  if (low[v] == idx[v]) {
    n = 0; members = ""
    do { w = stack[sp--]; on[w] = 0; n++; members = w " " members; rooms_of[w] } while (w != v)
    if (n > 1) circles[++ncircles] = members
  }
}
BEGIN {
  nf = split(floors, fl, "\n")
  for (i = 1; i <= nf; i++) {
    if (fl[i] == "") continue
    k = split(fl[i], w, " ")
    for (j = 3; j <= k; j++) { floor[w[j]] = w[1]; wing[w[j]] = w[2] }
    order[++nfloors] = fl[i]
  }
}
{
  to = resolve($1, $3); a = room($1); b = room(to); present[a]; present[b]
  if (!(a in floor)) { printf "house: %s: room %s is on no floor (scripts/house.sh FLOORS)\n", $1, a; bad = 1 }
  m = module($1); t = module(to)
  if (m != t && !((m, t) in seen)) { seen[m, t] = 1; out[m, ++nout[m]] = t; mods[m]; mods[t] }
  if (a == b) next
  arrows[a " -> " b]++
  up = floor[b] >= floor[a] || (wing[a] != "both" && wing[b] != "both" && wing[a] != wing[b])
  if (!up) next
  back[++nback] = sprintf("  %s -> %s   %s:%s %s", a, b, $1, $2, $3)
  backrooms[a " -> " b] = 1
}
END {
  for (m in mods) if (!(m in idx)) visit(m)
  nrooms = 0; for (r in present) { nrooms++; if (!(floor[r] in seenfl)) { seenfl[floor[r]]; nfl++ } }
  narrows = 0; for (r in arrows) narrows++
  nbackarrows = 0; for (r in backrooms) nbackarrows++
  cross = 0
  for (i = 1; i <= ncircles; i++) {
    k = split(circles[i], w, " "); one = 1
    for (j = 1; j <= k; j++) if (room(w[j] ".c") != room(w[1] ".c")) one = 0
    inroom[i] = one; if (!one) cross++
  }
  printf "house: %d rooms on %d floors, %d arrows, %d running back up or across (%d includes), %d circles (%d spanning rooms)\n",
    nrooms, nfl, narrows, nbackarrows, nback, ncircles, cross
  print "floors (top first: floor, wing, rooms):"
  for (i = 1; i <= nfloors; i++) print "  " order[i]
  print "arrows (includes between rooms):"
  cmd = "LC_ALL=C sort"
  for (r in arrows) printf "  %s %d\n", r, arrows[r] | cmd
  close(cmd)
  print "back up or across:"
  for (i = 1; i <= nback; i++) print back[i] | cmd
  close(cmd)
  print "circles (files including each other through a chain):"
  for (i = 1; i <= ncircles; i++) printf "  %s%s\n", circles[i], inroom[i] ? "(in one room)" : "(SPANS ROOMS)" | cmd
  close(cmd)
  if (check && (nback || cross || bad)) exit 1
  exit bad
}'
