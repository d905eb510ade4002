// sse-client.mjs - a stand-in for an open live page (bench/bench-html-live.sh):
// follows /events and fetches /data whenever a tick announces a newer version.
// Usage: node sse-client.mjs URL   (runs until the stream ends)
import http from 'node:http';
const u = new URL(process.argv[2]), token = u.searchParams.get('token');
let have = 0, fetching = false, ticks = 0, fetches = 0;
const get = (path, onData, onEnd) => http.get({ host: u.hostname, port: u.port, path }, (r) => { r.on('data', onData); r.on('end', onEnd); });
function fetchData() {
  fetching = true;
  get('/data?token=' + token, () => {}, () => { fetching = false; fetches++; });
}
let buf = '';
get('/events?token=' + token, (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf('\n\n')) >= 0) {
    const ev = buf.slice(0, i); buf = buf.slice(i + 2);
    const m = /^data: (.*)$/m.exec(ev);
    if (!m) continue;
    const k = JSON.parse(m[1]);
    ticks++;
    if (k.snapshot > have && !fetching) { have = k.snapshot; fetchData(); }
  }
}, () => { console.log(`ticks ${ticks}, data fetches ${fetches}`); });
