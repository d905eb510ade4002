/* engine.h - internal interfaces of `corotracer run` (src/engine/ only). */
#ifndef CT_ENGINE_H
#define CT_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "common/ctp.h"
#include "common/ctrace.h"

/* Exit statuses of the engine itself (the target's status otherwise). */
#define CT_EXIT_USAGE 2  /* bad option or value */
#define CT_EXIT_FAIL 1   /* setup failed, or the trace is incomplete */
#define CT_EXIT_EXEC 127 /* the program could not be executed */

/* Stations: 2^17 covers 10^5 live coroutines. A station's 1 KiB of shared
 * memory costs nothing until a coroutine takes it (pages untouched stay
 * unallocated), and the harvest scans only stations handed out. */
#define CT_STATIONS_DEFAULT 131072u
#define CT_POLL_MS_DEFAULT 1000
#define CT_LOSSLESS_MS_DEFAULT 1000
#define CT_STATUS_MS 250
#define CT_RINGS_DEFAULT 64u       /* --rings: writer threads with a ring at once */
#define CT_RING_KIB_DEFAULT 1024u  /* --ring-kib: 32768 records of 32 bytes per ring */
#define CT_CAPTURE_MIB_DEFAULT 64u /* --capture-mib: captured records in memory, then a file */
#define CT_FLIGHT_CAPTURE_MIB 16u  /* the same under --flight (no file: the engine's bound) */
/* --ring-kib under --flight: the spares a lossless burst fills (3/4 of the
 * rings) count in the engine's RSS, within its bound (docs/FLIGHT.md "Memory") */
#define CT_FLIGHT_RING_KIB 512u

/* ---- options (opts.c) ---------------------------------------------------- */
/* The trace's format (--format; docs/TRACE_FORMAT.md). */
enum ct_format { CT_FORMAT_CTRACE, CT_FORMAT_JSONL };

struct ct_opts {
  const char *out;        /* trace path */
  enum ct_format format;  /* --format, else from -o's name (.jsonl) or -out */
  const char *also_jsonl; /* --also-jsonl: the same events as JSONL too, or NULL */
  uint32_t stations;
  int append;
  int poll_ms;
  const char *shm_path;  /* NULL: private memfd */
  const char *sock_path; /* NULL: private runtime directory */
  int quiet;
  int status;             /* 1: live status even when stderr is not a tty */
  int no_rt;              /* --no-realtime: stay SCHED_OTHER */
  int lossless;           /* --lossless: writers wait for room (bounded) */
  int lossless_ms;        /* --lossless-ms: longest wait of one event */
  uint32_t rings;         /* --rings: v2 rings offered (0: v1 stations only) */
  uint32_t ring_kib;      /* --ring-kib: record area of one ring, KiB (power of two) */
  uint32_t capture_mib;   /* --capture-mib: capture blocks kept in memory, MiB */
  uint32_t clock;         /* not an option: enum ctp_clock the run offers (ct_clock_pick) */
  const char *cmd;        /* -cmd string (run through /bin/sh -c), or NULL */
  const char *serve;      /* --serve [ADDR:]PORT: the live dashboard (src/html/live.h), or NULL */
  uint64_t flight;        /* --flight: bytes of the flight recorder's window (0: a full trace) */
  uint32_t flight_max;    /* --flight-max: dumps at most */
  uint64_t flight_age_ns; /* --flight-age: drop what is older than this behind the newest (0: no) */
  int dump_on_exit;       /* --dump-on exit: a dump at the program's end, whatever its status */
  unsigned dump_on;       /* --dump-on lost_wakeup,...: finding kinds (analysis/watch.h bits) */
  uint64_t stuck_ns, runnable_ns, blocker_ns; /* --stuck-ms, --runnable-ms, --blocker-ms */
  char **argv;      /* program argv (NULL-terminated); points into the caller's argv or sh_argv */
  char *sh_argv[4]; /* storage for {"/bin/sh", "-c", cmd, NULL} */
};

/* Parse argv as handed to ct_run_main. Never prints: returns 0, 1 when
 * --help was asked (the caller prints ct_opts_usage, exit 0), or -EINVAL with
 * the one-line reason "<option>: <what is wrong>" in why (the caller prints
 * it, exit CT_EXIT_USAGE). o->argv points into argv, which must outlive o. */
int ct_opts_parse(struct ct_opts *o, int argc, char **argv, char *why, size_t whylen);
/* The help text of `corotracer run` (the CLI prints it to f). */
void ct_opts_usage(FILE *f);

/* ---- runtime files (rundir.c) -------------------------------------------- */
struct ct_rt {
  char *dir;       /* private directory we created, or NULL */
  char *shm_path;  /* explicit shm file we created, or NULL */
  char *sock_path; /* socket path we bound */
  dev_t shm_dev, sock_dev;
  ino_t shm_ino, sock_ino;
  int shm_fd; /* memfd or the explicit file; kept open for the run */
  int listen_fd;
  void *map; /* mapping of the whole file */
  size_t map_len;
  char shm_env[64]; /* CTP_SHM_PATH value when memfd (/proc/PID/fd/N) */
};

/* Create the shared memory, its header and the listening socket as o asks.
 * Returns 0, or -errno with a one-line reason in why (which file, what failed;
 * the caller prints it) after removing what it created. The caller owns rt
 * afterwards and must call ct_rt_destroy. */
int ct_rt_create(struct ct_rt *rt, const struct ct_opts *o, char *why, size_t whylen);
/* Value for CTP_SHM_PATH (the explicit path, or /proc/PID/fd/N). Owned by rt. */
const char *ct_rt_shm_env(const struct ct_rt *rt);
/* Unmap, close, and remove every file still ours (dev/inode checked). Safe on
 * a zeroed or partly created rt; idempotent. */
void ct_rt_destroy(struct ct_rt *rt);

/* ---- target process (spawn.c) -------------------------------------------- */
/* Block the signals the engine handles through a signalfd (INT, TERM, HUP,
 * USR1, CHLD, and TTOU for tcsetpgrp) and ignore SIGPIPE. Returns the signalfd
 * (CLOEXEC, nonblocking) or -errno. */
int ct_signals_setup(void);

struct ct_target {
  pid_t pid;  /* also the process group id */
  int tty_fd; /* terminal handed to the program (job control), or -1 */
  int exited;
  int status;           /* waitpid status once exited */
  int dump_sig;         /* --flight: SIGUSR1 asks for a dump instead of going to the target */
  uint32_t dumps_asked; /* SIGUSR1s read under dump_sig */
  uint32_t watch_kicks; /* SIGUSR1s of the live findings' watch (CT_FWATCH_SIGVAL) */
};

/* Start argv in its own process group with env extended by the CTP_*
 * variables; give it the terminal's foreground when stdin is a tty. Returns
 * 0, or -errno from exec (the child is reaped; t->status is set). */
int ct_target_spawn(struct ct_target *t, char **argv, const char *shm, const char *sock,
                    uint32_t stations);
/* Drain the signalfd: forward INT/TERM/HUP (and USR1 unless t->dump_sig:
 * then counted in t->dumps_asked) to the target's group; reap the
 * target (t->exited, t->status), or follow its stop when it holds the
 * terminal. Returns the number of signals forwarded. */
int ct_target_on_signals(struct ct_target *t, int sigfd);
/* Take the terminal back if we gave it away. */
void ct_target_release_tty(struct ct_target *t);
/* Exit status the engine mirrors: code, or 128 + signal. */
int ct_target_exit_code(const struct ct_target *t);

/* ---- trace writer (writer.c) --------------------------------------------- */
/* Big enough that a busy harvest makes few write(2) calls. */
#define CT_W_BUF (256u * 1024u)
struct ct_sink;
struct ct_ctw;
struct ct_writer {
  int fd;
  int err; /* first write error (errno), 0 if none */
  size_t len;
  char *buf;
  struct ct_sink *sink; /* a text writer (sink.c): flush pushes the bytes to its queue */
  /* A file writer: bytes of the file so far (set by the caller after an
   * append open), and the end of its last whole record (line or chunk), to
   * cut a torn tail back to (ct_writer_cut). */
  uint64_t pos, safe;
  int binary; /* records are written whole by ct_writer_put, never split */
};

/* Open path (a new file renamed over it, or append) for writing, through
 * ct_outfile_trace (src/common/outfile.h). Returns 0 or -errno. */
int ct_writer_open(struct ct_writer *w, const char *path, int append);
/* Write the buffer out (EINTR, short writes handled). Returns 0 or -errno;
 * after an error every later write is discarded and w->err stays set. */
int ct_writer_flush(struct ct_writer *w);
/* Write n bytes as one whole record (a binary chunk), after what is
 * buffered: the file never holds part of it but after a failed write,
 * which ct_writer_cut removes. 0 or -errno (then w->err is set). */
int ct_writer_put(struct ct_writer *w, const void *p, size_t n);
/* After a write error: truncate the file back to w->safe (the end of its
 * last whole record), then append mark (n bytes: the marker record saying
 * why). 0, or -errno when the marker could not be written (the file then
 * ends at w->safe). The error stays set. */
int ct_writer_cut(struct ct_writer *w, const void *mark, size_t n);
/* Flush, fsync-free close. Returns 0 or the first error (-errno). */
int ct_writer_close(struct ct_writer *w);
/* n bytes of room at the end of the buffer (flushing first if needed), to
 * format a line in place with the ct_put_* helpers and ct_w_commit; NULL once
 * w->err is set. n must be at most the buffer size (256 KiB). */
char *ct_w_reserve(struct ct_writer *w, size_t n);
/* The reserved room is used up to end. */
void ct_w_commit(struct ct_writer *w, const char *end);
/* In-place formatting: each writes at p and returns the end. A string literal
 * is copied with a constant size (no strlen, no call). */
#define CT_PUT_LIT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)
static inline char *ct_put_u64(char *p, uint64_t v) { /* decimal, at most 20 bytes */
  char tmp[20];
  size_t i = sizeof(tmp);
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  memcpy(p, tmp + i, sizeof(tmp) - i);
  return p + sizeof(tmp) - i;
}
static inline char *ct_put_hex(char *p, uint64_t v) { /* "0x%016x" with quotes, 20 bytes */
  static const char digits[] = "0123456789abcdef";
  p[0] = '"';
  p[1] = '0';
  p[2] = 'x';
  for (int i = 0; i < 16; i++)
    p[3 + i] = digits[(v >> (60 - 4 * i)) & 0xf];
  p[19] = '"';
  return p + 20;
}
/* Append to the buffer, flushing when full; no-ops once w->err is set. */
void ct_w_raw(struct ct_writer *w, const char *s, size_t n);
void ct_w_str(struct ct_writer *w, const char *s);            /* raw C string */
void ct_w_u64(struct ct_writer *w, uint64_t v);               /* decimal */
void ct_w_hex(struct ct_writer *w, uint64_t v);               /* "0x%016x" with quotes */
void ct_w_json(struct ct_writer *w, const char *s, size_t n); /* quoted, escaped */

/* ---- clock (clock.c) ------------------------------------------------------ */
/* Conversion of a v2 record's ticks to CLOCK_MONOTONIC ns: the slope of the
 * whole run (first pair to latest), anchored at the latest pair. */
struct ct_clock {
  uint32_t kind;   /* enum ctp_clock */
  uint64_t m0, t0; /* first (mono ns, ticks) pair, before the target starts */
  uint64_t ma, ta; /* latest pair: the anchor */
  uint64_t mult;   /* ns per tick, 32.32 fixed point */
};
/* The clock this machine's records should use: CTP_CLOCK_TSC only on x86-64
 * with constant_tsc and nonstop_tsc in /proc/cpuinfo, CNTVCT on AArch64,
 * else CTP_CLOCK_MONO. */
uint32_t ct_clock_pick(void);
/* Two pairs 10 ms apart (sleeps 10 ms unless kind is MONO). */
void ct_clock_init(struct ct_clock *c, uint32_t kind);
/* A new anchor pair; the slope from the first pair to it. */
void ct_clock_update(struct ct_clock *c);
/* Now, in the clock's ticks. */
uint64_t ct_clock_now(const struct ct_clock *c);
/* ticks -> CLOCK_MONOTONIC ns (any input: wraps, never traps). */
static inline uint64_t ct_clock_ns(const struct ct_clock *c, uint64_t t) {
  if (c->kind == CTP_CLOCK_MONO)
    return t;
  if (t >= c->ta)
    return c->ma + (uint64_t)(((unsigned __int128)(t - c->ta) * c->mult) >> 32);
  uint64_t d = (uint64_t)(((unsigned __int128)(c->ta - t) * c->mult) >> 32);
  return d < c->ma ? c->ma - d : 0;
}

/* ---- trace records (records.c): every line of the format, one place ------- */
/* An event, as the harvest copied it (ts already in ns): struct ct_ev_item,
 * common/ctrace.h (the binary decoder gives it back). */
/* A coroutine's static facts: struct ct_coro_item, common/ctrace.h. */
struct ct_station_end {
  uint64_t probe_id, events, harvested, lost;
  uint32_t station, gen; /* gen 0: a v1 station */
  int dead;
  int corrupt; /* its counters held what cannot be true: lost is not known */
};
struct ct_meta {
  char *const *argv;
  uint64_t engine_pid, target_pid;
  uint32_t stations, rings, ring_bytes, clock;
  int poll_ms;
};
struct ct_end {
  uint64_t ts, wall_ns;
  int wstatus, exit_code;
  uint64_t events, harvested, lost, stations_used, untraced, torn_retries;
  uint64_t engine_cpu_us, harvest_cpu_us, wake_late_max_us;
  int sched_rt, shm_broken, rings;
  /* v2 (rings only): records dropped in rings (also in lost), threads without
   * a ring, records of a past incarnation, records that failed the checks,
   * records skipped by a ring resynchronisation (all but ring_lost in lost). */
  uint64_t ring_lost, no_ring, stale, bad, gap, sink_stalls;
  uint64_t spilled; /* bytes of capture that went through the spill file */
  uint64_t corrupt; /* values of the shared memory that could not be true (left out) */
};
void ct_rec_meta(struct ct_writer *w, const struct ct_meta *m);
void ct_rec_process(struct ct_writer *w, pid_t pid, const char *event, uint64_t ts);
struct ct_module;
void ct_rec_module(struct ct_writer *w, pid_t pid, const struct ct_module *m);
/* One text site (sites.c): token site (CTP_SITE_TEXT | offset) of process pid
 * names file:line in function. */
void ct_rec_site(struct ct_writer *w, uint32_t pid, uint64_t site, const char *file, uint32_t line,
                 const char *function);
void ct_rec_coroutine(struct ct_writer *w, const struct ct_coro_item *c);
void ct_rec_event(struct ct_writer *w, const struct ct_ev_item *e);
void ct_rec_station_end(struct ct_writer *w, const struct ct_station_end *e);
void ct_rec_end(struct ct_writer *w, const struct ct_end *e);
/* The marker of a trace cut short by a write error (errno err): the last
 * record of the file, so readers say why it ends there. */
void ct_rec_cut(struct ct_writer *w, int err);
/* A flight dump's window: its first and last event, what was dropped before
 * it (bytes, chunks, the last dropped event's ts), its bytes, the trigger. */
struct ct_window {
  uint64_t start_ts, end_ts, dropped_ts, dropped_bytes, dropped_chunks, bytes;
  uint64_t snapshot, untracked; /* coroutines in its snapshot; alive but not kept there */
  uint64_t ts;                  /* when it was written (CLOCK_MONOTONIC ns, as events' ts) */
  const char *trigger;
};
/* The last record of a flight dump (docs/TRACE_FORMAT.md "Flight windows"). */
void ct_rec_window(struct ct_writer *w, const struct ct_window *win);

/* A coroutine alive at a flight window's start, as the events dropped
 * before the window left it (flight_snap.c keeps one per coroutine). */
struct ct_snap {
  struct ct_coro_item co;      /* its coroutine line's facts, when has_co */
  struct ct_ev_item cur;       /* its last create, resume or suspend, when has_cur */
  uint64_t last_ev;            /* its last event's ev */
  uint64_t woke_ts, woke_from; /* the first wake since cur (woke_ts 0: none) */
  uint8_t has_co, has_cur, fresh_co;
};
/* Its snapshot line (docs/TRACE_FORMAT.md "Flight windows"). */
void ct_rec_snapshot(struct ct_writer *w, const struct ct_snap *s);

/* ---- binary trace encoder (ctrace_enc.c) ------------------------------------ */
/* An encoder writing chunks to w (a file writer). 0 or -ENOMEM. */
int ct_ctw_open(struct ct_ctw **e, struct ct_writer *w);
/* The file header (a new or empty file). 0 or -errno. */
int ct_ctw_header(struct ct_ctw *e);
/* One event, a few bytes (the chunk is written when full). */
void ct_ctw_event(struct ct_ctw *e, const struct ct_ev_item *ev);
/* A coroutine (the fields of its line, ~20 bytes). */
void ct_ctw_coro(struct ct_ctw *e, const struct ct_coro_item *c);
/* JSONL text, split anywhere: each whole line becomes an entry. */
void ct_ctw_text(struct ct_ctw *e, const char *s, size_t n);
/* Write the chunk being filled. 0 or -errno. */
int ct_ctw_flush(struct ct_ctw *e);
void ct_ctw_free(struct ct_ctw *e);
/* Entries of the chunk being filled, not yet written. */
size_t ct_ctw_pending(const struct ct_ctw *e);
/* A whole chunk of the one line s (n bytes, no '\n') at out, which has room
 * for sizeof(struct ctr_chunk_hdr) + 11 + n bytes. Returns its size. */
size_t ct_ctw_frame_line(const char *s, size_t n, uint8_t *out);

/* Where the encoder's chunks go instead of its writer (the flight recorder):
 * chunk gets each whole chunk (header and payload, n bytes; ts0/ts1 its
 * first and last event's ts, 0 when it has none), line each JSONL record
 * line as it becomes an entry. Both run on the encoder's thread. */
struct ct_ctw_to {
  void (*chunk)(void *ctx, const uint8_t *p, size_t n, uint64_t ts0, uint64_t ts1);
  void (*line)(void *ctx, const char *s, size_t n);
  void *ctx;
};
/* Send e's chunks to *to (copied) from now on; the writer gets none. */
void ct_ctw_redirect(struct ct_ctw *e, const struct ct_ctw_to *to);

/* ---- flight recorder (flight.c) --------------------------------------------- */
/* A dump's outcome, for the engine's one line (the CLI's to print). */
struct ct_flight_note {
  char path[4200];
  char trigger[64];
  int err;     /* 0, or the errno of a dump not written (EDQUOT: --flight-max reached) */
  uint64_t ts; /* when it was written (CLOCK_MONOTONIC ns) */
  uint64_t start_ts, end_ts, bytes, dropped_bytes;
};
#define CT_FLIGHT_NOTES 16
#define CT_FLIGHT_MAX_DEFAULT 8u
/* The window: whole chunks in memory, oldest first, at most max_bytes (their
 * bytes and bookkeeping); owned and used by the formatter thread but for
 * the notes (under mu), which the harvest thread takes. */
#define CT_FLIGHT_MARKS 16 /* dumps the live view marks (the newest) */
/* One chunk of the window, as the encoder framed it. */
struct fl_chunk {
  struct fl_chunk *next;
  uint64_t seq;      /* 1, 2, ... in the order they joined */
  uint64_t ts0, ts1; /* its first and last event's ts (0: none) */
  size_t pin_end;    /* f->npin once its lines were pinned (theirs end there) */
  uint32_t npin_end; /* f->npinned then */
  size_t len, cap;   /* bytes of data, and room for them */
  uint8_t data[];
};
struct ct_flight {
  const char *out;                /* OUT: dumps are OUT, OUT.1, OUT.2, ... (the caller's string) */
  uint64_t max_bytes, max_age_ns; /* max_age_ns: 0, or drop chunks this far behind the newest */
  uint32_t max_dumps, ndumps;
  struct fl_chunk *head, *tail; /* the list and its chunks' seq: changed under mu */
  uint64_t next_seq;            /* the seq of the next chunk to join (the first is 1) */
  uint64_t bytes;               /* the window's cost */
  uint64_t total_bytes;         /* chunk bytes ever taken */
  uint64_t dropped_bytes, dropped_chunks, dropped_ts; /* before the window */
  /* Meta, process and module lines as entries, in order: those of dropped
   * chunks (pin_out bytes, npin_out entries) are a dump's first chunk. */
  uint8_t *pin;
  size_t npin, cappin, pin_out;
  uint32_t npinned, npin_out;
  int pin_full;
  struct ct_fsnap *snap; /* the state at the window's start */
  /* Each chunk the window takes also goes here (the live findings), or NULL. */
  void (*watch)(void *ctx, const uint8_t *p, size_t n);
  void *watch_ctx;
  pthread_mutex_t mu;
  struct ct_flight_note notes[CT_FLIGHT_NOTES];
  size_t nnotes;
  _Atomic size_t noted; /* nnotes, read without the lock: a cheap look */
  /* The newest dumps (nmarks ever, the last CT_FLIGHT_MARKS kept; under
   * mu): the live view's marks. */
  struct ct_flight_note marks[CT_FLIGHT_MARKS];
  uint64_t nmarks;
};
/* An empty window of max_bytes for dumps named after out (kept by the
 * caller), at most max_dumps of them. 0 or -errno. */
int ct_flight_init(struct ct_flight *f, const char *out, uint64_t max_bytes, uint32_t max_dumps);
/* Free the window (f is reusable after ct_flight_init). */
void ct_flight_free(struct ct_flight *f);
/* struct ct_ctw_to's callbacks, ctx the struct ct_flight: a chunk joins the
 * window (the oldest leave to make room), a meta/process/module line is
 * kept for every dump. */
void ct_flight_chunk(void *ctx, const uint8_t *p, size_t n, uint64_t ts0, uint64_t ts1);
void ct_flight_line(void *ctx, const char *s, size_t n);
/* Write the window as a self-contained binary trace (file header, the pinned
 * lines, the window's chunks, the window record naming trigger) to the next
 * dump name, through ct_outfile_open; a note records the outcome either way.
 * On the formatter thread, after the encoder's flush. 0 or -errno
 * (-EDQUOT past max_dumps). */
int ct_flight_dump(struct ct_flight *f, const char *trigger);
/* Move up to max notes of dumps done into out (the harvest thread's, to
 * print). Returns how many. */
size_t ct_flight_notes(struct ct_flight *f, struct ct_flight_note *out, size_t max);
/* The window as the live view follows it (html/live.h's struct
 * ct_live_source, ctx f): read on the live view's thread, under f->mu, so
 * the formatter only ever waits for one chunk's copy (flight_live.c). */
struct ct_live_source;
void ct_flight_live_source(struct ct_flight *f, struct ct_live_source *src);

/* ---- the flight window's snapshot (flight_snap.c) -------------------------- */
/* The coroutines alive before the window: each one's state, kept up to date
 * from the chunks the window drops. At most CT_FSNAP_MAX coroutines alive at
 * once (one whose coroutine line finds no room is counted, untracked). The
 * formatter thread's, under the window's mu (the live view emits it too). */
#define CT_FSNAP_MAX 65536u
struct ct_fsnap;
/* An empty table. 0 or -ENOMEM. */
int ct_fsnap_new(struct ct_fsnap **out);
void ct_fsnap_free(struct ct_fsnap *t);
/* The entries of a chunk leaving the window (header and payload, n bytes,
 * as the encoder framed it): their coroutines' states move on; a destroy
 * drops one. A chunk that does not decode is applied up to its fault. */
void ct_fsnap_apply(struct ct_fsnap *t, const uint8_t *chunk, size_t n);
/* The table as snapshot lines, in chunks of at most 64 KiB of payload
 * handed to put (payload, bytes, entries; non-zero stops and is returned).
 * *count, *untracked: the lines, the coroutines not kept. */
int ct_fsnap_emit(struct ct_fsnap *t, int (*put)(void *ctx, const uint8_t *p, size_t n, uint32_t k),
                  void *ctx, uint64_t *count, uint64_t *untracked);

/* ---- the flight recorder's live findings (flight_watch.c) ------------------ */
/* --dump-on's list (exit, lost_wakeup, deadlock, blocker, starvation, any,
 * comma-separated) as finding kinds (analysis/watch.h bits) and exit.
 * 0 or -EINVAL. */
int ct_fwatch_parse(const char *list, unsigned *mask, int *on_exit);
/* The sigqueue value of the SIGUSR1 the watch sends the engine itself: the
 * harvest loop then takes the kinds found (not a SIGUSR1 dump). */
#define CT_FWATCH_SIGVAL 0x43545746
struct ct_fwatch;
/* A watch thread (normal priority: call it before the harvest loop takes a
 * real-time one) for the kinds in mask, with the report's thresholds (ns);
 * window_bytes: the window's size (a kind dumps again only once the window
 * has turned over). 0 or -errno. */
int ct_fwatch_start(struct ct_fwatch **out, unsigned mask, uint64_t stuck_ns, uint64_t runnable_ns,
                    uint64_t blocker_ns, uint64_t window_bytes);
/* A chunk the window took (the formatter thread, ctx the watch): copied for
 * the watch thread, or skipped when it is 64 chunks behind (never waits). */
void ct_fwatch_chunk(void *ctx, const uint8_t *p, size_t n);
/* The kinds found since the last take (bits), for the harvest thread. */
unsigned ct_fwatch_take(struct ct_fwatch *fw);
/* Stop and free the watch (NULL: nothing). Returns the chunks it skipped. */
uint64_t ct_fwatch_stop(struct ct_fwatch *fw);

/* ---- formatter thread (sink.c) ---------------------------------------------- */
enum { CT_IT_EVENT, CT_IT_CORO, CT_IT_TEXT, CT_IT_FLUSH, CT_IT_SYNC, CT_IT_BLOCK, CT_IT_DUMP };
/* A block of bulk bytes (the rings' raw records, rings.c) for the block
 * handler: in memory (p), or spilled to the spill file at off (p NULL). */
struct ct_blk {
  char *p;
  uint64_t off;
};
struct ct_item {
  uint32_t type, len; /* len: bytes of text, or the sync number */
  union {
    struct ct_ev_item ev;
    struct ct_coro_item coro;
    struct ct_blk blk;
    char text[120];
  } u;
};
_Static_assert(sizeof(struct ct_item) == 128, "one queue entry: two cache lines");

/* Bytes of one block: 8192 ring records. */
#define CT_SINK_BLOCK (256u * 1024u)
/* The block handler, on the formatter thread: the bytes of one block, in the
 * order blocks were pushed, interleaved in order with the other items. When
 * keep is set it may return 1 to keep pointing into data until its next
 * ct_sink_release_held; else (0) the block is reused once it returns. */
typedef int ct_sink_block_fn(void *ctx, const char *data, size_t len, int keep);
/* Blocks the handler may keep at most (fewer with a small budget: half). */
#define CT_SINK_HELD_MAX 32u

/* The harvest thread (the one producer) pushes items; the formatter thread
 * owns the trace file (fw). tw is the producer's text writer: records.c
 * lines written to it reach the file in order with the items. Blocks are the
 * binary capture: the producer fills them at memory speed, the formatter
 * turns them into lines when it gets to them; past the memory budget they go
 * to an unlinked spill file next to the trace, so a formatter that lags
 * never makes the producer wait (docs/ENGINE.md "Binary capture"). */
struct ct_sink {
  struct ct_writer fw, tw;
  /* The formatter's: with a binary trace, its encoder; the --also-jsonl
   * copy (jw, fd -1 when none). */
  struct ct_ctw *enc;
  struct ct_writer jw;
  int cut; /* the trace was cut back after a write error (ct_writer_cut) */
  struct ct_item *q;
  _Atomic uint64_t head, tail; /* consumed by the formatter, published by the producer */
  uint64_t ptail, phead_cache; /* the producer's own */
  uint64_t woke_at;            /* ptail when the producer last woke the formatter */
  uint32_t cap;                /* entries, a power of two */
  _Atomic int cons_sleep, prod_wait, stop, err;
  uint32_t sync_seq, synced;
  uint64_t stalls; /* times the producer waited for room */
  pthread_mutex_t mu;
  pthread_cond_t cv_cons, cv_prod;
  pthread_t thread;
  int running;
  /* Blocks. The producer's: the block being filled (cur, cur_len; stage is
   * the one it fills when the memory budget is spent, written to the spill
   * file on push), blocks allocated, spill file and its end. Under mu: the
   * free blocks. The formatter's: scratch, to read a spilled block back. */
  ct_sink_block_fn *on_block;
  void *block_ctx;
  char *cur, *stage, *scratch;
  size_t cur_len;
  char **free_blk;
  uint32_t nfree, nblk, max_blk;
  char *region; /* producer: the budget's blocks, reserved at the first (sink.c) */
  size_t region_len;
  uint8_t *popd;                /* producer: per block of the region, 1 once its pages are in */
  char *held[CT_SINK_HELD_MAX]; /* formatter: blocks the handler kept */
  uint32_t nheld;
  int spill_fd;       /* -1 until the first spill */
  int spill_broken;   /* the spill file failed: wait for memory instead */
  uint64_t spill_end; /* producer: bytes written to the spill file, in all */
  /* Slots of CT_SINK_BLOCK bytes in the spill file: in use (the producer's
   * count), and under mu, the ones the formatter has read back (reused). */
  uint32_t spill_slots, spill_cap, nspill_free;
  uint32_t *spill_free;
  uint64_t unkicked;        /* producer: block bytes queued since the formatter was woken */
  char *dir;                /* the trace's directory, for the spill file */
  struct ct_flight *flight; /* --flight: the encoder's chunks go to its window (the caller's) */
};
/* Open the trace (truncate or append) in format fmt (enum ct_format; a
 * binary trace is only appended to a binary trace, -EINVAL otherwise), and
 * the JSONL copy when jsonl_copy is not NULL, and start the formatter, with
 * a queue of cap entries (a power of two; 0: 32768, 4 MiB) and capture
 * blocks of at most mem_mib MiB in memory (0: CT_CAPTURE_MIB_DEFAULT).
 * 0 or -errno. */
int ct_sink_open(struct ct_sink *s, const char *path, int append, int fmt, const char *jsonl_copy,
                 uint32_t cap, uint32_t mem_mib);
/* The same for the flight recorder: no file; the binary trace's chunks go to
 * f's window (f stays the caller's and must outlive the sink), no spill
 * file (the harvest waits for the formatter past mem_mib). 0 or -errno. */
int ct_sink_open_flight(struct ct_sink *s, struct ct_flight *f, uint32_t mem_mib);
/* A flight sink: write the window as it is once the items queued before
 * now are in it (ct_flight_dump, on the formatter thread; trigger, at most
 * 119 bytes, names why). Never waits for the dump. */
void ct_sink_dump(struct ct_sink *s, const char *trigger);
/* The formatter thread's output of one event / coroutine line, in the
 * trace's format (and to the JSONL copy). Inline: once per event. */
static inline void ct_sink_out_event(struct ct_sink *s, const struct ct_ev_item *e) {
  if (s->enc)
    ct_ctw_event(s->enc, e);
  else
    ct_rec_event(&s->fw, e);
  if (s->jw.buf)
    ct_rec_event(&s->jw, e);
}
void ct_sink_out_coro(struct ct_sink *s, const struct ct_coro_item *c);
/* Queue one event / coroutine line / text (waits while the queue is full). */
void ct_sink_event(struct ct_sink *s, const struct ct_ev_item *e);
void ct_sink_coro(struct ct_sink *s, const struct ct_coro_item *c);
void ct_sink_text(struct ct_sink *s, const char *p, size_t n);
/* Publish what was queued (end of a pass); the formatter is woken once a
 * batch is waiting, else it takes the items at its next wake-up: the next
 * ct_sink_flush or ct_sink_sync (it sleeps without a timeout while it has
 * nothing to write; the harvest loop flushes at least every CT_FLUSH_NS
 * while events flow, and before it sleeps). */
void ct_sink_kick(struct ct_sink *s);
/* Publish what was queued and wake the formatter now if it sleeps. */
void ct_sink_wake(struct ct_sink *s);
/* Publish tw's text too; the formatter writes everything to the file now. */
void ct_sink_flush(struct ct_sink *s);
/* Set the block handler (before the first block; ctx is the caller's). */
void ct_sink_on_block(struct ct_sink *s, ct_sink_block_fn *fn, void *ctx);
/* Formatter thread: the blocks the handler kept go back to the producer. */
void ct_sink_release_held(struct ct_sink *s);
/* Room for at least `min` bytes (<= CT_SINK_BLOCK) at the end of the block
 * being filled, pushing the current block first when it has less; *avail
 * gets the room there is. NULL only when no block can be had (ENOMEM and no
 * spill file): the caller keeps its data for later. */
char *ct_sink_room(struct ct_sink *s, size_t min, size_t *avail);
/* n bytes of the room returned by ct_sink_room are filled. */
void ct_sink_fill(struct ct_sink *s, size_t n);
/* Queue the block being filled (if any) and wake the formatter. */
void ct_sink_push_block(struct ct_sink *s);
/* Everything queued so far is written to the file. 0 or -errno. */
int ct_sink_sync(struct ct_sink *s);
/* First write error (errno) of the trace, 0 if none. */
int ct_sink_err(const struct ct_sink *s);
/* Write everything, stop the formatter, close the file: 0 or -errno. Safe on
 * a zeroed sink. */
int ct_sink_close(struct ct_sink *s);

/* ---- processes and modules (modules.c) ----------------------------------- */
struct ct_module {
  uint64_t start, end, offset;
  char *path;
};

struct ct_proc {
  pid_t pid;
  uint64_t maps_ts; /* CLOCK_MONOTONIC ns of the last /proc/PID/maps read */
  struct ct_module *mods;
  size_t nmods, capmods;
};

struct ct_procs {
  struct ct_proc *v;
  size_t n, cap;
};

/* The entry of pid, created (empty, maps not read) if new. NULL on ENOMEM. */
struct ct_proc *ct_procs_get(struct ct_procs *ps, pid_t pid);
/* Re-read pid's executable file mappings and write a module line for each
 * one not written before. Errors (process gone) leave the list as it was. */
void ct_proc_read_maps(struct ct_proc *p, struct ct_writer *w);
/* 1 when addr falls in a known module of p. */
int ct_proc_covers(const struct ct_proc *p, uint64_t addr);
/* Free every entry and its module paths; ps is empty afterwards. */
void ct_procs_free(struct ct_procs *ps);

/* ---- harvest (harvest.c: v1 stations; rings.c: v2 rings) ----------------- */
struct ct_station_state {
  uint64_t last_seq[CTP_SLOTS];
  uint64_t probe_id;
  uint64_t harvested;
  uint64_t events;  /* highest event index seen + 1; final: events the probe wrote */
  uint64_t next_ev; /* index after the last event line written (v2: of this incarnation) */
  uint64_t room;    /* last value stored in the station's harvested_ev */
  uint64_t stale;   /* v2: records of a past incarnation */
  uint64_t last_ts; /* v2: ts of the incarnation's last event line */
  uint64_t dropped; /* v2: the station's v2_lost when last read */
  uint32_t pid;
  uint32_t gen;      /* v2: the incarnation whose records we attribute */
  uint8_t ext;       /* CTP_STF_EXT seen */
  uint8_t coro_done; /* coroutine line written */
  uint8_t retired;   /* dead and fully harvested: skipped by live scans */
  uint8_t dead;
  uint8_t v2;        /* CTP_STF_RINGS seen: its events are in rings, not in slots */
  uint8_t live;      /* v2: an incarnation was created (coroutine line written) */
  uint8_t destroyed; /* v2: that incarnation's destroy was harvested */
  uint8_t queued;    /* v2: pushed on the free-station queue, not created again since */
  uint8_t listed;    /* in the v1 scan list */
  uint8_t corrupt;   /* its memory held what cannot be true (harvest thread's finding) */
  uint8_t c_corrupt; /* the same, found by the formatter (v2 counters) */
};

/* The engine's own view of one ring (never re-read from the file). */
struct ct_ring_state {
  uint64_t tail; /* records consumed */
  uint64_t lost; /* the ring's lost counter, last read */
  /* The sites (of pid) its records last named, modules covered: a few, as
   * a loop's records name a few sites in turn (suspend, wake, ...). */
#define CT_RING_SITES 4
  uint64_t sites[CT_RING_SITES];
  uint64_t last_site; /* of sites[], the one the last record named (watch) */
  uint32_t sites_pid, next_site;
  uint8_t queued;    /* pushed on the free-ring queue, not owned since */
  uint8_t orphan;    /* its owner process is gone (connection EOF): CLOSED for us */
  uint8_t corrupt;   /* its header held what cannot be true: its lost count is left out */
  uint64_t lost_sum; /* what its lost counter added to ring_lost */
};

/* A record copied out of a ring in this pass. */
struct ct_rrec {
  struct ctp_rec r;
  uint32_t tid; /* ties of ts keep capture order (sort_pass) */
};

/* Time-ordered runs of one pass merged from the capture blocks in place. */
#define CT_RUNS_MAX 64u
struct ct_harvest {
  struct ctp_header *hdr;
  void *base;
  uint32_t n;    /* stations in the file */
  uint32_t used; /* highest min(allocated_count, n) seen */
  struct ct_station_state *st;
  uint64_t trim_mark; /* used + incarnations at the last trim of the station pages */
  uint64_t trim_ns;   /* CLOCK_MONOTONIC of that trim */
  uint32_t *v1list;   /* stations not known to be v2, scanned for slots */
  uint32_t nv1, capv1;
  struct ct_procs *procs;
  struct ct_sink *sink;
  struct ct_writer *w; /* the sink's text writer */
  uint64_t harvested, live_lost, torn;
  uint64_t late;     /* stable events older than one already written: lost */
  uint64_t peak;     /* last scan: most new event indexes on one station (ring: scaled to 8) */
  int progress;      /* last scan: some station's harvested_ev, or a ring's tail, moved */
  int lossless;      /* --lossless: publish harvested_ev, wake waiters */
  uint64_t first_ts; /* last scan: oldest timestamp written (UINT64_MAX: none) */
  int v1_seen;       /* some v1 slot event was harvested (the nap stays v1's) */
  /* v2 (CTP_MODE_RINGS), from our own copies of the layout. */
  int rings;
  uint32_t nrings, cap; /* rings, records per ring */
  uint64_t ring_size;
  char *ring_base;
  struct ctp_queue *sq, *rq;
  uint64_t sq_tail, rq_tail;
  struct ct_ring_state *rs;
  struct ct_clock *clock;
  struct ct_rrec *batch, *merge; /* merge: sort_pass's other half */
  size_t nbatch, capbatch, capmerge;
  /* The pass so far as time-ordered runs in the blocks the sink let us keep
   * (while nbatch is 0; past CT_RUNS_MAX runs or a block not to keep, they
   * are copied into the batch). kept: the last block holds some of them. */
  struct ct_run {
    const struct ctp_rec *p;
    uint32_t n, tid;
  } runs[CT_RUNS_MAX];
  unsigned nruns;
  uint32_t *rel_now, *rel_prev; /* destroyed in this pass / the previous one */
  size_t nrel_now, nrel_prev, caprel_now, caprel_prev;
  uint32_t rings_owned; /* last scan: rings in state OWNED */
  uint32_t populated;   /* rings [0, populated) are mapped in (ct_rings_populate) */
  int final;            /* the last pass: nothing held back */
  uint64_t stale, bad, gap, ring_lost, released, recycled;
  uint32_t incarnations;     /* v2 coroutines (coroutine lines) */
  _Atomic uint32_t v2_alive; /* v2 incarnations whose destroy was not written yet (formatter) */
  uint32_t v2_stations;      /* after ct_harvest_finish: stations that were v2 */
  uint64_t captured;         /* v2 records copied into the capture (harvest thread) */
  uint64_t creates;          /* create records among them (the station trim's count) */
  uint64_t destroys, destroys_seen; /* destroy records copied; as of the last pass */
  int release_due; /* the last pass copied destroys: wake the formatter at this one too */
  int pass_open;   /* the last pass captured records: end the next one too */
  /* The formatter thread's own (rings_format.c, the consumer half; read by the harvest
   * thread only after ct_sink_sync): the batch, rel_*, sq_tail, the v2
   * fields of st[], stale, bad, incarnations, released, and these. */
  uint64_t v2_harvested;  /* event lines written from rings */
  uint32_t c_used;        /* allocated stations, as far as the formatter knows */
  struct ct_clock cclock; /* the clock of the pass being written */
  /* Values of the shared memory that cannot be true (docs/ENGINE.md "Hostile
   * target"): how many were found (either thread), and the largest count any
   * counter can truthfully hold by now (ct_count_sane). */
  _Atomic uint64_t corrupt;
  uint64_t t0;            /* CLOCK_MONOTONIC at init */
  uint64_t sane;          /* updated each scan (relaxed atomic: the formatter reads it) */
  struct ctp_header hdr0; /* the header as the engine wrote it */
};

/* Most events per ns that all of a program's threads together can claim or
 * drop: far beyond any machine (the probe writes one per ~10 ns and thread),
 * so a count above it is a scribble, never a busy run. */
#define CT_EVENTS_PER_NS 16u
/* 1 when v can be a true count of events by now; counters the target wrote
 * over (random 64-bit words) almost never are. */
static inline int ct_count_sane(const struct ct_harvest *h, uint64_t v) {
  return v <= __atomic_load_n(&h->sane, __ATOMIC_RELAXED);
}
/* a + b, saturating: totals of counts read from the target never wrap. */
static inline uint64_t ct_sat_add(uint64_t a, uint64_t b) {
  return a + b < a ? UINT64_MAX : a + b;
}
/* The shared memory held what cannot be true: counted, once per finding. */
static inline void ct_harvest_corrupt(struct ct_harvest *h) {
  atomic_fetch_add_explicit(&h->corrupt, 1, memory_order_relaxed);
}

/* Prepare to harvest the n stations (and, when the header offers v2, the
 * rings) of the mapping at base, of map_len bytes. h owns its per-station
 * state (ct_harvest_free); base, procs, sink and clock stay the caller's and
 * must outlive h. Returns 0, -ENOMEM, or -EINVAL when the v2 layout in the
 * header does not fit map_len. */
int ct_harvest_init(struct ct_harvest *h, void *base, size_t map_len, uint32_t n,
                    struct ct_procs *procs, struct ct_sink *sink, struct ct_clock *clock);
enum ct_scan {
  CT_SCAN_QUICK, /* live: skip a station whose ev_claimed shows nothing new */
  CT_SCAN_SLOTS, /* the re-scan of the sleep protocol: read every live slot */
  CT_SCAN_FULL   /* the final pass: every slot of every station, retired too */
};
/* One pass over the used stations and the rings; queues event lines.
 * Returns the number of stable events found. */
uint64_t ct_harvest_scan(struct ct_harvest *h, enum ct_scan mode);
/* After the final scan: compute per-station totals and write station_end
 * lines. */
void ct_harvest_finish(struct ct_harvest *h, uint64_t *events, uint64_t *lost);
/* Lossless writers wait for room: tell them there is some (bump
 * harvest_epoch, wake the waiters). Either thread. */
void ct_harvest_wake_waiters(struct ct_harvest *h);
/* After ct_harvest_finish: 1 when the header still holds what the engine
 * wrote (magic, layout, mode, zero reserved bytes) and the v2 queues' and
 * rings' padding is still zero; else the target wrote over them, and counts
 * read there (overflow, no_ring) mean nothing. Counts a finding. */
int ct_harvest_header_ok(struct ct_harvest *h);
/* Coroutines alive now, for the status line: v1 stations not dead, v2
 * incarnations harvested whose destroy was not (yet) harvested. Costs the v1
 * scan list, not the used stations: at 10^6 v2 coroutines a walk of the
 * station table every CT_STATUS_MS cost more than the whole harvest. */
uint32_t ct_harvest_live(const struct ct_harvest *h);
/* Free the per-station state; idempotent. */
void ct_harvest_free(struct ct_harvest *h);

/* Internal to harvest.c and rings.c. */
int ct_rings_init(struct ct_harvest *h, size_t map_len);
uint64_t ct_rings_scan(struct ct_harvest *h);
/* Maps in (MADV_POPULATE_WRITE) the rings up to POPULATE_AHEAD beyond the
 * first fresh ones, those not yet (harvest thread; fresh <= nrings). */
void ct_rings_populate(struct ct_harvest *h, uint32_t fresh);
/* Station i's v2 totals for its station_end line; adds to *events, *lost. */
void ct_rings_station_end(struct ct_harvest *h, uint32_t i, uint64_t *events, uint64_t *lost);
void ct_rings_free(struct ct_harvest *h);
/* After the final pass: 1 when the queues' and rings' padding is still zero;
 * a ring whose padding is not has its lost count taken back out of
 * ring_lost. Counts each finding. */
int ct_rings_clean(struct ct_harvest *h);
/* 1 when the bytes of station i that no writer touches are still zero. */
int ct_station_clean(const struct ct_harvest *h, uint32_t i);
/* Process pid detached (its connection reached EOF): its rings still OWNED
 * (a main thread runs no key destructors, a killed process none at all) are
 * drained and freed as if CLOSED (docs/PROTOCOL.md "v2"). */
void ct_rings_owner_gone(struct ct_harvest *h, uint32_t pid);
/* Make sure the module holding `site` of pid has been written (harvest.c). */
void ct_harvest_cover_site(struct ct_harvest *h, uint32_t pid, uint64_t site, uint64_t ts);

/* ---- layout (rings.c) ----------------------------------------------------- */
/* Size of the file for these options, and with v2 the header's v2 fields
 * (hdr may be NULL to only size it). */
uint64_t ct_layout(const struct ct_opts *o, struct ctp_header *hdr);

/* ---- sites.c: the text-site area ----------------------------------------- */
/* The engine's view of the area: where it is (from the engine's own layout,
 * never from the file) and how far it has been read. */
struct ct_sites {
  const char *area;
  struct ctp_header *hdr;
  uint32_t bytes;
  uint32_t done; /* records below this offset are written as lines */
  int bad;       /* a malformed record stopped the reading */
};
void ct_sites_init(struct ct_sites *s, void *map, uint64_t off, uint32_t bytes);
/* Writes a `site` line to w for each record published since the last call;
 * returns how many. Reads the shared file: call it under the SIGBUS guard. */
int ct_sites_scan(struct ct_sites *s, struct ct_writer *w);

/* ---- SIGBUS guard (guard.c) ---------------------------------------------- */
/* Catch SIGBUS raised by reads of [base, base+len) (the shared file was
 * truncated): the mapping is replaced by zero pages and the engine carries on;
 * ct_guard_tripped() tells it to stop harvesting. Returns 0 or -errno. */
int ct_guard_install(void *base, size_t len);
/* 1 once the guard has replaced the mapping. */
int ct_guard_tripped(void);

/* ---- status (status.c) --------------------------------------------------- */
struct ct_status {
  int live; /* live status line enabled */
  int tty;  /* stderr is a terminal: redraw in place */
  uint64_t last_ns, last_harvested;
  int shown; /* a status line is on screen */
};

/* enabled: draw the live line (stderr a terminal, or --status). */
void ct_status_init(struct ct_status *s, int enabled);
/* 1 when the status line is shown and CT_STATUS_MS have passed. */
int ct_status_due(const struct ct_status *s, uint64_t now_ns);
/* Redraw the status line. */
void ct_status_tick(struct ct_status *s, uint64_t now_ns, const struct ct_harvest *h, uint32_t live,
                    uint32_t untraced);
/* Erase the status line. */
void ct_status_clear(struct ct_status *s);
/* The exit summary (stderr). */
void ct_status_summary(const struct ct_harvest *h, uint64_t events, uint64_t lost,
                       uint32_t untraced, double secs, const char *trace, const char *exit_desc);

/* ---- scheduling (sched.c) ------------------------------------------------- */
/* Request a time slice of slice_ns for the calling thread (best effort, see
 * sched.c): its wake-ups then preempt a busy CPU's current task. Call it after
 * the target is forked (children would inherit it). Returns 0 or -errno. */
int ct_sched_short_slice(uint64_t slice_ns);

/* ---- scheduling (sched.c) ------------------------------------------------- */
/* Give the calling thread SCHED_FIFO priority 1 (reset on fork: nothing it
 * forks or starts later inherits it). Needs CAP_SYS_NICE or RLIMIT_RTPRIO >=
 * 1. Returns 0 or -errno (EPERM). Only the harvest loop: the formatter and
 * every other thread stay SCHED_OTHER. */
int ct_sched_realtime(void);

/* ---- helpers -------------------------------------------------------------- */
/* clk's current time in ns (modules.c). */
uint64_t ct_now_ns(clockid_t clk);

#endif /* CT_ENGINE_H */
