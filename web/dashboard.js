// dashboard.js - the corotracer dashboard (docs/DASHBOARD.md): decodes the
// data blob (zlib, DecompressionStream), shows the header, the findings, the
// site and coroutine tables and the wait-for graph, the live view's ticks,
// and starts the page. The timeline (drawing, zoom, level of detail) is
// timeline.js, which comes before it in the same function scope (assets.c
// wraps the two in one function after nav.js). Every string from the trace
// goes in through textContent or canvas text, never as markup.
const $ = (id) => document.getElementById(id);
const LIVE = document.body.dataset.mode === 'live';
const TOKEN = new URLSearchParams(location.search).get('token') || '';
const ST = ['running', 'runnable', 'suspended', 'created', 'destroyed', 'unknown'];
const NONE = 0xffffffff;
let D = null;           // the decoded data
let sel = new Set();    // selected coroutine indices
let css = {};           // the theme's colours (readCss)
let coRows = [];        // coroutine table rows (indices), filtered
let coSort = { key: 'id', dir: 1 }, siteSort = { key: 'count', dir: -1 };
let version = 0, wanted = 0, loading = false, ended = false;
let onFinding = null;   // the finding last clicked (its object in D.f), until the selection is cleared

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
  d.ex = null; // exactSpans(): made when first drawn or picked
  prepareLod(d);
  d.search = null;
  return d;
}
// What drawing and picking exact spans need, made the first time they are
// (a page opens zoomed out, drawn from the summary; show() makes it right
// after the first frame): prefix sums of running time (a pixel holding many
// spans is drawn by its busy fraction), the running spans by thread (start,
// end, busy prefix sums) and each thread's first.
function exactSpans() {
  if (D.ex) return D.ex;
  const a = D.a, n = a.sp_t0.length, th = a.th_order, nt = D.threads.length;
  const x = { cumRun: new Float64Array(n + 1), thStart: new Uint32Array(nt + 1) };
  for (let i = 0; i < n; i++) x.cumRun[i + 1] = x.cumRun[i] + (D.spState(a.sp_flags[i]) === 0 ? a.sp_t1[i] - a.sp_t0[i] : 0);
  for (let k = 0; k < th.length; k++) x.thStart[a.sp_arg[th[k]] + 1]++;
  for (let t = 0; t < nt; t++) x.thStart[t + 1] += x.thStart[t];
  x.thT0 = new Float64Array(th.length); x.thT1 = new Float64Array(th.length); x.thCum = new Float64Array(th.length + 1);
  for (let k = 0; k < th.length; k++) {
    x.thT0[k] = a.sp_t0[th[k]]; x.thT1[k] = a.sp_t1[th[k]];
    x.thCum[k + 1] = x.thCum[k] + x.thT1[k] - x.thT0[k];
  }
  return (D.ex = x);
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
// The waits under --stuck-ms the findings do not judge (the report's "Not judged,
// short waits" lines, trace.short_waits): one line each, with the option that would.
function shortWaits(sw) {
  const line = (n, what, min, max) => {
    if (!n) return null;
    const ms = Math.floor((min - 1) / 1e6);
    return 'Not judged, short waits: ' + n + ' coroutine' + (n === 1 ? ' ' : 's ') + what + ', after ' +
      fmtNs(min) + (max !== min ? ' to ' + fmtNs(max) : '') + ', not longer than the ' + fmtNs(sw.stuck_ns) +
      ' threshold: ' + (min > 1e6 ? sw.option + ' ' + ms + ' would judge ' + (n === 1 ? 'it' : 'them all') : 'too short for ' + sw.option + ' to judge');
  };
  return [line(sw.destroyed_waiting, 'destroyed while still waiting, never woken', sw.min_ns, sw.max_ns),
    line(sw.still_waiting, 'still suspended at the end of a trace that records no wakes', sw.still_min_ns, sw.still_max_ns)]
    .filter((x) => x);
}

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
  const sw = D.f.trace && D.f.trace.short_waits;
  if (sw) shortWaits(sw).forEach((x) => box.appendChild(el('div', 'muted short-waits', x)));
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
  const M = window.corotracer.marks;
  if (!M.prepared) M.prepared = performance.now();
  hues.clear(); // indices change with new data
  sel = new Set(ids.map((id) => D.idOf.get(id)).filter((i) => i !== undefined));
  if (keep) view = keep; else fit();
  ctNav.loaded(); // the first time: the view of the URL's hash
  header(); findings(); heads();
  orderLanes(); drawTimeline();
  if (!window.corotracer.readyMs) window.corotracer.readyMs = M.ready = performance.now();
  // The tables after the timeline is on screen and answers input.
  setTimeout(() => {
    exactSpans(); sites(); filterCoros(); ctNav.caption(); drawGraph();
    void document.body.offsetHeight; // their layout now, not in the first redraw on input
    document.body.dataset.ready = '1';
    if (!M.tables) M.tables = performance.now();
  }, 0);
}
// want: the newest version a tick announced. A tick that comes while a
// fetch is under way is not lost: the fetch goes on until the page holds it
// (the final tick closes the stream, so it may be the last word).
async function loadLive(want) {
  wanted = Math.max(wanted, want || 0);
  if (loading) return;
  loading = true;
  try {
    do {
      const r = await fetch('/data?token=' + encodeURIComponent(TOKEN), { cache: 'no-store' });
      if (!r.ok) break;
      version = Number(r.headers.get('X-Corotracer-Version')) || version;
      show(decode(await inflate([new Uint8Array(await r.arrayBuffer())])));
    } while (wanted > version);
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
    if (k.snapshot > version) loadLive(k.snapshot);
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
