/* model_out.c - the model as the page's blob: "CTD1", a little-endian u32
 * length, a JSON header (tables, totals, what was summarized, the report's
 * findings, the list of arrays), then the typed arrays, each 8-byte aligned
 * (docs/DASHBOARD.md "Data blob"). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html/buf.h"
#include "html/model.h"

#define NONE UINT32_MAX

struct arr {
  const char *name, *type;
  size_t n;
};

static int cmp_span(const void *a, const void *b) {
  const struct ct_span *x = a, *y = b;
  if (x->coro != y->coro) return x->coro < y->coro ? -1 : 1;
  if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
  return (x->t1 > y->t1) - (x->t1 < y->t1);
}

static int cmp_thread(const void *a, const void *b, void *ctx) {
  const struct ct_span *sp = ctx;
  const struct ct_span *x = &sp[*(const uint32_t *)a], *y = &sp[*(const uint32_t *)b];
  if (x->arg != y->arg) return x->arg < y->arg ? -1 : 1;
  return (x->t0 > y->t0) - (x->t0 < y->t0);
}

static double rel(uint64_t t, uint64_t start) { return t >= start ? (double)(t - start) : -(double)(start - t); }

/* Appends an array to the body and its description to the list. */
static void add(struct ct_buf *body, struct arr *list, size_t *n, const char *name, const char *type,
                const void *p, size_t count, size_t elem) {
  ct_buf_align(body, 8);
  ct_buf_put(body, p, count * elem);
  list[(*n)++] = (struct arr){name, type, count};
}

#define F64(name, count, expr)                                                                  \
  do {                                                                                         \
    double *v_ = malloc(((count) ? (count) : 1) * sizeof *v_);                                 \
    if (!v_) goto nomem;                                                                       \
    for (size_t i = 0; i < (count); i++) v_[i] = (expr);                                       \
    add(&body, arrs, &narr, name, "f64", v_, count, 8);                                        \
    free(v_);                                                                                  \
  } while (0)
#define U32(name, type, count, expr)                                                           \
  do {                                                                                         \
    uint32_t *v_ = malloc(((count) ? (count) : 1) * sizeof *v_);                               \
    if (!v_) goto nomem;                                                                       \
    for (size_t i = 0; i < (count); i++) v_[i] = (uint32_t)(expr);                             \
    add(&body, arrs, &narr, name, type, v_, count, 4);                                         \
    free(v_);                                                                                  \
  } while (0)
#define U8(name, count, expr)                                                                  \
  do {                                                                                         \
    uint8_t *v_ = malloc(((count) ? (count) : 1));                                             \
    if (!v_) goto nomem;                                                                       \
    for (size_t i = 0; i < (count); i++) v_[i] = (uint8_t)(expr);                              \
    add(&body, arrs, &narr, name, "u8", v_, count, 1);                                         \
    free(v_);                                                                                  \
  } while (0)

int ct_model_serialize(const struct ct_model *cm, const char *findings, size_t findings_len,
                       const char *source, uint64_t now_ts, int live, char **out, size_t *len) {
  /* Spans are sorted in place: a copy of the header would not help, the
   * order is all the page needs. */
  struct ct_model *m = (struct ct_model *)cm;
  struct ct_buf body = {0}, head = {0};
  struct arr arrs[40];
  size_t narr = 0;
  uint32_t *order = NULL, *starts = NULL;
  int rc = -ENOMEM;
  uint64_t start = m->start_ts, end = ct_model_end(m, now_ts);
  if (!start) start = end;

  /* Open states: a span to the end. Appended, then removed again below so
   * that a live model can go on. */
  size_t nopen = 0;
  for (size_t i = 0; i < m->ncoros; i++) {
    struct ct_mcoro *c = &m->coros[i];
    if (c->state > CT_SP_CREATED || c->destroyed) continue;
    if (m->nspans == m->capspans) {
      size_t nc = m->capspans ? m->capspans * 2 : 64;
      struct ct_span *np = realloc(m->spans, nc * sizeof *np);
      if (!np) goto nomem;
      m->spans = np;
      m->capspans = nc;
    }
    if (m->nspans >= m->span_cap + m->ncoros) break;
    struct ct_span *s = &m->spans[m->nspans++];
    *s = (struct ct_span){.t0 = c->state_ts, .t1 = end > c->state_ts ? end : c->state_ts, .obj = c->obj,
                          .coro = (uint32_t)i, .state = c->state, .wait = c->wait, .open = 1};
    s->arg = c->state == CT_SP_RUNNING ? c->tid : c->state == CT_SP_SUSPENDED ? c->site
           : c->state == CT_SP_RUNNABLE ? c->waker : NONE;
    nopen++;
  }
  size_t ns = m->nspans, nc = m->ncoros;
  qsort(m->spans, ns, sizeof *m->spans, cmp_span);
  const struct ct_span *sp = m->spans;
  if (!(starts = calloc(nc + 1, sizeof *starts))) goto nomem;
  for (size_t i = 0; i < ns; i++) starts[sp[i].coro + 1]++;
  for (size_t i = 0; i < nc; i++) starts[i + 1] += starts[i];
  size_t nrun = 0;
  for (size_t i = 0; i < ns; i++) nrun += sp[i].state == CT_SP_RUNNING && sp[i].arg != NONE;
  if (!(order = malloc((nrun ? nrun : 1) * sizeof *order))) goto nomem;
  nrun = 0;
  for (size_t i = 0; i < ns; i++)
    if (sp[i].state == CT_SP_RUNNING && sp[i].arg != NONE) order[nrun++] = (uint32_t)i;
  qsort_r(order, nrun, sizeof *order, cmp_thread, (void *)sp);

  F64("sp_t0", ns, rel(sp[i].t0, start));
  F64("sp_t1", ns, rel(sp[i].t1, start));
  U32("sp_coro", "u32", ns, sp[i].coro);
  U32("sp_arg", "u32", ns, sp[i].arg);
  F64("sp_obj", ns, (double)sp[i].obj);
  U8("sp_flags", ns, sp[i].state | sp[i].wait << 2 | sp[i].open << 4);
  U32("co_span0", "u32", nc + 1, starts[i]);
  add(&body, arrs, &narr, "th_order", "u32", order, nrun, 4);
  const struct ct_mcoro *co = m->coros;
  F64("co_id", nc, (double)co[i].id);
  U32("co_label", "u32", nc, co[i].label);
  U32("co_pid", "u32", nc, co[i].pid);
  U8("co_state", nc, co[i].destroyed ? 4 : co[i].state > CT_SP_CREATED ? 5 : co[i].state);
  U8("co_wait", nc, co[i].wait);
  F64("co_obj", nc, (double)co[i].obj);
  U32("co_site", "u32", nc, co[i].site);
  U32("co_create_site", "u32", nc, co[i].create_site);
  F64("co_first", nc, rel(co[i].first_ts, start));
  F64("co_last", nc, rel(co[i].last_ts, start));
  F64("co_since", nc, rel(co[i].state_ts, start));
  U32("co_runs", "u32", nc, co[i].runs);
  U32("co_suspends", "u32", nc, co[i].suspends);
  U32("co_wakes", "u32", nc, co[i].wakes);
  U32("co_lost", "u32", nc, co[i].lost);
  U8("co_keep", nc, co[i].keep);
  size_t nw = m->nwakes;
  const struct ct_wake *wk = m->wakes;
  F64("wk_t", nw, rel(wk[i].ts, start));
  U32("wk_from", "u32", nw, wk[i].from);
  U32("wk_to", "u32", nw, wk[i].to);
  U32("wk_tid", "u32", nw, wk[i].tid);
  /* Counters: levels are running sums of the changes. */
  int64_t top = m->blo;
  for (int64_t j = CT_NBUCKETS - 1; j >= 0 && m->blo >= 0; j--) {
    const struct ct_cbucket *b = &m->bk[j];
    if (b->events || b->lost || b->wakes || b->d[0] || b->d[1] || b->d[2] || b->d[3]) {
      top = m->blo + j;
      break;
    }
  }
  size_t nb = m->blo >= 0 ? (size_t)(top - m->blo + 1) : 0;
  {
    int32_t *lv = malloc((nb ? nb : 1) * CT_CT_LEVELS_ * sizeof *lv);
    if (!lv) goto nomem;
    int32_t acc[CT_CT_LEVELS_] = {0};
    for (size_t j = 0; j < nb; j++)
      for (int k = 0; k < CT_CT_LEVELS_; k++) lv[k * nb + j] = acc[k] += m->bk[j].d[k];
    static const char *const names[CT_CT_LEVELS_] = {"cn_running", "cn_runnable", "cn_suspended", "cn_live"};
    for (int k = 0; k < CT_CT_LEVELS_; k++) add(&body, arrs, &narr, names[k], "i32", lv + k * nb, nb, 4);
    free(lv);
  }
  U32("cn_events", "u32", nb, m->bk[i].events);
  U32("cn_lost", "u32", nb, m->bk[i].lost);
  U32("cn_wakes", "u32", nb, m->bk[i].wakes);

  /* The header. */
  ct_buf_puts(&head, "{\"version\":1,\"source\":");
  ct_buf_json(&head, source, strlen(source));
  ct_buf_printf(&head, ",\"live\":%s,\"start_ts\":%" PRIu64 ",\"end_ts\":%" PRIu64 ",\"duration_ns\":%" PRIu64
                       ",\"lines\":%" PRIu64 ",\"events\":%" PRIu64 ",\"malformed\":%" PRIu64
                       ",\"lost\":%" PRIu64 ",\"wakes\":%" PRIu64 ",\"ended\":%s,\"coroutines\":%zu",
                live ? "true" : "false", start, end, end - start, m->lines, m->events, m->bad, m->lost,
                m->wake_count, m->has_end ? "true" : "false", nc);
  ct_buf_puts(&head, ",\"run_id\":");
  ct_buf_json(&head, m->run_id, strlen(m->run_id));
  ct_buf_puts(&head, ",\"host\":");
  ct_buf_json(&head, m->host, strlen(m->host));
  ct_buf_puts(&head, ",\"threads\":[");
  for (size_t i = 0; i < m->ntids; i++) ct_buf_printf(&head, "%s%" PRIu32, i ? "," : "", m->tids[i]);
  ct_buf_puts(&head, "],\"sites\":[");
  for (size_t i = 0; i < m->nsites; i++)
    ct_buf_printf(&head, "%s[\"0x%016" PRIx64 "\",%" PRIu32 "]", i ? "," : "", m->sites[i], m->site_pids[i]);
  ct_buf_puts(&head, "],\"labels\":[\"\"");
  for (size_t i = 1; i < m->nlabels; i++) {
    ct_buf_puts(&head, ",");
    ct_buf_json(&head, m->labels[i], strlen(m->labels[i]));
  }
  size_t kept = 0;
  for (size_t i = 0; i < nc; i++) kept += co[i].keep;
  ct_buf_printf(&head, "],\"summary\":{\"spans\":%zu,\"spans_dropped\":%" PRIu64 ",\"wakes_kept\":%zu"
                       ",\"wakes_dropped\":%" PRIu64 ",\"kept_coroutines\":%zu,\"span_budget\":%zu",
                ns, m->spans_dropped, nw, m->wakes_dropped, kept, m->span_budget);
  if (m->detail_until != UINT64_MAX) ct_buf_printf(&head, ",\"detail_until\":%.0f", rel(m->detail_until, start));
  ct_buf_printf(&head, "},\"counters\":{\"t0\":%.0f,\"bucket_ns\":%" PRIu64 ",\"n\":%zu}",
                m->blo >= 0 ? rel((uint64_t)m->blo << m->bshift, start) : 0.0, (uint64_t)1 << m->bshift, nb);
  ct_buf_puts(&head, ",\"arrays\":[");
  for (size_t i = 0; i < narr; i++)
    ct_buf_printf(&head, "%s{\"name\":\"%s\",\"type\":\"%s\",\"n\":%zu}", i ? "," : "", arrs[i].name,
                  arrs[i].type, arrs[i].n);
  ct_buf_puts(&head, "],\"findings\":");
  if (findings && findings_len) ct_buf_put(&head, findings, findings_len);
  else ct_buf_puts(&head, "null");
  ct_buf_puts(&head, "}");
  if (head.err || body.err) goto nomem;

  struct ct_buf blob = {0};
  uint32_t hl = (uint32_t)head.n;
  unsigned char le[4] = {(unsigned char)hl, (unsigned char)(hl >> 8), (unsigned char)(hl >> 16),
                         (unsigned char)(hl >> 24)};
  ct_buf_put(&blob, "CTD1", 4);
  ct_buf_put(&blob, le, 4);
  ct_buf_put(&blob, head.p, head.n);
  ct_buf_align(&blob, 8);
  /* The body's arrays were aligned relative to its own start: keep that. */
  ct_buf_put(&blob, body.p, body.n);
  if (blob.err) {
    ct_buf_free(&blob);
    goto nomem;
  }
  *out = blob.p;
  *len = blob.n;
  rc = 0;
nomem:
  /* Remove the open spans again (they were sorted in: filter them out). */
  if (nopen) {
    size_t k = 0;
    for (size_t i = 0; i < m->nspans; i++)
      if (!m->spans[i].open) m->spans[k++] = m->spans[i];
    m->nspans = k;
  }
  ct_buf_free(&body);
  ct_buf_free(&head);
  free(order);
  free(starts);
  return rc;
}
