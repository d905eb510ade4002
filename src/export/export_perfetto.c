/* export_perfetto.c - Perfetto's protobuf trace (Trace = repeated
 * TracePacket), for ui.perfetto.dev: a process track; a track per OS thread
 * with a slice per coroutine run; an async track per coroutine with its
 * suspended intervals named by wait object and site (source locations);
 * wakes as flows from an instant on the waker's thread to the wakee's next
 * run (explicit flow ids, terminating there). Names are interned.
 * Field numbers: perfetto/protos/perfetto/trace/ (trace_packet.proto,
 * track_event/track_event.proto, track_descriptor.proto, interned_data.proto). */
#include "export/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export/pb.h"

/* TracePacket */
#define TP_TIMESTAMP 8
#define TP_SEQ_ID 10
#define TP_TRACK_EVENT 11
#define TP_INTERNED 12
#define TP_SEQ_FLAGS 13
#define TP_TRACK_DESC 60
#define SEQ_CLEARED 1
#define SEQ_NEEDS_STATE 2
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
#define TD_UUID 1
#define TD_NAME 2
#define TD_PROCESS 3
#define TD_THREAD 4
#define TD_PARENT 5
#define PD_PID 1
#define PD_NAME 6
#define THD_PID 1
#define THD_TID 2
#define THD_NAME 5
/* TrackEvent */
#define TE_DEBUG 4
#define TE_TYPE 9
#define TE_NAME_IID 10
#define TE_TRACK 11
#define TE_SRCLOC_IID 34
#define TE_FLOW 47
#define TE_TERM_FLOW 48
#define TYPE_BEGIN 1
#define TYPE_END 2
#define TYPE_INSTANT 3
/* DebugAnnotation */
#define DA_UINT 3
#define DA_NAME 10
/* InternedData, EventName, SourceLocation */
#define ID_EVENT_NAMES 2
#define ID_SRCLOCS 4
#define EN_IID 1
#define EN_NAME 2
#define SL_IID 1
#define SL_FILE 2
#define SL_FUNC 3
#define SL_LINE 4

#define SEQ 1
#define UUID_PROCESS0 (1ull << 62) /* + run index */
#define UUID_THREAD0 2             /* + thread index (over all runs) */
#define UUID_CORO0 (1ull << 32)    /* + coroutine index (over all runs) */
#define FLUSH_AT (1u << 20)
#define REORDER (1u << 16) /* events held to put harvest order into time order */
/* Interned names kept at most: past it, the sequence's incremental state is
 * cleared and names and source locations are sent again as they come. */
#define NAMES_MAX (1u << 16)

/* A wake's flow, waiting for its wakee's next run (a free-listed pool). */
struct flow {
  uint64_t id;
  uint32_t next; /* index + 1, 0 = end */
};

/* A held event's place in the heap: its time order key, its slot in pf.held. */
struct hkey {
  uint64_t ts, line;
  uint32_t slot;
};

struct pf {
  FILE *f;
  const struct cx_model *m;
  const struct cx_run *run; /* the run being written, NULL before the first */
  struct pb b;
  struct ct_map names; /* (hash, len) -> iid */
  uint64_t next_iid, packets;
  int cleared; /* the names were dropped: the next packet says so (SEQ_CLEARED) */
  uint64_t thread0, coro0, site0; /* the run's first thread, coroutine and site: uuid / iid bases */
  uint8_t *srcloc_sent;           /* per site of the run */
  uint32_t *thread_open;          /* per thread: coroutine index + 1 running on it, 0 none */
  /* per coroutine of the run */
  uint32_t *run_thread; /* thread index + 1 of its open run slice, 0 none */
  uint8_t *susp_open;
  uint64_t *groups;    /* resumes + destroys so far: its wakes' group (cx_run.unflowed) */
  uint32_t *flow_head; /* its wakes' flows since its last run */
  struct flow *flows;
  size_t nflows, capflows;
  uint32_t free_flow;
  /* Events held for time order: a min-heap of small keys, the events in slots */
  struct hkey *heap;
  struct ct_event *held; /* REORDER slots */
  uint32_t *free_slots;  /* a stack: [0, REORDER - nheap) are the free slots */
  size_t nheap;
  uint64_t last, *tf;
  size_t captf;
  cx_progress_fn prog;
  void *pctx;
  int err;
};

static uint64_t hash_str(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  return h;
}

/* Ends the current packet: flushes the buffer to the file now and then. */
static void packet_end(struct pf *p) {
  pb_end(&p->b);
  p->packets++;
  if (p->b.bad)
    p->err = -ENOMEM;
  if (!p->err && p->b.buf.n >= FLUSH_AT) {
    if (fwrite(p->b.buf.p, 1, p->b.buf.n, p->f) != p->b.buf.n)
      p->err = -(errno ? errno : EIO);
    pb_reset(&p->b);
  }
  if ((p->packets & 4095) == 0 && p->prog)
    p->prog(p->pctx, p->packets, p->m->nev);
}

/* Opens a TracePacket on our one sequence; ts 0 = none (descriptors). */
static void packet_begin(struct pf *p, uint64_t ts, uint32_t flags) {
  pb_begin(&p->b, 1); /* Trace.packet */
  if (ts)
    pb_varint(&p->b, TP_TIMESTAMP, ts);
  pb_varint(&p->b, TP_SEQ_ID, SEQ);
  if (flags)
    pb_varint(&p->b, TP_SEQ_FLAGS, flags);
}

/* The iid of name; *fresh = 1 when it must be sent in this packet. */
static uint64_t name_iid(struct pf *p, const char *s, int *fresh) {
  size_t n = strlen(s);
  if (p->names.n >= NAMES_MAX) { /* a name per coroutine: memory stays bounded */
    ct_map_free(&p->names);
    memset(p->srcloc_sent, 0, p->run->sites.n);
    p->cleared = 1;
  }
  uint64_t *iid = ct_map_put(&p->names, hash_str(s, n), n, fresh);
  if (!iid) {
    p->err = -ENOMEM;
    return 0;
  }
  if (*fresh)
    *iid = ++p->next_iid;
  return *iid;
}

/* One TrackEvent packet. name: interned here if new; site: a source
 * location (or NULL); flows: out (flow) and terminating (term, nterm). */
static void track_event(struct pf *p, uint64_t ts, uint64_t track, int type, const char *name,
                        uint64_t iid, const struct cx_site *site, uint64_t flow,
                        const uint64_t *term, size_t nterm, uint64_t probe_id) {
  int fresh = 0;
  if (name)
    iid = name_iid(p, name, &fresh);
  size_t si = site ? cx_map_index(&p->run->sites, site) : 0;
  int send_loc = site && site->rs.symbolized && site->rs.sym.function && !p->srcloc_sent[si];
  packet_begin(p, ts, SEQ_NEEDS_STATE | (p->cleared ? SEQ_CLEARED : 0));
  p->cleared = 0;
  if (fresh || send_loc) {
    pb_begin(&p->b, TP_INTERNED);
    if (fresh) {
      pb_begin(&p->b, ID_EVENT_NAMES);
      pb_varint(&p->b, EN_IID, iid);
      pb_string(&p->b, EN_NAME, name);
      pb_end(&p->b);
    }
    if (send_loc) {
      const struct ct_sym *y = &site->rs.sym;
      pb_begin(&p->b, ID_SRCLOCS);
      pb_varint(&p->b, SL_IID, p->site0 + si + 1);
      if (y->file)
        pb_string(&p->b, SL_FILE, y->file);
      pb_string(&p->b, SL_FUNC, y->function);
      if (y->line)
        pb_varint(&p->b, SL_LINE, (uint64_t)y->line);
      pb_end(&p->b);
      p->srcloc_sent[si] = 1;
    }
    pb_end(&p->b);
  }
  pb_begin(&p->b, TP_TRACK_EVENT);
  pb_varint(&p->b, TE_TYPE, (uint64_t)type);
  pb_varint(&p->b, TE_TRACK, track);
  if (type != TYPE_END)
    pb_varint(&p->b, TE_NAME_IID, iid);
  if (site && p->srcloc_sent[si])
    pb_varint(&p->b, TE_SRCLOC_IID, p->site0 + si + 1);
  if (probe_id) {
    pb_begin(&p->b, TE_DEBUG);
    pb_string(&p->b, DA_NAME, "probe_id");
    pb_varint(&p->b, DA_UINT, probe_id);
    pb_end(&p->b);
  }
  if (flow)
    pb_fixed64(&p->b, TE_FLOW, flow);
  for (size_t i = 0; i < nterm; i++)
    pb_fixed64(&p->b, TE_TERM_FLOW, term[i]);
  pb_end(&p->b);
  packet_end(p);
}

/* The run's process track, a track per thread, an async track per coroutine. */
static void descriptors(struct pf *p) {
  const struct cx_run *r = p->run;
  char name[256];
  int64_t pid = r->rep.t.target_pid ? (int64_t)r->rep.t.target_pid : 1;
  uint64_t proc = UUID_PROCESS0 + (uint64_t)(r - p->m->runs);
  packet_begin(p, 0, p->packets ? 0 : SEQ_CLEARED);
  pb_begin(&p->b, TP_TRACK_DESC);
  pb_varint(&p->b, TD_UUID, proc);
  pb_begin(&p->b, TD_PROCESS);
  pb_varint(&p->b, PD_PID, (uint64_t)pid);
  snprintf(name, sizeof name, "traced program (run %.12s%s%s%s)", r->run_id,
           r->host[0] ? " on " : "", r->host, r->diag.why[0] ? ", trace damaged" : "");
  pb_string(&p->b, PD_NAME, name);
  pb_end(&p->b);
  pb_end(&p->b);
  packet_end(p);
  for (size_t t = 0; t < r->tids.n; t++) {
    packet_begin(p, 0, 0);
    pb_begin(&p->b, TP_TRACK_DESC);
    pb_varint(&p->b, TD_UUID, UUID_THREAD0 + p->thread0 + t); /* in the process by its pid */
    pb_begin(&p->b, TD_THREAD);
    pb_varint(&p->b, THD_PID, (uint64_t)pid);
    pb_varint(&p->b, THD_TID, cx_map_key(&r->tids, t));
    snprintf(name, sizeof name, "thread %" PRIu64, cx_map_key(&r->tids, t));
    pb_string(&p->b, THD_NAME, name);
    pb_end(&p->b);
    pb_end(&p->b);
    packet_end(p);
  }
  for (size_t c = 0; c < r->co.n; c++) {
    const char *label = cx_label(r, ct_map_at(&r->co, c));
    packet_begin(p, 0, 0);
    pb_begin(&p->b, TP_TRACK_DESC);
    pb_varint(&p->b, TD_UUID, UUID_CORO0 + p->coro0 + c);
    pb_varint(&p->b, TD_PARENT, proc);
    snprintf(name, sizeof name, "coroutine %" PRIu64 "%s%s", cx_map_key(&r->co, c),
             label ? " " : "", label ? label : "");
    pb_string(&p->b, TD_NAME, name);
    pb_end(&p->b);
    packet_end(p);
  }
}

/* Ends coroutine c's open run slice, if any, on its thread's track. */
static void end_run(struct pf *p, size_t c, uint64_t ts) {
  if (!p->run_thread[c])
    return;
  size_t t = p->run_thread[c] - 1;
  track_event(p, ts, UUID_THREAD0 + p->thread0 + t, TYPE_END, NULL, 0, NULL, 0, NULL, 0, 0);
  p->thread_open[t] = 0;
  p->run_thread[c] = 0;
}

/* Ends coroutine c's open suspended slice, if any. */
static void end_susp(struct pf *p, size_t c, uint64_t ts) {
  if (!p->susp_open[c])
    return;
  track_event(p, ts, UUID_CORO0 + p->coro0 + c, TYPE_END, NULL, 0, NULL, 0, NULL, 0, 0);
  p->susp_open[c] = 0;
}

/* "fd 12 @ conn_read", "ptr 0x... @ 0x...", "suspended @ f". */
static void susp_name(const struct ct_event *e, const struct cx_site *s, char *buf, size_t n) {
  char obj[40] = "suspended", at[200];
  if (e->wait == CTP_WAIT_FD)
    snprintf(obj, sizeof obj, "fd %" PRIu64, e->obj);
  else if (e->wait == CTP_WAIT_PTR)
    snprintf(obj, sizeof obj, "ptr 0x%" PRIx64, e->obj);
  else if (e->wait == CTP_WAIT_COROUTINE)
    snprintf(obj, sizeof obj, "coroutine %" PRIu64, e->obj);
  if (s && s->rs.sym.function)
    snprintf(at, sizeof at, " @ %s", s->rs.sym.function);
  else if (e->has_site)
    snprintf(at, sizeof at, " @ 0x%" PRIx64, e->site);
  else
    at[0] = 0;
  snprintf(buf, n, "%s%s", obj, at);
}

/* A wake's flow (id: its line) joins its wakee's list, unless no run of the
 * wakee follows it (cx_run.unflowed): then it has no arrow. Returns the id or 0. */
static uint64_t flow_start(struct pf *p, size_t c, const struct ct_event *e) {
  if (ct_map_get(&p->run->unflowed, e->probe_id, p->groups[c]))
    return 0;
  uint32_t k = p->free_flow;
  if (k) {
    p->free_flow = p->flows[k - 1].next;
  } else {
    if (p->nflows == p->capflows) {
      size_t nc = p->capflows ? 2 * p->capflows : 256;
      struct flow *n = realloc(p->flows, nc * sizeof *n);
      if (!n) {
        p->err = -ENOMEM;
        return 0;
      }
      p->flows = n;
      p->capflows = nc;
    }
    k = (uint32_t)++p->nflows;
  }
  p->flows[k - 1] = (struct flow){e->line, p->flow_head[c]};
  p->flow_head[c] = k;
  return e->line;
}

/* The flows a run of c terminates (its wakes' since its last run) into p->tf; their count. */
static size_t flows_end(struct pf *p, size_t c) {
  size_t n = 0;
  for (uint32_t k = p->flow_head[c], next; k; k = next) {
    next = p->flows[k - 1].next;
    if (n == p->captf) {
      size_t nc = p->captf ? 2 * p->captf : 16;
      uint64_t *t = realloc(p->tf, nc * sizeof *t);
      if (!t) {
        p->err = -ENOMEM;
        return 0;
      }
      p->tf = t;
      p->captf = nc;
    }
    p->tf[n++] = p->flows[k - 1].id;
    p->flows[k - 1].next = p->free_flow;
    p->free_flow = k;
  }
  p->flow_head[c] = 0;
  return n;
}

/* One event, in time order, into slices, instants and flows. */
static void walk(struct pf *p, const struct ct_event *e) {
  const struct cx_run *r = p->run;
  const struct cx_coro *co = cx_coro_of(r, e->probe_id);
  size_t c = cx_map_index(&r->co, co);
  const struct cx_site *site = e->has_site ? cx_site_of(r, co->pid, e->site) : NULL;
  size_t th = cx_map_index(&r->tids, ct_map_get(&r->tids, e->tid, 0));
  const char *label = cx_label(r, co);
  char buf[320];
  p->last = e->ts;
  switch (e->kind) {
  case CT_EV_RESUME: {
    size_t nt = flows_end(p, c);
    p->groups[c]++;
    end_run(p, c, e->ts); /* resumed while running: close the old run */
    if (p->thread_open[th])
      end_run(p, p->thread_open[th] - 1, e->ts);
    end_susp(p, c, e->ts);
    snprintf(buf, sizeof buf, "coroutine %" PRIu64 "%s%s", e->probe_id, label ? " " : "",
             label ? label : "");
    track_event(p, e->ts, UUID_THREAD0 + p->thread0 + th, TYPE_BEGIN, buf, 0, NULL, 0, p->tf, nt,
                e->probe_id);
    p->run_thread[c] = (uint32_t)th + 1;
    p->thread_open[th] = (uint32_t)c + 1;
    break;
  }
  case CT_EV_SUSPEND:
    end_run(p, c, e->ts);
    end_susp(p, c, e->ts);
    susp_name(e, site, buf, sizeof buf);
    track_event(p, e->ts, UUID_CORO0 + p->coro0 + c, TYPE_BEGIN, buf, 0, site, 0, NULL, 0, 0);
    p->susp_open[c] = 1;
    break;
  case CT_EV_DESTROY:
    flows_end(p, c); /* never run again: those wakes have no flow (none were started) */
    p->groups[c]++;
    end_run(p, c, e->ts);
    end_susp(p, c, e->ts);
    track_event(p, e->ts, UUID_CORO0 + p->coro0 + c, TYPE_INSTANT, "destroy", 0, site, 0, NULL, 0,
                0);
    break;
  case CT_EV_CREATE:
    track_event(p, e->ts, UUID_CORO0 + p->coro0 + c, TYPE_INSTANT, "create", 0, site, 0, NULL, 0,
                0);
    break;
  case CT_EV_WAKE:
    snprintf(buf, sizeof buf, "wake %" PRIu64, e->probe_id);
    track_event(p, e->ts, UUID_THREAD0 + p->thread0 + th, TYPE_INSTANT, buf, 0, site,
                flow_start(p, c, e), NULL, 0, 0);
    break;
  }
}

/* Time order: ts, then line in the file. */
static int before(const struct hkey *x, const struct hkey *y) {
  return x->ts != y->ts ? x->ts < y->ts : x->line < y->line;
}

/* Fills the hole at the root of the heap h[n] with x: the hole goes down to a
 * leaf by the earlier child, then x up from there (Floyd's: one compare a level;
 * a new key is mostly among the latest, so it rises little). */
static void sift(struct hkey *h, size_t n, struct hkey x) {
  size_t i = 0, k;
  while ((k = 2 * i + 1) < n) {
    if (k + 1 < n && before(&h[k + 1], &h[k]))
      k++;
    h[i] = h[k];
    i = k;
  }
  for (; i > 0 && before(&x, &h[(i - 1) / 2]); i = (i - 1) / 2)
    h[i] = h[(i - 1) / 2];
  h[i] = x;
}

/* Takes the earliest held event out of the heap and walks it. */
static void pop(struct pf *p) {
  struct hkey top = p->heap[0];
  size_t n = --p->nheap;
  sift(p->heap, n, p->heap[n]);
  p->free_slots[REORDER - 1 - n] = top.slot;
  walk(p, &p->held[top.slot]);
}

/* Ends the run being written: its held events, then what is still open at its
 * end; a damaged run's last word, an instant on its process track. */
static void run_end(struct pf *p) {
  const struct cx_run *r = p->run;
  while (p->nheap && !p->err)
    pop(p);
  uint64_t last = r->rep.end_ts > p->last ? r->rep.end_ts : p->last;
  for (size_t c = 0; c < r->co.n && !p->err; c++) {
    end_run(p, c, last);
    end_susp(p, c, last);
  }
  char damage[512], name[560];
  if (cx_damage(r, damage, sizeof damage) && !p->err) { /* where the reading stopped */
    snprintf(name, sizeof name, "trace damaged: %s", damage);
    track_event(p, last, UUID_PROCESS0 + (uint64_t)(r - p->m->runs), TYPE_INSTANT, name, 0, NULL, 0,
                NULL, 0, 0);
  }
  p->thread0 += r->tids.n;
  p->coro0 += r->co.n;
  p->site0 += r->sites.n;
}

/* Frees the per-run arrays. */
static void run_free(struct pf *p) {
  free(p->srcloc_sent);
  free(p->thread_open);
  free(p->run_thread);
  free(p->susp_open);
  free(p->groups);
  free(p->flow_head);
}

/* Starts writing run k: its descriptors, its per-coroutine state. */
static void run_begin(struct pf *p, size_t k) {
  const struct cx_run *r = p->run = &p->m->runs[k];
  size_t nco = r->co.n ? r->co.n : 1;
  run_free(p);
  p->srcloc_sent = calloc(r->sites.n ? r->sites.n : 1, 1);
  p->thread_open = calloc(r->tids.n ? r->tids.n : 1, sizeof *p->thread_open);
  p->run_thread = calloc(nco, sizeof *p->run_thread);
  p->susp_open = calloc(nco, 1);
  p->groups = calloc(nco, sizeof *p->groups);
  p->flow_head = calloc(nco, sizeof *p->flow_head);
  p->nflows = 0;
  p->free_flow = 0;
  p->last = 0;
  if (!p->srcloc_sent || !p->thread_open || !p->run_thread || !p->susp_open || !p->groups ||
      !p->flow_head)
    p->err = -ENOMEM;
  else
    descriptors(p);
}

/* cx_model_events callback: runs begin and end; events are held until REORDER later lines. */
static int on_event(void *ctx, size_t k, const struct ct_event *e) {
  struct pf *p = ctx;
  if (!p->run || p->run != &p->m->runs[k]) {
    for (size_t j = p->run ? (size_t)(p->run - p->m->runs) : 0; !p->err && (!p->run || j < k);) {
      if (p->run)
        run_end(p), j++;
      if (!p->err)
        run_begin(p, j);
    }
  }
  struct hkey *h = p->heap, x = {e->ts, e->line, 0};
  if (p->nheap == REORDER) { /* full: the earliest of the held events and e goes */
    if (!before(&h[0], &x)) {
      walk(p, e);
      return p->err;
    }
    struct ct_event first = p->held[x.slot = h[0].slot];
    p->held[x.slot] = *e;
    sift(h, p->nheap, x);
    walk(p, &first);
    return p->err;
  }
  x.slot = p->free_slots[REORDER - 1 - p->nheap];
  p->held[x.slot] = *e;
  size_t i = p->nheap++;
  for (; i > 0 && before(&x, &h[(i - 1) / 2]); i = (i - 1) / 2)
    h[i] = h[(i - 1) / 2];
  h[i] = x;
  return p->err;
}

int cx_write_perfetto(FILE *f, const struct cx_model *m, uint64_t *rows, cx_progress_fn prog,
                      void *pctx) {
  struct pf p = {.f = f, .m = m, .prog = prog, .pctx = pctx};
  ct_map_init(&p.names, sizeof(uint64_t));
  p.heap = malloc(REORDER * sizeof *p.heap);
  p.held = malloc(REORDER * sizeof *p.held);
  if (!p.heap || !p.held || !(p.free_slots = malloc(REORDER * sizeof *p.free_slots)))
    p.err = -ENOMEM;
  for (uint32_t k = 0; !p.err && k < REORDER; k++)
    p.free_slots[k] = k;
  int rc = p.err ? p.err : cx_model_events(m, on_event, &p);
  if (!rc && !p.err) /* the runs not yet begun (no events), then the last one's end */
    for (size_t j = p.run ? (size_t)(p.run - m->runs) : 0; !p.err && j < m->nruns; j++) {
      if (p.run && p.run == &m->runs[j]) {
        run_end(&p);
        continue;
      }
      run_begin(&p, j);
      run_end(&p);
    }
  if (!rc)
    rc = p.err;
  if (!rc && p.b.buf.n && fwrite(p.b.buf.p, 1, p.b.buf.n, f) != p.b.buf.n)
    rc = -(errno ? errno : EIO);
  if (prog)
    prog(pctx, p.packets, p.packets);
  *rows = p.packets;
  pb_free(&p.b);
  ct_map_free(&p.names);
  run_free(&p);
  free(p.flows);
  free(p.heap);
  free(p.held);
  free(p.free_slots);
  free(p.tf);
  return rc;
}
