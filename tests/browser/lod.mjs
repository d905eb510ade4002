// lod.mjs - the whole run drawn at any zoom (docs/DASHBOARD.md "Level of
// detail"), on the page of a trace larger than the span budget.
// Usage: node lod.mjs PAGE_URL [SCREENSHOT_PREFIX]   (a file:// page, or `serve`'s URL)
// Asserts: zoomed out, the coroutine lanes are drawn over the last tenth of
// the coroutines' activity (pixels); zoomed in with the mouse (ctrl+wheel)
// to a window of at most 1 ms at its end, spans are drawn there (pixels, and
// the page's own count of exact spans drawn); zoomed in to 1 ms in the
// middle of the stretch whose spans the page does not hold: the summary is
// drawn there (and its wake ticks around a wake of the summary), and a served page asks for the detail (GET /detail) and draws
// exact spans (in the lanes with events in the window); a detail request with a bad parameter gets 400 and one line;
// offline, the coroutines grouped by label: the group's lane drawn over the summarized stretch.
import http from 'node:http';
import { open, fail } from './lib.mjs';

const [url, shot] = process.argv.slice(2);
// A served page: its first answer of /data is held until the run's last
// tick has come (the stream then closes), so that the page must fetch the
// whole data it announced after a fetch under way (it stayed "analysing").
const holdFirst = async (page) => {
  let first = true;
  await page.route('**/data?*', async (route) => {
    if (!first) return route.continue();
    first = false;
    const response = await route.fetch();
    await page.waitForFunction(() => document.getElementById('live-box').classList.contains('ended'), null, { timeout: 300000 });
    await route.fulfill({ response });
  });
};
const { page, errors, close, ready_ms } = await open(url, { width: 1600, height: 1900, timeout: 300000, // every lane of 100 in view; a served page reads the trace first, slow on a loaded machine
  before: url.startsWith('http') ? holdFirst : null });
// Interactive: from the navigation to the answer to the first input (a key
// that zooms, then the frame after it), on the page's own clock (ms since
// the navigation); then where the time went, by the page's marks.
await page.focus('#timeline');
await page.keyboard.press('w');
const t = await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r({ now: performance.now(), marks: window.corotracer.marks }))));
await page.keyboard.press('f');
const mk = t.marks, ms = (k) => mk[k] === undefined ? '-' : mk[k].toFixed(0);
console.log(`page ready in ${ready_ms} ms; interactive in ${t.now.toFixed(0)} ms (marks, ms from the navigation: script ${ms('start')}, ` +
  `blocks parsed ${ms('parsed')}, inflated ${ms('inflated')}, decoded ${ms('decoded')}, prepared ${ms('prepared')}, first draw ${ms('ready')}, tables ${ms('tables')})`);
// A served page shows the trace's first part first ("analysing"): the whole one follows.
await page.waitForFunction(() => !window.corotracer.data().f.analysing, null, { timeout: 300000 });
const GUT = 170, AX = 20, TH = 18; // web/dashboard.js's layout

// Pixels between x0 and x1 that are neither the background nor an empty
// lane: of the coroutine lanes (those on the canvas), or of the h rows from y0.
async function laneInk(x0, x1, y0, h) {
  return page.evaluate(([x0, x1, y0, h, AX, TH]) => {
    const c = document.getElementById('timeline'), g = c.getContext('2d'), d = window.corotracer.data();
    const s = getComputedStyle(document.documentElement), probe = document.createElement('canvas').getContext('2d');
    const rgb = (v) => { probe.fillStyle = v; probe.fillRect(0, 0, 1, 1); return Array.from(probe.getImageData(0, 0, 1, 1).data.slice(0, 3)).join(); };
    const empty = new Set([rgb(s.getPropertyValue('--bg').trim()), rgb(s.getPropertyValue('--lane').trim()), rgb(s.getPropertyValue('--sel').trim())]);
    // The coroutine lanes: as many rows as there are lanes (a group is one), of 14 px.
    const top = y0 ?? AX + 16 + d.threads.length * TH + 16, rows = window.corotracer.lanes(1e9).length * 14;
    const px = g.getImageData(Math.round(x0), Math.round(top), Math.max(1, Math.round(x1 - x0)), h ?? Math.min(c.height - top, rows)).data;
    const W = Math.max(1, Math.round(x1 - x0)), cols = new Array(W).fill(0);
    let ink = 0;
    for (let i = 0; i < px.length; i += 4) if (!empty.has([px[i], px[i + 1], px[i + 2]].join())) { ink++; cols[(i / 4) % W] = 1; }
    return { ink, of: px.length / 4, cols };
  }, [x0, x1, y0, h, AX, TH]);
}

const info = await page.evaluate(() => {
  const d = window.corotracer.data(), c = document.getElementById('timeline');
  // The end of the coroutines' activity (the program may run on without them).
  const last = d.a.co_last.reduce((x, y) => Math.max(x, y), 0);
  return { dur: d.duration_ns, last, gap: [d.summary.detail_until, d.summary.detail_from], c0: d.counters.t0, W: c.clientWidth, spans: d.summary.spans, dropped: d.summary.spans_dropped };
});
if (!info.dropped) fail('the trace fits the span budget: nothing to summarize');
// fit(): the run with 1 % on each side.
let t0 = Math.min(0, info.c0), t1 = Math.max(info.dur, 1);
const pad = (t1 - t0) * 0.01;
t0 -= pad; t1 += pad;
const xAt = (t) => GUT + (t - t0) * (info.W - GUT) / (t1 - t0);
const whole = await laneInk(xAt(info.last * 0.9), xAt(info.last));
console.log(`whole run (${(info.dur / 1e6).toFixed(1)} ms, coroutines until +${(info.last / 1e6).toFixed(1)} ms, exact spans until +${(info.gap[0] / 1e6).toFixed(2)} ms and from +${(info.gap[1] / 1e6).toFixed(2)} ms): ` +
  `the last tenth's lanes: ${whole.ink} of ${whole.of} pixels drawn`);
if (shot) await page.screenshot({ path: shot + '-out.png' });
if (whole.ink < whole.of * 0.05) fail('zoomed out, the lanes are (nearly) blank over the last tenth of the coroutines\' run');
if (shot) await page.screenshot({ path: shot + '-out.png' });

// Zooms with the mouse from the whole run at time t until the view is <= 1 ms.
async function zoomAt(t) {
  await page.keyboard.press('Escape');
  await page.focus('#timeline');
  await page.keyboard.press('f'); // fit: the whole run, as xAt assumes
  const steps = Math.ceil(Math.log((t1 - t0) / 1e6) / 0.8), box = await page.locator('#timeline').boundingBox();
  await page.mouse.move(box.x + xAt(t), box.y + AX + 16 + 2 * TH + 40);
  await page.keyboard.down('Control');
  for (let i = 0; i < steps; i++) { await page.mouse.wheel(0, -400); await page.waitForTimeout(30); }
  await page.keyboard.up('Control');
  await page.waitForTimeout(100);
  return page.textContent('#range');
}
// Before the coroutines' last event by 3 pixels of the fitted view (the
// mouse lands on a whole pixel: 5 ms wide at 10^8 events): the wheel keeps
// that time under the mouse, near the right edge, so the window holds the
// run's last stretch of switches however short it was (under --lossless a
// loaded machine stalls the program on a full ring, and its threads may run
// one after the other: the last stretch can be a fraction of a millisecond).
console.log(`zoomed in at the end: ${await zoomAt(info.last - 3 * (t1 - t0) / (info.W - GUT))}`);
const end = await laneInk(GUT + 1, info.W);
console.log(`the window at the end: ${end.ink} of ${end.of} lane pixels drawn`);
if (end.ink < end.of * 0.05) fail('zoomed in at the end of the run, the lanes are (nearly) blank');
const drawn = await page.evaluate(() => window.corotracer.drawn ? window.corotracer.drawn() : null);
console.log(`drawn: ${JSON.stringify(drawn)}`);
if (!drawn || drawn.spans < 10 || drawn.level !== 'exact') fail('no exact spans drawn in the last 1 ms');
if (shot) await page.screenshot({ path: shot + '-in.png' });

// The middle of the stretch without exact spans in the page, or, when no
// thread runs there (a loaded machine may run the threads one after the
// other, and the lanes are then rightly blank), the time nearest it around
// which the summary's coroutines run the most (by 50 us bins, over 1.2 ms
// clipped to the stretch, which may be narrower).
const mid = await page.evaluate(() => {
  const D = window.corotracer.data(), a = D.a, [g0, g1] = D.gap, B = 5e4, n = Math.ceil((g1 - g0) / B), run = new Float64Array(n);
  for (let k = 0; k < a.lod_run.length; k++) {
    const b = Math.floor((D.lodT[k] - g0) / B);
    if (b >= 0 && b < n) run[b] += a.lod_run[k];
  }
  let best = null, score = 0;
  for (let b = 0; b < n; b++) {
    let s = 0;
    for (let j = Math.max(0, b - 12); j <= Math.min(n - 1, b + 12); j++) s += run[j];
    const t = g0 + (b + 0.5) * B;
    if (s > score || (s === score && best !== null && Math.abs(t - (g0 + g1) / 2) < Math.abs(best - (g0 + g1) / 2))) { best = t; score = s; }
  }
  return best;
});
if (mid === null) fail('the summary has no stretch in which a coroutine runs between detail_until and detail_from');
console.log(`zoomed in at +${(mid / 1e6).toFixed(1)} ms: ${await zoomAt(mid)}`);
const served = url.startsWith('http');
if (served) // the detail of this view (not of one the wheel went through)
  await page.waitForFunction(() => { const d = window.corotracer.detail(); return d && d.whole && d.t0 <= d.view[0] && d.t1 >= d.view[1]; },
    null, { timeout: 300000 }).catch(() => {});
const m = await page.evaluate(() => ({ drawn: window.corotracer.drawn(), detail: window.corotracer.marks.detail || null }));
const ink = await laneInk(GUT + 1, info.W);
console.log(`the window in the middle: ${ink.ink} of ${ink.of} lane pixels drawn; drawn ${JSON.stringify(m.drawn)}; detail ${JSON.stringify(m.detail)}`);
if (ink.ink < ink.of * 0.05) fail('zoomed in within the summarized stretch, the lanes are (nearly) blank');
if (!served && m.drawn.lod < 100) fail('the offline page draws no summary where it holds no exact spans');
// No wake edge is held there: the summary's wakes are ticks on the lanes.
// Where they fall depends on the run: the view of the URL's hash (0.5 ms)
// around the summary's wake nearest the middle of the stretch.
if (!served) {
  const tw = await page.evaluate(([AX, TH]) => {
    const C = window.corotracer, D = C.data(), a = D.a, mid = (D.gap[0] + D.gap[1]) / 2;
    const rows = Math.floor((document.getElementById('timeline').clientHeight - (AX + 16 + D.threads.length * TH + 16)) / 14);
    let best = null;
    for (const l of C.lanes(rows)) { // the entries of the coroutine lanes on the canvas
      const i = l.id === undefined ? undefined : D.idOf.get(l.id);
      if (i === undefined) continue;
      for (let k = a.lod_lane0[i]; k < a.lod_lane0[i + 1]; k++)
        if (a.lod_wk[k] && D.lodT[k] > D.gap[0] && D.lodT[k] < D.gap[1] && (best === null || Math.abs(D.lodT[k] - mid) < Math.abs(best - mid))) best = D.lodT[k];
    }
    return best;
  }, [AX, TH]);
  if (tw === null) {
    if (!process.env.CT_BENCH) fail('the summary counts no wake between detail_until and detail_from: the test cannot check its ticks');
  } else {
    await page.evaluate((tw) => { // the view only: the hash's other keys (the grouping) stay
      const p = new URLSearchParams(location.hash.slice(1));
      p.set('t0', Math.round(tw - 2.5e5)); p.set('t1', Math.round(tw + 2.5e5));
      location.hash = p.toString();
    }, tw);
    await page.waitForFunction((tw) => { const v = window.corotracer.view(); return v.t0 < tw && v.t1 > tw && v.t1 - v.t0 < 1e6; }, tw);
    const w = await page.evaluate(() => window.corotracer.drawn());
    console.log(`a wake of the summary at +${(tw / 1e6).toFixed(3)} ms: ${await page.textContent('#range')}; drawn ${JSON.stringify(w)}`);
    if (w.level === 'exact' || !(w.wakes > 0)) fail('zoomed in on a wake of the summarized stretch, no wake tick drawn (corotracer.drawn().wakes)');
  }
}
if (!served) { // a group's lane, zoomed out: its members' summary where the page holds no spans of theirs
  await page.keyboard.press('Escape');
  await page.focus('#timeline');
  await page.keyboard.press('f');
  await page.selectOption('#lanegroup', 'label');
  const lanes = await page.evaluate(() => window.corotracer.lanes(100)), r = lanes.findIndex((l) => l.group !== undefined);
  if (r < 0) fail(`grouped by label, no group lane: ${JSON.stringify(lanes.slice(0, 5))}`);
  const y = await page.evaluate((r) => window.corotracer.laneY(r), r), w = info.gap[1] - info.gap[0];
  const x0 = xAt(info.gap[0] + w * 0.05), x1 = xAt(info.gap[1] - w * 0.05);
  const g = await laneInk(x0, x1, y + 2, 8);
  // The group's members run on the threads: where a thread row is drawn, so
  // is the group (on a loaded machine the threads may run apart, leaving a
  // stretch where no coroutine runs, and the group rightly blank).
  const nthreads = await page.evaluate(() => window.corotracer.data().threads.length);
  const th = await laneInk(x0, x1, AX + 16, nthreads * TH);
  let busy = 0, both = 0;
  th.cols.forEach((v, i) => { busy += v; both += v & g.cols[i]; });
  console.log(`group lane ${JSON.stringify(lanes[r])} over the summarized stretch: ${g.ink} of ${g.of} pixels drawn; ` +
    `in ${both} of the ${busy} columns where a thread runs`);
  if (shot) await page.screenshot({ path: shot + '-group.png' });
  if (busy < th.cols.length * 0.2 || both < busy * 0.9) fail('a group\'s lane is (partly) blank where its members are summarized');
}
// A served page's detail requests that a newer one superseded get 503 (docs/
// DASHBOARD.md "Detail on request": the wheel's views on a loaded machine);
// Chromium logs each as a failed resource. Any other error counts.
const real = errors.filter((e) => !(url.startsWith('http') && /status of 503/.test(e)));
if (real.length) fail('console errors: ' + real.join(' | '));
await close();
console.log('ok');
