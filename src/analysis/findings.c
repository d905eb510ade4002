/* findings.c - from the streamed state to findings (docs/FINDINGS.md): lost
 * wakeups, the wake-before-suspend race, deadlocks, state-machine violations,
 * leaks, blockers, lost events; plus the overview numbers. */
#include "analysis/model.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define IDLE_GAP_NS (60ull * 1000000000ull)
#define ABSURD_GAP_NS (86400ull * 1000000000ull)
#define MAX_CYCLES 16
#define IDLE_WAKES 3 /* woken this often in a row at a site: parked there, likely idle */

/* Why a coroutine is suspended at the end with no wake after its last suspend.
 * The _LOST twins: the same, but events were lost since its last resume or
 * after its last event, so the wake it lacks may be one of them. */
enum cat {
  CAT_RAN_ON, CAT_WAKE_BEFORE, CAT_RAN_ON_LOST, CAT_WAKE_BEFORE_LOST, CAT_KILLED, CAT_EXIT,
  CAT_WEAK, CAT_DEADLOCK, CAT_N
};

struct stuck {
  struct ct_coro *c;
  enum cat cat;
  uint64_t waits_for;
  int color; /* cycle search: 0 new, 1 on the current walk, 2 done */
};

const char *ct_sev_name(enum ct_sev s) {
  return s == CT_SEV_ERROR ? "error" : s == CT_SEV_WARNING ? "warning" : "info";
}

const char *ct_fmt_ns(uint64_t ns, char *buf, size_t n) {
  if (ns >= 1000000000ull) snprintf(buf, n, "%.1f s", (double)ns / 1e9);
  else if (ns >= 1000000ull) snprintf(buf, n, "%.1f ms", (double)ns / 1e6);
  else if (ns >= 1000ull) snprintf(buf, n, "%.1f us", (double)ns / 1e3);
  else snprintf(buf, n, "%" PRIu64 " ns", ns);
  return buf;
}

static struct ct_finding *new_finding(struct ct_report *r, const char *kind, enum ct_sev sev) {
  struct ct_finding *nf = realloc(r->f, (r->nf + 1) * sizeof *nf);
  if (!nf) return NULL;
  r->f = nf;
  struct ct_finding *f = &r->f[r->nf++];
  memset(f, 0, sizeof *f);
  f->kind = kind;
  f->sev = sev;
  return f;
}

static void add_evidence(struct ct_finding *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void add_evidence(struct ct_finding *f, const char *fmt, ...) {
  if (f->nevidence == CT_EVIDENCE_MAX) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->evidence[f->nevidence++], sizeof f->evidence[0], fmt, ap);
  va_end(ap);
}

static void symbolize_site(struct ct_state *st, struct ct_rsite *rs) {
  if (ct_symbolize(st->sym, rs->pid, rs->site, 1, &rs->sym) == 0 && rs->sym.module)
    rs->symbolized = 1;
}

/* Time since the trace's start, for evidence ("+1.2 s"). */
static const char *at(const struct ct_report *r, uint64_t ts, char *buf, size_t n) {
  char t[32];
  snprintf(buf, n, "+%s", ct_fmt_ns(ts > r->start_ts ? ts - r->start_ts : 0, t, sizeof t));
  return buf;
}

static const char *label_of(const struct ct_state *st, const struct ct_coro *c) {
  return c->label ? st->labels[c->label] : NULL;
}

static void fmt_obj(const struct ct_coro *c, char *buf, size_t n) {
  if (c->wait == 1) snprintf(buf, n, "fd %" PRId64, (int64_t)c->obj);
  else if (c->wait == 2) snprintf(buf, n, "ptr 0x%016" PRIx64, c->obj);
  else snprintf(buf, n, "no wait object");
}

static uint64_t key_site(const struct ct_coro *c, int by_create) {
  return by_create ? c->create_site : c->susp_site;
}

/* Sort key of a coroutine within a finding: site (pid, address), then id. */
struct gkey {
  uint32_t pid;
  uint64_t site, id;
  struct ct_coro *c;
};
static int cmp_gkey(const void *a, const void *b) {
  const struct gkey *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->site != y->site) return x->site < y->site ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Fills f's sites and coroutines from cs[0..n): one site per distinct
 * (pid, site), with suspended-time percentiles at end_ts (suspension sites
 * only). cs is reordered so that cs[i] is f->coros[i]; evidence is left empty. */
static int group(struct ct_report *r, struct ct_state *st, struct ct_finding *f,
                 struct ct_coro **cs, size_t n, int by_create) {
  int rc = -ENOMEM;
  struct ct_hist *h = calloc(1, sizeof *h);
  struct gkey *keys = malloc((n ? n : 1) * sizeof *keys);
  f->coros = calloc(n ? n : 1, sizeof *f->coros);
  f->sites = calloc(n ? n : 1, sizeof *f->sites);
  if (!h || !keys || !f->coros || !f->sites) goto out;
  for (size_t i = 0; i < n; i++)
    keys[i] = (struct gkey){cs[i]->pid, key_site(cs[i], by_create), cs[i]->id, cs[i]};
  qsort(keys, n, sizeof *keys, cmp_gkey);
  for (size_t i = 0; i < n; i++) cs[i] = keys[i].c;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    struct ct_rsite *rs = &f->sites[f->nsites];
    rs->site = key_site(cs[i], by_create);
    rs->pid = cs[i]->pid;
    memset(h, 0, sizeof *h);
    for (; j < n && cs[j]->pid == rs->pid && key_site(cs[j], by_create) == rs->site; j++) {
      struct ct_coro *c = cs[j];
      struct ct_rcoro *rc_ = &f->coros[f->ncoros++];
      rc_->probe_id = c->id;
      rc_->label = label_of(st, c);
      rc_->site_index = (int)f->nsites;
      if (!by_create) {
        rc_->wait = c->wait;
        rc_->obj = c->obj;
        rc_->has_susp = 1;
        rc_->suspended_ns = r->end_ts > c->susp_ts ? r->end_ts - c->susp_ts : 0;
        ct_hist_add(h, rc_->suspended_ns);
        if (c->wait == 1) {
          if (!rs->has_fd || c->obj < rs->fd_min) rs->fd_min = c->obj;
          if (!rs->has_fd || c->obj > rs->fd_max) rs->fd_max = c->obj;
          rs->has_fd = 1;
        }
      }
    }
    rs->count = j - i;
    if (!by_create) {
      rs->has_dur = 1;
      rs->p50 = ct_hist_quantile(h, 0.5);
      rs->p99 = ct_hist_quantile(h, 0.99);
      rs->max = h->max;
    }
    symbolize_site(st, rs);
    f->nsites++;
    i = j;
  }
  rc = 0;
out:
  free(keys);
  free(h);
  return rc;
}

/* Marks cycles in the stuck coroutines' waits_for graph (out-degree <= 1). */
static void find_cycles(struct stuck *sk, size_t n, struct ct_map *idx) {
  for (size_t i = 0; i < n; i++) {
    size_t k = i;
    /* Walk until a node seen before; if it was seen on this walk, a cycle. */
    while (sk[k].color == 0) {
      sk[k].color = 1;
      uint64_t *next = sk[k].waits_for ? ct_map_get(idx, sk[k].waits_for, 0) : NULL;
      if (!next) break;
      k = (size_t)*next;
    }
    if (sk[k].color == 1 && sk[k].waits_for) {
      size_t m = k;
      do {
        sk[m].cat = CAT_DEADLOCK;
        m = (size_t) * (uint64_t *)ct_map_get(idx, sk[m].waits_for, 0);
      } while (m != k);
    }
    for (k = i; sk[k].color == 1;) { /* close this walk */
      sk[k].color = 2;
      uint64_t *next = sk[k].waits_for ? ct_map_get(idx, sk[k].waits_for, 0) : NULL;
      if (!next) break;
      k = (size_t)*next;
    }
  }
}

static int is_stuck(const struct ct_coro *c) { return c && c->state == CT_CS_SUSPENDED && !c->woken; }

/* Who a waits on: the coroutine that has woken the waiters of a's wait
 * object most often, provided every past waker of that object is a coroutine
 * that is stuck itself; else 0 (a plain thread among the wakers, or more than
 * CT_WAKERS of them: someone else may still wake it). *times: how often. */
static uint64_t waits_for(const struct ct_state *st, const struct ct_coro *a, uint64_t *times) {
  const struct ct_wakers *w = a->wait ? ct_map_get(&st->objs, a->obj, a->wait) : NULL;
  if (!w || !w->n || w->by_thread || w->overflow) return 0;
  uint64_t best = 0;
  *times = 0;
  for (unsigned i = 0; i < w->n; i++) {
    if (w->id[i] == a->id || !is_stuck(ct_map_get(&st->coros, w->id[i], 0))) return 0;
    if (w->times[i] > *times) {
      *times = w->times[i];
      best = w->id[i];
    }
  }
  return best;
}

static void describe_exit(const struct ct_state *st, char *buf, size_t n) {
  if (!st->has_end) snprintf(buf, n, "the trace has no end line (engine or machine stopped)");
  else if (st->exit_has_signal)
    snprintf(buf, n, "the program was killed by %s", st->exit_name[0] ? st->exit_name : "a signal");
  else snprintf(buf, n, "the program exited with code %" PRId64, st->exit_code);
}

/* The coroutine that parked on c's fd number after c did (so the fd was
 * closed and reused under c), or 0. */
static uint64_t fd_reused_by(const struct ct_state *st, const struct ct_coro *c) {
  const struct ct_fduse *fu = c->wait == 1 ? ct_map_get(&st->fds, c->obj, c->pid) : NULL;
  return fu && fu->id != c->id && fu->ts > c->susp_ts ? fu->id : 0;
}

/* Events of c lost after its last harvested one: the station's loss count
 * beyond the gaps seen in its ev sequence. */
static uint64_t tail_lost(const struct ct_coro *c) {
  return c->station_lost > c->lost ? c->station_lost - c->lost : 0;
}

/* Events were lost where the wake c lacks would be: since its last resume
 * (before or after its last suspend), or after its last event. */
static int wake_may_be_lost(const struct ct_coro *c) { return c->gap_since_resume || tail_lost(c); }

/* Parked where its last IDLE_WAKES or more woken suspensions were, its fd not
 * reused: more likely waiting for work that did not come (an accept loop)
 * than lost. */
static int likely_idle(const struct ct_state *st, const struct ct_coro *c) {
  return c->woken_here >= IDLE_WAKES && c->woken_site == c->susp_site && !fd_reused_by(st, c);
}

static int uncertain(enum cat cat) { return cat == CAT_RAN_ON_LOST || cat == CAT_WAKE_BEFORE_LOST; }

/* What an uncertain finding may have lost. */
static const char *lost_what(enum cat cat) {
  return cat == CAT_RAN_ON_LOST ? "the missing wake"
                                : "a resume that took the early wake, or a later wake,";
}

/* Per-coroutine evidence of a stuck coroutine. */
static void stuck_evidence(const struct ct_report *r, const struct ct_state *st,
                           const struct ct_coro *c, enum cat cat, char *buf, size_t n) {
  char obj[48], t1[32], t2[32], d[32], ex[80];
  uint64_t left = r->end_ts > c->susp_ts ? r->end_ts - c->susp_ts : 0;
  fmt_obj(c, obj, sizeof obj);
  describe_exit(st, ex, sizeof ex);
  size_t o = 0;
  switch (cat == CAT_RAN_ON_LOST ? CAT_RAN_ON : cat == CAT_WAKE_BEFORE_LOST ? CAT_WAKE_BEFORE : cat) {
  case CAT_RAN_ON:
    o = (size_t)snprintf(buf, n, "parked on %s at %s; the program ran on for %s and never woke it",
                         obj, at(r, c->susp_ts, t1, sizeof t1), ct_fmt_ns(left, d, sizeof d));
    break;
  case CAT_WAKE_BEFORE:
    o = (size_t)snprintf(buf, n, "woken at %s, %s before it parked on %s at %s; no wake since",
                         at(r, c->wake_before_ts, t1, sizeof t1),
                         ct_fmt_ns(c->susp_ts - c->wake_before_ts, d, sizeof d), obj,
                         at(r, c->susp_ts, t2, sizeof t2));
    break;
  case CAT_KILLED:
    o = (size_t)snprintf(buf, n, "parked on %s %s before the end: %s while it waited", obj,
                         ct_fmt_ns(left, d, sizeof d), ex);
    break;
  case CAT_EXIT:
    o = (size_t)snprintf(buf, n, "parked on %s %s before the end; %s without waking it", obj,
                         ct_fmt_ns(left, d, sizeof d), ex);
    break;
  case CAT_WEAK:
    o = (size_t)snprintf(buf, n, "last event a suspend at %s; the trace went on for %s",
                         at(r, c->susp_ts, t1, sizeof t1), ct_fmt_ns(left, d, sizeof d));
    break;
  default: break;
  }
  uint64_t reuser = fd_reused_by(st, c);
  if (o < n && reuser)
    o += (size_t)snprintf(buf + o, n - o, "; fd %" PRId64 " was reused by coroutine %" PRIu64
                          " after it parked: closed under it", (int64_t)c->obj, reuser);
  if (o < n && cat == CAT_RAN_ON && likely_idle(st, c))
    o += (size_t)snprintf(buf + o, n - o, "; parked at a site where it was woken %" PRIu64
                          " times in a row before: may simply be idle, e.g. an accept loop",
                          c->woken_here);
  if (o < n && uncertain(cat))
    snprintf(buf + o, n - o, "; uncertain: %s; %s may be one of them",
             c->gap_since_resume ? "events were lost since its last resume (a gap in ev)"
                                 : "events written after its last one were lost",
             lost_what(cat));
  else if (o < n && (c->lost || c->station_lost))
    snprintf(buf + o, n - o, " (less certain: %" PRIu64 " of its events were lost)",
             c->lost > c->station_lost ? c->lost : c->station_lost);
}

static int stuck_finding(struct ct_report *r, struct ct_state *st, struct stuck *sk, size_t n,
                         enum cat cat) {
  static const char *const kinds[CAT_N] = {
      "lost_wakeup", "wake_before_suspend", "lost_wakeup", "wake_before_suspend",
      "lost_wakeup", "lost_wakeup", "lost_wakeup", "deadlock"};
  static const enum ct_sev sevs[CAT_N] = {CT_SEV_ERROR,   CT_SEV_ERROR,   CT_SEV_WARNING,
                                          CT_SEV_WARNING, CT_SEV_INFO,    CT_SEV_WARNING,
                                          CT_SEV_WARNING, CT_SEV_ERROR};
  size_t m = 0;
  uint64_t min_left = UINT64_MAX;
  struct ct_coro **cs = malloc((n ? n : 1) * sizeof *cs);
  if (!cs) return -ENOMEM;
  for (size_t i = 0; i < n; i++)
    if (sk[i].cat == cat) {
      cs[m++] = sk[i].c;
      uint64_t left = r->end_ts > sk[i].c->susp_ts ? r->end_ts - sk[i].c->susp_ts : 0;
      if (left < min_left) min_left = left;
    }
  int rc = 0;
  struct ct_finding *f;
  if (!m) goto out;
  rc = -ENOMEM;
  if (!(f = new_finding(r, kinds[cat], sevs[cat])) || (rc = group(r, st, f, cs, m, 0))) goto out;
  f->count = m;
  const char *s = m == 1 ? "" : "s";
  char d[32], ex[80];
  describe_exit(st, ex, sizeof ex);
  ct_fmt_ns(min_left, d, sizeof d);
  switch (cat) {
  case CAT_RAN_ON:
    snprintf(f->title, sizeof f->title, "%zu coroutine%s suspended forever: nobody woke them", m, s);
    add_evidence(f, "the program ran on for %s after the last of them parked; then %s", d, ex);
    break;
  case CAT_WAKE_BEFORE:
    snprintf(f->title, sizeof f->title,
             "%zu coroutine%s woken before they parked, never after: the lost-wakeup race", m, s);
    add_evidence(f, "each was woken while still running, then suspended and was never woken "
                    "again; the scheduler dropped the early wake");
    break;
  case CAT_RAN_ON_LOST:
    snprintf(f->title, sizeof f->title,
             "%zu coroutine%s apparently never woken, but events were lost around their last suspend",
             m, s);
    break;
  case CAT_WAKE_BEFORE_LOST:
    snprintf(f->title, sizeof f->title,
             "%zu coroutine%s woken before they parked, apparently never after, but events were lost",
             m, s);
    break;
  case CAT_KILLED:
    snprintf(f->title, sizeof f->title, "%zu coroutine%s waiting when the program stopped", m, s);
    add_evidence(f, "%s; they parked shortly before (the last %s before the end): caught by the "
                    "exit, probably not a bug", ex, d);
    break;
  case CAT_EXIT:
    snprintf(f->title, sizeof f->title, "%zu coroutine%s abandoned while suspended at exit", m, s);
    add_evidence(f, "%s %s after the last of them parked, without waking them", ex, d);
    break;
  case CAT_WEAK:
    snprintf(f->title, sizeof f->title, "%zu coroutine%s apparently never resumed", m, s);
    add_evidence(f, "%s: only is_active is known, so a missing resume is all the evidence "
                    "(weaker than with wakes)",
                 st->any_kind ? "the trace records no wakes" : "a v1 trace (no kind, no wakes)");
    break;
  default: break;
  }
  if (uncertain(cat))
    add_evidence(f, "uncertain, so not an error: events were lost since their last resume, or "
                    "after their last event, and %s may be one of them", lost_what(cat));
  size_t reused = 0, idle = 0;
  for (size_t i = 0; i < f->ncoros; i++) {
    stuck_evidence(r, st, cs[i], cat, f->coros[i].evidence, sizeof f->coros[i].evidence);
    reused += fd_reused_by(st, cs[i]) != 0;
    f->coros[i].likely_idle = cat == CAT_RAN_ON && likely_idle(st, cs[i]);
    idle += (size_t)f->coros[i].likely_idle;
  }
  if (reused)
    add_evidence(f, "%zu of them wait on an fd number that another coroutine parked on later: "
                    "the fd was closed (and reused) under them", reused);
  /* Still unwoken, so still counted; but with nothing else in the finding it
   * is no error: a server waiting for clients looks just like this. */
  if (idle)
    add_evidence(f, "%zu of them (likely_idle) parked at a site where each was woken at least %d "
                    "times in a row before: may simply be idle, e.g. an accept loop", idle, IDLE_WAKES);
  if (idle == m) {
    f->sev = CT_SEV_WARNING;
    snprintf(f->title, sizeof f->title,
             "%zu coroutine%s never woken again where they were woken before: likely idle", m, s);
  }
  rc = 0;
out:
  free(cs);
  return rc;
}

/* One finding per wait-for cycle, each edge with its evidence. */
static int deadlock_findings(struct ct_report *r, struct ct_state *st, struct stuck *sk, size_t n,
                             struct ct_map *idx) {
  size_t cycles = 0;
  for (size_t i = 0; i < n && cycles < MAX_CYCLES; i++) {
    if (sk[i].cat != CAT_DEADLOCK || sk[i].color == 3) continue;
    size_t len = 0, k = i;
    do {
      sk[k].color = 3;
      len++;
      k = (size_t) * (uint64_t *)ct_map_get(idx, sk[k].waits_for, 0);
    } while (k != i);
    struct ct_coro **cs = malloc(len * sizeof *cs);
    if (!cs) return -ENOMEM;
    k = i;
    for (size_t j = 0; j < len; j++, k = (size_t) * (uint64_t *)ct_map_get(idx, sk[k].waits_for, 0))
      cs[j] = sk[k].c;
    struct ct_finding *f = new_finding(r, "deadlock", CT_SEV_ERROR);
    int rc = f ? group(r, st, f, cs, len, 0) : -ENOMEM;
    free(cs);
    if (rc) return rc;
    f->count = len;
    snprintf(f->title, sizeof f->title, "deadlock: %zu coroutines wait on each other in a cycle", len);
    add_evidence(f, "each waits on an object whose waiters were only ever woken by the next "
                    "one, which is stuck too");
    for (size_t j = 0; j < f->ncoros; j++) {
      struct ct_rcoro *rc_ = &f->coros[j];
      const struct ct_coro *c = ct_map_get(&st->coros, rc_->probe_id, 0);
      uint64_t times = 0;
      char obj[48], t[32];
      rc_->waits_for = waits_for(st, c, &times);
      fmt_obj(c, obj, sizeof obj);
      snprintf(rc_->evidence, sizeof rc_->evidence,
               "waits on %s since %s; its waiters were woken only by coroutine %" PRIu64
               " (%" PRIu64 " time%s), which is stuck too",
               obj, at(r, c->susp_ts, t, sizeof t), rc_->waits_for, times, times == 1 ? "" : "s");
    }
    cycles++;
  }
  return 0;
}

/* Lost wakeups, the race, deadlocks. */
static int stuck_findings(struct ct_report *r, struct ct_state *st, uint64_t stuck_ns) {
  const struct ct_map *m = &st->coros;
  struct ct_map idx;
  ct_map_init(&idx, sizeof(uint64_t));
  size_t n = 0;
  int rc = -ENOMEM;
  struct stuck *sk = calloc(m->n ? m->n : 1, sizeof *sk);
  if (!sk) goto out;
  for (size_t i = 0; i < m->cap; i++) {
    struct ct_coro *c = ct_map_at(m, i);
    if (!m->used[i] || !is_stuck(c)) continue;
    uint64_t left = r->end_ts > c->susp_ts ? r->end_ts - c->susp_ts : 0;
    struct stuck *s = &sk[n];
    s->c = c;
    if (!c->has_kind || !st->any_wake) {
      if (left <= stuck_ns) continue; /* a v1 suspend: only long ones say anything */
      s->cat = CAT_WEAK;
    } else if (c->wake_before_ts) {
      s->cat = wake_may_be_lost(c) ? CAT_WAKE_BEFORE_LOST : CAT_WAKE_BEFORE;
    } else if (left > stuck_ns) {
      s->cat = wake_may_be_lost(c) ? CAT_RAN_ON_LOST : CAT_RAN_ON;
    } else {
      s->cat = r->killed ? CAT_KILLED : CAT_EXIT;
    }
    int fresh;
    uint64_t *ix = ct_map_put(&idx, c->id, 0, &fresh);
    if (!ix) goto out;
    *ix = n++;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t times;
    if (sk[i].cat != CAT_WEAK) sk[i].waits_for = waits_for(st, sk[i].c, &times);
    if (sk[i].waits_for && !ct_map_get(&idx, sk[i].waits_for, 0)) sk[i].waits_for = 0;
  }
  find_cycles(sk, n, &idx);
  if ((rc = deadlock_findings(r, st, sk, n, &idx))) goto out;
  for (int cat = 0; cat < CAT_N; cat++)
    if (cat != CAT_DEADLOCK && (rc = stuck_finding(r, st, sk, n, (enum cat)cat))) goto out;
  rc = 0;
out:
  ct_map_free(&idx);
  free(sk);
  return rc;
}

const char *const ct_viol_kinds[CT_V_KINDS_] = {"resume_running", "resume_without_wake",
                                                "after_destroy"};

static int violation_findings(struct ct_report *r, const struct ct_state *st) {
  static const char *const evk[] = {"v1", "create", "suspend", "resume", "wake", "destroy"};
  for (int k = 0; k < CT_V_KINDS_; k++) {
    const struct ct_viol *v = &st->viol[k];
    if (!v->count) continue;
    struct ct_finding *f = new_finding(r, ct_viol_kinds[k], CT_SEV_ERROR);
    if (!f || !(f->coros = calloc(v->n, sizeof *f->coros))) return -ENOMEM;
    f->count = v->count;
    const char *s = v->count == 1 ? "" : "s";
    if (k == CT_V_RESUME_RUNNING)
      snprintf(f->title, sizeof f->title,
               "%" PRIu64 " resume%s of a running coroutine: two threads in one coroutine", v->count, s);
    else if (k == CT_V_RESUME_NO_WAKE)
      snprintf(f->title, sizeof f->title,
               "%" PRIu64 " resume%s of a suspended coroutine nobody woke", v->count, s);
    else
      snprintf(f->title, sizeof f->title, "%" PRIu64 " event%s after destroy", v->count, s);
    if (v->count > v->n) add_evidence(f, "the first %zu are listed", v->n);
    if (v->not_judged)
      add_evidence(f, "%" PRIu64 " more not judged: evidence lost (they came right after lost "
                      "events, which may hold what they lack)", v->not_judged);
    for (size_t i = 0; i < v->n; i++) {
      struct ct_rcoro *rc_ = &f->coros[f->ncoros++];
      const struct ct_coro *c = ct_map_get(&st->coros, v->ex[i].id, 0);
      char t1[32], t2[32];
      rc_->probe_id = v->ex[i].id;
      rc_->label = c ? label_of(st, c) : NULL;
      rc_->site_index = -1;
      at(r, v->ex[i].ts, t1, sizeof t1);
      at(r, v->ex[i].other_ts, t2, sizeof t2);
      if (k == CT_V_RESUME_RUNNING)
        snprintf(rc_->evidence, sizeof rc_->evidence,
                 "line %" PRIu64 ": resumed on tid %u at %s while running on tid %u since %s",
                 v->ex[i].line, v->ex[i].tid, t1, v->ex[i].other_tid, t2);
      else if (k == CT_V_RESUME_NO_WAKE)
        snprintf(rc_->evidence, sizeof rc_->evidence,
                 "line %" PRIu64 ": resumed on tid %u at %s; suspended since %s with no wake "
                 "(its trace shows wakes elsewhere)", v->ex[i].line, v->ex[i].tid, t1, t2);
      else
        snprintf(rc_->evidence, sizeof rc_->evidence,
                 "line %" PRIu64 ": %s on tid %u at %s after its destroy at %s", v->ex[i].line,
                 evk[v->ex[i].kind], v->ex[i].tid, t1, t2);
    }
  }
  return 0;
}

static int leak_finding(struct ct_report *r, struct ct_state *st) {
  const struct ct_map *m = &st->coros;
  size_t n = 0;
  struct ct_coro **cs = malloc((m->n ? m->n : 1) * sizeof *cs);
  if (!cs) return -ENOMEM;
  for (size_t i = 0; i < m->cap; i++) {
    struct ct_coro *c = ct_map_at(m, i);
    if (m->used[i] && c->has_kind && c->created && c->state != CT_CS_DESTROYED) cs[n++] = c;
  }
  r->alive_at_end = n;
  int rc = 0;
  /* Killed or cut short: a live server's connections are not leaks. */
  if (n && !r->killed) {
    struct ct_finding *f = new_finding(r, "leak", CT_SEV_WARNING);
    rc = f ? group(r, st, f, cs, n, 1) : -ENOMEM;
    if (!rc) {
      char ex[80];
      describe_exit(st, ex, sizeof ex);
      f->count = n;
      snprintf(f->title, sizeof f->title, "%zu coroutine%s created and never destroyed", n,
               n == 1 ? "" : "s");
      add_evidence(f, "%s with them alive; sites are where they were created", ex);
      for (size_t i = 0; i < f->ncoros; i++) {
        const struct ct_coro *c = ct_map_get(&st->coros, f->coros[i].probe_id, 0);
        char t1[32], t2[32];
        snprintf(f->coros[i].evidence, sizeof f->coros[i].evidence, "created at %s, last event at %s",
                 at(r, c->birth_ts ? c->birth_ts : r->start_ts, t1, sizeof t1),
                 at(r, c->last_ts, t2, sizeof t2));
      }
    }
  }
  free(cs);
  return rc;
}

static int blocker_finding(struct ct_report *r, struct ct_state *st) {
  const struct ct_map *m = &st->blocks;
  if (!m->n) return 0;
  struct ct_finding *f = new_finding(r, "blocker", CT_SEV_WARNING);
  if (!f || !(f->sites = calloc(m->n, sizeof *f->sites)) ||
      !(f->coros = calloc(m->n * CT_BLOCK_WORST, sizeof *f->coros)))
    return -ENOMEM;
  char thr[32];
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->used[i]) continue;
    const struct ct_block *b = ct_map_at(m, i);
    struct ct_rsite *rs = &f->sites[f->nsites];
    rs->site = b->site;
    rs->pid = b->pid;
    rs->count = b->count;
    rs->has_dur = 1;
    rs->max = b->worst[0].ns;
    rs->p50 = rs->p99 = b->total_ns / b->count; /* only the mean is kept per site */
    symbolize_site(st, rs);
    f->count += b->count;
    for (int w = 0; w < CT_BLOCK_WORST && b->worst[w].id; w++) {
      struct ct_rcoro *rc_ = &f->coros[f->ncoros++];
      const struct ct_coro *c = ct_map_get(&st->coros, b->worst[w].id, 0);
      char d[32], t[32];
      rc_->probe_id = b->worst[w].id;
      rc_->label = c ? label_of(st, c) : NULL;
      rc_->site_index = (int)f->nsites;
      snprintf(rc_->evidence, sizeof rc_->evidence, "%s %s without suspending on tid %u from %s",
               b->worst[w].at_end ? "still running at the end after" : "ran",
               ct_fmt_ns(b->worst[w].ns, d, sizeof d), b->worst[w].tid,
               at(r, b->worst[w].ts, t, sizeof t));
    }
    f->nsites++;
  }
  snprintf(f->title, sizeof f->title, "%" PRIu64 " run%s longer than %s without suspending",
           f->count, f->count == 1 ? "" : "s", ct_fmt_ns(st->blocker_ns, thr, sizeof thr));
  add_evidence(f, "sites are where the long runs resumed from (the previous suspend, or the "
                  "creation); p50/p99 of a site are its mean, max its longest run");
  return 0;
}

static int lost_finding(struct ct_report *r, const struct ct_state *st) {
  uint64_t lost = st->end_lost;
  if (st->station_lost > lost) lost = st->station_lost;
  if (st->gap_lost > lost) lost = st->gap_lost;
  r->lost_events = lost;
  if (!lost && !st->untraced) return 0;
  struct ct_finding *f = new_finding(r, "lost_events", CT_SEV_WARNING);
  if (!f) return -ENOMEM;
  f->count = lost;
  snprintf(f->title, sizeof f->title, "the trace is incomplete: %" PRIu64 " events lost", lost);
  if (st->has_end_counts)
    add_evidence(f, "the engine counted %" PRIu64 " events written, %" PRIu64 " harvested, %" PRIu64
                    " lost", st->end_events, st->end_harvested, st->end_lost);
  if (st->stations)
    add_evidence(f, "%" PRIu64 " stations reported %" PRIu64 " lost", st->stations, st->station_lost);
  if (st->any_ev) add_evidence(f, "gaps in the coroutines' ev sequences: %" PRIu64 " events", st->gap_lost);
  if (st->untraced)
    add_evidence(f, "%" PRIu64 " coroutines were not traced at all (no station free)", st->untraced);
  add_evidence(f, "findings about a coroutine that lost events say so: they are less certain; "
                  "where the events lost come right before what decides them, they are warnings "
                  "or not judged at all");
  return 0;
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
  if (!bs) return -ENOMEM;
  size_t n = 0;
  for (size_t i = 0; i < b->cap; i++)
    if (b->used[i]) bs[n++] = *(struct ct_bucket *)ct_map_at(b, i);
  qsort(bs, n, sizeof *bs, cmp_bucket);
  for (size_t i = 0, j; i < n; i = j) {
    uint64_t cnt = bs[i].n;
    for (j = i + 1; j < n && bs[j].lo - bs[j - 1].hi <= ABSURD_GAP_NS; j++) cnt += bs[j].n;
    if (cnt * 1000 >= st->events) continue;
    r->absurd_ts += cnt;
    for (size_t k = i; k < j; k++) bs[k].n = 0; /* n == 0: left out */
  }
  uint64_t first = 0, last = 0, prev_hi = 0, idle = 0;
  for (size_t i = 0; i < n; i++) {
    if (!bs[i].n) continue;
    if (!first) first = bs[i].lo;
    last = bs[i].hi;
    uint64_t g = prev_hi ? bs[i].lo - prev_hi : 0;
    prev_hi = bs[i].hi;
    if (g <= IDLE_GAP_NS) continue;
    idle += g;
    r->gaps_total++;
    /* Keep the longest CT_GAPS_MAX, longest first. */
    size_t k = r->ngaps < CT_GAPS_MAX ? r->ngaps++ : CT_GAPS_MAX;
    for (; k > 0 && r->gaps[k - 1].to - r->gaps[k - 1].from < g; k--)
      if (k < CT_GAPS_MAX) r->gaps[k] = r->gaps[k - 1];
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
  r->end_ts = st->has_end && st->end_ts ? st->end_ts : last;
  r->duration_ns = r->end_ts > r->start_ts ? r->end_ts - r->start_ts : 0;
  r->active_ns = r->duration_ns > idle ? r->duration_ns - idle : 0;
  return 0;
}

/* Most used first, then by address (a stable order for equal counts). */
static int cmp_site_count(const void *a, const void *b) {
  const struct ct_rsite *x = a, *y = b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return x->site < y->site ? -1 : x->site > y->site;
}

/* Overview: timeline, counts, every suspension site. */
static int overview(struct ct_report *r, struct ct_state *st) {
  r->threads = st->tids.n;
  r->killed = !st->has_end || st->exit_has_signal;
  r->coroutines = st->coroutines;
  int rc = timeline(r, st);
  if (rc) return rc;
  const struct ct_map *sm = &st->sites;
  if (!(r->sites = calloc(sm->n ? sm->n : 1, sizeof *r->sites))) return -ENOMEM;
  for (size_t i = 0; i < sm->cap; i++) {
    if (!sm->used[i]) continue;
    const struct ct_site *s = ct_map_at(sm, i);
    struct ct_rsite *rs = &r->sites[r->nsites++];
    rs->site = s->site;
    rs->pid = s->pid;
    rs->count = s->suspensions;
    symbolize_site(st, rs);
    if (s->hist) {
      rs->has_dur = 1;
      rs->p50 = ct_hist_quantile(s->hist, 0.5);
      rs->p99 = ct_hist_quantile(s->hist, 0.99);
      rs->max = s->hist->max;
    }
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
      (rc = stuck_findings(r, st, stuck_ns)) || (rc = violation_findings(r, st)) ||
      (rc = leak_finding(r, st)) || (rc = blocker_finding(r, st)) || (rc = lost_finding(r, st)))
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
    if ((int)r->f[i].sev > m) m = (int)r->f[i].sev;
  return m;
}
