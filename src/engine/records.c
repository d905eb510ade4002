/* records.c - the one writer of the trace format (docs/TRACE_FORMAT.md): every
 * line the engine writes (meta, process, module, coroutine, event,
 * station_end, end) is formatted here; src/analysis/trace.c is its reader. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corotracer.h"
#include "engine/engine.h"

#define CT_ENGINE_VERSION "corotracer " COROTRACER_VERSION /* include/corotracer.h */

static const char *clock_name(uint32_t c) {
  return c == CTP_CLOCK_TSC ? "tsc" : c == CTP_CLOCK_CNTVCT ? "cntvct" : "mono";
}

/* `,"key":value` */
static void kv(struct ct_writer *w, const char *key, uint64_t v) {
  ct_w_str(w, ",\"");
  ct_w_str(w, key);
  ct_w_str(w, "\":");
  ct_w_u64(w, v);
}

void ct_rec_meta(struct ct_writer *w, const struct ct_meta *m) {
  unsigned char id[16] = {0};
  size_t got = 0;
  while (got < sizeof(id)) {
    ssize_t k = getrandom(id + got, sizeof(id) - got, 0);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break; /* no entropy source: a zero-padded id still parses */
    got += (size_t)k;
  }
  char hex[33];
  for (size_t i = 0; i < sizeof(id); i++)
    snprintf(hex + 2 * i, 3, "%02x", id[i]);
  char host[256] = "";
  gethostname(host, sizeof(host) - 1);
  uint64_t mono = ct_now_ns(CLOCK_MONOTONIC), wall = ct_now_ns(CLOCK_REALTIME);
  ct_w_str(w,
           "{\"type\":\"meta\",\"format\":\"corotracer-trace\",\"format_version\":1,\"run_id\":\"");
  ct_w_str(w, hex);
  ct_w_str(w, "\",\"host\":");
  ct_w_json(w, host, strlen(host));
  ct_w_str(w, ",\"engine\":\"" CT_ENGINE_VERSION "\",\"command\":[");
  for (char *const *a = m->argv; *a; a++) {
    if (a != m->argv)
      ct_w_str(w, ",");
    ct_w_json(w, *a, strlen(*a));
  }
  ct_w_str(w, "],\"engine_pid\":");
  ct_w_u64(w, m->engine_pid);
  ct_w_str(w, ",\"target_pid\":");
  ct_w_u64(w, m->target_pid);
  ct_w_str(w, ",\"stations\":");
  ct_w_u64(w, m->stations);
  ct_w_str(w, ",\"clock\":{\"mono_ns\":");
  ct_w_u64(w, mono);
  ct_w_str(w, ",\"wall_ns\":");
  ct_w_u64(w, wall);
  ct_w_str(w, "},\"poll_ms\":");
  ct_w_u64(w, (uint64_t)m->poll_ms);
  if (m->rings) {
    ct_w_str(w, ",\"rings\":");
    ct_w_u64(w, m->rings);
    ct_w_str(w, ",\"ring_bytes\":");
    ct_w_u64(w, m->ring_bytes);
    ct_w_str(w, ",\"ts_clock\":\"");
    ct_w_str(w, clock_name(m->clock));
    ct_w_str(w, "\"");
  }
  ct_w_str(w, "}\n");
}

void ct_rec_process(struct ct_writer *w, pid_t pid, const char *event, uint64_t ts) {
  ct_w_str(w, "{\"type\":\"process\",\"pid\":");
  ct_w_u64(w, (uint64_t)pid);
  ct_w_str(w, ",\"event\":\"");
  ct_w_str(w, event);
  ct_w_str(w, "\",\"ts\":");
  ct_w_u64(w, ts);
  ct_w_str(w, "}\n");
}

void ct_rec_module(struct ct_writer *w, pid_t pid, const struct ct_module *m) {
  ct_w_str(w, "{\"type\":\"module\",\"pid\":");
  ct_w_u64(w, (uint64_t)pid);
  ct_w_str(w, ",\"start\":");
  ct_w_hex(w, m->start);
  ct_w_str(w, ",\"end\":");
  ct_w_hex(w, m->end);
  ct_w_str(w, ",\"offset\":");
  ct_w_hex(w, m->offset);
  ct_w_str(w, ",\"path\":");
  ct_w_json(w, m->path, strlen(m->path));
  ct_w_str(w, "}\n");
}

void ct_rec_coroutine(struct ct_writer *w, const struct ct_coro_item *c) {
  ct_w_str(w, "{\"type\":\"coroutine\"");
  kv(w, "probe_id", c->probe_id);
  kv(w, "station", c->station);
  if (c->gen)
    kv(w, "gen", c->gen);
  kv(w, "pid", c->pid);
  kv(w, "birth_ts", c->birth_ts);
  if (c->has_label) {
    ct_w_str(w, ",\"label\":");
    ct_w_json(w, c->label, strnlen(c->label, sizeof(c->label) - 1));
  }
  ct_w_str(w, ",\"create_site\":");
  ct_w_hex(w, c->create_site);
  kv(w, "parent", c->parent);
  ct_w_str(w, "}\n");
}

/* `,"kind":"NAME"` per kind, with its length; none for a v1 event. */
#define KIND(name)                                                                                 \
  { ",\"kind\":\"" name "\"", sizeof(",\"kind\":\"" name "\"") - 1 }
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
  p = CT_PUT_LIT(p, "{\"probe_id\":");
  p = ct_put_u64(p, e->probe_id);
  p = CT_PUT_LIT(p, ",\"tid\":");
  p = ct_put_u64(p, e->tid);
  p = CT_PUT_LIT(p, ",\"addr\":");
  p = ct_put_hex(p, e->addr);
  p = CT_PUT_LIT(p, ",\"seq\":");
  p = ct_put_u64(p, e->seq);
  p = e->active ? CT_PUT_LIT(p, ",\"is_active\":true,\"ts\":")
                : CT_PUT_LIT(p, ",\"is_active\":false,\"ts\":");
  p = ct_put_u64(p, e->ts);
  int known = e->kind < CTP_KIND_MAX_ && kind_json[e->kind].s;
  if (known) {
    memcpy(p, kind_json[e->kind].s, kind_json[e->kind].n);
    p += kind_json[e->kind].n;
  }
  p = CT_PUT_LIT(p, ",\"ev\":");
  p = ct_put_u64(p, e->ev);
  if (known && e->kind != CTP_KIND_RESUME) {
    p = CT_PUT_LIT(p, ",\"site\":");
    p = ct_put_hex(p, e->addr);
  }
  if (e->kind == CTP_KIND_SUSPEND && e->wait == CTP_WAIT_FD) {
    p = CT_PUT_LIT(p, ",\"wait\":\"fd\",\"obj\":");
    int64_t fd = (int64_t)e->obj;
    if (fd < 0)
      *p++ = '-';
    p = ct_put_u64(p, fd < 0 ? (uint64_t)0 - e->obj : e->obj);
  } else if (e->kind == CTP_KIND_SUSPEND && e->wait == CTP_WAIT_PTR) {
    p = CT_PUT_LIT(p, ",\"wait\":\"ptr\",\"obj\":");
    p = ct_put_hex(p, e->obj);
  } else if (e->kind == CTP_KIND_SUSPEND && e->wait == CTP_WAIT_EXIT) {
    p = CT_PUT_LIT(p, ",\"wait\":\"exit\"");
  } else if (e->kind == CTP_KIND_WAKE) {
    p = CT_PUT_LIT(p, ",\"from\":");
    p = ct_put_u64(p, e->obj);
  } else if (e->kind == CTP_KIND_CREATE) {
    p = CT_PUT_LIT(p, ",\"parent\":");
    p = ct_put_u64(p, e->obj);
  }
  p = CT_PUT_LIT(p, "}\n");
  ct_w_commit(w, p);
}

void ct_rec_station_end(struct ct_writer *w, const struct ct_station_end *e) {
  ct_w_str(w, "{\"type\":\"station_end\"");
  kv(w, "probe_id", e->probe_id);
  kv(w, "station", e->station);
  if (e->gen)
    kv(w, "gen", e->gen);
  kv(w, "events", e->events);
  kv(w, "harvested", e->harvested);
  kv(w, "lost", e->lost);
  ct_w_str(w, e->dead ? ",\"dead\":true}\n" : ",\"dead\":false}\n");
}

/* The end line's exit object. */
static void exit_json(struct ct_writer *w, const struct ct_end *e) {
  int st = e->wstatus;
  if (WIFSIGNALED(st)) {
    const char *abbrev = sigabbrev_np(WTERMSIG(st));
    char name[32];
    snprintf(name, sizeof(name), "SIG%s", abbrev ? abbrev : "UNKNOWN");
    ct_w_str(w, "{\"signal\":");
    ct_w_u64(w, (uint64_t)WTERMSIG(st));
    ct_w_str(w, ",\"name\":");
    ct_w_json(w, name, strlen(name));
    ct_w_str(w, WCOREDUMP(st) ? ",\"core\":true}" : ",\"core\":false}");
  } else {
    ct_w_str(w, "{\"code\":");
    ct_w_u64(w, (uint64_t)e->exit_code);
    ct_w_str(w, "}");
  }
}

void ct_rec_end(struct ct_writer *w, const struct ct_end *e) {
  ct_w_str(w, "{\"type\":\"end\"");
  kv(w, "ts", e->ts);
  kv(w, "wall_ns", e->wall_ns);
  ct_w_str(w, ",\"exit\":");
  exit_json(w, e);
  kv(w, "events", e->events);
  kv(w, "harvested", e->harvested);
  kv(w, "lost", e->lost);
  kv(w, "stations_used", e->stations_used);
  kv(w, "untraced_coroutines", e->untraced);
  /* torn: torn records in the trace, as the reference wrote them; ours are
   * retried, never written. torn_retries says how often that happened. */
  ct_w_str(w, ",\"torn\":0");
  kv(w, "torn_retries", e->torn_retries);
  if (e->rings) {
    kv(w, "ring_lost", e->ring_lost);
    kv(w, "no_ring", e->no_ring);
    kv(w, "past_gen", e->stale);
    kv(w, "bad_records", e->bad);
    kv(w, "ring_gap", e->gap);
    kv(w, "format_stalls", e->sink_stalls);
  }
  /* How the harvest loop was scheduled: "normal" means a busy CPU could keep
   * it away for a scheduler slice (docs/ENGINE.md "Bound"). */
  ct_w_str(w, e->sched_rt ? ",\"sched\":\"fifo\"" : ",\"sched\":\"normal\"");
  /* The engine's own CPU time (not the target's), for the cost it claims. */
  kv(w, "engine_cpu_us", e->engine_cpu_us);
  kv(w, "wake_late_max_us", e->wake_late_max_us);
  /* Readers skip unknown keys; this one says the totals are partial. */
  if (e->shm_broken)
    ct_w_str(w, ",\"error\":\"shared memory truncated by the target\"");
  ct_w_str(w, "}\n");
}
