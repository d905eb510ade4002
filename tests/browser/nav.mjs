// nav.mjs - the dashboard's navigation and lanes at scale (web/nav.js), for
// tests/test-dashboard-nav.sh.
// Usage: node nav.mjs views PAGE.html FINDINGS.json LIVE_URL
//        node nav.mjs lanes PAGE.html SCREENSHOT.png   (10^4 coroutines conn-N / worker-N)
// Asserts only what the data decides (no timing): views, selections, table rows.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { open, fail } from './lib.mjs';

const [what, html, findingsPath, liveUrl] = process.argv.slice(2);
const url = pathToFileURL(html).href;
const MS = 1e6;
const api = (page, expr) => page.evaluate(expr);
const view = (page) => api(page, () => window.corotracer.view());
const selected = (page) => api(page, () => window.corotracer.selectedIds());
const rows = (page) => page.$$eval('#cotable .row', (rs) => rs.map((r) => Number(r.dataset.id)).sort((x, y) => x - y));
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const center = (v) => (v.t0 + v.t1) / 2;
// The canvas x of time t in view v (the lanes start after the name gutter, nav.js's A.GUT).
async function xOf(page, t) {
  const { left, top, W, gut } = await api(page, () => { const c = document.getElementById('timeline'), b = c.getBoundingClientRect();
    return { left: b.left, top: b.top, W: c.clientWidth, gut: window.corotracer.gutter }; });
  const v = await view(page);
  return { x: left + gut + (t - v.t0) * (W - gut) / (v.t1 - v.t0), y: top + 60 };
}
async function key(page, k) { await page.focus('#timeline'); await page.keyboard.press(k); }
// The hash the page wrote once it holds its current view (it writes it within 200 ms).
async function settledUrl(page) {
  await page.waitForFunction(() => location.hash.slice(1) === window.corotracer.viewHash() && location.hash.length > 1, null, { timeout: 10000 });
  return page.evaluate(() => location.href);
}
// The same view in another page opened on the URL's hash.
async function sameView(a, href) {
  const b = await open(href);
  const [va, vb] = [await view(a), await view(b.page)];
  console.log(`reopened ${href.replace(/\?token=[0-9a-f]+/, '?token=…')}: view ${JSON.stringify(vb)}`);
  if (Math.abs(va.t0 - vb.t0) > 1 || Math.abs(va.t1 - vb.t1) > 1) fail(`the URL's view ${JSON.stringify(vb)} != ${JSON.stringify(va)}`);
  if (!same(await selected(a), await selected(b.page))) fail('the URL does not keep the selection');
  if (await b.page.getAttribute('#selection', 'data-ids') !== (await selected(a)).join(',')) fail('the reopened page does not show its selection');
  if (!same(await api(a, () => window.corotracer.range()), await api(b.page, () => window.corotracer.range()))) fail('the URL does not keep the range');
  if (!same(await rows(a), await rows(b.page))) fail('the reopened page\'s table differs');
  if (!same(await api(a, () => window.corotracer.lanes(50)), await api(b.page, () => window.corotracer.lanes(50)))) fail('the reopened page\'s lanes differ');
  if (b.errors.length) fail('console errors: ' + b.errors.join(' | '));
  await b.close();
}

async function views() {
  const report = JSON.parse(readFileSync(findingsPath, 'utf8')), dur = report.trace.duration_ns;
  const { page, errors, close } = await open(url);
  if ((await api(page, () => typeof window.corotracer.view)) !== 'function') fail('the page has no navigation (window.corotracer.view)');
  // 1. A finding's moment: a lost wakeup's coroutine parked at the end minus its suspended_ns.
  const k = report.findings.findIndex((f) => f.kind === 'lost_wakeup');
  if (k < 0) fail('no lost_wakeup finding');
  const f = report.findings[k], parked = Math.min(...f.coroutines.map((c) => dur - c.suspended_ns));
  await page.click(`.finding[data-index="${k}"]`);
  let v = await view(page);
  console.log(`finding ${k} (parked at +${parked / MS} ms): view +${v.t0 / MS} … +${v.t1 / MS} ms, selection ${await selected(page)}`);
  if (!(v.t0 <= parked && parked <= v.t1)) fail('the view does not contain the finding\'s moment');
  if (v.t1 - v.t0 > dur / 2) fail('the view did not zoom in on the finding');
  if (!same(await selected(page), f.coroutines.map((c) => c.probe_id).sort((x, y) => x - y))) fail('the selection is not the finding\'s coroutines');
  // 2. A range by shift-drag over +0.9 … +1.6 s: coroutine 2 (only before +50 ms) and
  // 1 (parked since +10 ms, no event in it) leave the table; 3 (woken at +1.0, +1.4 s) stays.
  if (!same(await rows(page), [1, 2, 3])) fail(`the table before the range: ${await rows(page)}`);
  await key(page, 'f');
  const a = await xOf(page, 900 * MS), b = await xOf(page, 1600 * MS);
  await page.keyboard.down('Shift');
  await page.mouse.move(a.x, a.y); await page.mouse.down(); await page.mouse.move((a.x + b.x) / 2, a.y); await page.mouse.move(b.x, b.y); await page.mouse.up();
  await page.keyboard.up('Shift');
  const r = await api(page, () => window.corotracer.range());
  console.log(`shift-drag: range ${JSON.stringify(r)}`);
  const px = (await view(page)).t1 - (await view(page)).t0; // a pixel is less than this
  if (!r || Math.abs(r.r0 - 900 * MS) > px / 200 || Math.abs(r.r1 - 1600 * MS) > px / 200) fail('the shift-drag did not select +0.9 … +1.6 s');
  if (!same(await rows(page), [3])) fail(`the coroutines in the range: ${await rows(page)}, not [3]`);
  if ((await page.$$('.finding')).length) fail('the lost wakeup (+10 ms) is still listed in a range after it');
  if (await page.isHidden('#rangecap')) fail('no caption says the tables show a range');
  await page.click('.tabs button[data-tab="sites"]');
  const sites = await page.$$eval('#sitetable .row', (rs) => rs.map((r) => [...r.children].map((c) => c.textContent)));
  console.log(`sites in the range: ${JSON.stringify(sites)}`);
  if (sites.length !== 1 || !sites[0][0].endsWith('3000') || sites[0][2] !== '2' || sites[0][3] !== '300.0 ms' || sites[0][5] !== '1.40 s')
    fail('the site table in the range is not the two suspends of coroutine 3 (300 ms, 1.4 s)');
  await page.click('.tabs button[data-tab="coros"]');
  // A range let go past the canvas's right edge (over the tables) still ends there.
  const c = await xOf(page, 2000 * MS), out = await page.$eval('#right', (e) => e.getBoundingClientRect().left + 100);
  await page.keyboard.down('Shift');
  await page.mouse.move(c.x, c.y); await page.mouse.down(); await page.mouse.move(out, c.y); await page.mouse.up();
  await page.keyboard.up('Shift');
  const r2 = await api(page, () => window.corotracer.range()), v2 = await view(page);
  if (!r2 || Math.abs(r2.r0 - 2000 * MS) > px / 200 || r2.r1 <= v2.t1) fail(`a range let go outside the canvas: ${JSON.stringify(r2)}`);
  if (!same(await rows(page), [3])) fail(`the coroutines from +2 s on: ${await rows(page)}, not [3]`);
  // Esc clears the range first, the selection after.
  await key(page, 'Escape');
  if (await api(page, () => window.corotracer.range())) fail('Esc left the range');
  if (!same(await rows(page), [1, 2, 3])) fail(`the table after Esc: ${await rows(page)}`);
  if (!same(await selected(page), [1])) fail('Esc with a range cleared the selection too');
  if (!(await page.$(`.finding.on[data-index="${k}"]`))) fail('the clicked finding is no longer marked once the range is cleared');
  // 3. Wakes of coroutine 3: N, N, P, the button; G: the stuck coroutine 1's park.
  await page.click('#cotable .row[data-id="3"]');
  await key(page, 'f');
  const steps = [['n', 1000], ['n', 1400], ['p', 1000], ['#nav-next', 1400], ['n', 2900]];
  for (const [s, want] of steps) {
    if (s.startsWith('#')) await page.click(s); else await key(page, s);
    v = await view(page);
    console.log(`${s}: view centred at +${center(v) / MS} ms`);
    if (Math.abs(center(v) - want * MS) > 1e3) fail(`${s} did not land at coroutine 3's wake at +${want} ms`);
  }
  await key(page, 'Escape');
  await key(page, 'g');
  v = await view(page);
  if (Math.abs(center(v) - 10 * MS) > 1e3 || !same(await selected(page), [1])) fail(`G: view at +${center(v) / MS} ms, selection ${await selected(page)}`);
  // 4. The URL: a zoomed view, a selection, a range and a lane search, reopened.
  await page.fill('#range0', '900'); await page.fill('#range1', '1600'); await page.press('#range1', 'Enter');
  await page.fill('#lanesearch', 'conn');
  await page.click('#cotable .row[data-id="3"]', { modifiers: ['Control'] });
  if (!same(await selected(page), [1, 3])) fail('ctrl+click did not add coroutine 3 to the selection');
  await key(page, 'w');
  const href = await settledUrl(page);
  console.log(`URL: ${href.slice(href.indexOf('#'))}`);
  await sameView(page, href);
  await sameView(page, liveUrl + href.slice(href.indexOf('#')));
  // A hostile hash: a window of 16 ns at 1e17 (one float step: a tick loop that
  // never advances), ids and a range that are not numbers, an unknown group.
  const bad = await open(url + '#t0=100000000000000000&t1=100000000000000016&sel=x,-1,99&r=NaN,5&group=%3Cb%3E&open=%00');
  const fitted = await open(url);
  if (!same(await view(bad.page), await view(fitted.page))) fail('a hostile hash changed the view: ' + JSON.stringify(await view(bad.page)));
  if ((await selected(bad.page)).length || await api(bad.page, () => window.corotracer.range())) fail('a hostile hash selected something');
  if (bad.errors.length) fail('console errors with a hostile hash: ' + bad.errors.join(' | '));
  await bad.close(); await fitted.close();
  if (errors.length) fail('console errors: ' + errors.join(' | '));
  await close();
}

async function lanes() {
  const { page, errors, close } = await open(url);
  if ((await api(page, () => typeof window.corotracer.lanes)) !== 'function') fail('the page has no lane groups (window.corotracer.lanes)');
  const all = () => api(page, () => window.corotracer.lanes(1e9));
  let l = await all();
  console.log(`lanes: ${JSON.stringify(l)}`);
  if (!same(l, [{ group: 'conn-*', count: 9900 }, { group: 'worker-*', count: 100 }])) fail('10^4 coroutines are not two collapsed groups by label');
  const t0 = Date.now();
  await page.fill('#lanesearch', 'conn-7777');
  l = await all();
  console.log(`search conn-7777: ${JSON.stringify(l)} (${Date.now() - t0} ms)`);
  if (!same(l, [{ id: 7777 }])) fail('the lane search does not find conn-7777 alone');
  await page.fill('#lanesearch', 'worker');
  l = await all();
  if (l.length !== 100 || !l.every((x) => x.id > 9900)) fail('the lane search "worker" is not the 100 workers, ungrouped');
  await page.fill('#lanesearch', '');
  await page.selectOption('#lanegroup', 'site');
  l = await all();
  console.log(`by site: ${JSON.stringify(l)}`);
  if (l.length !== 1 || l[0].count !== 10000) fail('by site: not one group of 10^4');
  // A click on the group's lane opens it: its members follow it.
  await page.selectOption('#lanegroup', 'label');
  const y = await api(page, () => window.corotracer.laneY(0)), box = await page.$eval('#timeline', (c) => { const b = c.getBoundingClientRect(); return [b.left, b.top]; });
  await page.mouse.click(box[0] + 400, box[1] + y + 5);
  l = await api(page, () => window.corotracer.lanes(4));
  console.log(`after a click on the first group: ${JSON.stringify(l)}`);
  if (!same(l, [{ group: 'conn-*', count: 9900 }, { id: 1 }, { id: 2 }, { id: 3 }])) fail('a click does not open the group');
  await page.screenshot({ path: findingsPath });
  if (errors.length) fail('console errors: ' + errors.join(' | '));
  await close();
}

if (what === 'views') await views(); else if (what === 'lanes') await lanes(); else fail('usage: nav.mjs views|lanes ...');
console.log('ok');
