// short-waits.mjs - the findings panel's "Not judged, short waits" lines
// (tests/test-dashboard-short-waits.sh): the waits under --stuck-ms that no
// finding judges are said in the panel, with the option that would judge them,
// as the report's overview says them.
// Usage: node short-waits.mjs PAGE.html WANT...   (WANT: a line's expected start
//        and end, "START|END"; none: the panel has no such line)
import { pathToFileURL } from 'node:url';
import { open, fail } from './lib.mjs';

const [html, ...want] = process.argv.slice(2);
const { page, errors, close } = await open(pathToFileURL(html).href);
const lines = await page.$$eval('#findings .short-waits', (es) => es.map((e) => e.textContent));
for (const l of lines) console.log('panel: ' + l);
if (lines.length !== want.length) fail(`${lines.length} short-waits lines, want ${want.length}`);
want.forEach((w, i) => {
  const [start, end] = w.split('|');
  if (!lines[i].startsWith(start) || !lines[i].endsWith(end)) fail(`line ${i + 1}: '${lines[i]}', want '${start}…${end}'`);
});
if (errors.length) fail('console errors: ' + errors.join(' | '));
await close();
console.log('ok');
