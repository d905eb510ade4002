/* findings.c - the report model's assembly: the overview (timeline, idle
 * gaps, suspension sites), the helpers the finding builders share, and the
 * order of findings (the builders are in findings_stuck.c, findings_tables.c). */
#include "analysis/findings.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define IDLE_GAP_NS (60ull * 1000000000ull)
#define ABSURD_GAP_NS (86400ull * 1000000000ull)

const char *ct_sev_name(enum ct_sev s) {
  return s == CT_SEV_ERROR ? "error" : s == CT_SEV_WARNING ? "warning" : "info";
}

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

static const char *base_name(const char *p) {
  const char *s = p ? strrchr(p, '/') : NULL;
  return s ? s + 1 : p;
}

const char *ct_fmt_site(const struct ct_rsite *rs, char *buf, size_t n) {
  if (rs->symbolized && rs->sym.function && rs->sym.file)
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

int ct_keep_evidence(struct ct_rcoro *rc, const char *ev) {
  free(rc->evidence);
  rc->evidence = strdup(ev);
  return rc->evidence ? 0 : -ENOMEM;
}

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

void ct_add_evidence(struct ct_finding *f, const char *fmt, ...) {
  if (f->nevidence == CT_EVIDENCE_MAX)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->evidence[f->nevidence++], sizeof f->evidence[0], fmt, ap);
  va_end(ap);
}

void ct_symbolize_site(struct ct_state *st, struct ct_rsite *rs) {
  if (ct_symbolize(st->sym, rs->pid, rs->site, 1, &rs->sym) == 0 && rs->sym.module)
    rs->symbolized = 1;
}

void ct_site_durations(struct ct_rsite *rs, const struct ct_hist *h) {
  rs->has_dur = 1;
  rs->p50 = ct_hist_quantile(h, 0.5);
  rs->p99 = ct_hist_quantile(h, 0.99);
  rs->max = h->max;
}

const char *ct_at(const struct ct_report *r, uint64_t ts, char *buf, size_t n) {
  char t[32];
  snprintf(buf, n, "+%s", ct_fmt_ns(ts > r->start_ts ? ts - r->start_ts : 0, t, sizeof t));
  return buf;
}

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
  struct ct_coro *c;
};
static int cmp_gkey(const void *a, const void *b) {
  const struct gkey *x = a, *y = b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  if (x->site != y->site)
    return x->site < y->site ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

int ct_group_coros(struct ct_report *r, struct ct_state *st, struct ct_finding *f,
                   struct ct_coro **cs, size_t n, int by_create) {
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
      struct ct_coro *c = cs[j];
      struct ct_rcoro *rc_ = &f->coros[f->ncoros++];
      rc_->probe_id = c->id;
      rc_->incarnation = c->incarnation;
      rc_->label = ct_label_of(st, c);
      rc_->site_index = rs->site || by_create ? (int)f->nsites : -1;
      if (!by_create) {
        rc_->wait = c->wait;
        rc_->obj = c->obj;
        rc_->has_susp = 1;
        rc_->suspended_ns = r->end_ts > c->susp_ts ? r->end_ts - c->susp_ts : 0;
        ct_hist_add(h, rc_->suspended_ns);
        if (c->wait == 1) {
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

void ct_describe_exit(const struct ct_state *st, char *buf, size_t n) {
  if (!st->has_end && st->live_ts)
    snprintf(buf, n, "the program is still running (live view)");
  else if (!st->has_end)
    snprintf(buf, n, "the trace has no end line (engine or machine stopped)");
  else if (st->exit_has_signal)
    snprintf(buf, n, "the program was killed by %s", st->exit_name[0] ? st->exit_name : "a signal");
  else
    snprintf(buf, n, "the program exited with code %" PRId64, st->exit_code);
}

/* Buckets in time order. */
static int cmp_bucket(const void *a, const void *b) {
  const struct ct_bucket *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Start, end, idle gaps. Events in a stretch more than a day away from all
 * others, holding under 0.1% of the events, are torn clocks (a valid-looking
 * record with a garbage ts): counted, left out of the duration. */
static int timeline(struct ct_report *r, const struct ct_state *st) {
  const struct ct_map *b = &st->buckets;
  struct ct_bucket *bs = malloc((b->n ? b->n : 1) * sizeof *bs);
  if (!bs)
    return -ENOMEM;
  size_t n = 0;
  for (size_t i = 0; i < b->n; i++)
    bs[n++] = *(struct ct_bucket *)ct_map_at(b, i);
  qsort(bs, n, sizeof *bs, cmp_bucket);
  for (size_t i = 0, j; i < n; i = j) {
    uint64_t cnt = bs[i].n;
    for (j = i + 1; j < n && bs[j].lo - bs[j - 1].hi <= ABSURD_GAP_NS; j++)
      cnt += bs[j].n;
    if (cnt * 1000 >= st->events)
      continue;
    r->absurd_ts += cnt;
    for (size_t k = i; k < j; k++)
      bs[k].n = 0; /* n == 0: left out */
  }
  uint64_t first = 0, last = 0, prev_hi = 0, idle = 0;
  for (size_t i = 0; i < n; i++) {
    if (!bs[i].n)
      continue;
    if (!first)
      first = bs[i].lo;
    last = bs[i].hi;
    uint64_t g = prev_hi ? bs[i].lo - prev_hi : 0;
    prev_hi = bs[i].hi;
    if (g <= IDLE_GAP_NS)
      continue;
    idle += g;
    r->gaps_total++;
    /* Keep the longest CT_GAPS_MAX, longest first. */
    size_t k = r->ngaps < CT_GAPS_MAX ? r->ngaps++ : CT_GAPS_MAX;
    for (; k > 0 && r->gaps[k - 1].to - r->gaps[k - 1].from < g; k--)
      if (k < CT_GAPS_MAX)
        r->gaps[k] = r->gaps[k - 1];
    if (k < CT_GAPS_MAX) {
      r->gaps[k].from = bs[i].lo - g;
      r->gaps[k].to = bs[i].lo;
    }
  }
  free(bs);
  if (!first) { /* no buckets (no events), or the bucket table overflowed */
    first = st->first_ts;
    last = st->last_ts;
  }
  r->start_ts = st->meta_mono_ns && st->meta_mono_ns < first ? st->meta_mono_ns : first;
  r->end_ts = st->has_end && st->end_ts ? st->end_ts : st->live_ts > last ? st->live_ts : last;
  r->duration_ns = r->end_ts > r->start_ts ? r->end_ts - r->start_ts : 0;
  r->active_ns = r->duration_ns > idle ? r->duration_ns - idle : 0;
  return 0;
}

/* Most used first, then by address (a stable order for equal counts). */
static int cmp_site_count(const void *a, const void *b) {
  const struct ct_rsite *x = a, *y = b;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return x->site < y->site ? -1 : x->site > y->site;
}

/* Overview: timeline, counts, every suspension site. */
static int overview(struct ct_report *r, struct ct_state *st) {
  r->threads = st->tids.n;
  r->killed = !st->has_end || st->exit_has_signal;
  r->coroutines = st->coroutines;
  int rc = timeline(r, st);
  if (rc)
    return rc;
  const struct ct_map *sm = &st->sites;
  if (!(r->sites = calloc(sm->n ? sm->n : 1, sizeof *r->sites)))
    return -ENOMEM;
  for (size_t i = 0; i < sm->n; i++) {
    const struct ct_site *s = ct_map_at(sm, i);
    struct ct_rsite *rs = &r->sites[r->nsites++];
    rs->site = s->site;
    rs->pid = s->pid;
    rs->count = s->suspensions;
    ct_symbolize_site(st, rs);
    if (s->hist)
      ct_site_durations(rs, s->hist);
  }
  qsort(r->sites, r->nsites, sizeof *r->sites, cmp_site_count);
  return 0;
}

int ct_report_build(struct ct_state *st, const char *path, uint64_t bytes, uint64_t stuck_ns,
                    struct ct_report *r) {
  memset(r, 0, sizeof *r);
  r->st = st;
  r->path = path;
  r->bytes = bytes;
  int rc;
  if ((rc = ct_state_finish_runs(st)) || (rc = overview(r, st)) ||
      (rc = ct_stuck_findings(r, st, stuck_ns)) || (rc = ct_violation_findings(r, st)) ||
      (rc = ct_leak_finding(r, st)) || (rc = ct_blocker_finding(r, st)) ||
      (rc = ct_lost_finding(r, st)))
    return rc;
  /* Most severe first; stable within a severity. */
  for (size_t i = 1; i < r->nf; i++)
    for (size_t j = i; j > 0 && r->f[j].sev > r->f[j - 1].sev; j--) {
      struct ct_finding t = r->f[j];
      r->f[j] = r->f[j - 1];
      r->f[j - 1] = t;
    }
  return 0;
}

void ct_report_free(struct ct_report *r) {
  for (size_t i = 0; i < r->nf; i++) {
    for (size_t k = 0; k < r->f[i].ncoros; k++) {
      free(r->f[i].coros[k].wake);
      free(r->f[i].coros[k].end_site);
      free(r->f[i].coros[k].evidence);
    }
    free(r->f[i].sites);
    free(r->f[i].coros);
  }
  free(r->f);
  free(r->sites);
  memset(r, 0, sizeof *r);
}

int ct_report_max_severity(const struct ct_report *r) {
  int m = -1;
  for (size_t i = 0; i < r->nf; i++)
    if ((int)r->f[i].sev > m)
      m = (int)r->f[i].sev;
  return m;
}
