// live.mjs - the live view of `corotracer run --serve` in Chromium.
// Usage: node live.mjs URL DEMO_PORT SCREENSHOT.png ENGINE_PID
// Asserts: requests without the token, with a wrong one or with a foreign
// Host header get 403, and no reply carries a CORS header; the page loads
// with no console error and talks to nothing but its own origin; while
// redis-benchmark drives the demo server into the lost wakeup, the page's
// stuck-coroutine count rises.
import http from 'node:http';
import { spawn } from 'node:child_process';
import { open, fail, canvasInk } from './lib.mjs';

const [url, demoPort, shot, enginePid] = process.argv.slice(2);
const u = new URL(url);

function get(path, host) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: u.hostname, port: u.port, path, headers: host ? { Host: host } : {} }, (res) => {
      res.resume();
      res.on('end', () => resolve(res));
    });
    req.on('error', reject);
  });
}
const token = u.searchParams.get('token');
const checks = [
  ['/', null, 403, 'no token'],
  ['/?token=' + '0'.repeat(32), null, 403, 'a wrong token'],
  ['/?token=' + token, `evil.example:${u.port}`, 403, 'a foreign Host (DNS rebinding)'],
  ['/?token=' + token, `127.0.0.1:${Number(u.port) + 1}`, 403, 'another port in Host'],
  ['/data?token=' + token, `evil.example`, 403, 'a foreign Host on /data'],
  ['/?token=' + token, null, 200, 'the token'],
  ['/?token=' + token, `localhost:${u.port}`, 200, 'Host localhost'],
  ['/nothing?token=' + token, null, 404, 'an unknown path'],
];
for (const [path, host, want, what] of checks) {
  const res = await get(path, host);
  if (res.statusCode !== want) fail(`${what}: HTTP ${res.statusCode}, want ${want}`);
  if (Object.keys(res.headers).some((h) => h.startsWith('access-control-'))) fail(`${what}: a CORS header was sent`);
}
console.log(`http: ${checks.length} requests answered as expected, no CORS header`);

const { page, errors, requests, close, ready_ms } = await open(url);
console.log(`live page ready in ${ready_ms} ms`);
const stuck = async () => Number(await page.textContent('#stat-stuck'));
await page.waitForFunction(() => /^\d+$/.test(document.getElementById('stat-stuck').textContent), null, { timeout: 10000 });
const before = await stuck();
console.log(`stuck before the load: ${before}`);
const bench = spawn('timeout', ['-k', '2', '6', 'redis-benchmark', '-h', '127.0.0.1', '-p', demoPort, '-c', '50', '-n', '2000',
  '-k', '0', '-t', 'ping', '--csv'], { stdio: 'ignore' });
const seen = [before];
let after = before;
for (let i = 0; i < 120 && after <= before; i++) {
  await page.waitForTimeout(250);
  after = await stuck();
  if (after !== seen[seen.length - 1]) seen.push(after);
}
console.log(`stuck on the page over time: ${seen.join(' -> ')}`);
if (after <= before) fail('the stuck-coroutine count did not rise while the program ran');
await new Promise((r) => bench.on('exit', r));
// Let the snapshot catch up (every 2 s), then the timeline shows them.
await page.waitForTimeout(4500);
const ink = await canvasInk(page);
if (ink.ink < ink.total * 0.02) fail('the live timeline is blank');
const drops = await page.textContent('#stat-drops');
console.log(`timeline drawn (${ink.ink} pixels); dropped ticks shown: ${drops}`);
await page.screenshot({ path: shot });
// The end of the run: the page keeps its data, now final.
process.kill(Number(enginePid), 'SIGTERM');
await page.waitForFunction(() => document.getElementById('live-text').textContent === 'run ended', null, { timeout: 20000 });
await page.waitForFunction(() => [...document.querySelectorAll('.finding[data-kind="lost_wakeup"] .sev')].some((e) => e.textContent === 'error'),
  null, { timeout: 20000 }).catch(() => fail('after the end, no lost_wakeup finding of severity error on the page'));
const inkEnd = await canvasInk(page);
if (inkEnd.ink < inkEnd.total * 0.02) fail('the timeline is blank after the end');
console.log('after SIGTERM: "run ended", the lost_wakeup finding (error) shown, timeline drawn');
await page.screenshot({ path: shot.replace(/\.png$/, '-ended.png') });
if (errors.length) fail('console errors: ' + errors.join(' | '));
const foreign = requests.filter((r) => new URL(r).origin !== u.origin);
if (foreign.length) fail('requests to other origins: ' + foreign.join(' '));
console.log(`requests: ${requests.length}, all to ${u.origin}; console errors: 0`);
await close();
console.log('ok');
