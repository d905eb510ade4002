// waits.mjs - the wait kinds in the page (tests/test-dashboard-waits.sh):
// a join (a wait on a coroutine) and a final suspend (an exit) read as such
// in the timeline's tooltips and the coroutine table, not as a pointer, and a
// closed join span is not taken for one open until the end.
// Usage: node waits.mjs PAGE.html
import { pathToFileURL } from 'node:url';
import { open, fail } from './lib.mjs';

const [html] = process.argv.slice(2);
const url = pathToFileURL(html).href;
const { page, errors, close } = await open(url);
// Every span's tooltip, with its coroutine's id, as the page writes them.
const spans = await page.evaluate(() => {
  const d = window.corotracer.data(), out = [];
  for (let k = 0; k < d.a.sp_t0.length; k++) out.push({ id: d.a.co_id[d.a.sp_coro[k]], text: window.corotracer.spanText(k) });
  return out;
});
const of = (id) => spans.filter((s) => s.id === id).map((s) => s.text);
for (const s of spans) console.log(`coroutine ${s.id}: ${s.text.split('\n').slice(1).join(' | ')}`);
// 1 joins 2 (woken when 2 returns), then joins 3 for good.
const join2 = of(1).filter((t) => t.includes('waits on coroutine 2'));
if (join2.length !== 1) fail('coroutine 1: no span waiting on coroutine 2');
if (join2[0].includes('until the end')) fail('the closed join on coroutine 2 is drawn as open until the end');
const join3 = of(1).filter((t) => t.includes('waits on coroutine 3'));
if (join3.length !== 1 || !join3[0].includes('until the end')) fail('coroutine 1: its last join (on 3) is not open until the end');
// 2 returned: its final suspend is an exit, no object.
const exit2 = of(2).filter((t) => t.includes('\nsuspended '));
if (!exit2.length || !exit2.every((t) => t.includes('returned') && !t.includes('waits on'))) fail('coroutine 2: its exit is not shown as returned');
if (spans.some((s) => s.text.includes('ptr 0x'))) fail('a wait shown as a pointer in a trace of joins and exits');
// The table's wait column: 1 waits on coroutine 3; 2 returned (not suspended on anything).
const rows = await page.$$eval('#cotable .row', (rs) => rs.map((r) => [Number(r.dataset.id), r.children[3].textContent]));
console.log('table waits: ' + JSON.stringify(rows));
const w1 = rows.find(([id]) => id === 1);
if (!w1 || w1[1] !== 'coroutine 3') fail(`table: coroutine 1 waits on '${w1 && w1[1]}', not 'coroutine 3'`);
if (rows.some(([, w]) => w.startsWith('ptr'))) fail('table: a wait shown as a pointer');
if (errors.length) fail('console errors: ' + errors.join(' | '));
await close();
console.log('ok');
