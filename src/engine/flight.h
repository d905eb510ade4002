/* flight.h - the flight recorder: window, dumps, snapshot, live findings (flight*.c). */
#ifndef CT_ENGINE_FLIGHT_H
#define CT_ENGINE_FLIGHT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "engine/flight_ring.h"
#include "format/ctrace.h" /* struct ctr_chunk_hdr */
#include "format/ctw.h"    /* struct ct_ctw_chunk */

/* A dump's outcome, for the engine's one line (the CLI's to print). */
struct ct_flight_note {
  char path[4200];
  char trigger[64];
  /* 0, or the errno of a dump not written (EDQUOT: --flight-max reached) or
   * cut short (the file then keeps what was written: written bytes) */
  int err;
  uint64_t ts; /* when it was written (CLOCK_MONOTONIC ns) */
  uint64_t start_ts, end_ts, bytes, dropped_bytes, written;
  uint32_t removed; /* older dumps this one's room removed (the disk budget) */
};
#define CT_FLIGHT_NOTES 16
/* The dumps kept on disk by default: the newest within this many windows
 * (--flight-disk), their number not capped (--flight-max). */
#define CT_FLIGHT_DISK_WINDOWS 8u
/* The dumps the budget tracks at most (the oldest beyond it is removed). */
#define CT_FLIGHT_KEPT 256u
/* The window: whole chunks in memory, oldest first, at most max_bytes (their
 * bytes and bookkeeping); owned and used by the formatter thread but for
 * the notes (under mu), which the harvest thread takes. */
#define CT_FLIGHT_MARKS 16 /* dumps the live view marks (the newest) */
/* One chunk of the window, as the encoder framed it. */
struct fl_chunk {
  struct fl_chunk *next;
  uint64_t seq;      /* 1, 2, ... in the order they joined */
  uint64_t ts0, ts1; /* its first and last event's ts (0: none) */
  uint64_t lost;     /* the engine's losses when it joined (lost_now) */
  size_t pin_end;    /* f->pin.n once its lines were pinned (theirs end there) */
  uint32_t npin_end; /* f->npinned then */
  uint32_t rebinds;  /* its struct ct_ctw_chunk's (ct_fsnap_apply) */
  size_t len, cap;   /* bytes of data, and room for them */
  uint8_t data[];
};
struct ct_flight {
  const char *out;                /* OUT: dumps are OUT, OUT.1, OUT.2, ... (the caller's string) */
  uint64_t max_bytes, max_age_ns; /* max_age_ns: 0, or drop chunks this far behind the newest */
  uint32_t max_dumps;   /* --flight-max: dumps written at most, a crash's aside (0: no cap) */
  uint32_t ndumps;      /* dumps written (the next is OUT.ndumps): the formatter's */
  uint64_t disk_budget; /* the kept dumps' bytes at most, the newest always kept */
  /* The dumps on disk, oldest first (a ring of their numbers and sizes). */
  uint32_t kept_seq[CT_FLIGHT_KEPT];
  uint64_t kept_bytes[CT_FLIGHT_KEPT], kept_total;
  uint32_t kept_first, nkept;
  int crashed; /* the crash dump, which --flight-max does not count, was asked */
  /* Under mu, for the harvest thread: refused (past --flight-max), removed
   * (the disk budget), failed (cut short). */
  uint64_t refused, removed, failed;
  struct fl_chunk *head, *tail; /* the list and its chunks' seq: changed under mu */
  struct ct_fring ring;         /* the chunks' memory (but a long line's: malloc's) */
  uint64_t next_seq;            /* the seq of the next chunk to join (the first is 1) */
  uint64_t bytes;               /* the window's cost */
  uint64_t total_bytes;         /* chunk bytes ever taken */
  uint64_t dropped_bytes, dropped_chunks, dropped_ts; /* before the window */
  uint64_t trim_at;      /* dropped_bytes at which the formatter next gives back free pages */
  uint64_t dropped_lost; /* the engine's losses when the last dropped chunk joined */
  /* The engine's losses so far (ct_flight_lost; the harvest thread's count,
   * a statistic: relaxed), for the chunks and the dumps (issue #33 item 8). */
  _Atomic uint64_t lost_now;
  /* Meta, process and module lines as entries, in order: those of dropped
   * chunks (pin_out bytes, npin_out entries) are a dump's first chunk. */
  struct ct_buf pin;
  size_t pin_out;
  uint32_t npinned, npin_out;
  int pin_full;
  struct ct_fsnap *snap; /* the state at the window's start */
  /* The tag of the chunks we frame (pinned lines, snapshot): CHK3, or CHK4
   * once a chunk of the encoder's came so (a run that packs: a reader makes
   * its stream state at the first CHK4 chunk, and the snapshot seeds it).
   * Under mu. */
  uint32_t tag;
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
 * caller): at most max_dumps of them (0: no cap) but a crash's, the newest
 * kept within disk_budget bytes (0: CT_FLIGHT_DISK_WINDOWS windows). 0 or -errno. */
int ct_flight_init(struct ct_flight *f, const char *out, uint64_t max_bytes, uint32_t max_dumps,
                   uint64_t disk_budget);
/* Free the window (f is reusable after ct_flight_init). */
void ct_flight_free(struct ct_flight *f);
/* struct ct_ctw_to's callbacks, ctx the struct ct_flight: a chunk joins the
 * window (the oldest leave to make room), a meta/process/module line is
 * kept for every dump. */
void ct_flight_chunk(void *ctx, const uint8_t *p, size_t n, const struct ct_ctw_chunk *ci);
void ct_flight_line(void *ctx, const char *s, size_t n);
/* A window's start, as a dump and the live view write it, each chunk
 * handed to put (payload, bytes, entries; non-zero stops and is returned):
 * when chunks were dropped, their pinned lines, the snapshot, then the
 * window record naming trigger (docs/TRACE_FORMAT.md "Flight windows": what
 * was dropped and lost before the window, said before any of its events);
 * nothing when none was (the run's meta is in the window's first chunk, no
 * record may come before it). The caller holds f->mu. */
int ct_flight_begin(struct ct_flight *f,
                    int (*put)(void *ctx, const uint8_t *p, size_t n, uint32_t k), void *ctx,
                    const char *trigger);
/* The header of a chunk of ours (pinned lines, snapshot) whose payload is
 * p (n bytes, count entries), tagged as the window's chunks are (f->tag:
 * the caller holds mu, or is the formatter). */
struct ctr_chunk_hdr ct_flight_hdr(const struct ct_flight *f, const uint8_t *p, size_t n,
                                   uint32_t count);
/* Write the window as a self-contained binary trace (file header, the
 * window's start as ct_flight_begin writes it, trigger its window record's,
 * then the window's chunks, the record after the first of them when no
 * chunk was dropped) to the next
 * dump name, through ct_outfile_open; a note records the outcome either way.
 * A write that fails keeps what it wrote (the file in place, counted in
 * failed); the oldest dumps past the disk budget are removed. A crash
 * trigger (ct_flight_crash_trigger's) is written past max_dumps too, once.
 * On the formatter thread, after the encoder's flush. 0 or -errno
 * (-EDQUOT past max_dumps). */
int ct_flight_dump(struct ct_flight *f, const char *trigger);
/* The trigger of a program killed by signal sig when it is a crash (SIGSEGV,
 * SIGABRT, ...: "SIGSEGV" to why, whylen >= 16), 0 otherwise. */
int ct_flight_crash_trigger(int sig, char *why, size_t whylen);
/* The engine's losses so far (lost in the stations and rings, from the
 * harvest thread): each chunk joining the window, and each dump, records
 * them, so a dump says what was lost before its window and in it. */
void ct_flight_lost(struct ct_flight *f, uint64_t lost);
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
 * as the encoder framed it; rebinds, its struct ct_ctw_chunk's): their
 * coroutines' states move on; a destroy drops one. A chunk that does not
 * decode is applied up to its fault. */
void ct_fsnap_apply(struct ct_fsnap *t, const uint8_t *chunk, size_t n, uint32_t rebinds);
/* on: packs are taken as the decoder expands them into events merged in
 * time (the path before ctr_stream_walk: slower, the same snapshot; the
 * tests and bench-fsnap -x compare the two). Off at first. */
void ct_fsnap_expand(struct ct_fsnap *t, int on);
/* The table as snapshot lines, in chunks of at most 64 KiB of payload
 * handed to put (payload, bytes, entries; non-zero stops and is returned).
 * *count, *untracked: the lines, the coroutines not kept. */
int ct_fsnap_emit(struct ct_fsnap *t, int (*put)(void *ctx, const uint8_t *p, size_t n, uint32_t k),
                  void *ctx, uint64_t *count, uint64_t *untracked);

#endif /* CT_ENGINE_FLIGHT_H */
