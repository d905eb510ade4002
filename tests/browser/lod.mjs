// lod.mjs - the whole run drawn at any zoom (docs/DASHBOARD.md "Level of
// detail"), on the page of a trace larger than the span budget.
// Usage: node lod.mjs PAGE_URL [SCREENSHOT_PREFIX]
// Asserts: zoomed out, the coroutine lanes are drawn over the last tenth of
// the coroutines' activity (pixels); zoomed in with the mouse (ctrl+wheel)
// to a window of at most 1 ms at its end, spans are drawn there (pixels, and the page's
// own count of exact spans drawn).
import { open, fail } from './lib.mjs';

const [url, shot] = process.argv.slice(2);
const { page, errors, close, ready_ms } = await open(url, { width: 1600, height: 1900 }); // every lane of 100 in view
console.log(`page ready in ${ready_ms} ms`);
const GUT = 170, AX = 20, TH = 18; // web/dashboard.js's layout

// Pixels of the coroutine lanes between x0 and x1 that are neither the
// background nor an empty lane.
async function laneInk(x0, x1) {
  return page.evaluate(([x0, x1, AX, TH]) => {
    const c = document.getElementById('timeline'), g = c.getContext('2d'), d = window.corotracer.data();
    const s = getComputedStyle(document.documentElement), probe = document.createElement('canvas').getContext('2d');
    const rgb = (v) => { probe.fillStyle = v; probe.fillRect(0, 0, 1, 1); return Array.from(probe.getImageData(0, 0, 1, 1).data.slice(0, 3)).join(); };
    const empty = new Set([rgb(s.getPropertyValue('--bg').trim()), rgb(s.getPropertyValue('--lane').trim()), rgb(s.getPropertyValue('--sel').trim())]);
    const top = AX + 16 + d.threads.length * TH + 16, h = c.height - top;
    const px = g.getImageData(Math.round(x0), top, Math.max(1, Math.round(x1 - x0)), h).data;
    let ink = 0;
    for (let i = 0; i < px.length; i += 4) if (!empty.has([px[i], px[i + 1], px[i + 2]].join())) ink++;
    return { ink, of: px.length / 4 };
  }, [x0, x1, AX, TH]);
}

const info = await page.evaluate(() => {
  const d = window.corotracer.data(), c = document.getElementById('timeline');
  // The end of the coroutines' activity (the program may run on without them).
  const last = d.a.co_last.reduce((x, y) => Math.max(x, y), 0);
  return { dur: d.duration_ns, last, c0: d.counters.t0, W: c.clientWidth, spans: d.summary.spans, dropped: d.summary.spans_dropped };
});
if (!info.dropped) fail('the trace fits the span budget: nothing to summarize');
// fit(): the run with 1 % on each side.
let t0 = Math.min(0, info.c0), t1 = Math.max(info.dur, 1);
const pad = (t1 - t0) * 0.01;
t0 -= pad; t1 += pad;
const xAt = (t) => GUT + (t - t0) * (info.W - GUT) / (t1 - t0);
const whole = await laneInk(xAt(info.last * 0.9), xAt(info.last));
console.log(`whole run (${(info.dur / 1e6).toFixed(1)} ms, coroutines until +${(info.last / 1e6).toFixed(1)} ms): ` +
  `the last tenth's lanes: ${whole.ink} of ${whole.of} pixels drawn`);
if (shot) await page.screenshot({ path: shot + '-out.png' });
if (whole.ink < whole.of * 0.05) fail('zoomed out, the lanes are (nearly) blank over the last tenth of the coroutines\' run');
if (shot) await page.screenshot({ path: shot + '-out.png' });

// Zoom with the mouse at 0.5 ms before their end until the view is <= 1 ms.
const tc = info.last - 5e5, steps = Math.ceil(Math.log((t1 - t0) / 1e6) / 0.8);
const box = await page.locator('#timeline').boundingBox();
await page.mouse.move(box.x + xAt(tc), box.y + AX + 16 + 2 * TH + 40);
await page.keyboard.down('Control');
for (let i = 0; i < steps; i++) { await page.mouse.wheel(0, -400); await page.waitForTimeout(30); }
await page.keyboard.up('Control');
await page.waitForTimeout(100);
const range = await page.textContent('#range');
console.log(`zoomed in ${steps} steps: ${range}`);
const end = await laneInk(GUT + 1, info.W);
console.log(`the window at the end: ${end.ink} of ${end.of} lane pixels drawn`);
if (end.ink < end.of * 0.05) fail('zoomed in at the end of the run, the lanes are (nearly) blank');
const drawn = await page.evaluate(() => window.corotracer.drawn ? window.corotracer.drawn() : null);
console.log(`drawn: ${JSON.stringify(drawn)}`);
if (!drawn || drawn.spans < 10 || drawn.level !== 'exact') fail('no exact spans drawn in the last 1 ms');
if (shot) await page.screenshot({ path: shot + '-in.png' });
if (errors.length) fail('console errors: ' + errors.join(' | '));
await close();
console.log('ok');
