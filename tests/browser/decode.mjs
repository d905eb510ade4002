// decode.mjs - the dashboard's data outside a browser (node's zlib), checked
// against `corotracer report --json` of the same trace.
// Usage: node decode.mjs page PAGE.html FINDINGS.json [EXPECT.json]
//        node decode.mjs serve URL FINDINGS.json
//        node decode.mjs rows PAGE.html   (the coroutine rows: "id label" a line)
//        node decode.mjs destroyers PAGE.html   (each destroyed coroutine's destroy site
//          as the page names it: "id address function file:line" a line)
// EXPECT (optional): {"summarized": true|false, "kept_full": BASELINE_PAGE.html,
//   "symbolized": true (every site the coroutine table shows has a function name),
//   "starved": true (each starvation victim has its runnable span, its thread's holders rows)}
import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import http from 'node:http';

function fail(msg) { console.log('FAIL: ' + msg); process.exit(1); }
const TYPES = { f64: Float64Array, u32: Uint32Array, i32: Int32Array, u16: Uint16Array, u8: Uint8Array };

export function decode(z) {
  const buf = inflateSync(z);
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const dv = new DataView(ab), n = ab.byteLength;
  if (dv.getUint32(n - 4, false) !== 0x43544431) fail('no CTD1 magic at the end');
  const hl = dv.getUint32(n - 8, true);
  const head = JSON.parse(Buffer.from(ab, n - 8 - hl, hl).toString('utf8'));
  let off = 0;
  head.a = {};
  for (const d of head.arrays) {
    off = (off + 7) & ~7;
    const T = TYPES[d.type];
    if (off + d.n * T.BYTES_PER_ELEMENT > n - 8 - hl) fail(`array ${d.name} runs past the header`);
    head.a[d.name] = new T(ab, off, d.n);
    off += d.n * T.BYTES_PER_ELEMENT;
  }
  expandSpans(head.a);
  return head;
}
// The compact spans as the page expands them (web/dashboard.js, expandSpans),
// written again here so that a wrong encoding fails against an independent reading.
function expandSpans(a) {
  const take = (u, x) => { let j = 0; return Array.from(u, (v) => v === 0xffffffff ? x[j++] : v); };
  const d0 = take(a.sp_d0, a.sp_d0_x), dur = take(a.sp_dur, a.sp_dur_x);
  a.sp_obj = Float64Array.from(take(a.sp_obj, a.sp_obj_x));
  a.sp_t0 = new Float64Array(d0.length); a.sp_t1 = new Float64Array(d0.length); a.sp_coro = new Uint32Array(d0.length);
  for (let i = 0; i + 1 < a.co_span0.length; i++)
    for (let k = a.co_span0[i], prev = 0; k < a.co_span0[i + 1]; k++) {
      a.sp_t0[k] = prev + d0[k]; a.sp_t1[k] = prev = a.sp_t0[k] + dur[k]; a.sp_coro[k] = i;
    }
}
function fromPage(path) {
  const html = readFileSync(path, 'utf8');
  for (const m of ['CT:DATA', 'CT:MODE', '/*CT:JS*/', '/*CT:CSS*/']) if (html.includes(m)) fail(`marker ${m} left in the page`);
  const blocks = [...html.matchAll(/<script type="application\/x-corotracer-data">([^<]*)<\/script>/g)].map((m) => m[1]);
  if (!blocks.length) fail('no data block');
  for (const b of blocks) if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b)) fail('a data block is not base64');
  return decode(Buffer.concat(blocks.map((b) => Buffer.from(b, 'base64'))));
}
// The model's invariants.
function check(d, report) {
  const a = d.a, nc = a.co_id.length, ns = a.sp_t0.length;
  if (d.coroutines !== nc + d.summary.coroutines_pruned) fail(`coroutines ${d.coroutines} != ${nc} rows + ${d.summary.coroutines_pruned} pruned`);
  if (d.summary.coroutines_pruned && !d.summary.spans_dropped) fail('rows pruned from a complete trace');
  if (a.co_span0.length !== nc + 1 || a.co_span0[nc] !== ns) fail('co_span0 does not cover the spans');
  for (let i = 0; i < nc; i++)
    for (let k = a.co_span0[i]; k < a.co_span0[i + 1]; k++) {
      if (a.sp_coro[k] !== i) fail(`span ${k} in lane ${i} belongs to ${a.sp_coro[k]}`);
      if (a.sp_t1[k] < a.sp_t0[k]) fail(`span ${k} ends before it starts`);
      if (k > a.co_span0[i] && a.sp_t0[k] < a.sp_t0[k - 1]) fail(`lane ${i} is not in time order at ${k}`);
    }
  for (const k of a.th_order) if ((a.sp_flags[k] & 3) !== 0) fail(`th_order holds span ${k}, not running`);
  // The findings are the report's, same JSON model (the path aside).
  const f = structuredClone(d.findings), r = structuredClone(report);
  delete f.trace.path; delete r.trace.path;
  if (JSON.stringify(f) !== JSON.stringify(r)) fail('the page\'s findings differ from report --json');
  const ids = new Set(Array.from(a.co_id));
  for (const x of report.findings) for (const c of x.coroutines) if (!ids.has(c.probe_id)) fail(`finding's coroutine ${c.probe_id} not in the table`);
  if (d.summary.spans !== ns) fail('summary.spans != spans');
  const counted = a.cn_events.reduce((s, v) => s + v, 0);
  if (counted !== d.events) fail(`counters hold ${counted} events, the trace ${d.events}`);
}
function lanes(d) { // probe_id -> spans as text
  const a = d.a, out = new Map();
  for (let i = 0; i < a.co_id.length; i++) {
    const s = [];
    for (let k = a.co_span0[i]; k < a.co_span0[i + 1]; k++) s.push(`${a.sp_flags[k]}:${a.sp_t0[k]}-${a.sp_t1[k]}`);
    out.set(a.co_id[i], s.join(' '));
  }
  return out;
}

const [mode, where, findingsPath, expectPath] = process.argv.slice(2);
const report = mode === 'rows' || mode === 'destroyers' ? null : JSON.parse(readFileSync(findingsPath, 'utf8'));
if (mode === 'rows') {
  const d = fromPage(where);
  for (let i = 0; i < d.a.co_id.length; i++) console.log(`${d.a.co_id[i]} ${d.labels[d.a.co_label[i]]}`);
} else if (mode === 'destroyers') {
  const d = fromPage(where), a = d.a;
  if (!a.co_destroy_site) fail('no co_destroy_site array');
  for (let i = 0; i < a.co_id.length; i++) {
    if (a.co_destroy_site[i] === 0xffffffff) continue;
    const [addr, , fn, file, line] = d.sites[a.co_destroy_site[i]];
    console.log(`${a.co_id[i]} ${addr} ${fn} ${file}:${line}`);
  }
} else if (mode === 'page') {
  const d = fromPage(where);
  check(d, report);
  if (expectPath) {
    const e = JSON.parse(readFileSync(expectPath, 'utf8'));
    if (e.summarized !== d.summary.spans_dropped > 0) fail(`summarized: ${d.summary.spans_dropped} spans dropped`);
    if (e.pruned !== undefined && e.pruned !== d.summary.coroutines_pruned > 0) fail(`pruned: ${d.summary.coroutines_pruned} rows`);
    if (e.symbolized) { // the table's site column: the last suspend site, else the create site
      const a = d.a;
      for (let i = 0; i < a.co_id.length; i++) {
        const k = a.co_site[i] !== 0xffffffff ? a.co_site[i] : a.co_create_site[i];
        if (k !== 0xffffffff && typeof d.sites[k][2] !== 'string') fail(`coroutine ${a.co_id[i]}: site ${d.sites[k][0]} has no name`);
      }
    }
    if (e.kept_full) { // every coroutine a finding names has all its spans, as without a budget
      const full = lanes(fromPage(e.kept_full)), got = lanes(d);
      let n = 0;
      for (const x of report.findings) for (const c of x.coroutines) {
        if (got.get(c.probe_id) !== full.get(c.probe_id)) fail(`coroutine ${c.probe_id} of a finding lost spans`);
        n++;
      }
      if (!n) fail('no coroutine named by findings to compare');
      if (d.summary.kept_coroutines < 1) fail('kept_coroutines is 0');
    }
    if (e.starved) { // each starved coroutine's lane holds its runnable span; who held its thread has a row
      const a = d.a, row = new Map(Array.from(a.co_id, (id, i) => [id, i]));
      let n = 0;
      for (const x of report.findings) if (x.kind === 'starvation') for (const c of x.coroutines) {
        const i = row.get(c.probe_id);
        if (i === undefined) fail(`starved coroutine ${c.probe_id} has no row`);
        let found = false;
        for (let k = a.co_span0[i]; k < a.co_span0[i + 1]; k++)
          if ((a.sp_flags[k] & 3) === 1 && a.sp_t1[k] - a.sp_t0[k] === c.runnable_ns) found = true;
        if (!found) fail(`starved coroutine ${c.probe_id}: no runnable span of ${c.runnable_ns} ns`);
        for (const h of c.held_by) if (!row.has(h.probe_id)) fail(`coroutine ${h.probe_id}, which held its thread, has no row`);
        n++;
      }
      if (!n) fail('no starved coroutine');
    }
  }
  console.log(`ok: run ${d.run_id}, ${d.events} events, ${d.coroutines} coroutines (${d.a.co_id.length} rows), ${d.summary.spans} spans (${d.summary.spans_dropped} summarized), ${d.findings.findings.length} findings`);
} else {
  const u = new URL(where), token = u.searchParams.get('token');
  const get = (path, host) => new Promise((res, rej) => {
    http.get({ host: u.hostname, port: u.port, path, headers: host ? { Host: host } : {} }, (r) => {
      const parts = [];
      r.on('data', (c) => parts.push(c));
      r.on('end', () => res({ status: r.statusCode, headers: r.headers, body: Buffer.concat(parts) }));
    }).on('error', rej);
  });
  if ((await get('/data')).status !== 403) fail('/data without the token: not 403');
  if ((await get('/data?token=' + token, 'attacker.example:' + u.port)).status !== 403) fail('foreign Host: not 403');
  const r = await get('/data?token=' + token);
  if (r.status !== 200) fail(`/data: HTTP ${r.status}`);
  if (Object.keys(r.headers).some((h) => h.startsWith('access-control-'))) fail('CORS header sent');
  const d = decode(r.body);
  check(d, report);
  const page = await get('/?token=' + token);
  if (page.status !== 200 || !page.body.toString().includes('data-mode="live"')) fail('the live page');
  console.log(`ok: served ${r.body.length} bytes of data, run ${d.run_id}, ${d.events} events, ${d.coroutines} coroutines, findings as report --json`);
}
