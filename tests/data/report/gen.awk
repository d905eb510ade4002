# gen.awk - compact scenario -> trace JSONL (docs/TRACE_FORMAT.md), for the report tests.
# One command a line; T is in ms from 1000 s of CLOCK_MONOTONIC:
#   meta                           first line of our engine (target_pid 4242)
#   module START END OFFSET PATH   a module line (hex without 0x)
#   create ID T TID [PARENT [SITE]] suspend ID T TID SITE [fd N | ptr HEX | co ID]
#   resume ID T TID                wake ID T TID FROM [SITE] destroy ID T TID
#   exit ID T TID SITE             the final suspend (wait "exit"): it returned
#   A create after a destroy of the same ID is a new coroutine (new station, ev from 0).
#   v1 ID T TID ACTIVE ADDR        an event of a v1 SDK (no kind, no ev)
#   gap ID N                       the next N events of ID are lost (ev jumps)
#   station_end ID EVENTS LOST     end T code N [LOST] | end T signal N NAME [LOST]
#   raw TEXT                       TEXT as it is
function ts(ms) { return sprintf("%.0f", 1000000000000 + ms * 1000000) }
function hex(h) { return "0x" substr("0000000000000000" h, length(h) + 1) }
function head(id, t, tid, active) {
  return sprintf("{\"probe_id\":%s,\"tid\":%s,\"addr\":\"%s\",\"seq\":%d,\"is_active\":%s,\"ts\":%s",
                 id, tid, active == "true" ? hex("0") : hex(site), 2 * (ev[id] + 1), active, ts(t))
}
function event(id, t, tid, active, kind, extra) {
  printf "%s,\"kind\":\"%s\",\"ev\":%d%s}\n", head(id, t, tid, active), kind, ev[id] + 0, extra
  ev[id]++
}
/^#/ || NF == 0 { next }
$1 == "raw" { sub(/^raw /, ""); print; next }
$1 == "meta" { printf "{\"type\":\"meta\",\"format\":\"corotracer-trace\",\"format_version\":1,\"run_id\":\"00ff\",\"host\":\"testbox\",\"engine\":\"corotracer 0.1.0\",\"command\":[\"./app\"],\"engine_pid\":4241,\"target_pid\":4242,\"stations\":64,\"clock\":{\"mono_ns\":%s,\"wall_ns\":1763700000000000000},\"poll_ms\":1000}\n", ts(0); next }
$1 == "module" { printf "{\"type\":\"module\",\"pid\":4242,\"start\":\"%s\",\"end\":\"%s\",\"offset\":\"%s\",\"path\":\"%s\"}\n", hex($2), hex($3), hex($4), $5; next }
$1 == "create" { site = NF > 5 ? $6 : "a000"; ev[$2] = 0; printf "{\"type\":\"coroutine\",\"probe_id\":%s,\"station\":1,\"pid\":4242,\"birth_ts\":%s,\"label\":\"conn\",\"create_site\":\"%s\",\"parent\":0}\n", $2, ts($3), hex(site)
                 event($2, $3, $4, "false", "create", sprintf(",\"site\":\"%s\",\"parent\":%d", hex(site), $5 + 0)); next }
$1 == "suspend" { site = $5; w = ""
                  if ($6 == "fd") w = sprintf(",\"wait\":\"fd\",\"obj\":%d", $7)
                  if ($6 == "ptr") w = sprintf(",\"wait\":\"ptr\",\"obj\":\"%s\"", hex($7))
                  if ($6 == "co") w = sprintf(",\"wait\":\"coroutine\",\"obj\":%d", $7)
                  event($2, $3, $4, "false", "suspend", sprintf(",\"site\":\"%s\"%s", hex(site), w)); next }
$1 == "resume" { event($2, $3, $4, "true", "resume", ""); next }
$1 == "exit" { site = $5; event($2, $3, $4, "false", "suspend", sprintf(",\"site\":\"%s\",\"wait\":\"exit\"", hex(site))); next }
$1 == "wake" { site = NF > 5 ? $6 : "b000"; event($2, $3, $4, "false", "wake", sprintf(",\"site\":\"%s\",\"from\":%d", hex(site), $5)); next }
$1 == "destroy" { site = "c000"; event($2, $3, $4, "false", "destroy", sprintf(",\"site\":\"%s\"", hex(site))); next }
$1 == "gap" { ev[$2] += $3; next }
$1 == "v1" { site = $6; print head($2, $3, $4, $5) "}"; ev[$2]++; next }
$1 == "station_end" { printf "{\"type\":\"station_end\",\"probe_id\":%s,\"station\":1,\"events\":%d,\"harvested\":%d,\"lost\":%d,\"dead\":false}\n", $2, $3, $3 - $4, $4; next }
$1 == "end" { ex = $3 == "code" ? sprintf("{\"code\":%d}", $4) : sprintf("{\"signal\":%d,\"name\":\"%s\",\"core\":false}", $4, $5)
              lost = $3 == "code" ? $5 + 0 : $6 + 0
              printf "{\"type\":\"end\",\"ts\":%s,\"wall_ns\":1763700000900000000,\"exit\":%s,\"events\":100,\"harvested\":%d,\"lost\":%d,\"stations_used\":4,\"untraced_coroutines\":0,\"torn\":0}\n", ts($2), ex, 100 - lost, lost; next }
{ print "gen.awk: bad command: " $0 > "/dev/stderr"; exit 1 }
