/* export_model.c - the export model: a trace loaded once into memory (events
 * in file order and in time order), a summary per coroutine, every site
 * symbolized, and the report's findings through the analysis side. */
#include "export/export.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/findings.h"

#define READ_BUF (4u << 20)
#define STUCK_NS 1000000000ull  /* as the report's */
#define BLOCKER_NS 100000000ull /* as the report's default */

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

uint64_t cx_wall_ns(const struct cx_model *m, uint64_t ts) {
  return m->has_clock ? ts - m->mono_ns + m->wall_ns : 0;
}

struct loader {
  struct cx_model *m;
  size_t cap;
  uint64_t hash; /* FNV-1a of the event and record fields, for a run id without meta */
  uint64_t first_bad;
  int err;
};

static uint64_t fnv(uint64_t h, uint64_t v) {
  for (int i = 0; i < 8; i++)
    h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
  return h;
}

/* The summary of coroutine id, added (zeroed) on first sight; NULL on ENOMEM. Pointers into
 * m->co move on the next add. */
static struct cx_coro *coro_put(struct cx_model *m, uint64_t id) {
  int fresh;
  uint32_t *ix = ct_map_put(&m->co_index, id, 0, &fresh);
  if (!ix)
    return NULL;
  if (!fresh)
    return &m->co[*ix];
  if ((m->nco & (m->nco - 1)) == 0) { /* grow at powers of two */
    struct cx_coro *n = realloc(m->co, (m->nco ? 2 * m->nco : 64) * sizeof *n);
    if (!n)
      return NULL;
    m->co = n;
  }
  *ix = (uint32_t)m->nco;
  struct cx_coro *c = &m->co[m->nco++];
  memset(c, 0, sizeof *c);
  c->probe_id = id;
  return c;
}

const struct cx_coro *cx_coro_of(const struct cx_model *m, uint64_t probe_id) {
  const uint32_t *ix = ct_map_get(&m->co_index, probe_id, 0);
  return ix ? &m->co[*ix] : NULL;
}

const struct cx_site *cx_site_of(const struct cx_model *m, uint32_t pid, uint64_t site) {
  const uint32_t *ix = ct_map_get(&m->site_index, site, pid);
  return ix ? &m->sites[*ix] : NULL;
}

/* ct_trace_read callback: feeds the report's state, then keeps meta, coroutine records and
 * every event. */
static int on_line(void *ctx, uint64_t lineno, enum ct_line_err err, const struct ct_line *l) {
  struct loader *ld = ctx;
  struct cx_model *m = ld->m;
  int rc = ct_state_line(m->st, lineno, err, l);
  if (rc)
    return rc;
  m->lines = lineno;
  if (err != CT_LINE_OK) {
    m->skipped++;
    if (!ld->first_bad)
      ld->first_bad = lineno;
    return 0;
  }
  if (l->type == CT_LINE_META) {
    if (CT_HAS(l, CT_K_RUN_ID))
      ct_str_copy(&l->run_id, m->run_id, sizeof m->run_id);
    if (CT_HAS(l, CT_K_HOST))
      ct_str_copy(&l->host, m->host, sizeof m->host);
    if (CT_HAS(l, CT_K_MONO_NS) && CT_HAS(l, CT_K_WALL_NS)) {
      m->mono_ns = l->mono_ns;
      m->wall_ns = l->wall_ns;
      m->has_clock = 1;
    }
    return 0;
  }
  if (l->type == CT_LINE_COROUTINE || l->type == CT_LINE_STATION_END) {
    struct cx_coro *c = coro_put(m, l->probe_id);
    if (!c)
      return -ENOMEM;
    if (l->type == CT_LINE_STATION_END) {
      if (CT_HAS(l, CT_K_LOST))
        c->lost += l->lost;
      return 0;
    }
    if (CT_HAS(l, CT_K_PID))
      c->pid = (uint32_t)l->pid;
    if (CT_HAS(l, CT_K_PARENT))
      c->parent = l->parent, c->has_parent = 1;
    if (CT_HAS(l, CT_K_CREATE_SITE))
      c->create_site = l->create_site, c->has_create_site = 1;
    if (CT_HAS(l, CT_K_BIRTH_TS))
      c->birth_ts = l->birth_ts, c->has_birth = 1;
    if (CT_HAS(l, CT_K_LABEL) && !c->label) {
      if (!(c->label = malloc(l->label.n + 1)))
        return -ENOMEM;
      ct_str_copy(&l->label, c->label, l->label.n + 1);
    }
    return 0;
  }
  if (l->type != CT_LINE_EVENT)
    return 0;
  if (m->nev == ld->cap) {
    size_t nc = ld->cap ? 2 * ld->cap : 4096;
    struct cx_event *n = realloc(m->ev, nc * sizeof *n);
    if (!n)
      return -ENOMEM;
    m->ev = n;
    ld->cap = nc;
  }
  struct cx_event *e = &m->ev[m->nev++];
  memset(e, 0, sizeof *e);
  e->line = lineno;
  e->probe_id = l->probe_id;
  e->tid = l->tid;
  e->ts = l->ts;
  e->addr = l->addr;
  e->seq = l->seq;
  e->is_active = (uint8_t)l->is_active;
  e->v1 = l->kind == CT_EV_V1;
  e->kind = (uint8_t)(e->v1 ? (l->is_active ? CT_EV_RESUME : CT_EV_SUSPEND) : l->kind);
  e->has_ev = CT_HAS(l, CT_K_EV);
  e->ev = l->ev;
  /* A v1 suspend's addr is its site. */
  e->has_site = CT_HAS(l, CT_K_SITE) || (e->v1 && !l->is_active);
  e->site = CT_HAS(l, CT_K_SITE) ? l->site : e->v1 && !l->is_active ? l->addr : 0;
  e->wait = (uint8_t)l->wait;
  e->obj = l->obj;
  e->obj_is_str = (uint8_t)l->obj_is_str;
  e->has_from = CT_HAS(l, CT_K_FROM);
  e->from = l->from;
  e->has_parent = CT_HAS(l, CT_K_PARENT);
  e->parent = l->parent;
  ld->hash = fnv(fnv(fnv(fnv(ld->hash, e->probe_id), e->ts), e->tid), e->seq);
  return 0;
}

static const struct cx_model *sort_model;
/* Time order of event indexes: ts, then line in the file. */
static int cmp_time(const void *a, const void *b) {
  const struct cx_event *x = &sort_model->ev[*(const uint32_t *)a];
  const struct cx_event *y = &sort_model->ev[*(const uint32_t *)b];
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return x->line < y->line ? -1 : x->line > y->line;
}

/* Adds (pid, site) to the site table, counting one use. */
static int site_use(struct cx_model *m, uint32_t pid, uint64_t site, int suspension) {
  int fresh;
  uint32_t *ix = ct_map_put(&m->site_index, site, pid, &fresh);
  if (!ix)
    return -ENOMEM;
  if (fresh) {
    if ((m->nsites & (m->nsites - 1)) == 0) {
      struct cx_site *n = realloc(m->sites, (m->nsites ? 2 * m->nsites : 64) * sizeof *n);
      if (!n)
        return -ENOMEM;
      m->sites = n;
    }
    *ix = (uint32_t)m->nsites;
    struct cx_site *s = &m->sites[m->nsites++];
    memset(s, 0, sizeof *s);
    s->rs.site = site;
    s->rs.pid = pid;
    ct_symbolize_site(m->st, &s->rs);
  }
  struct cx_site *s = &m->sites[*ix];
  s->rs.count++;
  s->suspensions += (uint64_t)suspension;
  return 0;
}

/* Walks the events in time order: coroutine summaries and sites. */
static int summarize(struct cx_model *m) {
  struct ct_map tids;
  ct_map_init(&tids, 1);
  int rc = 0;
  for (size_t i = 0; i < m->nev; i++) {
    const struct cx_event *e = &m->ev[m->order[i]];
    struct cx_coro *c = coro_put(m, e->probe_id);
    int fresh;
    if (!c || !ct_map_put(&tids, e->tid, 0, &fresh)) {
      rc = -ENOMEM;
      goto out;
    }
    if (!c->events++)
      c->first_ts = e->ts;
    c->last_ts = e->ts;
    if (c->state == CT_CS_RUNNING && e->kind != CT_EV_WAKE && e->kind != CT_EV_RESUME)
      c->run_ns += e->ts - c->run_start;
    if (c->state == CT_CS_SUSPENDED && (e->kind == CT_EV_RESUME || e->kind == CT_EV_DESTROY))
      c->suspended_ns += e->ts - c->susp_start;
    switch (e->kind) {
    case CT_EV_CREATE:
      c->incarnations++;
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
      c->susp_start = e->ts;
      break;
    case CT_EV_RESUME:
      c->resumes++;
      if (c->state != CT_CS_RUNNING)
        c->run_start = e->ts;
      c->state = CT_CS_RUNNING;
      break;
    case CT_EV_WAKE:
      c->wakes++;
      break;
    case CT_EV_DESTROY:
      c->state = CT_CS_DESTROYED;
      break;
    }
    if (e->has_site) {
      c->last_site = e->site;
      if ((rc = site_use(m, c->pid, e->site, e->kind == CT_EV_SUSPEND)))
        goto out;
    }
  }
  m->threads = tids.n;
out:
  ct_map_free(&tids);
  return rc;
}

int cx_model_load(const char *path, const char *run_id, const char *host, struct cx_model *m,
                  uint64_t *bad_line) {
  struct loader ld = {.m = m, .hash = 1469598103934665603ull};
  int fd = -1, rc;
  memset(m, 0, sizeof *m);
  m->path = path;
  ct_map_init(&m->co_index, sizeof(uint32_t));
  ct_map_init(&m->site_index, sizeof(uint32_t));
  *bad_line = 0;
  if ((rc = ct_state_new(BLOCKER_NS, &m->st)))
    goto out;
  fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
  if (fd < 0) {
    rc = -errno;
    goto out;
  }
  if ((rc = ct_trace_read_diag(fd, READ_BUF, on_line, NULL, &ld, &m->bytes, &m->diag)))
    goto out;
  if (!m->nev && !m->st->has_meta && !m->st->has_end && !m->st->modules) {
    *bad_line = ld.first_bad ? ld.first_bad : 1;
    rc = -EPROTO;
    goto out;
  }
  if (!m->run_id[0]) /* a reference trace: name the run by its content */
    snprintf(m->run_id, sizeof m->run_id, "content-%016llx", (unsigned long long)ld.hash);
  if (run_id)
    snprintf(m->run_id, sizeof m->run_id, "%s", run_id);
  if (host)
    snprintf(m->host, sizeof m->host, "%s", host);
  if (m->nev > UINT32_MAX) {
    rc = -EFBIG;
    goto out;
  }
  if (!(m->order = malloc((m->nev ? m->nev : 1) * sizeof *m->order))) {
    rc = -ENOMEM;
    goto out;
  }
  for (size_t i = 0; i < m->nev; i++)
    m->order[i] = (uint32_t)i;
  sort_model = m;
  qsort(m->order, m->nev, sizeof *m->order, cmp_time);
  if ((rc = summarize(m)))
    goto out;
  rc = ct_report_build(m->st, path, m->bytes, STUCK_NS, &m->rep);
out:
  if (fd > STDIN_FILENO)
    close(fd);
  return rc;
}

void cx_model_free(struct cx_model *m) {
  for (size_t i = 0; i < m->nco; i++)
    free(m->co[i].label);
  free(m->co);
  free(m->ev);
  free(m->order);
  free(m->sites);
  ct_map_free(&m->co_index);
  ct_map_free(&m->site_index);
  ct_report_free(&m->rep);
  ct_state_free(m->st); /* after the sites: their symbols live in its symbolizer */
  memset(m, 0, sizeof *m);
}
