/* findings.c - what every finding builder (findings_stuck.c,
 * findings_tables.c) builds with: a new finding, its evidence, its sites
 * grouped and symbolized, times and sites as text. Calls no builder: report.c
 * runs the builders, which call this file, never the other way round. */
#include "analysis/findings.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* "error", "warning" or "info" (model.h). */
const char *ct_sev_name(enum ct_sev s) {
  return s == CT_SEV_ERROR ? "error" : s == CT_SEV_WARNING ? "warning" : "info";
}

/* A duration for people, 1 decimal (model.h). */
const char *ct_fmt_ns(uint64_t ns, char *buf, size_t n) {
  if (ns >= 1000000000ull)
    snprintf(buf, n, "%.1f s", (double)ns / 1e9);
  else if (ns >= 1000000ull)
    snprintf(buf, n, "%.1f ms", (double)ns / 1e6);
  else if (ns >= 1000ull)
    snprintf(buf, n, "%.1f us", (double)ns / 1e3);
  else
    snprintf(buf, n, "%" PRIu64 " ns", ns);
  return buf;
}

/* The file name of path p (after its last '/'); NULL for NULL. */
static const char *base_name(const char *p) {
  const char *s = p ? strrchr(p, '/') : NULL;
  return s ? s + 1 : p;
}

/* A site as its symbol, module offset or address (model.h); site 0 is none
 * (COROTRACER_SITE_UNKNOWN), never an address to show. */
const char *ct_fmt_site(const struct ct_rsite *rs, char *buf, size_t n) {
  if (!rs->site)
    snprintf(buf, n, "an unknown site");
  else if (rs->symbolized && rs->sym.function && rs->sym.file)
    snprintf(buf, n, "%s (%s:%d)", rs->sym.function, base_name(rs->sym.file), rs->sym.line);
  else if (rs->symbolized && rs->sym.function)
    snprintf(buf, n, "%s (%s+0x%" PRIx64 ")", rs->sym.function, base_name(rs->sym.module),
             rs->sym.offset);
  else if (rs->symbolized)
    snprintf(buf, n, "%s+0x%" PRIx64, base_name(rs->sym.module), rs->sym.offset);
  else
    snprintf(buf, n, "0x%016" PRIx64 " (unsymbolized)", rs->site);
  return buf;
}

/* findings.h: rc owns its copy of ev, freed by ct_report_free. */
int ct_keep_evidence(struct ct_rcoro *rc, const char *ev) {
  free(rc->evidence);
  rc->evidence = strdup(ev);
  return rc->evidence ? 0 : -ENOMEM;
}

/* findings.h: counts merge by (kind, relation); past CT_RELATED_MAX, dropped. */
void ct_add_related(struct ct_finding *f, const char *kind, const char *relation, uint64_t count) {
  for (size_t i = 0; i < f->nrelated; i++)
    if (!strcmp(f->related[i].kind, kind) && !strcmp(f->related[i].relation, relation)) {
      f->related[i].count += count;
      return;
    }
  if (f->nrelated == CT_RELATED_MAX)
    return;
  f->related[f->nrelated].kind = kind;
  f->related[f->nrelated].relation = relation;
  f->related[f->nrelated++].count = count;
}

/* findings.h: r owns the finding (ct_report_free). */
struct ct_finding *ct_new_finding(struct ct_report *r, const char *kind, enum ct_sev sev) {
  struct ct_finding *nf = realloc(r->f, (r->nf + 1) * sizeof *nf);
  if (!nf)
    return NULL;
  r->f = nf;
  struct ct_finding *f = &r->f[r->nf++];
  memset(f, 0, sizeof *f);
  f->kind = kind;
  f->sev = sev;
  return f;
}

/* findings.h: cut at the evidence line's size. */
void ct_add_evidence(struct ct_finding *f, const char *fmt, ...) {
  if (f->nevidence == CT_EVIDENCE_MAX)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->evidence[f->nevidence++], sizeof f->evidence[0], fmt, ap);
  va_end(ap);
}

/* rs->sym from sym: the symbolizer's text, valid while it lives. destroyer:
 * rs is a destroy's site (ct_symbolize_event_site). */
static void symbolize_with(ct_symbolizer *sym, struct ct_rsite *rs, int destroyer) {
  if (ct_symbolize_event_site(sym, rs->pid, rs->site, destroyer, &rs->sym) == 0 && rs->sym.module)
    rs->symbolized = 1;
}

/* findings.h: through the state's symbolizer (st->sym). */
void ct_symbolize_site(const struct ct_state *st, struct ct_rsite *rs) {
  symbolize_with(st->sym, rs, 0);
}

/* findings.h: as ct_symbolize_site, for a destroy's site. */
void ct_symbolize_destroy_site(const struct ct_state *st, struct ct_rsite *rs) {
  symbolize_with(st->sym, rs, 1);
}

/* model.h: through the symbolizer of the state r was built from. */
void ct_report_symbolize(const struct ct_report *r, struct ct_rsite *rs, int destroy) {
  symbolize_with(r->sym, rs, destroy);
}

/* findings.h: percentiles within the histogram's precision, max exact. */
void ct_site_durations(struct ct_rsite *rs, const struct ct_hist *h) {
  rs->has_dur = 1;
  rs->p50 = ct_hist_quantile(h, 0.5);
  rs->p99 = ct_hist_quantile(h, 0.99);
  rs->max = h->max;
}

/* findings.h: as ct_site_durations. */
void ct_site_runnable(struct ct_rsite *rs, const struct ct_hist *h) {
  rs->has_runnable = 1;
  rs->r_p50 = ct_hist_quantile(h, 0.5);
  rs->r_p99 = ct_hist_quantile(h, 0.99);
  rs->r_max = h->max;
}

/* findings.h: clamped at the start (a ts before it reads "+0 ns"). */
const char *ct_at(const struct ct_report *r, uint64_t ts, char *buf, size_t n) {
  char t[32];
  if (ts < r->start_ts && r->t.has_window) /* a flight dump's snapshot */
    snprintf(buf, n, "%s before the window", ct_fmt_ns(r->start_ts - ts, t, sizeof t));
  else
    snprintf(buf, n, "+%s", ct_fmt_ns(ts > r->start_ts ? ts - r->start_ts : 0, t, sizeof t));
  return buf;
}

/* findings.h: the label is the state's (st->labels). */
const char *ct_label_of(const struct ct_state *st, const struct ct_coro *c) {
  return c->label ? st->labels[c->label] : NULL;
}

/* The site a coroutine is grouped by; 0 for suspend addresses that are not
 * code (then the finding lists no sites). */
static uint64_t key_site(const struct ct_state *st, const struct ct_coro *c, int by_create) {
  return by_create ? c->create_site : st->sites_not_code ? 0 : c->susp_site;
}

/* Sort key of a coroutine within a finding: site (pid, address), then id. */
struct gkey {
  uint32_t pid;
  uint64_t site, id;
  const struct ct_coro *c;
};
/* qsort order of struct gkey: pid, site, id. */
static int cmp_gkey(const void *a, const void *b) {
  const struct gkey *x = a, *y = b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  if (x->site != y->site)
    return x->site < y->site ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* findings.h: "srv+0x10 (resp_server.c:25)", from the symbol table and DWARF. */
int ct_fmt_data(const struct ct_state *st, uint32_t pid, uint64_t addr, char *buf, size_t n) {
  struct ct_sym sym;
  if (ct_symbolize_data(st->sym, pid, addr, &sym) != 0 || !sym.function)
    return 0;
  int k = snprintf(buf, n, "%s", sym.function);
  if (sym.offset && k > 0 && (size_t)k < n)
    k += snprintf(buf + k, n - (size_t)k, "+0x%" PRIx64, sym.offset);
  if (sym.file && k > 0 && (size_t)k < n)
    snprintf(buf + k, n - (size_t)k, " (%s:%d)", base_name(sym.file), sym.line);
  return 1;
}

/* The name of c's ptr wait object (struct ct_rcoro's obj_name), or NULL:
 * its symbol when a module's symbol table has one there, else the site
 * that first parked a coroutine on it. */
static char *obj_name(const struct ct_state *st, const struct ct_coro *c) {
  char buf[640], s[512];
  if (ct_fmt_data(st, c->pid, c->obj, buf, sizeof buf))
    return strdup(buf);
  const struct ct_wakers *w = ct_map_get(&st->objs, c->obj, CTP_WAIT_PTR);
  if (!w || !w->first_site || st->sites_not_code)
    return NULL;
  struct ct_rsite rs = {.site = w->first_site, .pid = w->first_pid};
  ct_symbolize_site(st, &rs);
  snprintf(buf, sizeof buf, "heap, first waited on at %s", ct_fmt_site(&rs, s, sizeof s));
  return strdup(buf);
}

/* findings.h: f owns its sites and coros (ct_report_free), also after a failure. */
int ct_group_coros(struct ct_report *r, const struct ct_state *st, struct ct_finding *f,
                   const struct ct_coro **cs, size_t n, int by_create) {
  int rc = -ENOMEM;
  struct ct_hist *h = calloc(1, sizeof *h);
  struct gkey *keys = malloc((n ? n : 1) * sizeof *keys);
  f->coros = calloc(n ? n : 1, sizeof *f->coros);
  f->sites = calloc(n ? n : 1, sizeof *f->sites);
  if (!h || !keys || !f->coros || !f->sites)
    goto out;
  for (size_t i = 0; i < n; i++)
    keys[i] = (struct gkey){cs[i]->pid, key_site(st, cs[i], by_create), cs[i]->id, cs[i]};
  qsort(keys, n, sizeof *keys, cmp_gkey);
  for (size_t i = 0; i < n; i++)
    cs[i] = keys[i].c;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    struct ct_rsite *rs = &f->sites[f->nsites];
    rs->site = key_site(st, cs[i], by_create);
    rs->pid = cs[i]->pid;
    memset(h, 0, sizeof *h);
    for (; j < n && cs[j]->pid == rs->pid && key_site(st, cs[j], by_create) == rs->site; j++) {
      const struct ct_coro *c = cs[j];
      struct ct_rcoro *rc_ = &f->coros[f->ncoros++];
      rc_->probe_id = c->id;
      rc_->incarnation = c->incarnation;
      rc_->label = ct_label_of(st, c);
      rc_->site_index = rs->site || by_create ? (int)f->nsites : -1;
      if (!by_create) {
        rc_->wait = c->wait;
        rc_->obj = c->obj;
        if (c->wait == CTP_WAIT_PTR)
          rc_->obj_name = obj_name(st, c); /* NULL on ENOMEM too: the address will do */
        rc_->has_susp = 1;
        uint64_t until = c->state == CT_CS_DESTROYED ? c->destroy_ts : r->end_ts;
        rc_->suspended_ns = until > c->susp_ts ? until - c->susp_ts : 0;
        ct_hist_add(h, rc_->suspended_ns);
        if (c->wait == CTP_WAIT_FD) {
          if (!rs->has_fd || c->obj < rs->fd_min)
            rs->fd_min = c->obj;
          if (!rs->has_fd || c->obj > rs->fd_max)
            rs->fd_max = c->obj;
          rs->has_fd = 1;
        }
      }
    }
    rs->count = j - i;
    i = j;
    if (!rs->site && !by_create) { /* not code: no site entry */
      memset(rs, 0, sizeof *rs);
      continue;
    }
    if (!by_create)
      ct_site_durations(rs, h);
    ct_symbolize_site(st, rs);
    f->nsites++;
  }
  rc = 0;
out:
  free(keys);
  free(h);
  return rc;
}

/* findings.h: live view, no end line, killed, or exited, in that order. */
void ct_describe_exit(const struct ct_report *r, char *buf, size_t n) {
  const struct ct_rtrace *st = &r->t;
  if (!st->has_end && r->live_ts && st->has_window)
    snprintf(buf, n, "the program was still running when the flight recorder wrote this dump");
  else if (!st->has_end && r->live_ts)
    snprintf(buf, n, "the program is still running (live view)");
  else if (!st->has_end)
    snprintf(buf, n, "the trace has no end line (engine or machine stopped)");
  else if (st->exit_has_signal)
    snprintf(buf, n, "the program was killed by %s", st->exit_name[0] ? st->exit_name : "a signal");
  else
    snprintf(buf, n, "the program exited with code %" PRId64, st->exit_code);
}
