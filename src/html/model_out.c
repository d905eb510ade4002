/* model_out.c - the model as the page's blob, streamed through the
 * compressor: the typed arrays (each 8-byte aligned), then a JSON header
 * (tables, totals, what was summarized, the report's findings, the list of
 * arrays), then its length (u32, little-endian) and the magic "CTD1" at the
 * very end (docs/DASHBOARD.md "Data blob"). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "html/model.h"
#include "html/page.h"

#define NONE UINT32_MAX
#define CHUNK 8192 /* elements converted at a time */

struct arr {
  const char *name, *type;
  size_t n;
};

struct out {
  struct ct_zw zw;
  struct arr arrs[64];
  size_t narr;
  const struct ct_span *sp, *tl, *opn; /* stored spans, the tail ring's, the open ones */
  size_t nsp, ntl;
  const uint32_t *ord; /* output position -> span index */
  uint64_t start;
};

static const struct ct_span *span_at(const struct out *o, size_t i) {
  return i < o->nsp            ? &o->sp[i]
         : i < o->nsp + o->ntl ? &o->tl[i - o->nsp]
                               : &o->opn[i - o->nsp - o->ntl];
}

static double rel(uint64_t t, uint64_t start) {
  return t >= start ? (double)(t - start) : -(double)(start - t);
}

/* v as a u32 when it is a whole number below ESC, else ESC with v appended
 * to x (the page takes the escaped values in order). */
#define ESC UINT32_MAX
static uint32_t esc(double v, struct ct_buf *x) {
  if (v >= 0 && v < (double)ESC && v == (double)(uint32_t)v)
    return (uint32_t)v;
  ct_buf_put(x, &v, sizeof v);
  return ESC;
}

static void begin(struct out *o, const char *name, const char *type, size_t n) {
  ct_zw_align(&o->zw, 8);
  if (o->narr < sizeof o->arrs / sizeof o->arrs[0])
    o->arrs[o->narr++] = (struct arr){name, type, n};
}

/* One array of n elements, each computed by expr from i, converted CHUNK at
 * a time. */
#define EMIT(o, name, type, T, n, expr)                                                            \
  do {                                                                                             \
    T chunk_[CHUNK];                                                                               \
    size_t n_ = (n);                                                                               \
    begin(o, name, type, n_);                                                                      \
    for (size_t b_ = 0; b_ < n_; b_ += CHUNK) {                                                    \
      size_t e_ = b_ + CHUNK < n_ ? b_ + CHUNK : n_;                                               \
      for (size_t i = b_; i < e_; i++)                                                             \
        chunk_[i - b_] = (T)(expr);                                                                \
      ct_zw_put(&(o)->zw, chunk_, (e_ - b_) * sizeof(T));                                          \
    }                                                                                              \
  } while (0)

static int cmp_t0(const void *a, const void *b, void *ctx) {
  const struct out *o = ctx;
  const struct ct_span *x = span_at(o, *(const uint32_t *)a), *y = span_at(o, *(const uint32_t *)b);
  if (x->t0 != y->t0)
    return x->t0 < y->t0 ? -1 : 1;
  return (a > b) - (a < b); /* equal starts keep their order */
}

/* Running spans of one thread (output positions): by start, then position
 * (a stable sort by start). */
static int cmp_run(const void *a, const void *b, void *ctx) {
  const struct out *o = ctx;
  uint32_t pa = *(const uint32_t *)a, pb = *(const uint32_t *)b;
  uint64_t x = span_at(o, o->ord[pa])->t0, y = span_at(o, o->ord[pb])->t0;
  if (x != y)
    return x < y ? -1 : 1;
  return (pa > pb) - (pa < pb);
}

/* The output positions (of the ns in o->ord) of the running spans, by
 * thread then start: the order a stable sort of them by (thread, start)
 * gives, without a sort's cost per span (the page's largest): bucketed by
 * thread, each bucket in position order, a bucket sorted (cmp_run) only when
 * out of time order. Returns them (*n), NULL without memory. */
static uint32_t *thread_order(const struct out *o, size_t ns, size_t *n) {
  size_t nrun = 0, nth = 0;
  for (size_t p = 0; p < ns; p++) {
    const struct ct_span *s = span_at(o, o->ord[p]);
    if (s->state == CT_SP_RUNNING && s->arg != NONE) {
      nrun++;
      if (s->arg >= nth)
        nth = (size_t)s->arg + 1;
    }
  }
  uint32_t *thr = malloc((nrun ? nrun : 1) * sizeof *thr), *at = calloc(nth + 1, sizeof *at);
  if (!thr || !at) {
    free(thr);
    free(at);
    return NULL;
  }
  for (size_t p = 0; p < ns; p++) {
    const struct ct_span *s = span_at(o, o->ord[p]);
    if (s->state == CT_SP_RUNNING && s->arg != NONE)
      at[s->arg + 1]++;
  }
  for (size_t t = 0; t < nth; t++)
    at[t + 1] += at[t];
  for (size_t p = 0; p < ns; p++) {
    const struct ct_span *s = span_at(o, o->ord[p]);
    if (s->state == CT_SP_RUNNING && s->arg != NONE)
      thr[at[s->arg]++] = (uint32_t)p;
  }
  /* at[t]: now the end of thread t's bucket, which starts at the end of t - 1's. */
  for (size_t t = 0, b = 0; t < nth; b = at[t++])
    for (size_t k = b + 1; k < at[t]; k++)
      if (span_at(o, o->ord[thr[k]])->t0 < span_at(o, o->ord[thr[k - 1]])->t0) {
        qsort_r(thr + b, at[t] - b, sizeof *thr, cmp_run, (void *)o);
        break;
      }
  free(at);
  *n = nrun;
  return thr;
}

/* A site's symbol, when sym knows its module: ,"function","file",line (null
 * for what the debug info lacks). Named as the report names it: a return
 * address, or a destroyer for a site only destroys named (uses: CT_SITE_*). */
static void site_sym(struct ct_buf *h, ct_symbolizer *sym, const struct ct_msite *site) {
  struct ct_sym s;
  if (!sym ||
      ct_symbolize_event_site(sym, site->pid, site->site, site->uses == CT_SITE_DESTROY, &s) ||
      !s.module)
    return;
  const char *strs[2] = {s.function, s.file};
  for (int k = 0; k < 2; k++) {
    ct_buf_puts(h, ",");
    if (strs[k])
      ct_buf_json(h, strs[k], strlen(strs[k]));
    else
      ct_buf_puts(h, "null");
  }
  ct_buf_printf(h, ",%d", s.line);
}

/* The blob's JSON header into h (docs/DASHBOARD.md "Data blob"): the run's
 * totals, threads, sites, the flags' layout and wait names, labels, the
 * summary, the arrays o wrote (nspans spans) and the findings. */
static void header(struct ct_buf *h, const struct ct_model *m, const struct out *o,
                   const struct ct_model_page *pg, uint64_t end, size_t nspans) {
  uint64_t start = o->start;
  ct_buf_puts(h, "{\"version\":1,\"source\":");
  ct_buf_json(h, pg->source, strlen(pg->source));
  ct_buf_printf(
      h,
      ",\"live\":%s,\"start_ts\":%" PRIu64 ",\"end_ts\":%" PRIu64 ",\"duration_ns\":%" PRIu64
      ",\"lines\":%" PRIu64 ",\"events\":%" PRIu64 ",\"malformed\":%" PRIu64 ",\"lost\":%" PRIu64
      ",\"wakes\":%" PRIu64 ",\"ended\":%s,\"coroutines\":%zu",
      pg->live ? "true" : "false", start, end, end - start, m->lines, m->events, m->bad, m->lost,
      m->wake_count, m->has_end ? "true" : "false", m->ncoros + (size_t)m->coros_pruned);
  ct_buf_puts(h, ",\"run_id\":");
  ct_buf_json(h, m->run_id, strlen(m->run_id));
  ct_buf_puts(h, ",\"host\":");
  ct_buf_json(h, m->host, strlen(m->host));
  ct_buf_puts(h, ",\"threads\":[");
  for (size_t i = 0; i < m->ntids; i++)
    ct_buf_printf(h, "%s%" PRIu32, i ? "," : "", m->tids[i]);
  ct_buf_puts(h, "],\"sites\":[");
  for (size_t i = 0; i < m->nsites; i++) {
    const struct ct_msite *s = &m->sites[i];
    ct_buf_printf(h, "%s[\"0x%016" PRIx64 "\",%" PRIu32, i ? "," : "", s->site, s->pid);
    site_sym(h, pg->sym, s);
    ct_buf_puts(h, "]");
  }
  /* The layout of sp_flags and the names of the wait kinds (enum ctp_wait)
   * for the page, which knows no number of its own. */
  ct_buf_printf(h,
                "],\"sp_flags\":{\"state\":%u,\"wait_shift\":%d,\"wait\":%u,\"open\":%u}"
                ",\"waits\":[\"\"",
                CT_SPF_STATE, CT_SPF_WAIT_SHIFT, CT_SPF_WAIT, CT_SPF_OPEN);
  for (unsigned w = CTP_WAIT_NONE + 1; w < CTP_WAIT_MAX_; w++)
    ct_buf_printf(h, ",\"%s\"", w == CTP_WAIT_EXIT ? "exit" : ct_wait_obj_name(w));
  ct_buf_puts(h, "],\"labels\":[\"\"");
  for (size_t i = 1; i < m->nlabels; i++) {
    ct_buf_puts(h, ",");
    ct_buf_json(h, m->labels[i], strlen(m->labels[i]));
  }
  size_t kept = 0;
  for (size_t i = 0; i < m->ncoros; i++)
    kept += m->coros[i].keep;
  ct_buf_printf(h,
                "],\"summary\":{\"spans\":%zu,\"spans_dropped\":%" PRIu64 ",\"wakes_kept\":%zu"
                ",\"wakes_dropped\":%" PRIu64 ",\"kept_coroutines\":%zu,\"span_budget\":%zu"
                ",\"coroutines_pruned\":%" PRIu64,
                nspans, m->spans_dropped, m->nwakes, m->wakes_dropped, kept, m->span_budget,
                m->coros_pruned);
  if (m->detail_until != UINT64_MAX)
    ct_buf_printf(h, ",\"detail_until\":%.0f,\"detail_from\":%.0f", rel(m->detail_until, start),
                  rel(m->detail_from, start));
  ct_buf_puts(h, "},\"arrays\":[");
  for (size_t i = 0; i < o->narr; i++)
    ct_buf_printf(h, "%s{\"name\":\"%s\",\"type\":\"%s\",\"n\":%zu}", i ? "," : "", o->arrs[i].name,
                  o->arrs[i].type, o->arrs[i].n);
  ct_buf_puts(h, "],\"findings\":");
  if (pg->findings_json && pg->findings_len)
    ct_buf_put(h, pg->findings_json, pg->findings_len);
  else
    ct_buf_puts(h, "null");
}

/* The spans of coroutines still in a state at the end, each to the end
 * ("open"), into *out (malloc'd, *n of them). 0 or -ENOMEM. */
static int open_spans(const struct ct_model *m, uint64_t end, struct ct_span **out, size_t *n) {
  struct ct_span *opn = malloc((m->ncoros ? m->ncoros : 1) * sizeof *opn);
  if (!opn)
    return -ENOMEM;
  size_t k = 0;
  for (size_t i = 0; i < m->ncoros; i++) {
    const struct ct_mcoro *c = &m->coros[i];
    if (c->state > CT_SP_CREATED || c->destroyed)
      continue;
    struct ct_span *s = &opn[k++];
    *s = (struct ct_span){.t0 = c->state_ts,
                          .t1 = end > c->state_ts ? end : c->state_ts,
                          .obj = c->obj,
                          .coro = (uint32_t)i,
                          .state = c->state,
                          .wait = c->wait,
                          .open = 1};
    s->arg = c->state == CT_SP_RUNNING     ? c->tid
             : c->state == CT_SP_SUSPENDED ? c->site
             : c->state == CT_SP_RUNNABLE  ? c->waker
                                           : NONE;
  }
  *out = opn;
  *n = k;
  return 0;
}

/* The ns spans of o by coroutine (nc of them), stable: a coroutine's spans
 * were emitted in its own event order, its open span last, so each lane
 * comes out in time order; a lane that is not (the reference engine's
 * traces: lines in event order, ts not always) is sorted. *ord: output
 * position -> span index; *starts: each lane's first position, nc + 1 of
 * them (both malloc'd). 0 or -ENOMEM. */
static int lanes(struct out *o, size_t ns, size_t nc, uint32_t **ord, uint32_t **starts) {
  uint32_t *fill = NULL;
  if (!(*starts = calloc(nc + 1, sizeof **starts)) ||
      !(*ord = malloc((ns ? ns : 1) * sizeof **ord)) ||
      !(fill = malloc((nc ? nc : 1) * sizeof *fill)))
    return -ENOMEM;
  uint32_t *st = *starts, *od = *ord;
  for (size_t i = 0; i < ns; i++)
    st[span_at(o, i)->coro + 1]++;
  for (size_t i = 0; i < nc; i++)
    st[i + 1] += st[i];
  memcpy(fill, st, nc * sizeof *fill);
  for (size_t i = 0; i < ns; i++)
    od[fill[span_at(o, i)->coro]++] = (uint32_t)i;
  free(fill);
  o->ord = od;
  for (size_t i = 0; i < nc; i++)
    for (uint32_t k = st[i] + 1; k < st[i + 1]; k++)
      if (span_at(o, od[k])->t0 < span_at(o, od[k - 1])->t0) {
        qsort_r(od + st[i], st[i + 1] - st[i], sizeof *od, cmp_t0, o);
        break;
      }
  return 0;
}

/* The ns spans in lane order, compact (docs/DASHBOARD.md "Data blob"): the
 * gap before each span (from the lane's previous end, the first from
 * start_ts) and its length, as u32 ns, and the wait object, each with an
 * escape for what does not fit; then their args and flags. The page
 * rebuilds the times and the lanes' coroutines from co_span0. 0 or -ENOMEM. */
static int emit_spans(struct out *o, size_t ns, const uint32_t *starts) {
  struct ct_buf xd0 = {0}, xdur = {0}, xobj = {0};
  uint32_t chunk[CHUNK];
  const uint32_t *ord = o->ord;
  uint64_t start = o->start;
  begin(o, "sp_d0", "u32", ns);
  for (size_t b = 0, c = 0; b < ns; b += CHUNK) {
    size_t e = b + CHUNK < ns ? b + CHUNK : ns;
    for (size_t p = b; p < e; p++) {
      while (starts[c + 1] <= p)
        c++;
      const struct ct_span *s = span_at(o, ord[p]);
      double prev = p == starts[c] ? 0.0 : rel(span_at(o, ord[p - 1])->t1, start);
      chunk[p - b] = esc(rel(s->t0, start) - prev, &xd0);
    }
    ct_zw_put(&o->zw, chunk, (e - b) * sizeof *chunk);
  }
#define SP(p) span_at(o, ord[p])
  EMIT(o, "sp_dur", "u32", uint32_t, ns, esc((double)(SP(i)->t1 - SP(i)->t0), &xdur));
  EMIT(o, "sp_obj", "u32", uint32_t, ns, esc((double)SP(i)->obj, &xobj));
  begin(o, "sp_d0_x", "f64", xd0.n / 8);
  ct_zw_put(&o->zw, xd0.p, xd0.n);
  begin(o, "sp_dur_x", "f64", xdur.n / 8);
  ct_zw_put(&o->zw, xdur.p, xdur.n);
  begin(o, "sp_obj_x", "f64", xobj.n / 8);
  ct_zw_put(&o->zw, xobj.p, xobj.n);
  int err = xd0.err | xdur.err | xobj.err;
  ct_buf_free(&xd0);
  ct_buf_free(&xdur);
  ct_buf_free(&xobj);
  EMIT(o, "sp_arg", "u32", uint32_t, ns, SP(i)->arg);
  EMIT(o, "sp_flags", "u8", uint8_t, ns,
       SP(i)->state | (SP(i)->wait & CT_SPF_WAIT) << CT_SPF_WAIT_SHIFT |
           (SP(i)->open ? CT_SPF_OPEN : 0));
#undef SP
  return err ? -ENOMEM : 0;
}

/* The coroutine table's columns and the wake edges. */
static void emit_coros(struct out *o, const struct ct_model *m) {
  const struct ct_mcoro *co = m->coros;
  size_t nc = m->ncoros;
  uint64_t start = o->start;
  EMIT(o, "co_id", "f64", double, nc, (double)co[i].id);
  EMIT(o, "co_label", "u32", uint32_t, nc, co[i].label);
  EMIT(o, "co_pid", "u32", uint32_t, nc, co[i].pid);
  EMIT(o, "co_state", "u8", uint8_t, nc,
       co[i].destroyed               ? 4
       : co[i].state > CT_SP_CREATED ? 5
                                     : co[i].state);
  EMIT(o, "co_wait", "u8", uint8_t, nc, co[i].wait);
  EMIT(o, "co_obj", "f64", double, nc, (double)co[i].obj);
  EMIT(o, "co_site", "u32", uint32_t, nc, co[i].site);
  EMIT(o, "co_create_site", "u32", uint32_t, nc, co[i].create_site);
  EMIT(o, "co_destroy_site", "u32", uint32_t, nc, co[i].destroy_site);
  EMIT(o, "co_first", "f64", double, nc, rel(co[i].first_ts, start));
  EMIT(o, "co_last", "f64", double, nc, rel(co[i].last_ts, start));
  EMIT(o, "co_since", "f64", double, nc, rel(co[i].state_ts, start));
  EMIT(o, "co_runs", "u32", uint32_t, nc, co[i].runs);
  EMIT(o, "co_suspends", "u32", uint32_t, nc, co[i].suspends);
  EMIT(o, "co_wakes", "u32", uint32_t, nc, co[i].wakes);
  EMIT(o, "co_lost", "u32", uint32_t, nc, co[i].lost);
  EMIT(o, "co_keep", "u8", uint8_t, nc, co[i].keep);
  const struct ct_wake *wk = m->wakes;
  size_t nw = m->nwakes;
  EMIT(o, "wk_t", "f64", double, nw, rel(wk[i].ts, start));
  EMIT(o, "wk_from", "u32", uint32_t, nw, wk[i].from);
  EMIT(o, "wk_to", "u32", uint32_t, nw, wk[i].to);
  EMIT(o, "wk_tid", "u32", uint32_t, nw, wk[i].tid);
}

/* The counters over time, up to the last bucket with anything in it: the
 * levels are running sums of the changes. Returns the buckets written. */
static size_t emit_counters(struct out *o, const struct ct_model *m) {
  size_t nb = 0;
  for (size_t j = CT_NBUCKETS; m->blo >= 0 && j > 0; j--) {
    const struct ct_cbucket *b = &m->bk[j - 1];
    if (b->events || b->lost || b->wakes || b->d[0] || b->d[1] || b->d[2] || b->d[3]) {
      nb = j;
      break;
    }
  }
  static const char *const lvname[CT_CT_LEVELS_] = {"cn_running", "cn_runnable", "cn_suspended",
                                                    "cn_live"};
  for (int k = 0; k < CT_CT_LEVELS_; k++) {
    int32_t acc = 0;
    EMIT(o, lvname[k], "i32", int32_t, nb, acc += m->bk[i].d[k]);
  }
  EMIT(o, "cn_events", "u32", uint32_t, nb, m->bk[i].events);
  EMIT(o, "cn_lost", "u32", uint32_t, nb, m->bk[i].lost);
  EMIT(o, "cn_wakes", "u32", uint32_t, nb, m->bk[i].wakes);
  return nb;
}

/* The level of detail (model_lod.c) with the open spans' time to the end
 * (opn, nopen), by lane (the coroutine rows, then the threads) and bucket:
 * lod_lane0 (each lane's first entry, nc + nt + 1), lod_b (the bucket's
 * index from the start's bucket, as a gap from the lane's previous entry
 * with an escape, lod_b_x), lod_run and lod_rdy (the bucket's share running
 * and runnable, of 65535), lod_wk (wakes, at most 65535). *nout: the
 * entries. 0 or -ENOMEM. */
static int emit_lod(struct out *o, const struct ct_model *m, const struct ct_span *opn,
                    size_t nopen, size_t *nout, int *shift) {
  struct ct_lod l = {.shift = m->lod.shift};
  size_t nc = m->ncoros, nt = m->ntids, nl = nc + nt, room;
  /* The open spans run to the end (a live view's: the present, maybe far
   * past the last event): the buckets widen until they fit the model's own
   * bounds (model_lod.c), the copied entries merged by ct_lod_compact. */
  for (;; l.shift++) {
    room = m->lod.n;
    int wide = 0;
    for (size_t i = 0; i < nopen && !wide; i++)
      if (opn[i].state != CT_SP_SUSPENDED) {
        uint64_t nb = (opn[i].t1 >> l.shift) - (opn[i].t0 >> l.shift) + 1;
        wide = nb > CT_LOD_RUN_BUCKETS;
        room += 2 * (size_t)nb;
      }
    if ((!wide && room <= 2 * (size_t)CT_LOD_CAP) || l.shift >= 62)
      break;
  }
  uint32_t *lane0 = calloc(nl + 1, sizeof *lane0);
  struct ct_buf xb = {0};
  int rc = -ENOMEM;
  if (!lane0 || !(l.s = malloc((room ? room : 1) * sizeof *l.s)))
    goto out;
  l.cap = room;
  if (m->lod.n) /* an empty summary has no array: memcpy's source must not be NULL */
    memcpy(l.s, m->lod.s, m->lod.n * sizeof *l.s);
  l.n = m->lod.n;
  for (size_t k = 0; k < l.n; k++)
    l.s[k].bucket >>= l.shift - m->lod.shift;
  for (size_t i = 0; i < nopen; i++) {
    const struct ct_span *s = &opn[i];
    if (s->state == CT_SP_SUSPENDED)
      continue;
    (void)ct_lod_add(&l, s->coro, NULL, s->t0, s->t1, s->state != CT_SP_RUNNING, 0);
    if (s->state == CT_SP_RUNNING && s->arg != NONE)
      (void)ct_lod_add(&l, CT_LOD_THREAD | s->arg, NULL, s->t0, s->t1, 0, 0);
  }
  ct_lod_compact(l.s, &l.n);
  for (size_t k = 0; k < l.n; k++) {
    uint32_t ln = l.s[k].lane;
    lane0[(ln & CT_LOD_THREAD ? nc + (ln & ~CT_LOD_THREAD) : ln) + 1]++;
  }
  for (size_t i = 0; i < nl; i++)
    lane0[i + 1] += lane0[i];
  begin(o, "lod_lane0", "u32", nl + 1);
  ct_zw_put(&o->zw, lane0, (nl + 1) * sizeof *lane0);
  uint64_t base = o->start >> l.shift;
  double w = (double)((uint64_t)1 << l.shift);
  const struct ct_sum *e = l.s;
  EMIT(o, "lod_b", "u32", uint32_t, l.n,
       esc(i && e[i - 1].lane == e[i].lane ? (double)(e[i].bucket - e[i - 1].bucket)
                                           : (double)e[i].bucket - (double)base,
           &xb));
  begin(o, "lod_b_x", "f64", xb.n / 8);
  ct_zw_put(&o->zw, xb.p, xb.n);
#define SHARE(v) ((v) >= w ? 65535 : (v) <= 0 ? 0 : (uint16_t)((v) / w * 65535.0 + 0.5))
  EMIT(o, "lod_run", "u16", uint16_t, l.n, SHARE(e[i].run));
  EMIT(o, "lod_rdy", "u16", uint16_t, l.n, SHARE(e[i].rdy));
#undef SHARE
  EMIT(o, "lod_wk", "u16", uint16_t, l.n, e[i].wakes > 65535 ? 65535 : e[i].wakes);
  *nout = l.n;
  *shift = l.shift;
  rc = xb.err ? -ENOMEM : 0;
out:
  free(lane0);
  free(l.s);
  ct_buf_free(&xb);
  return rc;
}

/* The JSON header after the arrays (aligned to 8), then its length and the
 * magic, the blob's last 8 bytes. 0 or -ENOMEM. */
static int emit_header(struct out *o, const struct ct_model *m, const struct ct_model_page *pg,
                       uint64_t end, size_t ns, size_t nb, size_t nlod, int lshift) {
  struct ct_buf h = {0};
  header(&h, m, o, pg, end, ns);
  ct_buf_printf(&h, ",\"counters\":{\"t0\":%.0f,\"bucket_ns\":%" PRIu64 ",\"n\":%zu}",
                m->blo >= 0 ? rel((uint64_t)m->blo << m->bshift, o->start) : 0.0,
                (uint64_t)1 << m->bshift, nb);
  uint64_t base = o->start >> lshift;
  ct_buf_printf(
      &h, ",\"lod\":{\"t0\":%.0f,\"bucket_ns\":%" PRIu64 ",\"n\":%zu,\"dropped\":%" PRIu64 "}}",
      rel(base << lshift, o->start), (uint64_t)1 << lshift, nlod, m->lod.dropped);
  if (h.err) {
    ct_buf_free(&h);
    return -ENOMEM;
  }
  ct_zw_align(&o->zw, 8);
  ct_zw_put(&o->zw, h.p, h.n);
  uint32_t hl = (uint32_t)h.n;
  unsigned char tail[8] = {(unsigned char)hl,
                           (unsigned char)(hl >> 8),
                           (unsigned char)(hl >> 16),
                           (unsigned char)(hl >> 24),
                           'C',
                           'T',
                           'D',
                           '1'};
  ct_zw_put(&o->zw, tail, sizeof tail);
  ct_buf_free(&h);
  return 0;
}

int ct_model_serialize(const struct ct_model *m, const struct ct_model_page *pg, struct ct_buf *z,
                       const struct ct_zdrain *drain, uint64_t *raw_len) {
  struct out o = {0};
  struct ct_span *opn = NULL;
  uint32_t *ord = NULL, *starts = NULL, *thr = NULL;
  size_t nopen = 0, nrun = 0;
  int rc = ct_zw_init(&o.zw, z, drain);
  if (rc)
    return rc;
  uint64_t end = ct_model_end(m, pg->now_ts);
  o.start = m->start_ts ? m->start_ts : end;
  if ((rc = open_spans(m, end, &opn, &nopen)))
    goto out;
  o.sp = m->spans;
  o.nsp = m->nspans;
  o.tl = m->tail;
  o.ntl = m->tail_n;
  o.opn = opn;
  size_t ns = m->nspans + m->tail_n + nopen, nc = m->ncoros;
  if ((rc = lanes(&o, ns, nc, &ord, &starts)))
    goto out;
  /* Thread lanes: output positions of running spans, by thread then time. */
  rc = -ENOMEM;
  if (!(thr = thread_order(&o, ns, &nrun)))
    goto out;
  if ((rc = emit_spans(&o, ns, starts)))
    goto out;
  begin(&o, "co_span0", "u32", nc + 1);
  ct_zw_put(&o.zw, starts, (nc + 1) * sizeof *starts);
  begin(&o, "th_order", "u32", nrun);
  ct_zw_put(&o.zw, thr, nrun * sizeof *thr);
  emit_coros(&o, m);
  size_t nb = emit_counters(&o, m), nlod = 0;
  int lshift = 0;
  if ((rc = emit_lod(&o, m, opn, nopen, &nlod, &lshift)))
    goto out;
  if ((rc = emit_header(&o, m, pg, end, ns, nb, nlod, lshift)))
    goto out;
  *raw_len = o.zw.raw;
out : {
  int zr = ct_zw_finish(&o.zw);
  if (!rc)
    rc = zr;
}
  free(opn);
  free(ord);
  free(starts);
  free(thr);
  return rc;
}
