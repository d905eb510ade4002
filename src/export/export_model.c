/* export_model.c - the export model in two passes over the trace: the first
 * (cx_model_load) feeds the report's analysis and keeps, per run, a summary per
 * coroutine, its sites and its threads, never the events; the second
 * (cx_model_events) streams the event lines again. */
#include "export/export.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/model.h"
#include "analysis/record.h"

#define READ_BUF (4u << 20)

const char *cx_kind_name(int kind) {
  static const char *const n[] = {"v1", "create", "suspend", "resume", "wake", "destroy"};
  return kind >= 0 && kind <= CT_EV_DESTROY ? n[kind] : "?";
}

size_t cx_hex(uint64_t v, char *buf) {
  static const char d[] = "0123456789abcdef";
  buf[0] = '0';
  buf[1] = 'x';
  for (int i = 0; i < 16; i++)
    buf[2 + i] = d[(v >> (60 - 4 * i)) & 15];
  buf[18] = 0;
  return 18;
}

const char *cx_damage(const struct cx_run *r, char *buf, size_t n) {
  const struct ct_rtrace *t = &r->rep.t;
  if (!r->diag.why[0])
    return NULL;
  /* The loss counts as the report's Completeness line words them: the end
   * line, past the damage, holds the totals. */
  if (t->has_end || !t->has_meta)
    snprintf(buf, n, "%s", r->diag.why);
  else if (t->any_ev || t->has_end_counts)
    snprintf(buf, n,
             "%s; %" PRIu64
             " events lost up to the cut (the end line, which holds the totals, is missing)",
             r->diag.why, r->rep.lost_events);
  else
    snprintf(buf, n,
             "%s; events lost: unknown (the trace ends before its end line, which holds the loss "
             "counts)",
             r->diag.why);
  return buf;
}

uint64_t cx_wall_ns(const struct cx_run *r, uint64_t ts) {
  return r->has_clock ? ts - r->mono_ns + r->wall_ns : 0;
}

struct loader {
  struct cx_model *m;
  const char *run_id, *host; /* overrides */
  uint64_t first_bad;
};

static uint64_t fnv(uint64_t h, uint64_t v) {
  for (int i = 0; i < 8; i++)
    h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
  return h;
}

/* The summary of coroutine id, added (zeroed) on first sight; NULL on ENOMEM.
 * Pointers into r->co move on the next add. */
static struct cx_coro *coro_put(struct cx_run *r, uint64_t id) {
  int fresh;
  return ct_map_put(&r->co, id, 0, &fresh);
}

const struct cx_coro *cx_coro_of(const struct cx_run *r, uint64_t probe_id) {
  return ct_map_get(&r->co, probe_id, 0);
}

const struct cx_site *cx_site_of(const struct cx_run *r, uint32_t pid, uint64_t site) {
  return ct_map_get(&r->sites, site, pid);
}

const char *cx_label(const struct cx_run *r, const struct cx_coro *c) {
  return c->label ? r->labels.p + c->label - 1 : NULL;
}

/* Adds a label to the run's pool: c->label. */
static int label_put(struct cx_run *r, struct cx_coro *c, const struct ct_str *s) {
  struct ct_buf *b = &r->labels;
  int rc = ct_buf_reserve(b, s->n * 3 + 7); /* decoding never grows a text threefold */
  if (rc)
    return rc;
  c->label = (uint32_t)b->n + 1;
  b->n += ct_str_copy(s, b->p + b->n, b->cap - b->n) + 1;
  return b->n > UINT32_MAX - 1 ? -EFBIG : 0;
}

/* Adds (pid, site) to the run's site table, counting one use by an event of kind (symbolized
 * at the run's end, when its modules are all known). */
static int site_use(struct cx_run *r, uint32_t pid, uint64_t site, enum ct_ev_kind kind) {
  int fresh;
  struct cx_site *s = ct_map_put(&r->sites, site, pid, &fresh);
  if (!s)
    return -ENOMEM;
  if (fresh) {
    s->rs.site = site;
    s->rs.pid = pid;
  }
  s->rs.count++;
  s->suspensions += kind == CT_EV_SUSPEND;
  s->destroys += kind == CT_EV_DESTROY;
  return 0;
}

/* One event into its coroutine's summary, its site and thread. The lines of one
 * coroutine come in its order (docs/TRACE_FORMAT.md): intervals are closed in
 * file order, a ts going back is taken as no time. */
static int summarize(struct cx_run *r, const struct ct_event *e) {
  int fresh;
  struct cx_coro *c = coro_put(r, e->probe_id);
  if (!c || !ct_map_put(&r->tids, e->tid, 0, &fresh))
    return -ENOMEM;
  if (!c->events++)
    c->first_ts = e->ts;
  c->last_ts = e->ts;
  uint64_t dt = e->ts > c->open_ts ? e->ts - c->open_ts : 0, group = c->resumes + c->destroys;
  if (c->state == CT_CS_RUNNING && e->kind != CT_EV_WAKE && e->kind != CT_EV_RESUME)
    c->run_ns += dt;
  if (c->state == CT_CS_SUSPENDED && (e->kind == CT_EV_RESUME || e->kind == CT_EV_DESTROY))
    c->suspended_ns += dt;
  switch (e->kind) {
  case CT_EV_CREATE: /* a coroutine of its own when the rule says so (record.h), or the first */
    c->incarnations +=
        ct_rec_new_incarnation_ev(c->state == CT_CS_DESTROYED, e) || !c->incarnations;
    c->state = CT_CS_CREATED;
    if (!c->has_create_site && e->has_site)
      c->create_site = e->site, c->has_create_site = 1;
    if (!c->has_parent && e->has_parent)
      c->parent = e->parent, c->has_parent = 1;
    if (!c->has_birth)
      c->birth_ts = e->ts, c->has_birth = 1;
    break;
  case CT_EV_SUSPEND:
    c->suspends++;
    c->state = CT_CS_SUSPENDED;
    c->open_ts = e->ts;
    break;
  case CT_EV_RESUME:
    c->resumes++;
    c->woken = 0;
    if (c->state != CT_CS_RUNNING)
      c->open_ts = e->ts;
    c->state = CT_CS_RUNNING;
    break;
  case CT_EV_WAKE:
    c->wakes++;
    c->woken = 1;
    break;
  case CT_EV_DESTROY:
    c->destroys++;
    c->state = CT_CS_DESTROYED;
    if (c->woken && !ct_map_put(&r->unflowed, e->probe_id, group, &fresh))
      return -ENOMEM;
    c->woken = 0;
    break;
  }
  if (!e->has_site)
    return 0;
  c->last_site = e->site;
  return site_use(r, c->pid, e->site, e->kind);
}

/* A new run, current from now on. */
static int run_start(struct cx_model *m) {
  struct cx_run *n = realloc(m->runs, (m->nruns + 1) * sizeof *n);
  if (!n)
    return -ENOMEM;
  m->runs = n;
  struct cx_run *r = &m->runs[m->nruns++];
  memset(r, 0, sizeof *r);
  r->hash = 1469598103934665603ull;
  ct_map_init(&r->co, sizeof(struct cx_coro));
  ct_map_init(&r->sites, sizeof(struct cx_site));
  ct_map_init(&r->tids, 0);
  ct_map_init(&r->unflowed, 0);
  return ct_state_new_judging(&m->th, &r->st);
}

/* After a run's last line: its id, its sites symbolized, the report. */
static int run_finish(struct loader *ld, struct cx_run *r) {
  struct cx_model *m = ld->m;
  size_t k = (size_t)(r - m->runs);
  if (!r->run_id[0]) /* a reference trace: name the run by its content */
    snprintf(r->run_id, sizeof r->run_id, "content-%016llx", (unsigned long long)r->hash);
  if (ld->run_id && k)
    snprintf(r->run_id, sizeof r->run_id, "%s.%zu", ld->run_id, k + 1);
  else if (ld->run_id)
    snprintf(r->run_id, sizeof r->run_id, "%s", ld->run_id);
  if (ld->host)
    snprintf(r->host, sizeof r->host, "%s", ld->host);
  for (size_t i = 0; i < r->co.n; i++) { /* wakes still waiting for a run at the end */
    const struct cx_coro *c = ct_map_at(&r->co, i);
    int fresh;
    if (c->woken &&
        !ct_map_put(&r->unflowed, cx_map_key(&r->co, i), c->resumes + c->destroys, &fresh))
      return -ENOMEM;
  }
  int rc = ct_report_build(r->st, m->path, m->bytes, m->th.stuck_ns, 0, &r->rep);
  for (size_t i = 0; !rc && i < r->sites.n; i++) { /* named as the report names its own */
    struct cx_site *s = ct_map_at(&r->sites, i);
    ct_report_symbolize(&r->rep, &s->rs, s->destroys == s->rs.count);
  }
  return rc;
}

/* ct_trace_read callback: a meta line after other lines starts a new run; each
 * line feeds the run's report state, then its summaries. */
static int on_line(void *ctx, uint64_t lineno, enum ct_line_err err, const struct ct_line *l) {
  struct loader *ld = ctx;
  struct cx_model *m = ld->m;
  int rc, meta = err == CT_LINE_OK && l->type == CT_LINE_META;
  if (ct_line_new_run(ct_state_lines(m->runs[m->nruns - 1].st), err, l) &&
      ((rc = run_finish(ld, &m->runs[m->nruns - 1])) || (rc = run_start(m))))
    return rc;
  struct cx_run *r = &m->runs[m->nruns - 1];
  if ((rc = ct_state_line(r->st, lineno, err, l)))
    return rc;
  r->last_line = lineno;
  if (err != CT_LINE_OK) {
    r->skipped++;
    if (!ld->first_bad)
      ld->first_bad = lineno;
    return 0;
  }
  if (meta) {
    struct ct_rec_meta mt;
    ct_rec_meta(l, &mt);
    if (mt.run_id)
      ct_str_copy(mt.run_id, r->run_id, sizeof r->run_id);
    if (mt.host)
      ct_str_copy(mt.host, r->host, sizeof r->host);
    if (mt.has_clock) {
      r->mono_ns = mt.mono_ns;
      r->wall_ns = mt.wall_ns;
      r->has_clock = 1;
    }
    return 0;
  }
  /* A flight dump's snapshot line carries its coroutine's facts too. */
  if (l->type == CT_LINE_COROUTINE || l->type == CT_LINE_SNAPSHOT ||
      l->type == CT_LINE_STATION_END) {
    struct cx_coro *c = coro_put(r, l->probe_id);
    struct ct_rec_coro rc;
    if (!c)
      return -ENOMEM;
    if (l->type == CT_LINE_STATION_END) {
      if (CT_HAS(l, CT_K_LOST))
        c->lost += l->lost;
      return 0;
    }
    /* One row per id, its incarnations counted (record.h's rule); the facts
     * and the label are its last incarnation's, as the report's. */
    if (ct_rec_new_incarnation(c->state == CT_CS_DESTROYED, l)) {
      c->incarnations++;
      c->state = CT_CS_CREATED;
      c->label = 0; /* the earlier one's */
    }
    ct_rec_coro(l, &rc);
    if (rc.has_pid)
      c->pid = (uint32_t)rc.pid;
    if (rc.has_parent)
      c->parent = rc.parent, c->has_parent = 1;
    if (rc.has_create_site)
      c->create_site = rc.create_site, c->has_create_site = 1;
    if (rc.has_birth)
      c->birth_ts = rc.birth_ts, c->has_birth = 1;
    if (rc.label)
      return label_put(r, c, rc.label);
    return 0;
  }
  if (l->type != CT_LINE_EVENT)
    return 0;
  const struct ct_event *e = &l->e; /* what the event means: the reader's word */
  r->nev++;
  m->nev++;
  r->hash = fnv(fnv(fnv(fnv(r->hash, e->probe_id), e->ts), e->tid), e->seq);
  return summarize(r, e);
}

static void peek(void *ctx, const struct ct_line *l) {
  struct loader *ld = ctx;
  ct_state_prefetch(ld->m->runs[ld->m->nruns - 1].st, l);
}

/* A seekable copy of stdin when it is not a file: an unlinked temporary file. */
static int seekable_stdin(int *fd, int64_t *start) {
  if ((*start = lseek(STDIN_FILENO, 0, SEEK_CUR)) >= 0) {
    *fd = STDIN_FILENO;
    return 0;
  }
  *start = 0;
  FILE *t = tmpfile();
  char buf[1 << 16];
  ssize_t k;
  int rc = 0;
  if (!t)
    return -errno;
  while ((k = read(STDIN_FILENO, buf, sizeof buf)) != 0) {
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0 || fwrite(buf, 1, (size_t)k, t) != (size_t)k) {
      rc = -(errno ? errno : EIO);
      goto out;
    }
  }
  if (fflush(t) || (*fd = dup(fileno(t))) < 0 || lseek(*fd, 0, SEEK_SET) < 0)
    rc = -errno;
out:
  fclose(t);
  return rc;
}

int cx_model_load(const char *path, const char *run_id, const char *host,
                  const struct ct_thresholds *th, struct cx_model *m, uint64_t *bad_line) {
  struct loader ld = {.m = m, .run_id = run_id, .host = host};
  int rc;
  memset(m, 0, sizeof *m);
  m->path = path;
  m->fd = -1;
  m->th = th ? *th : CT_THRESHOLDS_DEFAULT;
  *bad_line = 0;
  if (strcmp(path, "-"))
    rc = (m->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ? -errno : 0;
  else
    rc = seekable_stdin(&m->fd, &m->start);
  if (rc)
    goto out;
  if ((rc = run_start(m)) ||
      (rc = ct_trace_read_diag(m->fd, READ_BUF, on_line, peek, &ld, &m->bytes, &m->diag)))
    goto out;
  if ((rc = run_finish(&ld, &m->runs[m->nruns - 1])))
    goto out;
  m->runs[m->nruns - 1].diag = m->diag; /* the reading stopped in the last run */
  const struct ct_rtrace *t = &m->runs[0].rep.t;
  if (m->nruns == 1 && !m->nev && !t->has_meta && !t->has_end && !t->modules) {
    *bad_line = ld.first_bad ? ld.first_bad : 1;
    rc = -EPROTO;
  }
out:
  return rc;
}

struct pass2 {
  const struct cx_model *m;
  size_t run;
  cx_event_fn fn;
  void *ctx;
};

static int on_event(void *ctx, uint64_t lineno, enum ct_line_err err, const struct ct_line *l) {
  struct pass2 *p = ctx;
  if (err != CT_LINE_OK || l->type != CT_LINE_EVENT)
    return 0;
  while (p->run + 1 < p->m->nruns && lineno > p->m->runs[p->run].last_line)
    p->run++;
  return p->fn(p->ctx, p->run, &l->e);
}

int cx_model_events(const struct cx_model *m, cx_event_fn fn, void *ctx) {
  struct pass2 p = {.m = m, .fn = fn, .ctx = ctx};
  uint64_t bytes = 0;
  if (lseek(m->fd, m->start, SEEK_SET) < 0)
    return -errno;
  /* The first pass said where a binary trace's bad chunk is: this one stops there too. */
  struct ct_read_diag diag;
  return ct_trace_read_diag(m->fd, READ_BUF, on_event, NULL, &p, &bytes, &diag);
}

void cx_model_free(struct cx_model *m) {
  for (size_t i = 0; i < m->nruns; i++) {
    struct cx_run *r = &m->runs[i];
    ct_map_free(&r->co);
    ct_map_free(&r->sites);
    ct_map_free(&r->tids);
    ct_map_free(&r->unflowed);
    ct_buf_free(&r->labels);
    ct_report_free(&r->rep);
    ct_state_free(r->st); /* after the sites: their symbols live in its symbolizer */
  }
  free(m->runs);
  if (m->fd > STDIN_FILENO)
    close(m->fd);
  memset(m, 0, sizeof *m);
  m->fd = -1;
}
