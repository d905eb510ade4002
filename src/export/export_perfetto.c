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
#define UUID_PROCESS 1
#define UUID_THREAD0 2          /* + thread index */
#define UUID_CORO0 (1ull << 32) /* + coroutine index */
#define FLUSH_AT (1u << 20)

struct pf {
  FILE *f;
  const struct cx_model *m;
  struct pb b;
  struct ct_map names; /* (hash, len) -> iid */
  uint64_t next_iid, packets;
  uint8_t *srcloc_sent; /* per site */
  struct ct_map tids;   /* tid -> thread index */
  uint64_t *thread_tid;
  uint32_t *thread_open; /* coroutine index + 1 running on it, 0 none */
  size_t nthreads;
  /* per coroutine */
  uint32_t *run_thread; /* thread index + 1 of its open run slice, 0 none */
  uint8_t *susp_open;
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
  if (!p->err && p->b.n >= FLUSH_AT) {
    if (fwrite(p->b.p, 1, p->b.n, p->f) != p->b.n)
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
  size_t si = site ? (size_t)(site - p->m->sites) : 0;
  int send_loc = site && site->rs.symbolized && site->rs.sym.function && !p->srcloc_sent[si];
  packet_begin(p, ts, SEQ_NEEDS_STATE);
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
      pb_varint(&p->b, SL_IID, si + 1);
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
    pb_varint(&p->b, TE_SRCLOC_IID, si + 1);
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

/* The process track, a track per thread, an async track per coroutine. */
static void descriptors(struct pf *p) {
  const struct cx_model *m = p->m;
  char name[256];
  int64_t pid = m->st->target_pid ? (int64_t)m->st->target_pid : 1;
  packet_begin(p, 0, SEQ_CLEARED);
  pb_begin(&p->b, TP_TRACK_DESC);
  pb_varint(&p->b, TD_UUID, UUID_PROCESS);
  pb_begin(&p->b, TD_PROCESS);
  pb_varint(&p->b, PD_PID, (uint64_t)pid);
  snprintf(name, sizeof name, "traced program (run %.12s%s%s)", m->run_id, m->host[0] ? " on " : "",
           m->host);
  pb_string(&p->b, PD_NAME, name);
  pb_end(&p->b);
  pb_end(&p->b);
  packet_end(p);
  for (size_t t = 0; t < p->nthreads; t++) {
    packet_begin(p, 0, 0);
    pb_begin(&p->b, TP_TRACK_DESC);
    pb_varint(&p->b, TD_UUID, UUID_THREAD0 + t); /* in the process by its pid */
    pb_begin(&p->b, TD_THREAD);
    pb_varint(&p->b, THD_PID, (uint64_t)pid);
    pb_varint(&p->b, THD_TID, p->thread_tid[t]);
    snprintf(name, sizeof name, "thread %" PRIu64, p->thread_tid[t]);
    pb_string(&p->b, THD_NAME, name);
    pb_end(&p->b);
    pb_end(&p->b);
    packet_end(p);
  }
  for (size_t c = 0; c < m->nco; c++) {
    const struct cx_coro *co = &m->co[c];
    packet_begin(p, 0, 0);
    pb_begin(&p->b, TP_TRACK_DESC);
    pb_varint(&p->b, TD_UUID, UUID_CORO0 + c);
    pb_varint(&p->b, TD_PARENT, UUID_PROCESS);
    snprintf(name, sizeof name, "coroutine %" PRIu64 "%s%s", co->probe_id, co->label ? " " : "",
             co->label ? co->label : "");
    pb_string(&p->b, TD_NAME, name);
    pb_end(&p->b);
    packet_end(p);
  }
}

/* Thread index of tid (added on first sight). */
static size_t thread_of(struct pf *p, uint64_t tid) {
  int fresh;
  uint32_t *ix = ct_map_put(&p->tids, tid, 0, &fresh);
  if (!ix) {
    p->err = -ENOMEM;
    return 0;
  }
  if (fresh) {
    if ((p->nthreads & (p->nthreads - 1)) == 0) {
      size_t nc = p->nthreads ? 2 * p->nthreads : 16;
      uint64_t *nt = realloc(p->thread_tid, nc * sizeof *nt);
      if (nt)
        p->thread_tid = nt;
      uint32_t *no = realloc(p->thread_open, nc * sizeof *no);
      if (no)
        p->thread_open = no;
      if (!nt || !no) {
        p->err = -ENOMEM;
        return 0;
      }
    }
    p->thread_tid[p->nthreads] = tid;
    p->thread_open[p->nthreads] = 0;
    *ix = (uint32_t)p->nthreads++;
  }
  return *ix;
}

/* Index of a coroutine the model knows (every event's is known). */
static size_t coro_index(const struct cx_model *m, uint64_t id) {
  return (size_t)(cx_coro_of(m, id) - m->co);
}

/* Ends coroutine c's open run slice, if any, on its thread's track. */
static void end_run(struct pf *p, size_t c, uint64_t ts) {
  if (!p->run_thread[c])
    return;
  size_t t = p->run_thread[c] - 1;
  track_event(p, ts, UUID_THREAD0 + t, TYPE_END, NULL, 0, NULL, 0, NULL, 0, 0);
  p->thread_open[t] = 0;
  p->run_thread[c] = 0;
}

/* Ends coroutine c's open suspended slice, if any. */
static void end_susp(struct pf *p, size_t c, uint64_t ts) {
  if (!p->susp_open[c])
    return;
  track_event(p, ts, UUID_CORO0 + c, TYPE_END, NULL, 0, NULL, 0, NULL, 0, 0);
  p->susp_open[c] = 0;
}

/* "fd 12 @ conn_read", "ptr 0x... @ 0x...", "suspended @ f". */
static void susp_name(const struct cx_event *e, const struct cx_site *s, char *buf, size_t n) {
  char obj[40] = "suspended", at[200];
  if (e->wait == 1)
    snprintf(obj, sizeof obj, "fd %" PRIu64, e->obj);
  else if (e->wait == 2)
    snprintf(obj, sizeof obj, "ptr 0x%" PRIx64, e->obj);
  if (s && s->rs.sym.function)
    snprintf(at, sizeof at, " @ %s", s->rs.sym.function);
  else if (e->has_site)
    snprintf(at, sizeof at, " @ 0x%" PRIx64, e->site);
  else
    at[0] = 0;
  snprintf(buf, n, "%s%s", obj, at);
}

/* Flows: each wake followed by a run of its wakee gets flow id (its index + 1);
 * that run terminates every such wake since the wakee's previous run. Fills
 * flowed[] (per event) and term (resume index, flow id) pairs in time order. */
struct term {
  uint32_t resume;
  uint64_t flow;
};

static int plan_flows(const struct cx_model *m, uint8_t *flowed, struct term **tout,
                      size_t *ntout) {
  uint32_t *next = malloc((m->nev ? m->nev : 1) * sizeof *next);
  uint32_t *head = malloc((m->nco ? m->nco : 1) * sizeof *head);
  struct term *term = NULL;
  size_t nterm = 0, cap = 0;
  int rc = 0;
  if (!next || !head) {
    rc = -ENOMEM;
    goto out;
  }
  for (size_t c = 0; c < m->nco; c++)
    head[c] = UINT32_MAX;
  for (size_t i = 0; i < m->nev; i++) {
    uint32_t ei = m->order[i];
    const struct cx_event *e = &m->ev[ei];
    size_t c = coro_index(m, e->probe_id);
    if (e->kind == CT_EV_WAKE) {
      next[ei] = head[c]; /* a stack: order within one run does not matter */
      head[c] = ei;
    } else if (e->kind == CT_EV_RESUME) {
      for (uint32_t w = head[c]; w != UINT32_MAX; w = next[w]) {
        if (nterm == cap) {
          cap = cap ? 2 * cap : 1024;
          struct term *nt = realloc(term, cap * sizeof *nt);
          if (!nt) {
            rc = -ENOMEM;
            goto out;
          }
          term = nt;
        }
        term[nterm++] = (struct term){ei, (uint64_t)w + 1};
        flowed[w] = 1;
      }
      head[c] = UINT32_MAX;
    } else if (e->kind == CT_EV_DESTROY) {
      head[c] = UINT32_MAX; /* never run again: those wakes have no flow */
    }
  }
out:
  free(next);
  free(head);
  if (rc)
    free(term), term = NULL, nterm = 0;
  *tout = term;
  *ntout = nterm;
  return rc;
}

/* The events in time order into slices, instants and flows; closes what is open at the end. */
static void walk(struct pf *p, const uint8_t *flowed, const struct term *term, size_t nterm) {
  const struct cx_model *m = p->m;
  char buf[320];
  size_t tk = 0;
  uint64_t last = 0, *tf = NULL;
  size_t tfcap = 0;
  for (size_t i = 0; i < m->nev && !p->err; i++) {
    uint32_t ei = m->order[i];
    const struct cx_event *e = &m->ev[ei];
    size_t c = coro_index(m, e->probe_id);
    const struct cx_coro *co = &m->co[c];
    const struct cx_site *site = e->has_site ? cx_site_of(m, co->pid, e->site) : NULL;
    size_t th = thread_of(p, e->tid);
    last = e->ts;
    switch (e->kind) {
    case CT_EV_RESUME: {
      size_t nt = 0;
      while (tk < nterm && term[tk].resume == ei) {
        if (nt == tfcap) {
          tfcap = tfcap ? 2 * tfcap : 16;
          uint64_t *n = realloc(tf, tfcap * sizeof *n);
          if (!n) {
            p->err = -ENOMEM;
            goto out;
          }
          tf = n;
        }
        tf[nt++] = term[tk++].flow;
      }
      end_run(p, c, e->ts); /* resumed while running: close the old run */
      if (p->thread_open[th])
        end_run(p, p->thread_open[th] - 1, e->ts);
      end_susp(p, c, e->ts);
      snprintf(buf, sizeof buf, "coroutine %" PRIu64 "%s%s", co->probe_id, co->label ? " " : "",
               co->label ? co->label : "");
      track_event(p, e->ts, UUID_THREAD0 + th, TYPE_BEGIN, buf, 0, NULL, 0, tf, nt, co->probe_id);
      p->run_thread[c] = (uint32_t)th + 1;
      p->thread_open[th] = (uint32_t)c + 1;
      break;
    }
    case CT_EV_SUSPEND:
      end_run(p, c, e->ts);
      end_susp(p, c, e->ts);
      susp_name(e, site, buf, sizeof buf);
      track_event(p, e->ts, UUID_CORO0 + c, TYPE_BEGIN, buf, 0, site, 0, NULL, 0, 0);
      p->susp_open[c] = 1;
      break;
    case CT_EV_DESTROY:
      end_run(p, c, e->ts);
      end_susp(p, c, e->ts);
      track_event(p, e->ts, UUID_CORO0 + c, TYPE_INSTANT, "destroy", 0, site, 0, NULL, 0, 0);
      break;
    case CT_EV_CREATE:
      track_event(p, e->ts, UUID_CORO0 + c, TYPE_INSTANT, "create", 0, site, 0, NULL, 0, 0);
      break;
    case CT_EV_WAKE:
      snprintf(buf, sizeof buf, "wake %" PRIu64, co->probe_id);
      track_event(p, e->ts, UUID_THREAD0 + th, TYPE_INSTANT, buf, 0, site,
                  flowed[ei] ? (uint64_t)ei + 1 : 0, NULL, 0, 0);
      break;
    }
  }
  /* Close what is still open at the end of the trace. */
  if (m->rep.end_ts > last)
    last = m->rep.end_ts;
  for (size_t c = 0; c < m->nco && !p->err; c++) {
    end_run(p, c, last);
    end_susp(p, c, last);
  }
out:
  free(tf);
}

int cx_write_perfetto(FILE *f, const struct cx_model *m, uint64_t *rows, cx_progress_fn prog,
                      void *pctx) {
  struct pf p = {.f = f, .m = m, .prog = prog, .pctx = pctx};
  uint8_t *flowed = calloc(m->nev ? m->nev : 1, 1);
  struct term *term = NULL;
  size_t nterm = 0;
  ct_map_init(&p.names, sizeof(uint64_t));
  ct_map_init(&p.tids, sizeof(uint32_t));
  p.srcloc_sent = calloc(m->nsites ? m->nsites : 1, 1);
  p.run_thread = calloc(m->nco ? m->nco : 1, sizeof *p.run_thread);
  p.susp_open = calloc(m->nco ? m->nco : 1, 1);
  if (!flowed || !p.srcloc_sent || !p.run_thread || !p.susp_open)
    p.err = -ENOMEM;
  if (!p.err)
    p.err = plan_flows(m, flowed, &term, &nterm);
  /* Threads first, so their descriptors lead the file. */
  for (size_t i = 0; i < m->nev && !p.err; i++)
    thread_of(&p, m->ev[m->order[i]].tid);
  if (!p.err)
    descriptors(&p);
  if (!p.err)
    walk(&p, flowed, term, nterm);
  if (!p.err && p.b.n && fwrite(p.b.p, 1, p.b.n, f) != p.b.n)
    p.err = -(errno ? errno : EIO);
  if (prog)
    prog(pctx, p.packets, p.packets);
  *rows = p.packets;
  int rc = p.err;
  pb_free(&p.b);
  ct_map_free(&p.names);
  ct_map_free(&p.tids);
  free(p.srcloc_sent);
  free(p.run_thread);
  free(p.susp_open);
  free(p.thread_tid);
  free(p.thread_open);
  free(flowed);
  free(term);
  return rc;
}
