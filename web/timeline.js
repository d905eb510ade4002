// timeline.js - the dashboard's canvas timeline (docs/DASHBOARD.md "The page",
// "Level of detail", "Scale"): the thread and coroutine lanes, exact spans or
// the per-lane summary at any zoom, wake arrows, zoom and pan, the mouse and
// keys, a served page's detail on request, and the counters chart on the same
// time axis. It shares one function scope with dashboard.js, which follows it
// (assets.c wraps the two after nav.js): it reads the page's data (D), the
// selection (sel) and the theme (css) from there, and dashboard.js calls
// drawTimeline, fit and the rest once the data is decoded.

// ---- view state -----------------------------------------------------------------------
let view = { t0: 0, t1: 1 }, fitted = true, scrollY = 0, hover = null;
let lanes = [];         // coroutine lane order (indices)
let drawn = { spans: 0, lod: 0, wakes: 0, level: '' }; // the last frame's: exact spans, summary columns, their wake ticks, level
let detail = null, detailKey = ''; // a served page's detail on request: { t0, t1, d }, and the one asked for

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
// Where time t falls in a lane's summary [lo,hi): the first entry starting at
// or after t (k, searched from entry from on) and the share f of the bucket
// before it that lies before t; lodAt(cum, lo, at) is then the integral of
// cum from the lane's start to t. One search serves every prefix sum.
function lodPos(lo, hi, t, from, at) {
  const k = lowerBound(D.lodT, Math.max(lo, from), hi, t);
  at.k = k; at.f = k === lo ? 0 : Math.min(1, (t - D.lodT[k - 1]) / D.lod.bucket_ns);
  return at;
}
function lodAt(cum, lo, at) {
  return at.k === lo ? 0 : cum[at.k - 1] - cum[lo] + at.f * (cum[at.k] - cum[at.k - 1]);
}
// The theme's colours as ImageData words (RGBA bytes, little-endian), made
// again when readCss changes css.
let pal = null;
function palette() {
  if (pal && pal.css === css) return pal;
  const c = document.createElement('canvas').getContext('2d', { willReadFrequently: true }), p = { css };
  for (const k of ['lane', 'running', 'runnable', 'suspended', 'stuck', 'wake']) {
    c.fillStyle = css[k]; c.fillRect(0, 0, 1, 1);
    p[k] = new Uint32Array(c.getImageData(0, 0, 1, 1).data.buffer)[0];
  }
  return (pal = p);
}
// Word a over word b at opacity f (0..1).
function blend(a, b, f) {
  let o = 0xff000000;
  for (let sh = 0; sh < 24; sh += 8) o |= Math.round(((a >>> sh) & 255) * f + ((b >>> sh) & 255) * (1 - f)) << sh;
  return o >>> 0;
}
// Lane l's summary drawn per pixel column [x0,x1) at y..y+h: stacked shares
// running, runnable, suspended (the rest of life [life0,life1]; stuck after
// stuckAt), a tick on top where it was woken. A thread lane: busy only. The
// pixels are written into one ImageData a lane (device pixels) and put at
// once: a fillRect per bar and column cost seconds a frame at 10^7 events.
// The wakes (the summary's count, spread evenly over each bucket) are a tick
// whose opacity grows with their number, faint for a fraction of a wake (a
// column narrower than the bucket), opaque from 8 on; the summary keeps no
// waker, so no arrow: the arrows are drawn where the spans are exact.
function drawLaneLod(g, l, y, h, x0, x1, life0, life1, stuckAt, thread) {
  const lo = D.a.lod_lane0[l], hi = D.a.lod_lane0[l + 1], W = $('timeline').clientWidth;
  const ns = (view.t1 - view.t0) / (W - GUT), r = window.devicePixelRatio || 1, P = palette();
  const X0 = Math.round(x0 * r), Y = Math.round(y * r), w = Math.round(x1 * r) - X0, hd = Math.round((y + h) * r) - Y;
  if (w <= 0 || hd <= 0) return;
  const img = g.createImageData(w, hd), p = new Uint32Array(img.data.buffer), tick = Math.max(1, Math.round(3 * r));
  p.fill(P.lane);
  const at = lodPos(lo, hi, view.t0 + (x0 - GUT) * ns, lo, { k: lo, f: 0 });
  let run0 = lodAt(D.lodRun, lo, at), rdy0 = lodAt(D.lodRdy, lo, at), wk0 = lodAt(D.lodWk, lo, at);
  for (let px = x0; px < x1; px++) {
    const ta = view.t0 + (px - GUT) * ns, tb = ta + ns, c0 = Math.round(px * r) - X0, c1 = Math.round((px + 1) * r) - X0;
    lodPos(lo, hi, tb, at.k, at); // columns go forward in time: search on from the last one
    const run1 = lodAt(D.lodRun, lo, at), rdy1 = lodAt(D.lodRdy, lo, at), wk1 = lodAt(D.lodWk, lo, at);
    const life = thread ? 0 : Math.max(0, Math.min(tb, life1) - Math.max(ta, life0));
    const run = Math.min(1, (run1 - run0) / ns), rdy = Math.min(1 - run, (rdy1 - rdy0) / ns);
    const susp = Math.max(0, Math.min(1 - run - rdy, life / ns - run - rdy));
    let yb = hd;
    const bar = (f, v) => {
      if (!(f > 0) || yb <= 0) return;
      const top = Math.max(0, yb - Math.max(1, Math.round(f * hd)));
      for (let row = top; row < yb; row++) p.fill(v, row * w + c0, row * w + c1);
      yb = top;
    };
    bar(run, P.running); bar(rdy, P.runnable); bar(susp, tb > stuckAt ? P.stuck : P.suspended);
    const n = wk1 - wk0;
    if (n > 1e-9) {
      const f = Math.min(1, 0.3 + 0.7 * Math.log2(1 + n) / 3);
      for (let row = 0; row < Math.min(tick, hd); row++)
        for (let k = row * w + c0; k < row * w + c1; k++) p[k] = blend(P.wake, p[k], f);
      drawn.wakes++;
    }
    drawn.lod++;
    run0 = run1; rdy0 = rdy1; wk0 = wk1;
  }
  g.putImageData(img, X0, Y);
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
      if (r.status === 503 && detailKey === key) { // superseded or busy: the view still wants it
        detailKey = '';
        setTimeout(() => { if (!detailKey) drawTimeline(); }, 500);
      }
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
  drawn = { spans: 0, lod: 0, wakes: 0, level: '' };
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
      () => { const x = exactSpans(); drawLane(g, x.thT0, x.thT1, x.thCum, x.thStart[t], x.thStart[t + 1], y, TH - 3, W, (k) => hue(a.sp_coro[a.th_order[k]])); },
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
      () => drawLane(g, a.sp_t0, a.sp_t1, exactSpans().cumRun, a.co_span0[i], a.co_span0[i + 1], y, CH - 2, W, (k) => stateColor(a.sp_flags[k], k)),
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
    const tt = Math.floor((y - AX - 16) / TH), x = exactSpans(), k = find(x.thT0, x.thT1, x.thStart[tt], x.thStart[tt + 1]);
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
    if (a.co_destroy_site[i] !== NONE) lines.push('destroyed at ' + siteOf(a.co_destroy_site[i]));
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
