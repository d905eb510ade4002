/* run_main.c - `corotracer run`: set up, start the target, harvest in one
 * poll loop (signals, child, socket connections), write the trace, clean up. */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/watch.h"
#include "common/commands.h"
#include "common/ctp.h"
#include "engine/clock.h"
#include "engine/flight.h"
#include "engine/guard.h"
#include "engine/harvest.h"
#include "engine/opts.h"
#include "engine/procs.h"
#include "engine/records.h"
#include "engine/rundir.h"
#include "engine/sched.h"
#include "engine/sink.h"
#include "engine/sites.h"
#include "engine/status.h"
#include "engine/target.h"
#include "html/live.h"
#include "run/flight_watch.h"
#include "run/nap.h"
#include "ship/ship_spawn.h"

/* Rings that fill faster than a nap: keep scanning through a gap up to this
 * long (a writer preempted, or between bursts). Sleeping would cost the
 * program a wake-up send, and the wake-up latency would let the ring lap
 * when the writer resumes and catches up. */
#define CT_BUSY_LINGER_NS 200000u
/* Timer slack of the engine: the default 50 us would stretch short naps. */
#define CT_TIMER_SLACK_NS 5000u
/* How often a busy (not napping) loop looks at signals and connections. */
#define CT_BUSY_POLL_NS 50000u
/* While busy the trace is written in big chunks, but never left staler than this. */
#define CT_FLUSH_BYTES 65536u
#define CT_FLUSH_NS 50000000u

struct conn {
  int fd;
  pid_t pid;
};
/* The loop's poll set: the signalfd, the listening socket, the live
 * findings' eventfd (-1 without: poll skips it), then the connections. */
#define CT_PFD_CONNS 3u

struct run {
  struct ct_opts o;
  struct ct_rt rt;
  struct ct_target t;
  struct ct_sink sink;
  struct ct_clock clock;
  struct ct_procs procs;
  struct ct_harvest h;
  struct ct_sites sites; /* the text-site area's reader */
  struct ct_status status;
  struct ct_flight flight; /* --flight: the window (the sink writes into it) */
  uint32_t dumps_sent;     /* SIGUSR1 dumps handed to the sink */
  struct ct_fwatch *watch; /* --dump-on a finding: the live findings (flight_watch.c) */
  int sigfd;
  struct conn *conns;
  size_t nconns, capconns;
  struct pollfd *pfds;
  size_t cappfds, npolled; /* npolled: entries of pfds that poll reported on */
  int shm_broken;          /* SIGBUS: the file was truncated, harvesting stopped */
  int trace_reported;      /* the trace write error has been printed */
  int said_refused;        /* a dump past --flight-max has been said (the rest are counted) */
  int said_removed;        /* the disk budget's first removal has been said */
  uint64_t exit_mono;      /* when we saw the target exit */
  uint64_t flushed_at;     /* the sink's producer tail after our last flush */
  int sched_rt;            /* the loop runs SCHED_FIFO */
  /* Longest the system kept the loop away beyond what it asked for: a nap's
   * overshoot, or after a sleep, from the first new event (its byte) to the
   * scan. Not the engine's choice; reported so a loss can be told apart. */
  uint64_t late_max;
};

/* ---- access to the shared file --------------------------------------------- */
enum pass_op {
  PASS_SCAN,
  PASS_SCAN_FULL,
  PASS_SLEEP,
  PASS_WAKE,
  PASS_FINISH,
  PASS_LIVE,
  PASS_SITES
};

struct pass {
  struct run *r;
  enum pass_op op;
  uint64_t got, peak, events, lost;
  uint32_t live, untraced;
  int hdr_ok; /* PASS_FINISH: the header and padding still as the engine wrote them */
};

static void do_pass(struct pass *p) {
  struct ct_harvest *h = &p->r->h;
  struct ctp_header *hdr = h->hdr;
  switch (p->op) {
  case PASS_SCAN:
  case PASS_SCAN_FULL:
    p->got = ct_harvest_scan(h, p->op == PASS_SCAN_FULL ? CT_SCAN_FULL : CT_SCAN_QUICK);
    p->peak = h->peak;
    break;
  case PASS_SLEEP:
    /* Dekker pair with the probe's seq exchange + seq_cst flag load: after
     * this store, either our scan sees its event or it sees the flag. */
    atomic_store_explicit(&hdr->tracer_sleeping, 1, memory_order_seq_cst);
    /* The scan's loads are acquire, not seq_cst: only a seq_cst fence keeps
     * them after the store in C11's model (POWER needs it; x86 and ARMv8
     * would order them anyway). */
    atomic_thread_fence(memory_order_seq_cst);
    /* The slots themselves: the probe's ev_claimed increment is relaxed, so
     * only the seq exchange is certain to be seen after the fence. */
    p->got = ct_harvest_scan(h, CT_SCAN_SLOTS);
    break;
  case PASS_WAKE:
    atomic_store_explicit(&hdr->tracer_sleeping, 0, memory_order_seq_cst);
    break;
  case PASS_FINISH:
    ct_harvest_finish(h, &p->events, &p->lost);
    p->hdr_ok = ct_harvest_header_ok(h);
    break;
  case PASS_LIVE:
    p->live = ct_harvest_live(h);
    break;
  case PASS_SITES: /* text sites published since the last look: site lines */
    ct_sites_scan(&p->r->sites, &p->r->sink.tw);
    break;
  }
  uint32_t alloc = atomic_load_explicit(&hdr->allocated_count, memory_order_relaxed);
  uint32_t over = atomic_load_explicit(&hdr->overflow, memory_order_relaxed);
  /* Our probe counts overflow; a v1 SDK only pushes the cursor past N. */
  uint32_t beyond = alloc > h->n ? alloc - h->n : 0;
  p->untraced = over > beyond ? over : beyond;
  if (p->op == PASS_FINISH && !p->hdr_ok)
    p->untraced = 0; /* the header was written over: its counters mean nothing */
}

/* One operation on the shared file, unless a truncation ended harvesting
 * (or the trace cannot be written: then only the final totals). */
static struct pass guarded(struct run *r, enum pass_op op) {
  struct pass p = {.r = r, .op = op};
  if (r->shm_broken || (ct_sink_err(&r->sink) && op != PASS_FINISH && op != PASS_LIVE))
    return p;
  do_pass(&p);
  if (ct_guard_tripped()) {
    r->shm_broken = 1;
    ct_status_clear(&r->status);
    fprintf(stderr, "corotracer: %s: shared memory truncated under the engine; tracing stopped\n",
            ct_rt_shm_env(&r->rt));
  }
  return p;
}

/* ---- trace records -------------------------------------------------------- */
static void report_trace_error(struct run *r) {
  int err = ct_sink_err(&r->sink);
  if (!err || r->trace_reported)
    return;
  r->trace_reported = 1;
  ct_status_clear(&r->status);
  fprintf(stderr, "corotracer: %s: %s; trace stopped, the program keeps running\n", r->o.out,
          strerror(err));
}

static void write_meta(struct run *r) {
  struct ct_meta m = {.argv = r->o.argv,
                      .engine_pid = (uint64_t)getpid(),
                      .target_pid = (uint64_t)r->t.pid,
                      .stations = r->o.stations,
                      .rings = r->o.rings,
                      .ring_bytes = r->o.ring_kib * 1024u,
                      .clock = r->o.clock,
                      .poll_ms = r->o.poll_ms};
  ct_rec_meta(&r->sink.tw, &m);
}

static void write_process(struct run *r, pid_t pid, const char *event) {
  ct_rec_process(&r->sink.tw, pid, event, ct_now_ns(CLOCK_MONOTONIC));
}

/* "exited with 3" / "killed by SIGSEGV (core dumped)" for the summary. */
static void describe_exit(struct run *r, char *desc, size_t n) {
  int st = r->t.status;
  if (WIFSIGNALED(st)) {
    const char *abbrev = sigabbrev_np(WTERMSIG(st));
    snprintf(desc, n, "program killed by SIG%s%s", abbrev ? abbrev : "UNKNOWN",
             WCOREDUMP(st) ? " (core dumped)" : "");
  } else {
    snprintf(desc, n, "program exited with %d", ct_target_exit_code(&r->t));
  }
}

/* Have the formatter write everything queued so far, unless nothing was
 * queued since the last time: an idle engine must not wake it for nothing. */
static void flush_trace(struct run *r) {
  if (r->sink.ptail == r->flushed_at && r->sink.tw.len == 0)
    return;
  ct_sink_flush(&r->sink);
  r->flushed_at = r->sink.ptail;
}

/* ---- flight recorder ------------------------------------------------------ */
/* --ship: a file on disk (a dump, the trace at exit) to a shipper process. */
static void ship(const struct run *r, const char *path) {
  int e = r->o.ship ? ct_ship_spawn(r->o.ship, r->o.ship_spool, path) : 0;
  if (e)
    fprintf(stderr, "corotracer: %s: --ship: cannot start the shipper: %s\n", path, strerror(-e));
}

/* One line per dump the formatter has written (or could not); a refusal
 * (--flight-max) and a removal (--flight-disk) are said the first time only,
 * their totals at the end (flight_totals). */
static void flight_notes(struct run *r) {
  struct ct_flight_note n[4];
  size_t k;
  if (!r->o.flight)
    return;
  while ((k = ct_flight_notes(&r->flight, n, sizeof n / sizeof n[0])) > 0) {
    ct_status_clear(&r->status);
    for (size_t i = 0; i < k; i++) {
      if (n[i].err == EDQUOT && !r->said_refused++)
        fprintf(stderr,
                "corotracer: flight: %s: no dump, --flight-max %u reached (later requests "
                "counted at the end)\n",
                n[i].trigger, r->o.flight_max);
      else if (n[i].err && n[i].err != EDQUOT)
        fprintf(stderr, "corotracer: %s: flight dump (%s) failed: %s (%llu bytes kept)\n",
                n[i].path, n[i].trigger, strerror(n[i].err), (unsigned long long)n[i].written);
      else if (!n[i].err)
        fprintf(stderr,
                "corotracer: %s: flight dump on %s: %.3f s of trace, %llu bytes (%llu dropped "
                "before it)\n",
                n[i].path, n[i].trigger, (double)(n[i].end_ts - n[i].start_ts) / 1e9,
                (unsigned long long)n[i].bytes, (unsigned long long)n[i].dropped_bytes);
      if (!n[i].err)
        ship(r, n[i].path); /* on disk now */
      if (n[i].removed && !r->said_removed++)
        fprintf(stderr,
                "corotracer: flight: the oldest dumps are removed to keep them within "
                "--flight-disk %llu bytes (counted at the end)\n",
                (unsigned long long)r->flight.disk_budget);
    }
  }
}

/* At the end (the formatter stopped): the refusals and removals said once
 * above, counted. */
static void flight_totals(struct run *r) {
  if (!r->o.flight)
    return;
  if (r->flight.refused)
    fprintf(stderr, "corotracer: flight: %llu dump requests refused (--flight-max %u)\n",
            (unsigned long long)r->flight.refused, r->o.flight_max);
  if (r->flight.removed)
    fprintf(stderr, "corotracer: flight: %llu older dumps removed (--flight-disk %llu bytes)\n",
            (unsigned long long)r->flight.removed, (unsigned long long)r->flight.disk_budget);
}

/* The losses found so far, to the window (its chunks and dumps record them). */
static void flight_lost(struct run *r) {
  if (r->o.flight)
    ct_flight_lost(&r->flight, ct_sat_add(ct_sat_add(r->h.live_lost, r->h.late), r->h.ring_lost));
}

/* A dump for each SIGUSR1 read since the last look. */
static void flight_asked(struct run *r) {
  flight_lost(r);
  for (; r->dumps_sent < r->t.dumps_asked; r->dumps_sent++)
    ct_sink_dump(&r->sink, "SIGUSR1");
  unsigned kinds = ct_fwatch_take(r->watch); /* --dump-on: the findings' kinds */
  for (unsigned i = 0; i < CT_WATCH_KINDS; i++)
    if (kinds >> i & 1)
      ct_sink_dump(&r->sink, ct_watch_kind(i));
}

/* At the end (the end record queued): a dump when the program died of a
 * fatal signal, or --dump-on exit asked for one. */
static void flight_final(struct run *r) {
  char why[64] = "";
  int st = r->t.status;
  if (!(WIFSIGNALED(st) && ct_flight_crash_trigger(WTERMSIG(st), why, sizeof why)) &&
      r->o.dump_on_exit)
    snprintf(why, sizeof why, "exit");
  if (why[0])
    ct_sink_dump(&r->sink, why);
}

/* ---- connections ----------------------------------------------------------- */
/* Accept every pending connection; returns how many. */
static int accept_all(struct run *r) {
  int n = 0;
  for (;;) {
    int fd = accept4(r->rt.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0 && errno == EINTR)
      continue;
    if (fd < 0)
      return n; /* EAGAIN, or a connection reset before we took it */
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
      cred.pid = 0;
    if (r->nconns == r->capconns) {
      size_t cap = r->capconns ? r->capconns * 2 : 8;
      struct conn *v = realloc(r->conns, cap * sizeof(*v));
      if (!v) {
        close(fd);
        return n;
      }
      r->conns = v;
      r->capconns = cap;
    }
    r->conns[r->nconns++] = (struct conn){fd, cred.pid};
    write_process(r, cred.pid, "attach"); /* maps and acknowledgement: see serve_fds */
    n++;
  }
}

/* Drain wake-up bytes; 1 when the peer closed (the process detached). */
static int drain(int fd) {
  char buf[256];
  for (;;) {
    ssize_t k = read(fd, buf, sizeof(buf));
    if (k > 0)
      continue;
    if (k < 0 && errno == EINTR)
      continue;
    return k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
  }
}

/* Wait up to timeout_ns for a signal, a connection, a byte or an EOF. What
 * is ready is served by serve_fds, after the next scan: slots first, then
 * the slower work (accept, /proc/PID/maps). */
static void wait_fds(struct run *r, uint64_t timeout_ns) {
  struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
  size_t n = CT_PFD_CONNS + r->nconns;
  if (n > r->cappfds) {
    struct pollfd *v = realloc(r->pfds, n * sizeof(*v));
    if (!v && r->cappfds < CT_PFD_CONNS) {
      ppoll(NULL, 0, &ts, NULL); /* ENOMEM: nothing to watch with, just wait */
      return;
    }
    if (!v) {
      n = r->cappfds; /* watch the first ones; the rest wait for the next round */
    } else {
      r->pfds = v;
      r->cappfds = n;
    }
  }
  r->pfds[0] = (struct pollfd){r->sigfd, POLLIN, 0};
  r->pfds[1] = (struct pollfd){r->rt.listen_fd, POLLIN, 0};
  r->pfds[2] = (struct pollfd){ct_fwatch_fd(r->watch), POLLIN, 0};
  for (size_t i = CT_PFD_CONNS; i < n; i++)
    r->pfds[i] = (struct pollfd){r->conns[i - CT_PFD_CONNS].fd, POLLIN, 0};
  /* Timeout or EINTR: nothing to serve, the caller scans either way. */
  r->npolled = ppoll(r->pfds, (nfds_t)n, &ts, NULL) > 0 ? n : 0;
}

/* Serve what the last wait_fds found ready. Returns the number of processes
 * that attached. */
static int serve_fds(struct run *r) {
  size_t n = r->npolled;
  if (n == 0)
    return 0;
  r->npolled = 0;
  /* Connections first (they index pfds), then new ones, then signals. */
  size_t keep = 0;
  for (size_t i = 0; i < r->nconns; i++) {
    struct conn c = r->conns[i];
    if (i + CT_PFD_CONNS < n && r->pfds[i + CT_PFD_CONNS].revents && drain(c.fd)) {
      write_process(r, c.pid, "detach");
      if (c.pid > 0 && !r->shm_broken)
        ct_rings_owner_gone(&r->h, (uint32_t)c.pid);
      close(c.fd);
    } else {
      r->conns[keep++] = c;
    }
  }
  r->nconns = keep;
  int attached = 0;
  if (r->pfds[1].revents) {
    size_t first = r->nconns;
    attached = accept_all(r);
    /* A program often starts with a burst right after it connects: copy the
     * slots first, then read the maps of the new processes (again for a pid
     * that exec'd: new code), while they surely live. */
    if (attached)
      guarded(r, PASS_SCAN);
    for (size_t i = first; i < r->nconns; i++) {
      struct ct_proc *p = r->conns[i].pid > 0 ? ct_procs_get(&r->procs, r->conns[i].pid) : NULL;
      if (p)
        ct_proc_read_maps(p, &r->sink.tw);
    }
    /* The maps are read before the probe may go on: a process that exits
     * right after attaching keeps its sites symbolizable (docs/PROTOCOL.md
     * "Attach"). Their lines are queued ahead of any event of the process;
     * waiting for a lagging formatter to write them would stall the harvest.
     * Never blocks: a probe that stopped waiting just leaves the byte unread. */
    if (attached)
      ct_sink_flush(&r->sink);
    for (size_t i = first; i < r->nconns; i++)
      (void)send(r->conns[i].fd, "1", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  if (r->pfds[0].revents && !r->t.exited) {
    ct_target_on_signals(&r->t, r->sigfd);
    if (r->t.exited)
      r->exit_mono = ct_now_ns(CLOCK_MONOTONIC);
  }
  if ((r->pfds[0].revents || r->pfds[2].revents) && !r->t.exited)
    flight_asked(r);
  return attached;
}

/* ---- the loop ------------------------------------------------------------- */
static void harvest_loop(struct run *r) {
  uint64_t wait_ns = (uint64_t)r->o.poll_ms * 1000000u;
  if (r->status.live && r->o.poll_ms > CT_STATUS_MS)
    wait_ns = (uint64_t)CT_STATUS_MS * 1000000u;
  uint64_t now = ct_now_ns(CLOCK_MONOTONIC), last_scan = now, last_poll = 0, last_flush = now;
  uint64_t last_got = 0, nap = 0;
  int blocked = 0; /* the last wait was a sleep that only a byte ends */
  for (;;) {
    uint64_t timeout = 0;
    int slept = 0;
    struct pass p = guarded(r, PASS_SCAN);
    flight_lost(r);
    /* Events written while we slept: their byte should have woken us at once. */
    if (blocked && p.got > 0 && r->h.first_ts < now && now - r->h.first_ts > r->late_max)
      r->late_max = now - r->h.first_ts;
    blocked = 0;
    int attached = serve_fds(r);
    guarded(r, PASS_SITES);
    if (r->t.exited)
      break;
    uint64_t elapsed = now - last_scan;
    uint64_t nap_max = r->h.rings && !r->h.v1_seen ? CT_RING_SLEEP_NS : CT_NAP_MAX_NS;
    uint64_t sleep_ns = wait_ns;
    if (r->h.rings_owned && sleep_ns > CT_RING_SLEEP_NS)
      sleep_ns = CT_RING_SLEEP_NS;
    last_scan = now;
    if (p.got > 0 || attached) {
      /* A process that just attached usually starts with a burst: no nap. */
      nap = attached ? 0 : ct_next_nap(nap, elapsed, p.peak, nap_max);
      if (nap >= CT_NAP_MIN_NS)
        timeout = nap;
      else if (r->sched_rt && !attached)
        timeout = CT_NAP_MIN_NS; /* see the busy case below */
      last_got = now;
      if (r->sink.tw.len >= CT_FLUSH_BYTES || now - last_flush >= CT_FLUSH_NS) {
        flush_trace(r);
        last_flush = now;
      }
    } else if (nap < CT_NAP_MIN_NS && now - last_got < CT_BUSY_LINGER_NS) {
      /* Busy, and a short gap: scan again; at SCHED_FIFO after the shortest
       * nap instead, since a woken FIFO task runs at once, and a FIFO loop
       * that never sleeps would keep a whole CPU from the program. */
      if (r->sched_rt)
        timeout = CT_NAP_MIN_NS;
    } else if (nap >= CT_NAP_MIN_NS && nap < nap_max) {
      /* An empty nap: a gentle flow (or its end). Nap on, twice as long up
       * to the cap, before sleeping: a flow of one event per 50-250 us would
       * otherwise make every event a wake-up byte (a send(2) in the program)
       * and two passes here. */
      nap = 2 * nap < nap_max ? 2 * nap : nap_max;
      timeout = nap;
    } else {
      /* Nothing new for a whole nap: the flow has stopped, or is a trickle
       * that a wake-up byte serves better. */
      nap = CT_NAP_MIN_NS;
      flush_trace(r);
      last_flush = now;
      report_trace_error(r);
      if (r->shm_broken || ct_sink_err(&r->sink)) {
        timeout = wait_ns; /* nothing left to harvest: just wait for the end */
      } else {
        slept = 1;
        if (guarded(r, PASS_SLEEP).got == 0)
          timeout = sleep_ns;
        else
          last_got = now; /* the flow goes on: the gap rule again */
      }
    }
    /* Busy (rings filling faster than a nap allows): signals and connections
     * can wait a little, a ppoll() per pass would cost more than the pass. */
    if (timeout > 0 || now - last_poll >= CT_BUSY_POLL_NS) {
      uint64_t w0 = ct_now_ns(CLOCK_MONOTONIC);
      /* A nap counts from the scan: the trace writes and the connections
       * served since then are part of the time away (issue #11). */
      if (!slept && timeout > 0)
        timeout = w0 - now < timeout ? timeout - (w0 - now) : 1;
      /* A nap while rings are in use: a writer that passes half its ring
       * sends a byte instead of waiting for the nap's end (a hint: relaxed). */
      int nap_hint = !slept && timeout > 0 && r->h.rings_owned && !r->shm_broken;
      if (nap_hint)
        atomic_store_explicit(&r->h.hdr->napping, 1, memory_order_relaxed);
      wait_fds(r, timeout);
      if (nap_hint)
        atomic_store_explicit(&r->h.hdr->napping, 0, memory_order_relaxed);
      last_poll = ct_now_ns(CLOCK_MONOTONIC);
      if (!slept && timeout > 0 && r->npolled == 0 && last_poll - w0 > timeout + r->late_max)
        r->late_max = last_poll - w0 - timeout;
      blocked = slept && timeout == sleep_ns;
      /* A whole sleep with nothing to serve: no flow to follow with the
       * ladder of empty naps (nap >= CT_NAP_MIN_NS): ten wake-ups for
       * nothing after every CT_RING_SLEEP_NS or --poll-ms. A scan that finds
       * events (a write that raced our sleep) starts the naps again. */
      if (blocked && r->npolled == 0)
        nap = 0;
    }
    if (slept)
      guarded(r, PASS_WAKE);
    now = ct_now_ns(CLOCK_MONOTONIC);
    flight_notes(r);
    if (ct_status_due(&r->status, now)) {
      struct pass st = guarded(r, PASS_LIVE);
      ct_status_tick(&r->status, now, &r->h, st.live, st.untraced);
    }
  }
}

/* Last harvest, station_end and end lines, summary. Returns the exit status. */
static int finish(struct run *r, uint64_t start_mono) {
  wait_fds(r, 0); /* attach/detach lines of the last moment */
  serve_fds(r);
  r->h.final = 1; /* nothing held back: the rings are read to their heads */
  guarded(r, PASS_SCAN_FULL);
  struct pass fin = guarded(r, PASS_FINISH);
  if (r->shm_broken) {
    /* The probe's counters are gone with the file: only what we read counts. */
    fin.events = r->h.harvested;
    fin.lost = 0;
  }
  struct ct_harvest *h = &r->h;
  struct ct_end e = {
      .ts = r->exit_mono,
      .wall_ns = ct_now_ns(CLOCK_REALTIME) - (ct_now_ns(CLOCK_MONOTONIC) - r->exit_mono),
      .wstatus = r->t.status,
      .exit_code = ct_target_exit_code(&r->t),
      .events = fin.events,
      .harvested = h->harvested,
      .lost = fin.lost,
      .stations_used = h->used,
      .untraced = fin.untraced,
      .torn_retries = h->torn,
      .sched_rt = r->sched_rt,
      .shm_broken = r->shm_broken,
      .rings = h->rings,
      .ring_lost = h->ring_lost,
      .stale = h->stale,
      .bad = h->bad,
      .gap = h->gap,
      .sink_stalls = r->sink.stalls,
      .spilled = r->sink.spill_end,
      .wake_late_max_us = r->late_max / 1000u,
  };
  if (h->rings && !r->shm_broken) {
    if (fin.hdr_ok)
      e.no_ring = atomic_load_explicit(&h->hdr->no_ring, memory_order_relaxed);
    /* Lost in the rings' reading, not in any station's counters. */
    e.events = ct_sat_add(e.events, ct_sat_add(h->bad, h->gap));
    e.lost = ct_sat_add(e.lost, ct_sat_add(h->bad, h->gap));
  }
  /* A create that found no station dropped its event (our probe counts it
   * in corotracer_stats' dropped): lost, or the trace would claim none while
   * the program saw thousands go. Its coroutine's later events the program
   * never sent (it holds no handle). */
  e.events = ct_sat_add(e.events, fin.untraced);
  e.lost = ct_sat_add(e.lost, fin.untraced);
  e.corrupt = r->shm_broken ? 0 : atomic_load_explicit(&h->corrupt, memory_order_relaxed);
  char desc[96];
  describe_exit(r, desc, sizeof(desc));
  e.engine_cpu_us = ct_now_ns(CLOCK_PROCESS_CPUTIME_ID) / 1000u;
  e.harvest_cpu_us = ct_now_ns(CLOCK_THREAD_CPUTIME_ID) / 1000u; /* the loop is this thread */
  guarded(r, PASS_SITES); /* the last ones, before the end line */
  ct_rec_end(&r->sink.tw, &e);
  if (r->o.flight) {
    ct_flight_lost(&r->flight, e.lost); /* the run's own count, for the last dump */
    flight_final(r);
  }
  ct_sink_close(&r->sink);
  ct_status_clear(&r->status);
  flight_notes(r);
  if (!r->o.quiet)
    flight_totals(r);
  if (!r->o.flight && strcmp(r->o.out, "-"))
    ship(r, r->o.out);
  report_trace_error(r);
  /* The end line's events sum the station_end lines, which count no packed
   * event (the readers add the packs' claims); the summary says the total. */
  if (!r->o.quiet)
    ct_status_summary(&r->h, ct_sat_add(e.events, r->h.pk_events), e.lost, fin.untraced,
                      (double)(r->exit_mono - start_mono) / 1e9,
                      !r->o.flight            ? r->o.out
                      : r->flight.ndumps == 0 ? "none (flight recorder: no dump)"
                                              : "the flight dumps above",
                      desc);
  /* Not a trace to trust as complete: said once, and exit 1 as for a
   * truncation (the program's own status is in the end record). */
  if (e.corrupt)
    fprintf(stderr,
            "corotracer: the program wrote over the tracer's shared memory (%llu values that "
            "cannot be true, left out of the counts)\n",
            (unsigned long long)e.corrupt);
  /* A dump cut short (or not written) fails the run as a trace cut short does. */
  if (ct_sink_err(&r->sink) || r->shm_broken || e.corrupt || (r->o.flight && r->flight.failed))
    return CT_EXIT_FAIL;
  return ct_target_exit_code(&r->t);
}

/* Blocks of this size or more are mmap'd and unmapped when freed. */
#define RUN_MMAP_THRESHOLD (128 * 1024)

/* Owns everything it creates; returns the process exit status. */
int ct_run_main(int argc, char **argv) {
  struct run r;
  struct ct_live *live = NULL;
  memset(&r, 0, sizeof(r));
  r.sigfd = -1;
  r.sink.fw.fd = -1;
  r.rt.shm_fd = r.rt.listen_fd = -1;
  r.t.tty_fd = -1;
  char why[4352];
  int rc = ct_opts_parse(&r.o, argc, argv, why, sizeof why);
  if (rc > 0)
    ct_opts_usage(stdout);
  if (rc < 0)
    fprintf(stderr, "corotracer: %s\n", why);
  if (rc)
    return rc > 0 ? 0 : CT_EXIT_USAGE;
  rc = CT_EXIT_FAIL;
  /* A fixed mmap threshold: glibc's moves up to the largest block freed, after
   * which a flight dump's 256 KiB buffers and a table's doubling came from the
   * formatter's heap between the window's chunks, and left holes there that
   * the heap kept (docs/FLIGHT.md "Over time"). */
  (void)mallopt(M_MMAP_THRESHOLD, RUN_MMAP_THRESHOLD);
  r.sigfd = ct_signals_setup();
  if (r.sigfd < 0) {
    fprintf(stderr, "corotracer: signals: %s\n", strerror(-r.sigfd));
    goto out;
  }
  /* The clock v2 records are stamped with, and its first calibration pair
   * (the second one 10 ms later, still before the target starts). */
  r.o.clock = r.o.rings ? ct_clock_pick() : CTP_CLOCK_MONO;
  /* Runtime files first: a failure there leaves an existing trace alone. */
  if (ct_rt_create(&r.rt, &r.o, why, sizeof why)) {
    fprintf(stderr, "corotracer: %s\n", why);
    goto out;
  }
  int e = ct_guard_install(r.rt.map, r.rt.map_len);
  if (e) {
    fprintf(stderr, "corotracer: SIGBUS handler: %s\n", strerror(-e));
    goto out;
  }
  if (r.o.flight) {
    e = ct_flight_init(&r.flight, r.o.out, r.o.flight, r.o.flight_max, r.o.flight_disk);
    r.flight.max_age_ns = r.o.flight_age_ns;
    if (!e && r.o.dump_on &&
        !(e = ct_fwatch_start(&r.watch, r.o.dump_on, r.o.th.stuck_ns, r.o.th.runnable_ns,
                              r.o.th.blocker_ns, r.o.flight))) {
      r.flight.watch = ct_fwatch_chunk;
      r.flight.watch_ctx = r.watch;
    }
    e = e ? e : ct_sink_open_flight(&r.sink, &r.flight, r.o.capture_mib);
  } else {
    e = ct_sink_open(&r.sink, r.o.out, r.o.append, (int)r.o.format, r.o.also_jsonl, 0,
                     r.o.capture_mib);
  }
  if (e) {
    fprintf(stderr, "corotracer: %s: %s\n", r.o.out,
            e == -EINVAL ? "--append: the file holds a trace of the other format" : strerror(-e));
    goto out;
  }
  /* The live view, before the program starts: a port in use stops us here.
   * A flight recorder's follows its window (docs/FLIGHT.md "Live view"). */
  struct ct_live_source window;
  if (r.o.flight)
    ct_flight_live_source(&r.flight, &window);
  if (r.o.serve &&
      (e = r.o.flight ? ct_live_start_window(r.o.serve, r.o.out, &window, &r.o.th, &live)
                      : ct_live_start(r.o.serve, r.o.out, 1, &r.o.th, &live))) {
    fprintf(stderr, "corotracer: --serve %s: %s\n", r.o.serve, strerror(-e));
    goto out;
  }
  if (live)
    fprintf(stderr, "corotracer: live dashboard at %s\n", ct_live_url(live));
  ct_sites_init(&r.sites, r.rt.map, ct_layout(&r.o, NULL), CTP_SITES_BYTES);
  if ((e = ct_harvest_init(&r.h, r.rt.map, r.rt.map_len, r.o.stations, &r.procs, &r.sink,
                           &r.clock))) {
    fprintf(stderr, "corotracer: harvest: %s\n", strerror(-e));
    goto out;
  }
  ct_clock_init(&r.clock, r.o.clock);
  ct_status_init(&r.status, !r.o.quiet && (r.o.status || isatty(STDERR_FILENO)));
  /* Before the fork: a v1 SDK writes from its first instant without waiting
   * for us, and a SCHED_OTHER engine that a busy CPU keeps away right after
   * the fork loses its first events. SCHED_RESET_ON_FORK keeps the target
   * (and anything else we fork) SCHED_OTHER. */
  r.sched_rt = !r.o.no_rt && ct_sched_realtime() == 0;
  uint64_t start = ct_now_ns(CLOCK_MONOTONIC);
  e = ct_target_spawn(&r.t, r.o.argv, ct_rt_shm_env(&r.rt), r.rt.sock_path, r.o.stations);
  if (e && !r.t.pid) {
    fprintf(stderr, "corotracer: %s: cannot start: %s\n", r.o.argv[0], strerror(-e));
    goto out;
  }
  if (e)
    fprintf(stderr, "corotracer: %s: %s\n", r.o.argv[0], strerror(-e));
  /* Without SCHED_FIFO, a short slice: the loop's wake-ups still preempt
   * the program (sched.c). After the fork, so the target keeps its own. */
  if (!r.sched_rt)
    (void)ct_sched_short_slice(CT_SCHED_LOOP_SLICE_NS);
  r.t.dump_sig = r.o.flight != 0;
  write_meta(&r);
  if (r.t.exited) {
    /* exec failed: a complete trace of nothing, and exit 127. */
    r.exit_mono = ct_now_ns(CLOCK_MONOTONIC);
    r.o.quiet = 1;
    rc = finish(&r, start); /* the child's 127, unless the trace failed */
    goto out;
  }
  flush_trace(&r);
  (void)prctl(PR_SET_TIMERSLACK, CT_TIMER_SLACK_NS, 0, 0,
              0); /* best effort: naps stay a bit longer */
  harvest_loop(&r);
  ct_target_release_tty(&r.t);
  rc = finish(&r, start);
out:
  ct_live_stop(live); /* the complete trace, to the pages still open */
  ct_target_release_tty(&r.t);
  for (size_t i = 0; i < r.nconns; i++)
    close(r.conns[i].fd);
  free(r.conns);
  free(r.pfds);
  ct_sink_close(&r.sink);
  uint64_t skipped = ct_fwatch_stop(r.watch); /* after the formatter, its feeder */
  if (skipped && !r.o.quiet)
    fprintf(stderr,
            "corotracer: --dump-on: the live findings fell behind and skipped %llu chunks of "
            "the window (findings in them may be missed)\n",
            (unsigned long long)skipped);
  if (r.o.flight)
    ct_flight_free(&r.flight);
  ct_harvest_free(&r.h);
  ct_procs_free(&r.procs);
  ct_rt_destroy(&r.rt);
  if (r.sigfd >= 0)
    close(r.sigfd);
  return rc;
}
