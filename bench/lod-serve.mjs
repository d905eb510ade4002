// lod-serve.mjs - for bench-serve.sh and bench-html-lod.sh: `serve`'s page in
// headless Chromium: the first paint (the page's first drawn timeline, ms
// from the navigation: its own marks), the time until the whole trace is
// analysed (the data no longer says "analysing"), then, ROUNDS times, a 10 ms
// window of the summarized stretch set as the view, timed from the page's
// detail request to the frame drawn with its answer (and from the view set:
// the page waits 150 ms for the wheel to stop before it asks).
// Prints "paint MS", "whole MS", "window ASKED_MS VIEW_MS" lines, then a summary.
// Usage: node bench/lod-serve.mjs URL [ROUNDS]
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [url, rounds = '3'] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), 'ct-chromium-'));
const args = ['--headless=new', '--disable-background-networking', '--disable-component-update', '--no-first-run'];
if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');
const ctx = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args, viewport: { width: 1600, height: 1000 } });
const page = ctx.pages()[0] || (await ctx.newPage());
const T = { timeout: 600000 };
await page.goto(url);
await page.waitForFunction(() => window.corotracer && window.corotracer.marks.ready, null, T);
const paint = await page.evaluate(() => window.corotracer.marks.ready); // ms since the navigation began
console.log(`paint ${paint.toFixed(0)}`);
await page.waitForFunction(() => { const d = window.corotracer.data(); return d && !d.f.analysing && document.body.dataset.ready === '1'; }, null, T);
console.log(`whole ${(await page.evaluate(() => performance.now())).toFixed(0)}`);
const gap = await page.evaluate(() => { const s = window.corotracer.data().summary; return s.detail_until !== undefined ? [s.detail_until, s.detail_from] : null; });
if (!gap) console.log('no summarized stretch: the page holds every span (no detail to ask)');
for (let i = 0; gap && i < Number(rounds); i++) {
  const t0 = gap[0] + (gap[1] - gap[0]) * (i + 1) / (Number(rounds) + 1);
  const set = await page.evaluate(([a, b]) => { window.corotracer.view(a, b); return performance.now(); }, [t0, t0 + 10e6]);
  await page.waitForFunction(() => { const d = window.corotracer.detail(); return d && d.whole && d.t0 <= d.view[0] && d.t1 >= d.view[1]; }, null, T);
  const d = await page.evaluate(() => window.corotracer.marks.detail);
  console.log(`window ${(d.drawn - d.asked).toFixed(0)} ${(d.drawn - set).toFixed(0)}   (+${(t0 / 1e6).toFixed(1)} ms, ${d.spans} spans)`);
}
await ctx.close();
rmSync(profile, { recursive: true, force: true });
