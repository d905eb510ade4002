// paint.mjs - first paint and time to an interactive timeline of a page in
// Chromium (bench/bench-html.sh), with the page's own marks of its phases
// (ms from navigation: script start, data blocks parsed, inflated, decoded,
// ready). Usage: node paint.mjs PAGE.html RUNS
import { pathToFileURL } from 'node:url';
import { open } from './lib.mjs';

const [html, runs = '3'] = process.argv.slice(2);
for (let i = 0; i < Number(runs); i++) {
  const { page, errors, close } = await open(pathToFileURL(html).href);
  const t = await page.evaluate(() => {
    const p = Object.fromEntries(performance.getEntriesByType('paint').map((e) => [e.name, e.startTime]));
    return { fp: p['first-paint'], fcp: p['first-contentful-paint'], ready: window.corotracer.readyMs, m: window.corotracer.marks };
  });
  // Interactive: a zoom step redraws; time one.
  const zoom = await page.evaluate(() => {
    const t0 = performance.now();
    document.dispatchEvent(new KeyboardEvent('keydown', { key: 'w' }));
    return performance.now() - t0;
  });
  const phases = ['start', 'parsed', 'inflated', 'decoded'].filter((k) => t.m && t.m[k] !== undefined).map((k) => `${k} ${t.m[k].toFixed(0)}`).join(', ');
  console.log(`first-paint ${t.fp.toFixed(0)} ms, first-contentful-paint ${t.fcp.toFixed(0)} ms, timeline drawn (interactive) ${t.ready.toFixed(0)} ms, one zoom redraw ${zoom.toFixed(1)} ms (${phases})${errors.length ? ', ERRORS ' + errors : ''}`);
  await close();
}
