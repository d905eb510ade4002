// lod-serve.mjs - for bench-html-lod.sh: `serve`'s page in headless Chromium:
// the time to the first drawn timeline (the page's own marks), then, ROUNDS
// times, a 10 ms window of the summarized stretch set as the view, timed from
// the page's detail request to the frame drawn with its answer.
// Usage: node bench/lod-serve.mjs URL [ROUNDS]
import { open } from '../tests/browser/lib.mjs';

const [url, rounds = '3'] = process.argv.slice(2);
const { page, close, ready_ms } = await open(url, { timeout: 600000 });
const m = await page.evaluate(() => window.corotracer.marks);
console.log(`serve: page ready ${ready_ms} ms (timeline drawn at ${Math.round(m.ready - m.start)} ms of the page)`);
const gap = await page.evaluate(() => { const s = window.corotracer.data().summary; return [s.detail_until, s.detail_from]; });
const times = [];
for (let i = 0; i < Number(rounds); i++) {
  const t0 = gap[0] + (gap[1] - gap[0]) * (i + 1) / (Number(rounds) + 1);
  await page.evaluate(([a, b]) => window.corotracer.view(a, b), [t0, t0 + 10e6]);
  await page.waitForFunction(() => { const d = window.corotracer.detail(); return d && d.whole && d.t0 <= d.view[0] && d.t1 >= d.view[1]; },
    null, { timeout: 600000 });
  const d = await page.evaluate(() => window.corotracer.marks.detail);
  times.push(d.drawn - d.asked);
  console.log(`serve: 10 ms window at +${(t0 / 1e6).toFixed(1)} ms: ${d.spans} spans, request to frame ${(d.drawn - d.asked).toFixed(0)} ms`);
}
times.sort((a, b) => a - b);
console.log(`serve: 10 ms window, request to frame, median of ${times.length}: ${times[times.length >> 1].toFixed(0)} ms`);
await close();
