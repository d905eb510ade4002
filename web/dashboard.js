// dashboard.js - the corotracer dashboard (docs/DASHBOARD.md): decodes the
// data blob (zlib, DecompressionStream), draws the canvas timeline, the
// counters, the findings, the site and coroutine tables and the wait-for
// graph. Every string from the trace goes in through textContent or canvas
// text, never as markup.
'use strict';
(function () {
const $ = (id) => document.getElementById(id);
const LIVE = document.body.dataset.mode === 'live';
const TOKEN = new URLSearchParams(location.search).get('token') || '';
const ST = ['running', 'runnable', 'suspended', 'created', 'destroyed', 'unknown'];
const NONE = 0xffffffff;
let D = null;           // the decoded data
let sel = new Set();    // selected coroutine indices
let view = { t0: 0, t1: 1 }, fitted = true, scrollY = 0, hover = null, css = {};
let lanes = [];         // coroutine lane order (indices)
let coRows = [];        // coroutine table rows (indices), filtered
let coSort = { key: 'id', dir: 1 }, siteSort = { key: 'count', dir: -1 };
let version = 0, loading = false, ended = false;
let onFinding = null;   // the finding last clicked (its object in D.f), until the selection is cleared
let drawn = { spans: 0, lod: 0, level: '' }; // the last frame's: exact spans, summary columns, level
let detail = null, detailKey = ''; // a served page's detail on request: { t0, t1, d }, and the one asked for

// ---- formatting -------------------------------------------------------------
function fmtNs(ns) {
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e10 ? 1 : 2) + ' s';
  if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e7 ? 1 : 2) + ' ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e4 ? 1 : 2) + ' µs';
  return Math.round(ns) + ' ns';
}
const fmtN = (n) => n >= 1e6 ? (n / 1e6).toFixed(1) + 'M' : n >= 1e4 ? (n / 1e3).toFixed(1) + 'k' : String(n);
const hex = (v) => '0x' + v.toString(16).padStart(16, '0');
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// ---- data -------------------------------------------------------------------
async function inflate(parts) { // Uint8Arrays of one zlib stream (iterable, maybe async)
  const ds = new DecompressionStream('deflate'), w = ds.writable.getWriter();
  const out = new Response(ds.readable).arrayBuffer();
  for await (const p of parts) w.write(p);
  w.close();
  return out;
}
function b64(s) {
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(s);
  const bin = atob(s);
  const u = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
  return u;
}
const TYPES = { f64: Float64Array, u32: Uint32Array, i32: Int32Array, u16: Uint16Array, u8: Uint8Array };
function decode(ab) {
  // Arrays first, then the JSON header, its length and the magic at the end.
  const dv = new DataView(ab), n = ab.byteLength;
  if (n < 8 || dv.getUint32(n - 4, false) !== 0x43544431) throw new Error('not corotracer dashboard data');
  const hl = dv.getUint32(n - 8, true);
  const head = JSON.parse(new TextDecoder().decode(new Uint8Array(ab, n - 8 - hl, hl)));
  let off = 0;
  const a = {};
  for (const d of head.arrays) {
    off = (off + 7) & ~7;
    const T = TYPES[d.type];
    a[d.name] = new T(ab, off, d.n);
    off += d.n * T.BYTES_PER_ELEMENT;
  }
  head.a = a;
  expandSpans(a);
  return head;
}
// The compact spans (docs/DASHBOARD.md "Data blob") as times: u32 values with
// an escape (0xffffffff: the next f64 of the _x array), gaps and lengths
// summed along each lane; the lane's coroutine from co_span0.
function unescape(u, x) {
  if (!x.length) return u; // nothing escaped (the usual case): the u32s are the values
  const out = new Float64Array(u.length);
  for (let i = 0, j = 0; i < u.length; i++) out[i] = u[i] === 0xffffffff ? x[j++] : u[i];
  return out;
}
function expandSpans(a) {
  const n = a.sp_d0.length, s0 = a.co_span0, nc = s0.length - 1;
  const d0 = unescape(a.sp_d0, a.sp_d0_x), dur = unescape(a.sp_dur, a.sp_dur_x);
  const t0 = new Float64Array(n), t1 = new Float64Array(n), coro = new Uint32Array(n);
  for (let i = 0; i < nc; i++) {
    let prev = 0;
    for (let k = s0[i], e = s0[i + 1]; k < e; k++) {
      t0[k] = prev + d0[k]; prev = t1[k] = t0[k] + dur[k]; coro[k] = i;
    }
  }
  a.sp_t0 = t0; a.sp_t1 = t1; a.sp_coro = coro; a.sp_obj = unescape(a.sp_obj, a.sp_obj_x); // read, never written
}
function prepare(d) {
  const a = d.a, nc = a.co_id.length;
  d.nc = nc;
  // A span's flags and the wait kinds, as the data's header names them.
  const F = d.sp_flags;
  d.spState = (f) => f & F.state;
  d.spWait = (f) => (f >> F.wait_shift) & F.wait;
  d.spOpen = (f) => (f & F.open) !== 0;
  d.waitFd = d.waits.indexOf('fd');
  d.idOf = new Map();
  let sorted = true;
  for (let i = 0; i < nc; i++) { d.idOf.set(a.co_id[i], i); if (i && a.co_id[i] < a.co_id[i - 1]) sorted = false; }
  d.byId = new Uint32Array(nc); // rows in id order (the model's are in order of appearance: usually already)
  for (let i = 0; i < nc; i++) d.byId[i] = i;
  if (!sorted) d.byId.sort((x, y) => a.co_id[x] - a.co_id[y]);
  // Symbols of sites: the model's own, for every site of its tables (create
  // sites too); else the report's sites (findings JSON), by address.
  d.sym = new Map();
  const f = d.findings || { findings: [], sites: [] };
  d.f = f;
  const addSym = (s) => { if (s && s.site && !d.sym.has(s.site)) d.sym.set(s.site, s); };
  (f.sites || []).forEach(addSym);
  (f.findings || []).forEach((x) => (x.sites || []).forEach(addSym));
  d.siteName = d.sites.map(([addr, , fn, file, line]) => {
    const s = fn || file ? { function: fn, file, line } : d.sym.get(addr);
    if (!s) return addr;
    return (s.function || addr) + (s.file ? ' ' + s.file.split('/').pop() + ':' + s.line : '');
  });
  // Stuck coroutines (lost wakeups, deadlocks): drawn with a red edge.
  d.stuck = new Set();
  d.inFinding = new Set();
  for (const x of f.findings || [])
    for (const c of x.coroutines || []) {
      for (const i of named(d, c)) d.inFinding.add(i);
      const i = d.idOf.get(c.probe_id);
      if (i === undefined) continue;
      if (x.kind === 'lost_wakeup' || x.kind === 'deadlock' || x.kind === 'wake_before_suspend') d.stuck.add(i);
    }
  // Prefix sums of running time: a pixel holding many spans is drawn by its busy fraction.
  const n = a.sp_t0.length;
  d.cumRun = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) d.cumRun[i + 1] = d.cumRun[i] + (d.spState(a.sp_flags[i]) === 0 ? a.sp_t1[i] - a.sp_t0[i] : 0);
  const th = a.th_order, nt = d.threads.length;
  d.thStart = new Uint32Array(nt + 1);
  for (let k = 0; k < th.length; k++) d.thStart[a.sp_arg[th[k]] + 1]++;
  for (let t = 0; t < nt; t++) d.thStart[t + 1] += d.thStart[t];
  d.thT0 = new Float64Array(th.length); d.thT1 = new Float64Array(th.length); d.thCum = new Float64Array(th.length + 1);
  for (let k = 0; k < th.length; k++) {
    d.thT0[k] = a.sp_t0[th[k]]; d.thT1[k] = a.sp_t1[th[k]];
    d.thCum[k + 1] = d.thCum[k] + d.thT1[k] - d.thT0[k];
  }
  prepareLod(d);
  d.search = null;
  return d;
}
// The level of detail (docs/DASHBOARD.md "Level of detail"): each summary
// entry's start (ns from start_ts) and prefix sums of running and runnable
// ns and wakes, so a pixel column of any width costs two binary searches.
function prepareLod(d) {
  const a = d.a, L = d.lod, n = a.lod_b.length, w = L.bucket_ns, nl = a.lod_lane0.length - 1;
  const b = unescape(a.lod_b, a.lod_b_x);
  d.lodT = new Float64Array(n);
  d.lodRun = new Float64Array(n + 1); d.lodRdy = new Float64Array(n + 1); d.lodWk = new Float64Array(n + 1);
  for (let l = 0; l < nl; l++) // each lane's first entry: from the start's bucket, the others from the one before
    for (let k = a.lod_lane0[l], e = a.lod_lane0[l + 1], t = L.t0; k < e; k++) d.lodT[k] = t += b[k] * w;
  for (let k = 0; k < n; k++) {
    d.lodRun[k + 1] = d.lodRun[k] + a.lod_run[k] / 65535 * w;
    d.lodRdy[k + 1] = d.lodRdy[k] + a.lod_rdy[k] / 65535 * w;
    d.lodWk[k + 1] = d.lodWk[k] + a.lod_wk[k];
  }
  // Where every lane has its exact spans: all of the run, or its start and end.
  const s = d.summary;
  d.gap = s.spans_dropped > 0 ? [s.detail_until, s.detail_from] : null;
}
// The rows a finding's coroutine entry names: its own, and for starvation the
// coroutines that held its thread meanwhile (held_by).
function named(d, c) {
  return [c, ...(c.held_by || [])].map((x) => d.idOf.get(x.probe_id)).filter((i) => i !== undefined);
}
function coState(i) {
  const s = D.a.co_state[i];
  if (s === 2 && D.stuck.has(i)) return 'stuck';
  return ST[s] || 'unknown';
}
// What wait kind w (the data's "waits") on obj reads as: 'fd 7', 'ptr 0x...',
// 'coroutine 12' (a join), 'returned' (its final suspend); '' for none.
function waitText(w, obj) {
  const name = D.waits[w] || '';
  if (name === 'exit') return 'returned';
  if (name === 'ptr') return 'ptr ' + hex(obj);
  return name ? name + ' ' + obj : '';
}
function coWait(i) {
  return D.a.co_state[i] === 2 ? waitText(D.a.co_wait[i], D.a.co_obj[i]) : '';
}
const siteOf = (k) => k === NONE || k >= D.siteName.length ? '' : D.siteName[k];
const labelOf = (i) => D.labels[D.a.co_label[i]] || '';

// ---- header, note -----------------------------------------------------------
function header() {
  $('source').textContent = D.source + (D.host ? ' · ' + D.host : '');
  $('stat-events').textContent = fmtN(D.events);
  $('stat-coros').textContent = fmtN(D.coroutines);
  $('stat-threads').textContent = String(D.threads.length);
  $('stat-duration').textContent = fmtNs(D.duration_ns);
  $('stat-lost').textContent = fmtN(D.lost);
  let stuck = 0;
  for (const x of D.f.findings || []) if (x.kind === 'lost_wakeup' || x.kind === 'deadlock') stuck += x.count;
  if (!LIVE) $('stat-stuck').textContent = String(stuck);
  const s = D.summary, note = $('note'), damaged = D.f.trace && D.f.trace.damaged;
  if (damaged) {
    note.className = 'note warn';
    note.textContent = 'Damaged file (' + damaged + '): everything before that byte is shown; nothing after it.';
  } else if (s.spans_dropped > 0) {
    note.className = 'note';
    note.textContent = 'Level of detail: exact spans from the start to +' + fmtNs(s.detail_until || 0) + ' and from +' +
      fmtNs(s.detail_from || 0) + ' to the end' + (s.kept_coroutines ? ' (all of the run for the ' + s.kept_coroutines + ' coroutines findings name)' : '') +
      '; in between, and zoomed out, every lane is drawn from its summary (buckets of ' + fmtNs(D.lod.bucket_ns) +
      '). ' + fmtN(s.spans_dropped) + ' spans and ' + fmtN(s.wakes_dropped) + ' wake arrows are only in the summary' +
      (s.coroutines_pruned ? '; the coroutine table leaves out ' + fmtN(s.coroutines_pruned) +
        ' finished coroutines that no finding names (' + fmtN(D.nc) + ' rows of ' + fmtN(D.coroutines) + ').' : '.');
  } else {
    note.className = 'note';
    note.textContent = 'Complete: ' + fmtN(s.spans) + ' spans of ' + fmtN(D.nc) + ' coroutines on ' + D.threads.length +
      ' threads' + (s.wakes_dropped ? ', ' + fmtN(s.wakes_dropped) + ' wake arrows left out' : '') +
      (D.malformed ? '; ' + D.malformed + ' malformed lines skipped' : '') + '.';
  }
}

// ---- findings -----------------------------------------------------------------
function findings() {
  const box = $('findings');
  box.textContent = '';
  const list = D.f.findings || [];
  const shown = list.filter((x, k) => ctNav.findingShown(k)).length; // the time range's (nav.js)
  const an = D.f.analysing; // served while the trace is still being read: no finding yet, none shown as final
  $('nfind').textContent = an ? '…' : String(shown);
  if (an) box.appendChild(el('div', 'muted', 'Analysing… ' + (an.bytes / 1048576).toFixed(0) + ' of ' + (an.size / 1048576).toFixed(0) + ' MiB read: the findings come when the whole trace is.'));
  else if (!list.length) box.appendChild(el('div', 'muted', 'No findings: no lost wakeup, race, deadlock, leak, blocker or starvation.'));
  else if (!shown) box.appendChild(el('div', 'muted', 'No finding in the time range (Esc clears it).'));
  list.forEach((x, k) => {
    if (!ctNav.findingShown(k)) return; // outside the time range (nav.js)
    const card = el('div', 'finding');
    card.dataset.kind = x.kind;
    card.dataset.index = String(k);
    const t = el('div');
    t.appendChild(el('span', 'sev ' + x.severity, x.severity));
    t.appendChild(el('span', 'ftitle', x.title));
    card.appendChild(t);
    if (x.sites && x.sites.length) {
      const s = el('div', 'fsites');
      x.sites.slice(0, 3).forEach((site, j) => {
        if (j) s.appendChild(document.createTextNode(' · '));
        s.appendChild(el('code', '', (site.function || site.site) + (site.file ? ' ' + site.file.split('/').pop() + ':' + site.line : '')));
        s.appendChild(document.createTextNode(' ×' + site.count));
      });
      if (x.sites.length > 3) s.appendChild(document.createTextNode(' · +' + (x.sites.length - 3) + ' more'));
      card.appendChild(s);
    }
    (x.evidence || []).slice(0, 2).forEach((e) => card.appendChild(el('div', 'fev', e)));
    if (x === onFinding) card.classList.add('on'); // still chosen when a range redraws the list
    card.addEventListener('click', () => selectFinding(k));
    box.appendChild(card);
  });
}
function selectFinding(k) {
  const x = D.f.findings[k];
  const s = new Set();
  for (const c of x.coroutines || []) for (const i of named(D, c)) s.add(i);
  onFinding = x;
  document.querySelectorAll('.finding').forEach((c) => c.classList.toggle('on', c.dataset.index === String(k)));
  setSelection(s, true);
  ctNav.jumpToFinding(k);
  if (x.kind === 'deadlock') { tab('graph'); drawGraph(x); }
}
// The selection's count and ids beside the tabs.
function showSel() {
  const ids = [...sel].map((i) => D.a.co_id[i]).sort((a, b) => a - b);
  $('selection').textContent = sel.size + ' selected';
  $('selection').dataset.ids = ids.join(',');
}
function setSelection(s, reveal) {
  sel = s;
  showSel();
  if (!sel.size) { onFinding = null; document.querySelectorAll('.finding.on').forEach((c) => c.classList.remove('on')); }
  orderLanes();
  if (reveal) scrollY = 0;
  filterCoros();
  drawTimeline();
}

// ---- coroutine table (virtual) ----------------------------------------------------
const RH = 20;
const CO_COLS = [['id', 'id'], ['label', 'label'], ['state', 'state'], ['wait', 'wait'], ['site', 'site'], ['runs', 'runs']];
function coKey(i, k) {
  const a = D.a;
  switch (k) {
    case 'id': return a.co_id[i];
    case 'label': return labelOf(i);
    case 'state': return coState(i);
    case 'wait': return a.co_wait[i] * 1e15 + a.co_obj[i];
    case 'site': return siteOf(a.co_site[i]);
    default: return ctNav.runs(i);
  }
}
function filterCoros() {
  const q = $('search').value.trim().toLowerCase();
  const a = D.a;
  let rows = [];
  const fd = /^fd[\s:=]*(\d+)$/.exec(q), num = /^\d+$/.test(q) ? Number(q) : null;
  for (let i = 0; i < D.nc; i++) {
    if (!ctNav.inRange(i)) continue;
    if (q) {
      let ok;
      if (fd) ok = a.co_wait[i] === D.waitFd && a.co_obj[i] === Number(fd[1]);
      else if (num !== null) ok = a.co_id[i] === num || (a.co_wait[i] === D.waitFd && a.co_obj[i] === num);
      else ok = labelOf(i).toLowerCase().includes(q) || siteOf(a.co_site[i]).toLowerCase().includes(q) ||
        siteOf(a.co_create_site[i]).toLowerCase().includes(q);
      if (!ok) continue;
    }
    rows.push(i);
  }
  const k = coSort.key, dir = coSort.dir;
  rows.sort((x, y) => {
    const sx = sel.has(x), sy = sel.has(y);
    if (sx !== sy) return sx ? -1 : 1;
    const u = coKey(x, k), v = coKey(y, k);
    return (u < v ? -1 : u > v ? 1 : 0) * dir || a.co_id[x] - a.co_id[y];
  });
  coRows = rows;
  $('cospacer').style.height = rows.length * RH + 'px';
  renderCoros();
}
function renderCoros() {
  const box = $('cotable');
  box.querySelectorAll('.row').forEach((r) => r.remove());
  const first = Math.max(0, Math.floor(box.scrollTop / RH) - 5), last = Math.min(coRows.length, first + Math.ceil(box.clientHeight / RH) + 10);
  const a = D.a;
  for (let r = first; r < last; r++) {
    const i = coRows[r], row = el('div', 'row' + (sel.has(i) ? ' on' : ''));
    row.style.top = r * RH + 'px';
    row.dataset.id = String(a.co_id[i]);
    const st = coState(i);
    row.append(el('span', 'num', String(a.co_id[i])), el('span', '', labelOf(i)), el('span', 'st-' + st, st),
      el('span', '', coWait(i)), el('span', '', siteOf(a.co_site[i] !== NONE ? a.co_site[i] : a.co_create_site[i])),
      el('span', 'num', String(ctNav.runs(i))));
    row.title = 'coroutine ' + a.co_id[i];
    row.addEventListener('click', (e) => {
      const s = new Set(e.ctrlKey || e.metaKey || e.shiftKey ? sel : []);
      if (s.has(i)) s.delete(i); else s.add(i);
      setSelection(s, true);
    });
    box.appendChild(row);
  }
}
function heads() {
  const mk = (box, cols, sort, redo) => {
    box.textContent = '';
    for (const [k, name] of cols) {
      const h = el('span', '', name + (sort.key === k ? (sort.dir > 0 ? ' ▲' : ' ▼') : ''));
      h.addEventListener('click', () => { sort.dir = sort.key === k ? -sort.dir : (k === 'id' || k === 'label' || k === 'function' || k === 'file' ? 1 : -1); sort.key = k; heads(); redo(); });
      box.appendChild(h);
    }
  };
  mk($('cohead'), CO_COLS, coSort, filterCoros);
  mk($('sitehead'), SITE_COLS, siteSort, sites);
}

// ---- site table ---------------------------------------------------------------------
const SITE_COLS = [['function', 'function'], ['file', 'file:line'], ['count', 'count'], ['p50', 'p50'], ['p99', 'p99'], ['max', 'max']];
function sites() {
  const box = $('sitetable');
  box.textContent = '';
  const list = ctNav.siteRows() || (D.f.sites || []).slice();
  const key = (s, k) => k === 'function' ? (s.function || s.site) : k === 'file' ? (s.file ? s.file + ':' + s.line : '') :
    k === 'count' ? s.count : s.suspended_ns ? s.suspended_ns[k] : -1;
  list.sort((x, y) => { const u = key(x, siteSort.key), v = key(y, siteSort.key); return (u < v ? -1 : u > v ? 1 : 0) * siteSort.dir; });
  list.forEach((s, r) => {
    const row = el('div', 'row');
    row.style.top = r * RH + 'px';
    const d = s.suspended_ns;
    row.append(el('span', '', s.function || s.site), el('span', '', s.file ? s.file.split('/').pop() + ':' + s.line : (s.module || '')),
      el('span', 'num', String(s.count)), el('span', 'num', d ? fmtNs(d.p50) : '–'), el('span', 'num', d ? fmtNs(d.p99) : '–'),
      el('span', 'num', d ? fmtNs(d.max) : '–'));
    row.title = s.site + (s.file ? ' ' + s.file + ':' + s.line : '');
    row.addEventListener('click', () => { $('search').value = s.function || s.site; tab('coros'); filterCoros(); });
    box.appendChild(row);
  });
  const sp = el('div'); sp.style.height = list.length * RH + 'px'; box.appendChild(sp);
  if (!list.length) box.appendChild(el('div', 'muted', 'No suspension sites in this trace.'));
}

// ---- wait-for graph -------------------------------------------------------------------
function drawGraph(x) {
  const c = $('graph'), g = ctx2d(c);
  if (!g) return;
  const W = c.clientWidth, H = c.clientHeight;
  g.clearRect(0, 0, W, H);
  const dl = x || (D.f.findings || []).find((f) => f.kind === 'deadlock');
  if (!dl) { $('graphnote').textContent = 'No deadlock (wait-for cycle) in this trace.'; return; }
  $('graphnote').textContent = dl.title;
  const nodes = dl.coroutines || [], n = nodes.length, R = Math.min(W, H) / 2 - 60;
  const pos = new Map();
  nodes.forEach((c2, k) => {
    const ang = -Math.PI / 2 + (2 * Math.PI * k) / Math.max(n, 1);
    pos.set(c2.probe_id, [W / 2 + R * Math.cos(ang), H / 2 + R * Math.sin(ang)]);
  });
  g.strokeStyle = css.stuck; g.fillStyle = css.stuck; g.lineWidth = 1.5;
  for (const c2 of nodes) {
    const p = pos.get(c2.probe_id), q = pos.get(c2.waits_for);
    if (!p || !q) continue;
    // Offset sideways so that the two edges of a 2-cycle do not overlap.
    const L = Math.hypot(q[0] - p[0], q[1] - p[1]) || 1, nx = -(q[1] - p[1]) / L * 6, ny = (q[0] - p[0]) / L * 6;
    arrow(g, p[0] + nx, p[1] + ny, q[0] + nx, q[1] + ny, 16);
  }
  g.font = '11px ui-monospace, monospace'; g.textAlign = 'center';
  for (const c2 of nodes) {
    const [px, py] = pos.get(c2.probe_id);
    g.fillStyle = css.panel; g.strokeStyle = css.stuck;
    g.beginPath(); g.arc(px, py, 14, 0, 7); g.fill(); g.stroke();
    g.fillStyle = css.fg;
    g.fillText(String(c2.probe_id), px, py + 4);
    g.fillStyle = css.muted;
    g.fillText((c2.label || '') + (c2.wait ? ' ' + c2.wait + ' ' + c2.obj : ''), px, py + 28);
  }
}
function arrow(g, x0, y0, x1, y1, shorten) {
  const dx = x1 - x0, dy = y1 - y0, L = Math.hypot(dx, dy) || 1, ux = dx / L, uy = dy / L;
  const ex = x1 - ux * shorten, ey = y1 - uy * shorten;
  g.beginPath(); g.moveTo(x0 + ux * shorten, y0 + uy * shorten); g.lineTo(ex, ey); g.stroke();
  g.beginPath(); g.moveTo(ex, ey); g.lineTo(ex - ux * 7 - uy * 3.5, ey - uy * 7 + ux * 3.5); g.lineTo(ex - ux * 7 + uy * 3.5, ey - uy * 7 - ux * 3.5); g.fill();
}

// ---- timeline -------------------------------------------------------------------------
const GUT = 170, TH = 18, CH = 14, AX = 20;
function ctx2d(c) {
  const r = window.devicePixelRatio || 1, w = c.clientWidth, h = c.clientHeight;
  if (!w || !h) return null;
  if (c.width !== Math.round(w * r) || c.height !== Math.round(h * r)) { c.width = Math.round(w * r); c.height = Math.round(h * r); }
  const g = c.getContext('2d');
  g.setTransform(r, 0, 0, r, 0, 0);
  return g;
}
// Lanes: the selection, then the coroutines findings name, then the rest,
// each by id: three passes over the rows in id order (D.byId), no sort.
function orderLanes() {
  const all = new Uint32Array(D.nc), by = D.byId;
  let n = 0;
  for (const pass of [0, 1, 2])
    for (let k = 0; k < by.length; k++) {
      const i = by[k], r = sel.has(i) ? 0 : D.inFinding.has(i) ? 1 : 2;
      if (r === pass) all[n++] = i;
    }
  lanes = ctNav.lanes(all); // searched and grouped (nav.js)
}
function fit() {
  view.t0 = Math.min(0, D.counters.t0); view.t1 = Math.max(D.duration_ns, 1); fitted = true;
  const pad = (view.t1 - view.t0) * 0.01; view.t0 -= pad; view.t1 += pad;
}
function lowerBound(arr, lo, hi, t) { // first k in [lo,hi) with arr[k] >= t
  while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] < t) lo = m + 1; else hi = m; }
  return lo;
}
function stateColor(f, i) {
  const s = D.spState(f);
  if (s === 0) return css.running;
  if (s === 1) return css.runnable;
  if (s === 3) return css.created;
  return D.spWait(f) === D.waitFd ? css.suspfd : css.suspended;
}
// Draws spans [lo,hi) of one lane (times t0/t1, busy prefix cum) at y..y+h.
function drawLane(g, t0s, t1s, cum, lo, hi, y, h, W, colorOf) {
  const scale = (W - GUT) / (view.t1 - view.t0);
  let k = Math.max(lo, lowerBound(t0s, lo, hi, view.t0) - 1);
  // Far more spans than pixels (or spans that overlap, which a lane of one
  // thread should not have): one sample per pixel column, O(width log n).
  if (lowerBound(t0s, k, hi, view.t1) - k > 2 * (W - GUT)) return drawLanePixels(g, t0s, t1s, cum, lo, hi, y, h, W, colorOf, scale);
  while (k < hi) {
    const a = t0s[k];
    if (a > view.t1) break;
    const x0 = GUT + (a - view.t0) * scale, x1 = GUT + (t1s[k] - view.t0) * scale;
    if (x1 - x0 >= 1 || k + 1 >= hi || GUT + (t0s[k + 1] - view.t0) * scale >= Math.floor(x0) + 1) {
      const xa = Math.max(GUT, x0), xb = Math.min(W, Math.max(x1, x0 + 1));
      if (xb > xa) { g.fillStyle = colorOf(k); g.fillRect(xa, y, xb - xa, h); drawn.spans++; }
      k++;
      continue;
    }
    // Many spans in this pixel: draw the busy fraction, skip to the next pixel.
    const px = Math.floor(x0), tEnd = view.t0 + (px + 1 - GUT) / scale;
    const j = Math.max(k + 1, lowerBound(t0s, k, hi, tEnd));
    const busy = (cum[j] - cum[k]) / (1 / scale);
    g.fillStyle = css.suspended; g.fillRect(Math.max(GUT, px), y, 1, h);
    g.globalAlpha = Math.min(1, busy); g.fillStyle = css.running; g.fillRect(Math.max(GUT, px), y, 1, h); g.globalAlpha = 1;
    // The last span starting in this pixel may go on long after it.
    if (t1s[j - 1] > tEnd) {
      const xb = Math.min(W, GUT + (t1s[j - 1] - view.t0) * scale);
      if (xb > px + 1) { g.fillStyle = colorOf(j - 1); g.fillRect(px + 1, y, xb - px - 1, h); }
    }
    k = j;
  }
}
function drawLanePixels(g, t0s, t1s, cum, lo, hi, y, h, W, colorOf, scale) {
  const ns = 1 / scale;
  let a = Math.max(lo, lowerBound(t0s, lo, hi, view.t0) - 1);
  for (let px = GUT; px < W; px++) {
    const ta = view.t0 + (px - GUT) * ns, tb = ta + ns;
    const b = lowerBound(t0s, a, hi, tb);
    if (b === a) { // no span starts here: the one before may cover it
      if (a > lo && t1s[a - 1] > ta) { g.fillStyle = colorOf(a - 1); g.fillRect(px, y, 1, h); }
      continue;
    }
    if (b - a === 1 && (a === lo || t1s[a - 1] <= ta)) { g.fillStyle = colorOf(a); g.fillRect(px, y, 1, h); drawn.spans++; a = b; continue; }
    const busy = Math.min(1, (cum[b] - cum[a]) / ns);
    g.fillStyle = css.suspended; g.fillRect(px, y, 1, h);
    g.globalAlpha = busy; g.fillStyle = css.running; g.fillRect(px, y, 1, h); g.globalAlpha = 1;
    a = b;
  }
}
// The integral of cum (a lane's summary [lo,hi)) from the lane's start to t.
function lodAt(cum, lo, hi, t) {
  const k = lowerBound(D.lodT, lo, hi, t), w = D.lod.bucket_ns;
  if (k === lo) return 0;
  const f = Math.min(1, (t - D.lodT[k - 1]) / w); // the share of the last bucket before t
  return cum[k - 1] - cum[lo] + f * (cum[k] - cum[k - 1]);
}
// Lane l's summary drawn per pixel column [x0,x1) at y..y+h: stacked shares
// running, runnable, suspended (the rest of life [life0,life1]; stuck after
// stuckAt), a tick on top where it was woken. A thread lane: busy only.
function drawLaneLod(g, l, y, h, x0, x1, life0, life1, stuckAt, thread) {
  const lo = D.a.lod_lane0[l], hi = D.a.lod_lane0[l + 1], W = $('timeline').clientWidth;
  const ns = (view.t1 - view.t0) / (W - GUT);
  let run0 = lodAt(D.lodRun, lo, hi, view.t0 + (x0 - GUT) * ns), rdy0 = lodAt(D.lodRdy, lo, hi, view.t0 + (x0 - GUT) * ns);
  let wk0 = lodAt(D.lodWk, lo, hi, view.t0 + (x0 - GUT) * ns);
  for (let px = x0; px < x1; px++) {
    const ta = view.t0 + (px - GUT) * ns, tb = ta + ns;
    const run1 = lodAt(D.lodRun, lo, hi, tb), rdy1 = lodAt(D.lodRdy, lo, hi, tb), wk1 = lodAt(D.lodWk, lo, hi, tb);
    const life = thread ? 0 : Math.max(0, Math.min(tb, life1) - Math.max(ta, life0));
    const run = Math.min(1, (run1 - run0) / ns), rdy = Math.min(1 - run, (rdy1 - rdy0) / ns);
    const susp = Math.max(0, Math.min(1 - run - rdy, life / ns - run - rdy));
    let yb = y + h;
    const bar = (f, c) => { if (f > 0) { const hh = Math.max(1, f * h); g.fillStyle = c; g.fillRect(px, yb - hh, 1, hh); yb -= hh; } };
    bar(run, css.running); bar(rdy, css.runnable); bar(susp, tb > stuckAt ? css.stuck : css.suspended);
    if (wk1 - wk0 >= 0.5) { g.fillStyle = css.wake; g.fillRect(px, y, 1, 2); }
    drawn.lod++;
    run0 = run1; rdy0 = rdy1; wk0 = wk1;
  }
}
// A lane at the current zoom: its summary where a pixel is as wide as a
// summary bucket or more, or where the spans were not all kept (the gap,
// unless the lane is kept whole); its exact spans (exact()) elsewhere.
// Detail on request (a served page): when the view shows a summary and is
// narrower than DETAIL_NS, the exact spans of the view for the visible
// coroutine lanes (GET /detail, docs/DASHBOARD.md "Detail on request"), in
// the page's own encoding; drawn instead of the summary while they cover the
// view (a lane without an event in the window keeps its summary).
const DETAIL_NS = 50e6;
function askDetail(ids) {
  if (location.protocol === 'file:' || !ids.length || view.t1 - view.t0 > DETAIL_NS) return;
  if (detail && detail.whole && detail.t0 <= view.t0 && detail.t1 >= view.t1 && ids.every((id) => detail.d.idOf.has(id))) return;
  const t0 = Math.max(0, Math.floor(view.t0)), t1 = Math.max(t0, Math.ceil(view.t1));
  const key = t0 + '/' + t1 + '/' + ids.join(',');
  if (key === detailKey) return;
  detailKey = key;
  clearTimeout(askDetail.timer); // while the wheel turns, only the view it stops at
  askDetail.timer = setTimeout(() => fetchDetail(key, t0, t1, ids), 150);
}
function fetchDetail(key, t0, t1, ids) {
  if (key !== detailKey) return;
  const asked = performance.now();
  fetch('/detail?token=' + encodeURIComponent(TOKEN) + '&t0=' + t0 + '&t1=' + t1 + '&lanes=' + ids.join(','), { cache: 'no-store' })
    .then(async (r) => {
      if (!r.ok || detailKey !== key) return;
      const d = decode(await inflate([new Uint8Array(await r.arrayBuffer())])), a = d.a, off = d.start_ts - D.start_ts;
      for (const x of [a.sp_t0, a.sp_t1, a.wk_t]) for (let k = 0; k < x.length; k++) x[k] += off;
      d.idOf = new Map(Array.from(a.co_id, (id, i) => [id, i]));
      d.cumRun = new Float64Array(a.sp_t0.length + 1);
      for (let k = 0; k < a.sp_t0.length; k++) d.cumRun[k + 1] = d.cumRun[k] + ((a.sp_flags[k] & D.sp_flags.state) === 0 ? a.sp_t1[k] - a.sp_t0[k] : 0);
      detail = { t0, t1, d, whole: !d.summary.spans_dropped }; // an answer past its budget: the summary stays
      drawTimeline();
      window.corotracer.marks.detail = { asked, drawn: performance.now(), spans: a.sp_t0.length };
    }).catch(() => { detailKey = ''; });
}
function drawLaneLevel(g, l, y, h, W, exact, keep, life0, life1, stuckAt, thread) {
  const ns = (view.t1 - view.t0) / (W - GUT);
  if (!thread && detail && detail.whole && detail.t0 <= view.t0 && detail.t1 >= view.t1 && !keep) { // asked for: exact
    const r = detail.d.idOf.get(D.a.co_id[l]), a = detail.d.a;
    if (r !== undefined) {
      drawLane(g, a.sp_t0, a.sp_t1, detail.d.cumRun, a.co_span0[r], a.co_span0[r + 1], y, h, W, (k) => stateColor(a.sp_flags[k]));
      return 'exact';
    }
  }
  if (ns >= D.lod.bucket_ns) { drawLaneLod(g, l, y, h, GUT, W, life0, life1, stuckAt, thread); return 'summary'; }
  exact();
  if (!D.gap || keep) return 'exact';
  const xa = Math.max(GUT, Math.floor(GUT + (D.gap[0] - view.t0) / ns)), xb = Math.min(W, Math.ceil(GUT + (D.gap[1] - view.t0) / ns));
  if (xb <= xa) return 'exact';
  g.fillStyle = css.lane; g.fillRect(xa, y, xb - xa, h);
  drawLaneLod(g, l, y, h, xa, xb, life0, life1, stuckAt, thread);
  return 'mixed';
}
const hues = new Map();
function hue(i) {
  let c = hues.get(i);
  if (!c) { c = hueOf(i); hues.set(i, c); }
  return c;
}
function hueOf(i) { return 'hsl(' + ((D.a.co_id[i] * 137.508) % 360).toFixed(0) + ',55%,52%)'; }
function layout(H) {
  const nt = D.threads.length, top = AX + 16 + nt * TH + 16;
  const rows = Math.max(0, Math.floor((H - top) / CH));
  const maxScroll = Math.max(0, lanes.length - rows);
  scrollY = Math.max(0, Math.min(scrollY, maxScroll));
  return { nt, top, rows };
}
function drawTimeline() {
  const c = $('timeline'), g = ctx2d(c);
  if (!g || !D) return;
  const W = c.clientWidth, H = c.clientHeight, a = D.a;
  g.fillStyle = css.bg; g.fillRect(0, 0, W, H);
  const L = layout(H), scale = (W - GUT) / (view.t1 - view.t0), levels = new Set();
  drawn = { spans: 0, lod: 0, level: '' };
  // Axis with ticks.
  g.font = '10px ui-monospace, monospace'; g.fillStyle = css.muted; g.strokeStyle = css.grid; g.textAlign = 'left';
  const span = view.t1 - view.t0, step = Math.pow(10, Math.floor(Math.log10(span / 8)));
  const st = span / step > 40 ? step * 5 : span / step > 16 ? step * 2 : step;
  for (let t = Math.ceil(view.t0 / st) * st; t <= view.t1; t += st) {
    const x = GUT + (t - view.t0) * scale;
    g.beginPath(); g.moveTo(x + 0.5, AX - 4); g.lineTo(x + 0.5, H); g.stroke();
    g.fillText('+' + fmtNs(t), x + 3, 12);
  }
  const rangeText = '+' + fmtNs(Math.max(0, view.t0)) + ' … +' + fmtNs(view.t1) + '  (' + fmtNs(span) + ')';
  // Thread lanes: which coroutine ran.
  g.fillStyle = css.fg; g.font = '600 11px ui-sans-serif, system-ui, sans-serif';
  g.fillText('Threads', 6, AX + 11);
  g.font = '11px ui-monospace, monospace';
  for (let t = 0; t < L.nt; t++) {
    const y = AX + 16 + t * TH;
    g.fillStyle = css.lane; g.fillRect(GUT, y, W - GUT, TH - 3);
    g.fillStyle = css.muted; g.fillText('tid ' + D.threads[t], 6, y + 11);
    levels.add(drawLaneLevel(g, D.nc + t, y, TH - 3, W,
      () => drawLane(g, D.thT0, D.thT1, D.thCum, D.thStart[t], D.thStart[t + 1], y, TH - 3, W, (k) => hue(a.sp_coro[a.th_order[k]])),
      false, 0, 0, Infinity, true));
  }
  // Coroutine lanes.
  g.fillStyle = css.fg; g.font = '600 11px ui-sans-serif, system-ui, sans-serif';
  g.fillText('Coroutines (' + lanes.length + ')' + (sel.size ? ' · selected first' : ''), 6, L.top - 4);
  g.font = '10px ui-monospace, monospace';
  const yOf = new Map();
  for (let r = 0; r < L.rows && scrollY + r < lanes.length; r++) {
    const i = lanes[scrollY + r], y = L.top + r * CH;
    if (i >= ctNav.GROUP) { ctNav.drawGroup(g, i, y, CH - 2, W); continue; }
    yOf.set(i, y);
    if (sel.has(i)) { g.fillStyle = css.sel; g.fillRect(0, y, W, CH); }
    g.fillStyle = css.lane; g.fillRect(GUT, y, W - GUT, CH - 2);
    g.fillStyle = D.stuck.has(i) ? css.stuck : css.muted;
    const lab = labelOf(i);
    g.fillText(String(a.co_id[i]) + (lab ? ' ' + lab : ''), 6, y + 10, GUT - 12);
    const gone = a.co_state[i] === 4, stuckAt = D.stuck.has(i) && a.co_state[i] === 2 ? a.co_since[i] : Infinity;
    levels.add(drawLaneLevel(g, i, y, CH - 2, W,
      () => drawLane(g, a.sp_t0, a.sp_t1, D.cumRun, a.co_span0[i], a.co_span0[i + 1], y, CH - 2, W, (k) => stateColor(a.sp_flags[k], k)),
      a.co_keep[i], a.co_first[i], gone ? a.co_last[i] : D.duration_ns, stuckAt, false));
    if (D.stuck.has(i) && a.co_state[i] === 2) { // the stuck suspension: red edge
      const e = a.co_span0[i + 1] - 1;
      if (e >= a.co_span0[i]) {
        const x0 = Math.max(GUT, GUT + (a.sp_t0[e] - view.t0) * scale), x1 = Math.min(W, GUT + (a.sp_t1[e] - view.t0) * scale);
        if (x1 > x0) { g.strokeStyle = css.stuck; g.lineWidth = 1.5; g.strokeRect(x0 + 0.75, y + 0.75, x1 - x0 - 1.5, CH - 3.5); g.lineWidth = 1; }
      }
    }
  }
  // Wake arrows between visible lanes.
  const wt = a.wk_t, lo = lowerBound(wt, 0, wt.length, view.t0), hi = lowerBound(wt, 0, wt.length, view.t1);
  if (hi - lo < 3000) {
    g.strokeStyle = css.wake; g.fillStyle = css.wake; g.lineWidth = 1;
    for (let k = lo; k < hi; k++) {
      const to = a.wk_to[k], yt = yOf.get(to);
      if (yt === undefined) continue;
      const from = a.wk_from[k] ? a.wk_from[k] - 1 : -1, yf = from >= 0 ? yOf.get(from) : undefined;
      const x = GUT + (wt[k] - view.t0) * scale;
      if (yf !== undefined) arrow(g, x, yf + CH / 2, x + 0.01, yt + CH / 2, 0);
      else { g.beginPath(); g.moveTo(x - 3, yt - 3); g.lineTo(x + 3, yt - 3); g.lineTo(x, yt + 2); g.fill(); }
    }
  }
  ctNav.overlay(g, W, H, AX);
  if (hover) { g.strokeStyle = css.fg; g.globalAlpha = .35; g.beginPath(); g.moveTo(hover.x + .5, AX); g.lineTo(hover.x + .5, H); g.stroke(); g.globalAlpha = 1; }
  // The wait for rows below the visible ones.
  if (lanes.length > L.rows) {
    g.fillStyle = css.muted; g.textAlign = 'right';
    g.fillText('lanes ' + (scrollY + 1) + '–' + Math.min(lanes.length, scrollY + L.rows) + ' of ' + lanes.length, W - 6, L.top - 4);
    g.textAlign = 'left';
  }
  if (levels.has('summary') || levels.has('mixed')) askDetail(Array.from(yOf.keys(), (i) => a.co_id[i]));
  // What level is shown: the exact spans, the summary, or both (the gap).
  drawn.level = levels.has('summary') ? 'summary' : levels.has('mixed') ? 'exact + summary' : 'exact';
  $('range').textContent = rangeText + '  · ' + (drawn.level === 'exact' ? 'exact spans' :
    drawn.level + ' (buckets of ' + fmtNs(D.lod.bucket_ns) + ': shares running, runnable, suspended; wakes)');
  drawChart();
}
// What is under the mouse: a lane and the span there.
function pick(x, y) {
  const c = $('timeline'), W = c.clientWidth, H = c.clientHeight, L = layout(H), a = D.a;
  if (x < GUT) return null;
  const t = view.t0 + (x - GUT) * (view.t1 - view.t0) / (W - GUT);
  const find = (t0s, t1s, lo, hi) => { const k = lowerBound(t0s, lo, hi, t + 1e-9) - 1; return k >= lo && t1s[k] >= t ? k : -1; };
  if (y >= AX + 16 && y < AX + 16 + L.nt * TH) {
    const tt = Math.floor((y - AX - 16) / TH), k = find(D.thT0, D.thT1, D.thStart[tt], D.thStart[tt + 1]);
    return { t, thread: tt, span: k >= 0 ? a.th_order[k] : -1 };
  }
  if (y >= L.top) {
    const r = Math.floor((y - L.top) / CH) + scrollY;
    if (r >= lanes.length) return null;
    const i = lanes[r];
    if (i >= ctNav.GROUP) return { t, group: i - ctNav.GROUP };
    return { t, coro: i, span: find(a.sp_t0, a.sp_t1, a.co_span0[i], a.co_span0[i + 1]) };
  }
  return null;
}
function tipText(p) {
  if (p.group !== undefined) return ctNav.groupTip(p);
  const a = D.a, lines = [];
  if (p.thread !== undefined) lines.push('thread ' + D.threads[p.thread]);
  const k = p.span, i = k >= 0 ? a.sp_coro[k] : p.coro;
  if (i !== undefined) {
    const lab = labelOf(i);
    lines.push('coroutine ' + a.co_id[i] + (lab ? '  "' + lab + '"' : '') + '  · ' + coState(i) + ' at the end');
    if (a.co_create_site[i] !== NONE) lines.push('created at ' + siteOf(a.co_create_site[i]));
  }
  if (k >= 0) {
    const f = a.sp_flags[k], s = D.spState(f), w = D.spWait(f);
    lines.push(ST[s] + ' ' + fmtNs(a.sp_t1[k] - a.sp_t0[k]) + '  (+' + fmtNs(a.sp_t0[k]) + ' → +' + fmtNs(a.sp_t1[k]) + (D.spOpen(f) ? ', until the end' : '') + ')');
    if (s === 0 && a.sp_arg[k] !== NONE) lines.push('on thread ' + D.threads[a.sp_arg[k]]);
    if (s === 2) {
      lines.push('site ' + siteOf(a.sp_arg[k]) + (a.sp_arg[k] !== NONE ? '  ' + D.sites[a.sp_arg[k]][0] : ''));
      if (D.waits[w] === 'exit') lines.push('returned (its final suspend)');
      else if (w) lines.push('waits on ' + waitText(w, a.sp_obj[k]));
    }
    if (s === 1 && a.sp_arg[k] !== NONE) lines.push('woken by ' + (a.sp_arg[k] ? 'coroutine ' + a.co_id[a.sp_arg[k] - 1] : 'a plain thread'));
  }
  lines.push('at +' + fmtNs(p.t));
  return lines.join('\n');
}
function zoom(factor, x) {
  const c = $('timeline'), W = c.clientWidth;
  const t = view.t0 + (Math.max(GUT, x) - GUT) * (view.t1 - view.t0) / (W - GUT);
  const span = Math.max(100, (view.t1 - view.t0) * factor);
  const f = (t - view.t0) / (view.t1 - view.t0);
  view.t0 = t - f * span; view.t1 = view.t0 + span; fitted = false;
  drawTimeline();
}
function pan(frac) { const d = (view.t1 - view.t0) * frac; view.t0 += d; view.t1 += d; fitted = false; drawTimeline(); }
// A click on a lane selects its coroutine (ctrl/shift: toggles it in the selection).
function clickLane(e) {
  const p = pick(e.offsetX, e.offsetY);
  const i = p ? (p.coro !== undefined ? p.coro : p.span >= 0 ? D.a.sp_coro[p.span] : -1) : -1;
  if (i >= 0) { const s = new Set(e.ctrlKey || e.shiftKey ? sel : []); if (s.has(i)) s.delete(i); else s.add(i); setSelection(s, false); }
}
function timelineEvents() {
  const c = $('timeline'), tip = $('tip');
  c.tabIndex = 0;
  let drag = null;
  c.addEventListener('wheel', (e) => {
    e.preventDefault();
    if (e.ctrlKey || e.altKey || e.metaKey) zoom(Math.exp(e.deltaY * 0.002), e.offsetX);
    else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) pan((e.deltaX || e.deltaY) * 0.001);
    else { scrollY += Math.sign(e.deltaY) * 3; drawTimeline(); }
  }, { passive: false });
  c.addEventListener('mousedown', (e) => { if (ctNav.rangeDown(e)) return; drag = { x: e.offsetX, y: e.offsetY, t0: view.t0, t1: view.t1, s: scrollY, moved: false }; c.focus(); });
  window.addEventListener('mouseup', (e) => {
    if (drag && !drag.moved && e.target === c) clickLane(e);
    drag = null;
  });
  c.addEventListener('mousemove', (e) => {
    if (drag) {
      const dx = e.offsetX - drag.x, dy = e.offsetY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      if (drag.moved) {
        const dt = dx * (drag.t1 - drag.t0) / (c.clientWidth - GUT);
        view.t0 = drag.t0 - dt; view.t1 = drag.t1 - dt; fitted = false;
        scrollY = drag.s - Math.round(dy / CH);
        tip.hidden = true; drawTimeline(); return;
      }
    }
    const p = pick(e.offsetX, e.offsetY);
    hover = { x: e.offsetX };
    if (!p) { tip.hidden = true; drawTimeline(); return; }
    tip.textContent = tipText(p);
    tip.hidden = false;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.min(e.offsetX + 14, c.clientWidth - w - 4) + 'px';
    tip.style.top = Math.min(e.offsetY + 14, c.clientHeight - h - 4) + 'px';
    drawTimeline();
  });
  c.addEventListener('mouseleave', () => { tip.hidden = true; hover = null; drawTimeline(); });
  document.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'INPUT') { if (e.key === 'Escape') e.target.blur(); return; }
    const W = c.clientWidth, mid = hover ? hover.x : GUT + (W - GUT) / 2;
    switch (e.key) {
      case 'w': case 'W': case '+': case '=': zoom(0.7, mid); break;
      case 's': case 'S': case '-': zoom(1 / 0.7, mid); break;
      case 'a': case 'A': case 'ArrowLeft': pan(-0.15); break;
      case 'd': case 'D': case 'ArrowRight': pan(0.15); break;
      case 'ArrowUp': scrollY -= 1; drawTimeline(); break;
      case 'ArrowDown': scrollY += 1; drawTimeline(); break;
      case 'PageUp': scrollY -= 20; drawTimeline(); break;
      case 'PageDown': scrollY += 20; drawTimeline(); break;
      case 'f': case 'F': case '0': fit(); drawTimeline(); break;
      case 't': case 'T': theme(); break;
      case 'Escape': setSelection(new Set(), false); break;
      case '/': e.preventDefault(); tab('coros'); $('search').focus(); break;
      default: return;
    }
  });
}

// ---- counters chart ---------------------------------------------------------------------
function drawChart() {
  const c = $('chart'), g = ctx2d(c);
  if (!g || !D) return;
  const W = c.clientWidth, H = c.clientHeight, a = D.a, n = D.counters.n, bw = D.counters.bucket_ns, t0 = D.counters.t0;
  g.fillStyle = css.bg; g.fillRect(0, 0, W, H);
  const scale = (W - GUT) / (view.t1 - view.t0), top = 8, h = H - 22;
  const b0 = Math.max(0, Math.floor((view.t0 - t0) / bw)), b1 = Math.min(n, Math.ceil((view.t1 - t0) / bw) + 1);
  let maxL = 1, maxE = 1;
  for (let b = b0; b < b1; b++) { maxL = Math.max(maxL, a.cn_live[b], a.cn_suspended[b]); maxE = Math.max(maxE, a.cn_events[b]); }
  if (n && b0 >= n) maxL = Math.max(maxL, a.cn_live[n - 1], a.cn_suspended[n - 1]);
  g.font = '10px ui-monospace, monospace'; g.fillStyle = css.muted; g.textAlign = 'left';
  g.fillText('max ' + maxL + ' coroutines', 6, top + 10);
  g.fillText(fmtN(Math.round(maxE * 1e9 / bw)) + ' events/s', 6, top + 24);
  g.fillText('bucket ' + fmtNs(bw), 6, top + 38);
  const x = (b) => GUT + (t0 + b * bw - view.t0) * scale;
  // events/s bars
  g.fillStyle = css.events; g.globalAlpha = .35;
  for (let b = b0; b < b1; b++) if (a.cn_events[b]) { const hh = a.cn_events[b] / maxE * h; g.fillRect(x(b), top + h - hh, Math.max(1, bw * scale), hh); }
  g.globalAlpha = 1;
  const line = (arr, color) => {
    g.strokeStyle = color; g.lineWidth = 1.5; g.beginPath();
    let y = top + h;
    if (b0 >= n && n) { y = top + h - arr[n - 1] / maxL * h; g.moveTo(GUT, y); }
    for (let b = b0; b < b1; b++) { y = top + h - arr[b] / maxL * h; if (b === b0) g.moveTo(x(b), y); else g.lineTo(x(b), y); g.lineTo(x(b + 1), y); }
    // The levels hold from the last change to the end of the run.
    if (b1 === n && n) g.lineTo(GUT + (D.duration_ns - view.t0) * scale, y);
    g.stroke(); g.lineWidth = 1;
  };
  line(a.cn_suspended, css.muted); line(a.cn_runnable, css.runnable); line(a.cn_running, css.running); line(a.cn_live, css.live);
  g.fillStyle = css.lost;
  for (let b = b0; b < b1; b++) if (a.cn_lost[b]) g.fillRect(x(b), top + h + 2, Math.max(2, bw * scale), 6);
  if (hover) { g.strokeStyle = css.fg; g.globalAlpha = .35; g.beginPath(); g.moveTo(hover.x + .5, 0); g.lineTo(hover.x + .5, H); g.stroke(); g.globalAlpha = 1; }
}

// ---- theme, tabs, live, start --------------------------------------------------------------
function readCss() {
  const s = getComputedStyle(document.documentElement);
  for (const k of ['bg', 'panel', 'line', 'fg', 'muted', 'accent', 'running', 'runnable', 'created', 'suspended', 'suspfd', 'stuck', 'wake', 'sel', 'grid', 'live', 'events', 'lost', 'lane'])
    css[k] = s.getPropertyValue('--' + k).trim();
}
function theme(set) {
  const cur = set || (document.documentElement.dataset.theme === 'light' ? 'dark' : 'light');
  document.documentElement.dataset.theme = cur;
  try { localStorage.setItem('corotracer-theme', cur); } catch (e) { /* file:// may refuse */ }
  readCss();
  if (D) { drawTimeline(); drawGraph(); }
}
function tab(name) {
  document.querySelectorAll('.tabs button[data-tab]').forEach((b) => b.classList.toggle('on', b.dataset.tab === name));
  for (const t of ['coros', 'sites', 'graph']) $('tab-' + t).hidden = t !== name;
  if (name === 'coros') renderCoros();
  if (name === 'graph') drawGraph();
}
function show(d) {
  const keep = D && !fitted ? { t0: view.t0, t1: view.t1 } : null;
  const ids = D ? [...sel].map((i) => D.a.co_id[i]) : [];
  D = prepare(d);
  hues.clear(); // indices change with new data
  sel = new Set(ids.map((id) => D.idOf.get(id)).filter((i) => i !== undefined));
  if (keep) view = keep; else fit();
  ctNav.loaded(); // the first time: the view of the URL's hash
  header(); findings(); heads();
  orderLanes(); drawTimeline();
  if (!window.corotracer.readyMs) window.corotracer.readyMs = window.corotracer.marks.ready = performance.now();
  // The tables after the timeline is on screen and answers input.
  setTimeout(() => {
    sites(); filterCoros(); ctNav.caption(); drawGraph();
    void document.body.offsetHeight; // their layout now, not in the first redraw on input
    document.body.dataset.ready = '1';
  }, 0);
}
async function loadLive() {
  if (loading) return;
  loading = true;
  try {
    const r = await fetch('/data?token=' + encodeURIComponent(TOKEN), { cache: 'no-store' });
    if (r.ok) { version = Number(r.headers.get('X-Corotracer-Version')) || version; show(decode(await inflate([new Uint8Array(await r.arrayBuffer())]))); }
  } finally { loading = false; }
}
// A flight recorder's live view (run --flight --serve): its window, what
// went before it, and each dump (when, why, which file).
function flight(w, dumps) {
  const el = $('live-flight');
  el.hidden = false;
  const mib = (b) => (b / 1048576).toFixed(1) + ' MiB';
  let t = ' · flight window ' + fmtNs(w.span) + ', ' + mib(w.bytes) + ' of ' + mib(w.size) +
    (w.dropped_bytes ? ', ' + mib(w.dropped_bytes) + ' dropped before it' : '');
  if (w.ndumps) {
    t += ' · ' + w.ndumps + (w.ndumps === 1 ? ' dump: ' : ' dumps: ') + dumps.map((d) =>
      d.trigger + ' → ' + d.path.replace(/.*\//, '') + (d.error ? ' (not written)' : '') + ' ' + fmtNs(d.ago) + ' ago').join(', ');
  }
  el.textContent = t;
  el.title = dumps.map((d) => d.path).join('\n');
}
function live() {
  $('live-box').hidden = false;
  const es = new EventSource('/events?token=' + encodeURIComponent(TOKEN));
  es.addEventListener('tick', (e) => {
    const k = JSON.parse(e.data);
    $('stat-stuck').textContent = String(k.stuck);
    $('stat-events').textContent = fmtN(k.events);
    $('stat-coros').textContent = fmtN(k.coroutines);
    $('stat-lost').textContent = fmtN(k.lost);
    $('stat-drops').textContent = String(k.drops);
    $('live-text').textContent = k.ended ? 'run ended' : 'live · ' + k.alive + ' alive, ' + k.runnable + ' runnable';
    $('live-box').classList.toggle('ended', !!k.ended);
    if (k.window) flight(k.window, k.dumps);
    if (k.snapshot > version) loadLive();
    if (k.ended) { ended = true; es.close(); }
  });
  es.onerror = () => {
    if (ended) return; $('live-text').textContent = 'disconnected (the page keeps its data)'; $('live-box').classList.add('ended'); };
  loadLive();
}
async function start() {
  let saved = null;
  try { saved = localStorage.getItem('corotracer-theme'); } catch (e) { /* ignore */ }
  theme(saved || (matchMedia('(prefers-color-scheme: light)').matches ? 'light' : 'dark'));
  document.querySelectorAll('.tabs button[data-tab]').forEach((b) => b.addEventListener('click', () => tab(b.dataset.tab)));
  $('theme').addEventListener('click', () => theme());
  $('clearsel').addEventListener('click', () => setSelection(new Set(), false));
  $('search').addEventListener('input', () => { if (D) { $('cotable').scrollTop = 0; filterCoros(); } });
  $('cotable').addEventListener('scroll', () => { if (D) renderCoros(); });
  window.addEventListener('resize', () => { if (D) { drawTimeline(); renderCoros(); drawGraph(); } });
  timelineEvents();
  window.corotracer = { marks: { start: performance.now() }, selectedIds: () => D ? [...sel].map((i) => D.a.co_id[i]).sort((x, y) => x - y) : [], data: () => D,
    spanText: (k) => D ? tipText({ span: k, t: D.a.sp_t0[k] }) : '',
    drawn: () => drawn, detail: () => detail && { t0: detail.t0, t1: detail.t1, whole: detail.whole, spans: detail.d.a.sp_t0.length, view: [view.t0, view.t1] }, view: (t0, t1) => { view.t0 = t0; view.t1 = t1; fitted = false; drawTimeline(); return drawn; } };
  ctNav.init({
    data: () => D, view: () => view, sel: () => sel, fitted: () => fitted, css: () => css, lanes: () => lanes, canvas: () => $('timeline'),
    GUT, CH, laneTop: () => layout($('timeline').clientHeight).top, pick, clickLane, lowerBound, fmtNs, select: setSelection, setSel: (s) => { sel = s; showSel(); },
    setView: (t0, t1, draw) => { view = { t0, t1 }; fitted = false; if (draw) drawTimeline(); },
    redraw: drawTimeline, relane: () => { orderLanes(); drawTimeline(); },
    tables: () => { findings(); sites(); filterCoros(); ctNav.caption(); },
  });
  if (LIVE) return live();
  const M = window.corotracer.marks;
  const ab = await inflate(dataBlocks());
  M.inflated = performance.now();
  const d = decode(ab);
  M.decoded = performance.now();
  show(d);
}
// The data blocks as the parser adds them (this script runs before them): a
// block is whole once the next one exists, the last one at DOMContentLoaded.
// Each is decoded and inflated while the parser goes on with the rest.
async function* dataBlocks() {
  const SEL = 'script[type="application/x-corotracer-data"]';
  let taken = 0, wake = null, done = document.readyState !== 'loading';
  const poke = () => { if (wake) { wake(); wake = null; } };
  const mo = new MutationObserver(poke);
  if (!done) {
    mo.observe(document.body, { childList: true });
    document.addEventListener('DOMContentLoaded', () => { done = true; poke(); }, { once: true });
  }
  for (;;) {
    const blocks = document.querySelectorAll(SEL), whole = done ? blocks.length : blocks.length - 1;
    while (taken < whole) yield b64(blocks[taken++].textContent.trim());
    if (done) break;
    await new Promise((r) => { wake = r; });
  }
  mo.disconnect();
  window.corotracer.marks.parsed = performance.now();
}
start().catch((e) => { const n = $('note'); n.className = 'note warn'; n.textContent = 'Cannot show this data: ' + e.message; });
})();
