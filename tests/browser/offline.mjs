// offline.mjs - the offline dashboard of the demo's trace in Chromium.
// Usage: node offline.mjs PAGE.html FINDINGS.json XSS_LABEL SCREENSHOT.png
// Asserts: no console error, no request but the file itself, a drawn
// timeline, the lost-wakeup finding selects exactly its coroutines (as
// `corotracer report --json` lists them), search by fd finds the coroutine,
// the XSS label shows as text and runs nothing.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { open, fail, canvasInk } from './lib.mjs';

const [html, findingsPath, xss, shot] = process.argv.slice(2);
const report = JSON.parse(readFileSync(findingsPath, 'utf8'));
const url = pathToFileURL(html).href;
const { page, errors, requests, close, ready_ms } = await open(url);
console.log(`page ready in ${ready_ms} ms`);

const ink = await canvasInk(page);
console.log(`timeline: ${ink.ink} of ${ink.total} pixels drawn, ${ink.colours} colours sampled`);
if (ink.ink < ink.total * 0.02 || ink.colours < 4) fail('the timeline canvas is (nearly) blank');

// The first lost-wakeup finding, in the page and in the report's JSON.
const lw = report.findings.findIndex((f) => f.kind === 'lost_wakeup');
if (lw < 0) fail('the report has no lost_wakeup finding: the demo did not strand coroutines');
const want = report.findings[lw].coroutines.map((c) => c.probe_id).sort((a, b) => a - b);
await page.click(`.finding[data-index="${lw}"]`);
const got = (await page.getAttribute('#selection', 'data-ids')).split(',').filter(Boolean).map(Number);
console.log(`lost_wakeup finding: ${want.length} coroutines; selected after the click: ${got.length}`);
if (JSON.stringify(got) !== JSON.stringify(want)) fail(`selection ${got.slice(0, 10)} != finding's ${want.slice(0, 10)}`);
const api = await page.evaluate(() => window.corotracer.selectedIds());
if (JSON.stringify(api) !== JSON.stringify(want)) fail('selectedIds() disagrees with the selection shown');
// The selected coroutines lead the table.
const firstRows = await page.$$eval('#cotable .row', (rs) => rs.slice(0, 5).map((r) => Number(r.dataset.id)));
if (!firstRows.every((id) => want.includes(id))) fail(`the table does not lead with the selection: ${firstRows}`);
await page.screenshot({ path: shot });

// Search by fd: a stranded coroutine and its fd.
const target = report.findings[lw].coroutines.find((c) => c.wait === 'fd');
if (!target) fail('no coroutine of the finding waits on an fd');
await page.fill('#search', `fd:${target.obj}`);
await page.waitForTimeout(100);
const ids = await page.$$eval('#cotable .row', (rs) => rs.map((r) => Number(r.dataset.id)));
console.log(`search fd:${target.obj}: rows ${ids}`);
if (!ids.includes(target.probe_id)) fail(`search fd:${target.obj} does not list coroutine ${target.probe_id}`);
await page.fill('#search', String(target.probe_id));
await page.waitForTimeout(100);
const ids2 = await page.$$eval('#cotable .row', (rs) => rs.map((r) => Number(r.dataset.id)));
if (!ids2.includes(target.probe_id)) fail(`search by id ${target.probe_id} does not find it`);

// The XSS label: shown as text, nothing injected, nothing run.
await page.fill('#search', 'onerror');
await page.waitForTimeout(100);
const labels = await page.$$eval('#cotable .row span:nth-child(2)', (ss) => ss.map((s) => s.textContent));
console.log(`search 'onerror': ${labels.length} rows`);
if (!labels.includes(xss)) fail(`the XSS label is not shown as text: ${JSON.stringify(labels)}`);
if (await page.evaluate(() => window.__xss === 1)) fail('the XSS label ran script');
if ((await page.$$('img')).length) fail('an <img> element was injected');

// Keyboard and mouse: zoom, pan, hover must not throw.
await page.fill('#search', '');
await page.click('#timeline', { position: { x: 700, y: 300 } });
for (const k of ['w', 'w', 'a', 'd', 's', 'f']) await page.keyboard.press(k);
await page.mouse.move(800, 200);
await page.mouse.wheel(0, 200);
await page.click('#theme');
await page.click('.tabs button[data-tab="sites"]');
const siteRows = await page.$$eval('#sitetable .row', (rs) => rs.length);
if (siteRows < 1) fail('the site table is empty');
await page.click('.tabs button[data-tab="coros"]');
await page.click('#theme');

if (errors.length) fail('console errors: ' + errors.join(' | '));
const foreign = requests.filter((u) => u !== url);
if (foreign.length) fail('network requests: ' + foreign.join(' '));
console.log(`requests: ${requests.length} (the file itself); console errors: 0`);
await close();
console.log('ok');
