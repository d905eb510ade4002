// lod-serve.mjs - for bench-serve.sh and bench-html-lod.sh: `serve`'s page in
// headless Chromium: the first paint (the page's first drawn timeline, ms
// from the navigation: its own marks), the time until the whole trace is
// analysed (the data no longer says "analysing"), then, ROUNDS times, a 10 ms
// window of the summarized stretch set as the view, timed from the page's
// detail request to the frame drawn with its answer (and from the view set:
// the page waits 150 ms for the wheel to stop before it asks).
// Prints "paint MS", "whole MS", "window ASKED_MS VIEW_MS" lines, then a summary.
// Usage: node bench/lod-serve.mjs URL [ROUNDS]
import { open } from '../tests/browser/lib.mjs';

const [url, rounds = '3'] = process.argv.slice(2);
const T = { timeout: 180000 };
const { page, close } = await open(url, T); // the first data shown, its tables too
const paint = await page.evaluate(() => window.corotracer.marks.ready); // ms since the navigation began
console.log(`paint ${paint.toFixed(0)}`);
await page.waitForFunction(() => { const d = window.corotracer.data(); return d && !d.f.analysing && document.body.dataset.ready === '1'; }, null, T);
console.log(`whole ${(await page.evaluate(() => performance.now())).toFixed(0)}`);
const gap = await page.evaluate(() => { const s = window.corotracer.data().summary; return s.detail_until !== undefined ? [s.detail_until, s.detail_from] : null; });
if (!gap) console.log('no summarized stretch: the page holds every span (no detail to ask)');
for (let i = 0; gap && i < Number(rounds); i++) {
  const t0 = gap[0] + (gap[1] - gap[0]) * (i + 1) / (Number(rounds) + 1);
  // The view through the URL's hash (web/nav.js applies an edited one; its window.corotracer.view only reads).
  const set = await page.evaluate(([a, b]) => { location.hash = 't0=' + Math.round(a) + '&t1=' + Math.round(b); return performance.now(); }, [t0, t0 + 10e6]);
  await page.waitForFunction(() => { const d = window.corotracer.detail(); return d && d.whole && d.t0 <= d.view[0] && d.t1 >= d.view[1]; }, null, T);
  const d = await page.evaluate(() => window.corotracer.marks.detail);
  console.log(`window ${(d.drawn - d.asked).toFixed(0)} ${(d.drawn - set).toFixed(0)}   (+${(t0 / 1e6).toFixed(1)} ms, ${d.spans} spans)`);
}
await close();
