// nav.js - the dashboard's navigation and its lanes at scale (docs/DASHBOARD.md
// "Navigation"): jumps to a finding's moment, to a stuck coroutine's last
// suspend and to a selection's wakes; the view kept in the URL's hash; a time
// range that filters the tables; coroutine lanes grouped by label or site and
// searchable. It comes before dashboard.js in the page's one script, which
// hands it its state (init) and calls it from small hooks (ctNav.*).
'use strict';
const ctNav = (function () {
const GROUP = 0x80000000; // a lane entry at or above this is a group's lane: GROUP + group index
const AUTO = 200;         // "auto" groups the lanes when more coroutines than this would get one
const NONE = 0xffffffff;
const $ = (id) => document.getElementById(id);
let A = null;             // dashboard.js's state and functions (init)
let range = null;         // { r0, r1 }: the time range the tables show, ns from the start
let rd = null;            // the range's tables, for one data and one range (rangeData)
let grp = null;           // the grouping, for one data and one mode (grouping)
let mode = 'auto', lq = '', open = new Set(), navT = null, hashTimer = 0, written = null, first = true;
let down = null;          // a press on the timeline: where, and whether it draws a range (shift)

// ---- lanes at scale -------------------------------------------------------------
// The group a label falls in: its numbers as '*' ("conn-17" -> "conn-*").
const labelKey = (s) => s ? s.replace(/\d+/g, '*') : '(no label)';
function siteIdx(a, i) { return a.co_site[i] !== NONE ? a.co_site[i] : a.co_create_site[i]; }
// Each coroutine's group (gid) in mode 'label' or 'site', through its label's
// or site's index: O(coroutines), once per data and mode.
function grouping(m) {
  const D = A.data();
  if (grp && grp.D === D && grp.mode === m) return grp;
  const a = D.a, nc = D.nc, gid = new Int32Array(nc), byName = new Map(), groups = [];
  const names = m === 'label' ? D.labels.map(labelKey) : D.siteName.map((s) => s || '(no site)');
  const ofIdx = new Int32Array(names.length + 1).fill(-1); // the last: no site
  for (let i = 0; i < nc; i++) {
    let x = m === 'label' ? a.co_label[i] : siteIdx(a, i);
    if (x === NONE || x >= names.length) x = names.length;
    if (ofIdx[x] < 0) {
      const name = x < names.length ? names[x] : m === 'label' ? '(no label)' : '(no site)';
      let g = byName.get(name);
      if (g === undefined) { g = groups.length; byName.set(name, g); groups.push({ key: name, stuck: 0 }); }
      ofIdx[x] = g;
    }
    gid[i] = ofIdx[x];
    if (D.stuck.has(i)) groups[gid[i]].stuck++;
  }
  grp = { D, mode: m, gid, groups, count: null, acc: null };
  return grp;
}
function laneMatch() {
  if (!lq) return null;
  const D = A.data(), a = D.a, q = lq.toLowerCase(), num = /^\d+$/.test(q) ? Number(q) : null;
  const lab = D.labels.map((s) => s.toLowerCase().includes(q)), site = D.siteName.map((s) => s.toLowerCase().includes(q));
  return (i) => a.co_id[i] === num || lab[a.co_label[i]] || (siteIdx(a, i) !== NONE && site[siteIdx(a, i)] === true);
}
// The coroutine lanes from dashboard.js's order (selection, findings' coroutines,
// the rest by id): the lane search's matches; grouped (mode, or "auto" past
// AUTO lanes), the selection and a few findings' coroutines keep lanes of
// their own, each group is one lane (largest first) followed by its members
// when open. Returns coroutine indices and GROUP + group entries.
function lanes(order) {
  const D = A.data(), sel = A.sel(), match = laneMatch();
  const list = match ? order.filter(match) : order;
  const m = mode === 'auto' ? (list.length > AUTO ? 'label' : 'none') : mode;
  if (m === 'none') return list;
  const G = grouping(m), few = D.inFinding.size <= AUTO, out = [], members = G.groups.map(() => []);
  for (const i of list) {
    if (sel.has(i) || (few && D.inFinding.has(i))) out.push(i);
    else members[G.gid[i]].push(i);
  }
  G.count = members.map((x) => x.length);
  const order2 = G.groups.map((_, g) => g).filter((g) => members[g].length)
    .sort((x, y) => members[y].length - members[x].length || (G.groups[x].key < G.groups[y].key ? -1 : 1));
  for (const g of order2) {
    if (members[g].length === 1) { out.push(members[g][0]); continue; }
    out.push(GROUP + g);
    if (open.has(G.groups[g].key)) for (const i of members[g]) out.push(i);
  }
  return out;
}
// Per group, time in each state (running, runnable or created, suspended)
// summed over its members in NB buckets across the run: a stretch adds its
// parts to the buckets it starts and ends in and a +1/-1 of whole buckets
// between (summed at the end), O(spans + summary entries) once per grouping.
// Where the page holds no spans of a coroutine (the gap between detail_until
// and detail_from, unless it is kept whole) its summary entries stand in: the
// shares running and runnable of each entry's bucket, and its life there less
// those as suspended.
function buckets(G) {
  if (G.acc) return G;
  const D = A.data(), a = D.a, ng = G.groups.length, T = Math.max(D.duration_ns, 1);
  const NB = Math.max(64, Math.min(2048, Math.floor((1 << 22) / (3 * ng)))), bw = T / NB;
  const acc = G.groups.map(() => new Float32Array(3 * NB)), whole = G.groups.map(() => new Float32Array(3 * (NB + 1)));
  // Adds f × [t0, t1) to group g's state s (f < 0 takes it away).
  const add = (g, s, t0, t1, f) => {
    t0 = Math.max(0, t0); t1 = Math.min(T, t1);
    if (!(t1 > t0)) return;
    const b0 = Math.min(NB - 1, Math.floor(t0 / bw)), b1 = Math.min(NB - 1, Math.floor(t1 / bw)), ac = acc[g];
    if (b0 === b1) { ac[b0 * 3 + s] += (t1 - t0) * f; return; }
    ac[b0 * 3 + s] += ((b0 + 1) * bw - t0) * f; ac[b1 * 3 + s] += (t1 - b1 * bw) * f;
    whole[g][(b0 + 1) * 3 + s] += f; whole[g][b1 * 3 + s] -= f;
  };
  const gap = D.gap || [T, T];
  for (let k = 0; k < a.sp_t0.length; k++) {
    const st = D.spState(a.sp_flags[k]), s = st === 0 ? 0 : st === 2 ? 2 : 1, i = a.sp_coro[k], g = G.gid[i];
    if (a.co_keep[i]) { add(g, s, a.sp_t0[k], a.sp_t1[k], 1); continue; }
    add(g, s, a.sp_t0[k], Math.min(a.sp_t1[k], gap[0]), 1);
    add(g, s, Math.max(a.sp_t0[k], gap[1]), a.sp_t1[k], 1);
  }
  const w = D.lod.bucket_ns;
  for (let i = 0; D.gap && i < D.nc; i++) {
    if (a.co_keep[i]) continue;
    const g = G.gid[i], la = Math.max(gap[0], a.co_first[i]), lb = Math.min(gap[1], a.co_state[i] === 4 ? a.co_last[i] : T);
    if (!(lb > la)) continue;
    add(g, 2, la, lb, 1);
    for (let k = a.lod_lane0[i], e = a.lod_lane0[i + 1]; k < e; k++) {
      const r = a.lod_run[k] / 65535, q = a.lod_rdy[k] / 65535, ta = Math.max(la, D.lodT[k]), tb = Math.min(lb, D.lodT[k] + w);
      add(g, 0, ta, tb, r); add(g, 1, ta, tb, q); add(g, 2, ta, tb, -(r + q));
    }
  }
  for (let g = 0; g < ng; g++) {
    const c = [0, 0, 0], ac = acc[g], wh = whole[g];
    for (let b = 0; b < NB; b++) for (let s = 0; s < 3; s++) { c[s] += wh[b * 3 + s]; ac[b * 3 + s] += c[s] * bw; }
  }
  G.acc = acc; G.bw = bw; G.NB = NB;
  return G;
}
// A group's time in each state over [ta, tb) (ns from the start).
function shares(G, g, ta, tb) {
  const ac = G.acc[g], fa = Math.max(0, ta / G.bw), fb = Math.min(G.NB, tb / G.bw), r = [0, 0, 0];
  for (let b = Math.floor(fa); b < fb; b++) {
    const w = Math.min(b + 1, fb) - Math.max(b, fa);
    for (let s = 0; s < 3; s++) r[s] += ac[b * 3 + s] * w;
  }
  return r;
}
// Draws lane entry e (a group) at y..y+h: its name and member count, then per
// pixel column the share of its members' time running (bottom), runnable,
// suspended (top); equal columns are drawn as one rectangle.
function drawGroup(g2, e, y, h, W) {
  const G = buckets(grp), gi = e - GROUP, info = G.groups[gi], css = A.css(), v = A.view(), GUT = A.GUT;
  const ns = (v.t1 - v.t0) / (W - GUT);
  g2.fillStyle = css.lane; g2.fillRect(GUT, y, W - GUT, h);
  g2.fillStyle = info.stuck ? css.stuck : css.fg;
  g2.fillText((open.has(info.key) ? '− ' : '+ ') + info.key + ' (' + G.count[gi] + (info.stuck ? ', ' + info.stuck + ' stuck' : '') + ')', 6, y + 10, GUT - 12);
  let from = GUT, last = '';
  const flush = (to) => {
    if (!last) return;
    const [hr, hq] = last.split(',').map(Number);
    g2.fillStyle = css.suspended; g2.fillRect(from, y, to - from, h - hr - hq);
    g2.fillStyle = css.runnable; g2.fillRect(from, y + h - hr - hq, to - from, hq);
    g2.fillStyle = css.running; g2.fillRect(from, y + h - hr, to - from, hr);
  };
  for (let px = GUT; px <= W; px++) {
    let key = '';
    if (px < W) {
      const ta = v.t0 + (px - GUT) * ns, r = shares(G, gi, ta, ta + ns), tot = r[0] + r[1] + r[2];
      if (tot > 0) key = Math.round(h * r[0] / tot) + ',' + Math.round(h * r[1] / tot);
    }
    if (key !== last) { flush(px); from = px; last = key; }
  }
}
function groupTip(p) {
  const G = buckets(grp), info = G.groups[p.group], v = A.view(), c = A.canvas().clientWidth - A.GUT;
  const ns = (v.t1 - v.t0) / c, r = shares(G, p.group, p.t - ns / 2, p.t + ns / 2), tot = r[0] + r[1] + r[2] || 1;
  const pc = (x) => (100 * x / tot).toFixed(0) + ' %';
  return 'group ' + info.key + ' (by ' + G.mode + '): ' + G.count[p.group] + ' coroutines' + (info.stuck ? ', ' + info.stuck + ' stuck' : '') +
    '\nhere: running ' + pc(r[0]) + ', runnable ' + pc(r[1]) + ', suspended ' + pc(r[2]) +
    '\nclick: ' + (open.has(info.key) ? 'collapse' : 'expand') + '\nat +' + A.fmtNs(p.t);
}
function toggleGroup(g) {
  const key = grp.groups[g].key;
  if (open.has(key)) open.delete(key); else open.add(key);
  A.relane(); saveSoon();
}

// ---- the range's tables -------------------------------------------------------------
// Whether a coroutine's spans in [r0, r1] are not all held (the page summarized
// after detail_until and kept in full only the findings' coroutines).
function summarized(D, r1) { return D.summary.spans_dropped > 0 && r1 > (D.summary.detail_until || 0); }
// The tables for the range, from the spans the page holds: a coroutine is in
// it when it ran or was runnable then, or a span of it began then (an event);
// its runs are its running spans there; a site's suspensions are those that
// began then. Coroutines whose spans are not held there: by their lifetime.
function rangeData() {
  const D = A.data();
  if (!range) return null;
  if (rd && rd.D === D && rd.r0 === range.r0 && rd.r1 === range.r1) return rd;
  const a = D.a, nc = D.nc, { r0, r1 } = range, active = new Uint8Array(nc), runs = new Uint32Array(nc);
  const perSite = new Map();
  let nsusp = 0;
  for (let k = 0; k < a.sp_t0.length; k++) {
    const t0 = a.sp_t0[k], t1 = a.sp_t1[k];
    if (t0 > r1 || t1 < r0) continue;
    const i = a.sp_coro[k], st = D.spState(a.sp_flags[k]), began = t0 >= r0;
    if (st !== 2 || began) active[i] = 1;
    if (st === 0) runs[i]++;
    if (st === 2 && began && a.sp_arg[k] !== NONE) {
      let l = perSite.get(a.sp_arg[k]);
      if (!l) perSite.set(a.sp_arg[k], l = []);
      l.push(t1 - t0); nsusp++;
    }
  }
  const part = summarized(D, r1);
  if (part) for (let i = 0; i < nc; i++) if (!a.co_keep[i] && a.co_first[i] <= r1 && a.co_last[i] >= r0) active[i] = 1;
  const sites = [];
  for (const [s, l] of perSite) {
    l.sort((x, y) => x - y);
    const q = (p) => l[Math.max(0, Math.ceil(p * l.length) - 1)]; // nearest rank
    const [addr, , fn, file, line] = D.sites[s], sym = fn || file ? { function: fn, file, line } : D.sym.get(addr) || {};
    sites.push({ site: addr, function: sym.function, file: sym.file, line: sym.line, count: l.length,
      suspended_ns: { p50: q(0.5), p99: q(0.99), max: l[l.length - 1] } });
  }
  const fl = (D.f.findings || []).map((x, k) => !(x.coroutines || []).length || moments(k).some((t) => t >= r0 && t <= r1));
  let ncoro = 0;
  for (let i = 0; i < nc; i++) ncoro += active[i];
  rd = { D, r0, r1, active, runs, sites, findings: fl, part, ncoro, nsusp };
  return rd;
}
function caption() {
  const box = $('rangecap'), r = rangeData();
  box.hidden = !r;
  if (!r) return;
  const D = A.data(), nf = r.findings.filter(Boolean).length;
  box.textContent = 'Range +' + A.fmtNs(r.r0) + ' … +' + A.fmtNs(r.r1) + ': ' + nf + ' of ' + r.findings.length + ' findings, ' +
    r.ncoro + ' of ' + D.nc + ' coroutines, sites from ' + r.nsusp + ' suspensions begun in it' +
    (r.part ? '. Summarized: exact spans are not held after +' + A.fmtNs(D.summary.detail_until || 0) +
      ' but for the findings\' coroutines; the others are listed by lifetime, their runs and suspensions there not counted.' : '.') +
    ' Esc clears.';
}
function setRange(r0, r1) {
  range = r0 === null || !(Math.abs(r1 - r0) > 0) ? null : { r0: Math.min(r0, r1), r1: Math.max(r0, r1) };
  $('range0').value = range ? String(+(range.r0 / 1e6).toFixed(6)) : '';
  $('range1').value = range ? String(+(range.r1 / 1e6).toFixed(6)) : '';
  A.tables(); A.redraw(); saveSoon();
}
// Shades the timeline outside the range and marks its edges (after drawTimeline).
function overlay(g2, W, H, top) {
  saveSoon();
  if (!range) return;
  const v = A.view(), GUT = A.GUT, sc = (W - GUT) / (v.t1 - v.t0), css = A.css();
  const x0 = Math.max(GUT, Math.min(W, GUT + (range.r0 - v.t0) * sc)), x1 = Math.max(GUT, Math.min(W, GUT + (range.r1 - v.t0) * sc));
  g2.globalAlpha = 0.45; g2.fillStyle = css.bg;
  g2.fillRect(GUT, top, x0 - GUT, H - top); g2.fillRect(x1, top, W - x1, H - top);
  g2.globalAlpha = 1; g2.strokeStyle = css.accent;
  for (const x of [x0, x1]) if (x > GUT && x < W) { g2.beginPath(); g2.moveTo(x + 0.5, top); g2.lineTo(x + 0.5, H); g2.stroke(); }
}

// ---- jumps ----------------------------------------------------------------------------
// The moments of finding k's coroutines (ns from the start): a wake the finding
// names (a lost schedule, a race, a starvation), else the start of the state
// it ended in (a lost wakeup's park), else its creation.
function moments(k) {
  const D = A.data(), a = D.a, out = [];
  for (const c of D.f.findings[k].coroutines || []) {
    if (c.wake && typeof c.wake.at_ns === 'number') { out.push(c.wake.at_ns); continue; }
    const i = D.idOf.get(c.probe_id);
    if (i !== undefined) out.push(a.co_state[i] === 2 ? a.co_since[i] : a.co_first[i]);
  }
  return out;
}
// Centers the view on t: the current width when zoomed in, else a 50th of the run.
function centerOn(t) {
  const D = A.data(), v = A.view();
  let w = v.t1 - v.t0;
  if (w > D.duration_ns / 10) w = Math.max(D.duration_ns / 50, 1000);
  navT = t;
  A.setView(t - w / 2, t + w / 2, true);
}
function say(s) { $('navmsg').textContent = s; }
function jumpToFinding(k) {
  const m = moments(k);
  if (!m.length) return;
  const t = Math.min(...m), D = A.data(), w = Math.max(D.duration_ns / 50, 1000);
  navT = t;
  A.setView(t - w / 4, t + w * 3 / 4, true); // what led to it, and after
  say('finding at +' + A.fmtNs(t) + (m.length > 1 ? ' (its first of ' + m.length + ' coroutines)' : ''));
}
const here = () => { const v = A.view(); return navT !== null && navT >= v.t0 && navT <= v.t1 ? navT : (v.t0 + v.t1) / 2; };
// The last suspend of a stuck coroutine, the next after the current moment
// (wrapping): among the selected ones when any is stuck, else all (then it
// becomes the selection).
function jumpStuck() {
  const D = A.data(), a = D.a, sel = A.sel();
  let list = [...D.stuck].filter((i) => sel.has(i));
  const mine = list.length > 0;
  if (!mine) list = [...D.stuck];
  if (!list.length) return say('no stuck coroutine');
  const at = (i) => { const e = a.co_span0[i + 1] - 1; return e >= a.co_span0[i] && D.spState(a.sp_flags[e]) === 2 ? a.sp_t0[e] : a.co_since[i]; };
  list.sort((x, y) => at(x) - at(y) || a.co_id[x] - a.co_id[y]);
  const t = here(), i = list.find((j) => at(j) > t + 1e-6) ?? list[0];
  if (!mine) A.select(new Set([i]), true);
  centerOn(at(i));
  say('coroutine ' + a.co_id[i] + ' stuck since +' + A.fmtNs(at(i)));
}
// The next (dir 1) or previous (-1) wake of a selected coroutine from the current moment.
function jumpWake(dir) {
  const D = A.data(), a = D.a, sel = A.sel(), wt = a.wk_t;
  if (!sel.size) return say('select a coroutine first');
  const t = here();
  let k = A.lowerBound(wt, 0, wt.length, t);
  if (dir > 0) { while (k < wt.length && (wt[k] <= t || !sel.has(a.wk_to[k]))) k++; } else { k--; while (k >= 0 && !sel.has(a.wk_to[k])) k--; }
  if (k < 0 || k >= wt.length) return say('no ' + (dir > 0 ? 'later' : 'earlier') + ' wake of the selection' + (D.summary.wakes_dropped ? ' among the wakes held' : ''));
  centerOn(wt[k]);
  say('wake of ' + a.co_id[a.wk_to[k]] + ' by ' + (a.wk_from[k] ? 'coroutine ' + a.co_id[a.wk_from[k] - 1] : 'a plain thread') + ' at +' + A.fmtNs(wt[k]));
}

// ---- the URL ---------------------------------------------------------------------------
// The view as the hash holds it: t0, t1 (ns, when not fitted), sel (ids), q (the
// table's search), r (the range), lanes (the lane search), group, open (groups).
function viewHash() {
  const D = A.data(), v = A.view(), p = new URLSearchParams();
  if (!D) return '';
  if (!A.fitted()) { p.set('t0', String(Math.round(v.t0))); p.set('t1', String(Math.round(v.t1))); }
  const ids = [...A.sel()].map((i) => D.a.co_id[i]).sort((x, y) => x - y);
  if (ids.length) p.set('sel', ids.join(','));
  if ($('search').value) p.set('q', $('search').value);
  if (range) p.set('r', Math.round(range.r0) + ',' + Math.round(range.r1));
  if (lq) p.set('lanes', lq);
  if (mode !== 'auto') p.set('group', mode);
  for (const k of open) p.append('open', k);
  return p.toString();
}
// Written at most every 200 ms (Chromium throttles frequent history updates).
function saveSoon() {
  if (hashTimer || !A || !A.data()) return;
  hashTimer = setTimeout(() => {
    hashTimer = 0;
    const h = viewHash();
    if (h !== location.hash.slice(1)) { written = h; history.replaceState(null, '', h ? '#' + h : location.pathname + location.search); }
  }, 200);
}
// The view from the hash (a copied URL): before the first drawing, and when the
// hash changes. The hash is input: times are taken only within the run's
// reach (-T … 2T) and a view only 100 ns wide or more (the zoom's least),
// where float steps still advance the axis's ticks; anything else is ignored.
function restore() {
  const p = new URLSearchParams(location.hash.slice(1)), D = A.data(), T = Math.max(D.duration_ns, 1000);
  const within = (a, b, least) => Number.isFinite(a) && Number.isFinite(b) && a >= -T && b <= 2 * T && b - a >= least;
  const t0 = Number(p.get('t0')), t1 = Number(p.get('t1'));
  if (p.has('t0') && p.has('t1') && within(t0, t1, 100)) A.setView(t0, t1, false);
  if (p.has('sel')) A.setSel(new Set(p.get('sel').split(',').map((x) => D.idOf.get(Number(x))).filter((i) => i !== undefined)));
  $('search').value = p.get('q') || '';
  mode = ['label', 'site', 'none'].includes(p.get('group')) ? p.get('group') : 'auto';
  $('lanegroup').value = mode;
  lq = p.get('lanes') || ''; $('lanesearch').value = lq;
  open = new Set(p.getAll('open'));
  const r = (p.get('r') || '').split(',').map(Number);
  range = r.length === 2 && within(r[0], r[1], 1) ? { r0: r[0], r1: r[1] } : null;
  $('range0').value = range ? String(+(range.r0 / 1e6).toFixed(6)) : '';
  $('range1').value = range ? String(+(range.r1 / 1e6).toFixed(6)) : '';
}

// ---- hooks dashboard.js calls ------------------------------------------------------------
// New data (show): the caches go; the first time, the URL's view is applied.
function loaded() {
  grp = null; rd = null;
  if (first && location.hash.length > 1) restore();
  first = false;
}
// The x of a mouse event on the timeline's canvas, wherever the pointer is
// (a range drawn past the canvas's edge still ends where it was let go).
const xOn = (e) => e.clientX - A.canvas().getBoundingClientRect().left;
const timeAt = (x) => { const v = A.view(), W = A.canvas().clientWidth; return v.t0 + (x - A.GUT) * (v.t1 - v.t0) / (W - A.GUT); };
// A shift-press on the timeline starts a range (true: dashboard.js leaves it alone).
function rangeDown(e) {
  if (!e.shiftKey || xOn(e) < A.GUT) return false;
  down = { x: xOn(e), range: true };
  return true;
}
function events() {
  const c = A.canvas();
  c.addEventListener('mousedown', (e) => { if (!down) down = { x: xOn(e), range: false }; });
  window.addEventListener('mousemove', (e) => {
    if (!down || !down.range || Math.abs(xOn(e) - down.x) <= 3) return;
    const a = timeAt(down.x), b = timeAt(xOn(e));
    range = { r0: Math.min(a, b), r1: Math.max(a, b) }; // drawn now, the tables at the release
    A.redraw();
  });
  window.addEventListener('mouseup', (e) => {
    const d = down, x = xOn(e);
    down = null;
    if (!d) return;
    const moved = Math.abs(x - d.x) > 3;
    if (d.range && moved) return setRange(timeAt(d.x), timeAt(x));
    if (e.target !== c) return;
    if (d.range) return A.clickLane(e); // a shift-click: adds to the selection
    const p = moved ? null : A.pick(e.offsetX, e.offsetY);
    if (p && p.group !== undefined) toggleGroup(p.group);
  });
  // Before dashboard.js's keys: Esc clears the range first.
  document.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT' || !A.data() || e.ctrlKey || e.metaKey || e.altKey) return;
    switch (e.key) {
      case 'Escape': if (!range) return; setRange(null); break;
      case 'n': case 'N': case ']': jumpWake(1); break;
      case 'p': case 'P': case '[': jumpWake(-1); break;
      case 'g': case 'G': jumpStuck(); break;
      default: return;
    }
    e.stopImmediatePropagation(); e.preventDefault();
  }, true);
  $('nav-next').addEventListener('click', () => A.data() && jumpWake(1));
  $('nav-prev').addEventListener('click', () => A.data() && jumpWake(-1));
  $('nav-stuck').addEventListener('click', () => A.data() && jumpStuck());
  $('range-clear').addEventListener('click', () => A.data() && setRange(null));
  const fromInputs = () => {
    const a = parseFloat($('range0').value), b = parseFloat($('range1').value);
    if (A.data() && Number.isFinite(a) && Number.isFinite(b)) setRange(a * 1e6, b * 1e6);
  };
  $('range0').addEventListener('change', fromInputs);
  $('range1').addEventListener('change', fromInputs);
  $('lanesearch').addEventListener('input', () => { lq = $('lanesearch').value.trim(); if (A.data()) { A.relane(); saveSoon(); } });
  $('lanegroup').addEventListener('change', () => { mode = $('lanegroup').value; if (A.data()) { A.relane(); saveSoon(); } });
  $('search').addEventListener('input', saveSoon);
  window.addEventListener('hashchange', () => {
    if (!A.data() || location.hash.slice(1) === written) return;
    restore(); A.relane(); A.tables();
  });
}
// dashboard.js's state and functions (see its start()); the test hooks on window.corotracer.
function init(api) {
  A = api;
  events();
  Object.assign(window.corotracer, {
    view: () => ({ t0: A.view().t0, t1: A.view().t1 }), range: () => range, viewHash, findingMoments: moments,
    gutter: A.GUT, laneY: (r) => A.laneTop() + r * A.CH, // lane r's top on the canvas (unscrolled)
    // The first n lanes as the timeline lists them: { id } or { group, count }.
    lanes: (n) => [...A.lanes().slice(0, n)].map((e) => e >= GROUP ? { group: grp.groups[e - GROUP].key, count: grp.count[e - GROUP] } : { id: A.data().a.co_id[e] }),
  });
}
return {
  GROUP, init, loaded, lanes, drawGroup, groupTip, overlay, rangeDown, jumpToFinding, caption,
  inRange: (i) => !range || rangeData().active[i] === 1,
  runs: (i) => range ? rangeData().runs[i] : A.data().a.co_runs[i],
  siteRows: () => range ? rangeData().sites : null,
  findingShown: (k) => !range || rangeData().findings[k],
};
})();
