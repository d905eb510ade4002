/* records.c - the one writer of the trace format's lines (docs/TRACE_FORMAT.md):
 * every record is formatted here but the engine's own two, meta and module
 * (src/engine/records.c: what only the engine knows); parse.c is their reader. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "format/ctrace.h"
#include "format/records.h"
#include "format/trace_keys.h"
#include "format/writer.h"

/* `,"key":value` */
static void kv(struct ct_writer *w, const char *key, uint64_t v) {
  ct_w_str(w, ",\"");
  ct_w_str(w, key);
  ct_w_str(w, "\":");
  ct_w_u64(w, v);
}

void ct_rec_process(struct ct_writer *w, pid_t pid, const char *event, uint64_t ts) {
  ct_w_str(w, "{" CT_KQ(TYPE) "\"process\"," CT_KQ(PID));
  ct_w_u64(w, (uint64_t)pid);
  ct_w_str(w, "," CT_KQ(EVENT) "\"");
  ct_w_str(w, event);
  ct_w_str(w, "\"," CT_KQ(TS));
  ct_w_u64(w, ts);
  ct_w_str(w, "}\n");
}

void ct_rec_site(struct ct_writer *w, uint32_t pid, uint64_t site, const char *file, uint32_t line,
                 const char *function) {
  ct_w_str(w, "{" CT_KQ(TYPE) "\"site\"," CT_KQ(PID));
  ct_w_u64(w, pid);
  ct_w_str(w, "," CT_KQ(SITE));
  ct_w_hex(w, site);
  ct_w_str(w, "," CT_KQ(FILE));
  ct_w_json(w, file, strlen(file));
  kv(w, CT_KEY_LINE, line);
  ct_w_str(w, "," CT_KQ(FUNCTION));
  ct_w_json(w, function, strlen(function));
  ct_w_str(w, "}\n");
}

void ct_rec_coroutine(struct ct_writer *w, const struct ct_coro_item *c) {
  ct_w_str(w, "{" CT_KQ(TYPE) "\"coroutine\"");
  kv(w, CT_KEY_PROBE_ID, c->probe_id);
  kv(w, CT_KEY_STATION, c->station);
  if (c->gen)
    kv(w, CT_KEY_GEN, c->gen);
  kv(w, CT_KEY_PID, c->pid);
  kv(w, CT_KEY_BIRTH_TS, c->birth_ts);
  if (c->has_label) {
    ct_w_str(w, "," CT_KQ(LABEL));
    ct_w_json(w, c->label, strnlen(c->label, sizeof(c->label) - 1));
  }
  ct_w_str(w, "," CT_KQ(CREATE_SITE));
  ct_w_hex(w, c->create_site);
  kv(w, CT_KEY_PARENT, c->parent);
  ct_w_str(w, "}\n");
}

/* `,"kind":"NAME"` per kind, with its length; none for a v1 event. */
#define KIND(name)                                                                                 \
  { "," CT_KQ(KIND) "\"" name "\"", sizeof("," CT_KQ(KIND) "\"" name "\"") - 1 }
static const struct {
  const char *s;
  size_t n;
} kind_json[CTP_KIND_MAX_] = {{NULL, 0},      KIND("create"), KIND("suspend"),
                              KIND("resume"), KIND("wake"),   KIND("destroy")};

/* Longest event line: the keys below plus 8 numbers of at most 20 bytes. */
#define EVENT_LINE_MAX 512u

/* Formatted in place (one bounds check per line, literal keys copied with
 * constant sizes): under load, event lines are most of the formatter's work. */
void ct_rec_event(struct ct_writer *w, const struct ct_ev_item *e) {
  char *p = ct_w_reserve(w, EVENT_LINE_MAX);
  if (!p)
    return;
  p = CT_PUT_LIT(p, "{" CT_KQ(PROBE_ID));
  p = ct_put_u64(p, e->probe_id);
  p = CT_PUT_LIT(p, "," CT_KQ(TID));
  p = ct_put_u64(p, e->tid);
  p = CT_PUT_LIT(p, "," CT_KQ(ADDR));
  p = ct_put_hex(p, e->addr);
  p = CT_PUT_LIT(p, "," CT_KQ(SEQ));
  p = ct_put_u64(p, e->seq);
  p = e->active ? CT_PUT_LIT(p, "," CT_KQ(IS_ACTIVE) "true," CT_KQ(TS))
                : CT_PUT_LIT(p, "," CT_KQ(IS_ACTIVE) "false," CT_KQ(TS));
  p = ct_put_u64(p, e->ts);
  int known = e->kind < CTP_KIND_MAX_ && kind_json[e->kind].s;
  if (known) {
    memcpy(p, kind_json[e->kind].s, kind_json[e->kind].n);
    p += kind_json[e->kind].n;
  }
  p = CT_PUT_LIT(p, "," CT_KQ(EV));
  p = ct_put_u64(p, e->ev);
  if (known && e->kind != CTP_KIND_RESUME) {
    p = CT_PUT_LIT(p, "," CT_KQ(SITE));
    p = ct_put_hex(p, e->addr);
  }
  if (e->kind == CTP_KIND_SUSPEND && e->wait == CTP_WAIT_FD) {
    p = CT_PUT_LIT(p, "," CT_KQ(WAIT) "\"fd\"," CT_KQ(OBJ));
    int64_t fd = (int64_t)e->obj;
    if (fd < 0)
      *p++ = '-';
    p = ct_put_u64(p, fd < 0 ? (uint64_t)0 - e->obj : e->obj);
  } else if (e->kind == CTP_KIND_SUSPEND && e->wait == CTP_WAIT_PTR) {
    p = CT_PUT_LIT(p, "," CT_KQ(WAIT) "\"ptr\"," CT_KQ(OBJ));
    p = ct_put_hex(p, e->obj);
  } else if (e->kind == CTP_KIND_SUSPEND && e->wait == CTP_WAIT_EXIT) {
    p = CT_PUT_LIT(p, "," CT_KQ(WAIT) "\"exit\"");
  } else if (e->kind == CTP_KIND_SUSPEND && e->wait == CTP_WAIT_COROUTINE) {
    p = CT_PUT_LIT(p, "," CT_KQ(WAIT) "\"coroutine\"," CT_KQ(OBJ));
    p = ct_put_u64(p, e->obj);
  } else if (e->kind == CTP_KIND_WAKE) {
    p = CT_PUT_LIT(p, "," CT_KQ(FROM));
    p = ct_put_u64(p, e->obj);
  } else if (e->kind == CTP_KIND_CREATE) {
    p = CT_PUT_LIT(p, "," CT_KQ(PARENT));
    p = ct_put_u64(p, e->obj);
  }
  p = CT_PUT_LIT(p, "}\n");
  ct_w_commit(w, p);
}

void ct_rec_station_end(struct ct_writer *w, const struct ct_station_end *e) {
  ct_w_str(w, "{" CT_KQ(TYPE) "\"station_end\"");
  kv(w, CT_KEY_PROBE_ID, e->probe_id);
  kv(w, CT_KEY_STATION, e->station);
  if (e->gen)
    kv(w, CT_KEY_GEN, e->gen);
  kv(w, CT_KEY_EVENTS, e->events);
  kv(w, CT_KEY_HARVESTED, e->harvested);
  kv(w, CT_KEY_LOST, e->lost);
  /* Its counters held what cannot be true: lost is what the engine knows. */
  if (e->corrupt)
    ct_w_str(w, "," CT_KQ(CORRUPT) "true");
  ct_w_str(w, e->dead ? "," CT_KQ(DEAD) "true}\n" : "," CT_KQ(DEAD) "false}\n");
}

/* The end line's exit object. */
static void exit_json(struct ct_writer *w, const struct ct_end *e) {
  int st = e->wstatus;
  if (WIFSIGNALED(st)) {
    const char *abbrev = sigabbrev_np(WTERMSIG(st));
    char name[32];
    snprintf(name, sizeof(name), "SIG%s", abbrev ? abbrev : "UNKNOWN");
    ct_w_str(w, "{" CT_KQ(SIGNAL));
    ct_w_u64(w, (uint64_t)WTERMSIG(st));
    ct_w_str(w, "," CT_KQ(NAME));
    ct_w_json(w, name, strlen(name));
    ct_w_str(w, WCOREDUMP(st) ? "," CT_KQ(CORE) "true}" : "," CT_KQ(CORE) "false}");
  } else {
    ct_w_str(w, "{" CT_KQ(CODE));
    ct_w_u64(w, (uint64_t)e->exit_code);
    ct_w_str(w, "}");
  }
}

void ct_rec_end(struct ct_writer *w, const struct ct_end *e) {
  ct_w_str(w, "{" CT_KQ(TYPE) "\"end\"");
  kv(w, CT_KEY_TS, e->ts);
  kv(w, CT_KEY_WALL_NS, e->wall_ns);
  ct_w_str(w, "," CT_KQ(EXIT));
  exit_json(w, e);
  kv(w, CT_KEY_EVENTS, e->events);
  kv(w, CT_KEY_HARVESTED, e->harvested);
  kv(w, CT_KEY_LOST, e->lost);
  kv(w, CT_KEY_STATIONS_USED, e->stations_used);
  kv(w, CT_KEY_UNTRACED_COROUTINES, e->untraced);
  /* torn: torn records in the trace, as the reference wrote them; ours are
   * retried, never written. torn_retries says how often that happened. */
  ct_w_str(w, "," CT_KQ(TORN) "0");
  kv(w, CT_KEY_TORN_RETRIES, e->torn_retries);
  if (e->rings) {
    kv(w, CT_KEY_RING_LOST, e->ring_lost);
    kv(w, CT_KEY_NO_RING, e->no_ring);
    kv(w, CT_KEY_PAST_GEN, e->stale);
    kv(w, CT_KEY_BAD_RECORDS, e->bad);
    kv(w, CT_KEY_RING_GAP, e->gap);
    kv(w, CT_KEY_FORMAT_STALLS, e->sink_stalls);
    kv(w, CT_KEY_SPILLED_BYTES, e->spilled);
  }
  /* How the harvest loop was scheduled: "normal" means a busy CPU could keep
   * it away for a scheduler slice (docs/ENGINE.md "Bound"). */
  ct_w_str(w, e->sched_rt ? "," CT_KQ(SCHED) "\"fifo\"" : "," CT_KQ(SCHED) "\"normal\"");
  /* The engine's own CPU time (not the target's), for the cost it claims. */
  kv(w, CT_KEY_ENGINE_CPU_US, e->engine_cpu_us);
  kv(w, CT_KEY_HARVEST_CPU_US, e->harvest_cpu_us);
  kv(w, CT_KEY_WAKE_LATE_MAX_US, e->wake_late_max_us);
  /* Readers skip unknown keys; this one says the totals are partial. */
  if (e->shm_broken)
    ct_w_str(w, "," CT_KQ(ERROR) "\"shared memory truncated by the target\"");
  else if (e->corrupt) /* counts that could not be true are left out (docs/ENGINE.md) */
    ct_w_str(w, "," CT_KQ(ERROR) "\"the target corrupted the tracer's shared memory\"");
  ct_w_str(w, "}\n");
}

void ct_rec_cut(struct ct_writer *w, int err) {
  const char *name = strerrorname_np(err);
  ct_w_str(w, "{" CT_KQ(TYPE) "\"cut\"," CT_KQ(REASON));
  ct_w_json(w, name ? name : "EIO", strlen(name ? name : "EIO"));
  ct_w_str(w, "," CT_KQ(ERROR));
  const char *msg = strerror(err);
  ct_w_json(w, msg, strlen(msg));
  ct_w_str(w, "}\n");
}

void ct_rec_window(struct ct_writer *w, const struct ct_window *win) {
  ct_w_str(w, "{" CT_KQ(TYPE) "\"window\"," CT_KQ(START_TS));
  ct_w_u64(w, win->start_ts);
  ct_w_str(w, "," CT_KQ(END_TS));
  ct_w_u64(w, win->end_ts);
  ct_w_str(w, "," CT_KQ(BYTES));
  ct_w_u64(w, win->bytes);
  ct_w_str(w, "," CT_KQ(DROPPED_BYTES));
  ct_w_u64(w, win->dropped_bytes);
  ct_w_str(w, "," CT_KQ(DROPPED_CHUNKS));
  ct_w_u64(w, win->dropped_chunks);
  ct_w_str(w, "," CT_KQ(DROPPED_TS));
  ct_w_u64(w, win->dropped_ts);
  if (win->snapshot || win->untracked) {
    kv(w, CT_KEY_SNAPSHOT, win->snapshot);
    if (win->untracked)
      kv(w, CT_KEY_UNTRACKED, win->untracked);
  }
  kv(w, CT_KEY_TS, win->ts);
  kv(w, CT_KEY_LOST, win->lost);
  kv(w, CT_KEY_DROPPED_LOST, win->dropped_lost);
  ct_w_str(w, "," CT_KQ(TRIGGER));
  ct_w_json(w, win->trigger, strlen(win->trigger));
  ct_w_str(w, "}\n");
}

/* The name of a snapshot's state: what its last events left it doing. */
static const char *snap_state(const struct ct_snap *s) {
  if (!s->has_cur || s->cur.kind == CTP_KIND_CREATE)
    return "created";
  if (s->cur.kind == CTP_KIND_RESUME || (s->cur.kind == 0 && s->cur.active))
    return "running";
  return s->woke_ts ? "runnable" : "suspended";
}

void ct_rec_snapshot(struct ct_writer *w, const struct ct_snap *s) {
  const struct ct_ev_item *e = &s->cur;
  ct_w_str(w, "{" CT_KQ(TYPE) "\"snapshot\"");
  kv(w, CT_KEY_PROBE_ID, s->has_cur ? e->probe_id : s->co.probe_id);
  if (s->has_co) {
    kv(w, CT_KEY_STATION, s->co.station);
    if (s->co.gen)
      kv(w, CT_KEY_GEN, s->co.gen);
    kv(w, CT_KEY_PID, s->co.pid);
    kv(w, CT_KEY_BIRTH_TS, s->co.birth_ts);
    if (s->co.has_label) {
      ct_w_str(w, "," CT_KQ(LABEL));
      ct_w_json(w, s->co.label, strnlen(s->co.label, sizeof(s->co.label) - 1));
    }
    ct_w_str(w, "," CT_KQ(CREATE_SITE));
    ct_w_hex(w, s->co.create_site);
    kv(w, CT_KEY_PARENT, s->co.parent);
  }
  const char *state = snap_state(s);
  ct_w_str(w, "," CT_KQ(STATE) "\"");
  ct_w_str(w, state);
  ct_w_str(w, "\"");
  kv(w, CT_KEY_TS, s->has_cur ? e->ts : s->co.birth_ts);
  if (s->has_cur)
    kv(w, CT_KEY_TID, e->tid);
  kv(w, CT_KEY_EV, s->last_ev);
  if (s->packed)
    kv(w, CT_KEY_PACKED, s->packed);
  if (s->has_cur && e->kind == CTP_KIND_SUSPEND) {
    ct_w_str(w, "," CT_KQ(SITE));
    ct_w_hex(w, e->addr);
    if (e->wait == CTP_WAIT_FD) {
      int64_t fd = (int64_t)e->obj;
      ct_w_str(w, fd < 0 ? "," CT_KQ(WAIT) "\"fd\"," CT_KQ(OBJ) "-"
                         : "," CT_KQ(WAIT) "\"fd\"," CT_KQ(OBJ));
      ct_w_u64(w, fd < 0 ? (uint64_t)0 - e->obj : e->obj);
    } else if (e->wait == CTP_WAIT_PTR) {
      ct_w_str(w, "," CT_KQ(WAIT) "\"ptr\"," CT_KQ(OBJ));
      ct_w_hex(w, e->obj);
    } else if (e->wait == CTP_WAIT_EXIT) {
      ct_w_str(w, "," CT_KQ(WAIT) "\"exit\"");
    } else if (e->wait == CTP_WAIT_COROUTINE) {
      ct_w_str(w, "," CT_KQ(WAIT) "\"coroutine\"," CT_KQ(OBJ));
      ct_w_u64(w, e->obj);
    }
  }
  if (s->woke_ts) {
    kv(w, CT_KEY_WOKE_TS, s->woke_ts);
    kv(w, CT_KEY_FROM, s->woke_from);
  }
  ct_w_str(w, "}\n");
}
