/* flight.c - the flight recorder (`run --flight`): the binary trace's whole
 * chunks kept in memory, the oldest dropped past the window's size, written
 * out as a self-contained trace when a trigger asks (docs/FLIGHT.md). */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/outfile.h"
#include "engine/flight.h"
#include "engine/sched.h"
#include "format/ctrace.h"
#include "format/records.h"
#include "format/trace_keys.h"
#include "format/writer.h"

/* The room of a full chunk: what the encoder closes a chunk at (ctrace_enc.c,
 * 64 KiB of payload after its header). Chunks up to it take the window's
 * ring (flight_ring.c), each its own size; a longer one, of a long line,
 * is malloc's. */
#define FL_ROOM (sizeof(struct ctr_chunk_hdr) + (64u << 10))
/* What a chunk costs the window (malloc's header too). */
#define FL_CHUNK_COST(cap) (sizeof(struct fl_chunk) + 16u + (cap))

int ct_flight_init(struct ct_flight *f, const char *out, uint64_t max_bytes, uint32_t max_dumps,
                   uint64_t disk_budget) {
  memset(f, 0, sizeof *f);
  f->out = out;
  f->max_bytes = max_bytes;
  f->max_dumps = max_dumps;
  f->disk_budget = disk_budget ? disk_budget : CT_FLIGHT_DISK_WINDOWS * max_bytes;
  f->next_seq = 1;
  f->tag = CTR_CHUNK_TAG;
  int rc = ct_fring_init(&f->ring, max_bytes, sizeof(struct fl_chunk) + FL_ROOM);
  if (rc)
    return rc;
  if ((rc = ct_fsnap_new(&f->snap))) {
    ct_fring_free(&f->ring);
    return rc;
  }
  if ((rc = -ct_sched_mutex_init(&f->mu))) {
    ct_fsnap_free(f->snap);
    f->snap = NULL;
    ct_fring_free(&f->ring);
  }
  return -rc;
}

void ct_flight_free(struct ct_flight *f) {
  while (f->head) {
    struct fl_chunk *c = f->head;
    f->head = c->next;
    if (!ct_fring_owns(&f->ring, c))
      free(c);
  }
  f->tail = NULL;
  ct_fring_free(&f->ring);
  ct_buf_free(&f->pin);
  ct_fsnap_free(f->snap);
  f->snap = NULL;
  pthread_mutex_destroy(&f->mu);
}

void ct_flight_chunk(void *ctx, const uint8_t *p, size_t n, const struct ct_ctw_chunk *ci) {
  struct ct_flight *f = ctx;
  /* Make room first: the window never holds more than its size; with an
   * age, a chunk whose newest event is that far behind this one's goes too
   * (one of lines only at once: its pinned lines stay). */
  size_t cap = n;
  struct fl_chunk *c = NULL;
  /* The list and the snapshot change under mu: the live view reads them. */
  pthread_mutex_lock(&f->mu);
  struct ctr_chunk_hdr ch;
  if (n >= sizeof ch) {
    memcpy(&ch, p, sizeof ch);
    if (ctr_chunk_packs(ch.tag))
      f->tag = ch.tag; /* the encoder's tag from now on */
  }
  while (f->head && (f->bytes + FL_CHUNK_COST(cap) > f->max_bytes ||
                     (f->max_age_ns && ci->ts1 && f->head->ts1 + f->max_age_ns < ci->ts1))) {
    struct fl_chunk *d = f->head;
    f->head = d->next;
    if (!f->head)
      f->tail = NULL;
    f->bytes -= FL_CHUNK_COST(d->cap);
    f->dropped_bytes += d->len;
    f->dropped_chunks++;
    ct_fsnap_apply(f->snap, d->data, d->len, d->rebinds); /* the window's start moves on */
    if (d->ts1)
      f->dropped_ts = d->ts1;
    f->dropped_lost = d->lost;
    /* Its meta, process and module lines now exist only in the pin. */
    f->pin_out = d->pin_end;
    f->npin_out = d->npin_end;
    if (ct_fring_owns(&f->ring, d))
      ct_fring_give(&f->ring, d, sizeof *d + d->cap); /* the oldest of the ring's */
    else
      free(d);
  }
  /* The ring has room when the window has (flight_ring.h): malloc only for
   * a chunk past FL_ROOM. */
  if ((c = ct_fring_take(&f->ring, sizeof *c + cap)) != NULL ||
      (c = malloc(sizeof *c + cap)) != NULL)
    c->cap = cap;
  if (!c) {
    f->dropped_bytes += n; /* counted as dropped, the window goes on */
    f->dropped_chunks++;
    f->dropped_lost = atomic_load_explicit(&f->lost_now, memory_order_relaxed);
    ct_fsnap_apply(f->snap, p, n, ci->rebinds);
    f->pin_out = f->pin.n;
    f->npin_out = f->npinned;
    pthread_mutex_unlock(&f->mu);
    return;
  }
  c->next = NULL;
  c->seq = f->next_seq++;
  c->ts0 = ci->ts0;
  c->ts1 = ci->ts1;
  c->rebinds = ci->rebinds;
  c->lost = atomic_load_explicit(&f->lost_now, memory_order_relaxed);
  c->pin_end = f->pin.n;
  c->npin_end = f->npinned;
  c->len = n;
  memcpy(c->data, p, n);
  if (f->tail)
    f->tail->next = c;
  else
    f->head = c;
  f->tail = c;
  f->bytes += FL_CHUNK_COST(cap);
  f->total_bytes += n;
  int trim = f->dropped_bytes >= f->trim_at;
  if (trim)
    f->trim_at = f->dropped_bytes + f->max_bytes;
  pthread_mutex_unlock(&f->mu);
  /* Once a window turned over, malloc's free pages go back to the system:
   * what the live findings' copies and the dumps' buffers left in the
   * formatter's heap (the chunks are the ring's). Outside the lock: the
   * live view goes on. */
  if (trim)
    (void)malloc_trim(0);
  if (f->watch)
    f->watch(f->watch_ctx, p, n);
}

static void pin_line(struct ct_flight *f, const char *s, size_t n);

/* 1 when the line is a record every dump must repeat: the run's meta, and
 * what names the processes and their modules. */
static int pinned_kind(const char *s, size_t n) {
  static const char *const kinds[] = {"meta\"", "process\"", "module\""};
  static const char pre[] = "{" CT_KQ(TYPE) "\"";
  if (n < sizeof pre - 1 || memcmp(s, pre, sizeof pre - 1))
    return 0;
  s += sizeof pre - 1;
  n -= sizeof pre - 1;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (n >= strlen(kinds[i]) && !memcmp(s, kinds[i], strlen(kinds[i])))
      return 1;
  return 0;
}

void ct_flight_line(void *ctx, const char *s, size_t n) {
  struct ct_flight *f = ctx;
  if (!pinned_kind(s, n) || f->pin_full)
    return;
  pthread_mutex_lock(&f->mu); /* the live view copies the pin */
  pin_line(f, s, n);
  pthread_mutex_unlock(&f->mu);
}

/* ct_flight_line's line s (n bytes) to the pin, under f->mu. */
static void pin_line(struct ct_flight *f, const char *s, size_t n) {
  if (f->pin.n + 11 + n > CTR_CHUNK_MAX) {
    f->pin_full = 1; /* more modules than a chunk holds: the first ones */
    return;
  }
  if (ct_buf_reserve(&f->pin, 11 + n)) {
    f->pin_full = 1;
    return;
  }
  uint8_t *p0 = (uint8_t *)f->pin.p;
  f->pin.n = (size_t)(ctr_put_line(p0 + f->pin.n, s, n) - p0);
  f->npinned++;
}

/* n bytes to fd (EINTR, short writes handled). 0 or -errno. */
static int put(int fd, const void *p, size_t n) {
  for (size_t off = 0; off < n;) {
    ssize_t k = write(fd, (const char *)p + off, n - off);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return k < 0 ? -errno : -EIO;
    off += (size_t)k;
  }
  return 0;
}

/* Contract: see flight.h. */
struct ctr_chunk_hdr ct_flight_hdr(const struct ct_flight *f, const uint8_t *p, size_t n,
                                   uint32_t count) {
  return (struct ctr_chunk_hdr){
      .tag = f->tag, .len = (uint32_t)n, .count = count, .check = ctr_chunk_check(f->tag, p, n)};
}

/* Where put_chunk writes: the dump's fd, and the window (its tag). */
struct put_to {
  int fd;
  const struct ct_flight *f;
};

/* The payload p (n bytes, count entries) framed as one chunk, to the fd at
 * ctx (a struct put_to: ct_fsnap_emit's put too). */
static int put_chunk(void *ctx, const uint8_t *p, size_t n, uint32_t count) {
  const struct put_to *to = ctx;
  struct ctr_chunk_hdr h = ct_flight_hdr(to->f, p, n, count);
  int rc = put(to->fd, &h, sizeof h);
  return rc ? rc : put(to->fd, p, n);
}

/* The ts of the window's first event (a chunk of lines only has none). */
static uint64_t window_start(const struct ct_flight *f) {
  for (const struct fl_chunk *c = f->head; c; c = c->next)
    if (c->ts0)
      return c->ts0;
  return 0;
}

/* The ts of the window's last event. */
static uint64_t window_end(const struct ct_flight *f) {
  uint64_t ts = 0;
  for (const struct fl_chunk *c = f->head; c; c = c->next)
    if (c->ts1)
      ts = c->ts1;
  return ts;
}

/* CLOCK_MONOTONIC in ns, as events' ts. */
static uint64_t mono_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/* The window record (docs/TRACE_FORMAT.md "Flight windows") of the window
 * as it is now, whose snapshot has snapshot lines (untracked more alive),
 * naming trigger: one entry handed to put. Under f->mu. */
static int put_window(const struct ct_flight *f,
                      int (*put)(void *ctx, const uint8_t *p, size_t n, uint32_t k), void *ctx,
                      const char *trigger, uint64_t snapshot, uint64_t untracked) {
  struct ct_window w = {.ts = mono_now(),
                        .snapshot = snapshot,
                        .untracked = untracked,
                        .start_ts = window_start(f),
                        .end_ts = window_end(f),
                        .dropped_ts = f->dropped_ts,
                        .dropped_bytes = f->dropped_bytes,
                        .dropped_chunks = f->dropped_chunks,
                        .bytes = f->total_bytes - f->dropped_bytes,
                        .lost = atomic_load_explicit(&f->lost_now, memory_order_relaxed),
                        .dropped_lost = f->dropped_lost,
                        .trigger = trigger};
  struct ct_writer m = {.fd = -1, .buf = malloc(CT_W_BUF)};
  uint8_t *e = malloc(11 + CT_W_BUF);
  int rc = -ENOMEM;
  if (!m.buf || !e)
    goto out;
  ct_rec_window(&m, &w);
  rc = put(ctx, e, (size_t)(ctr_put_line(e, m.buf, m.len - 1) - e), 1);
out:
  free(e);
  free(m.buf);
  return rc;
}

/* Contract: see flight.h. The window record comes after the pinned lines,
 * the run's `meta` first (a reader starts a run at a meta: a record before
 * it would be a run of its own), and after the snapshot, whose lines it
 * counts (ct_fsnap_emit counts them as it writes them), but before any of
 * the window's chunks: a decoder learns there what was dropped and lost
 * before the window before the end record, which may be in those chunks
 * (ctrace_pack.c: the dropped packs are in the end's harvested, seeded by a
 * snapshot or not). It is framed with the window's tag, as put frames all
 * of these: a packing trace's decoder makes its stream state at the first
 * chunk so tagged, and reads the record only with it. */
int ct_flight_begin(struct ct_flight *f,
                    int (*put)(void *ctx, const uint8_t *p, size_t n, uint32_t k), void *ctx,
                    const char *trigger) {
  uint64_t snapshot = 0, untracked = 0;
  if (!f->dropped_chunks)
    return 0; /* the run's start is in the window: its meta, no snapshot */
  /* The lines of dropped chunks; the window's own chunks carry the rest. */
  int rc = f->npin_out ? put(ctx, (const uint8_t *)f->pin.p, f->pin_out, f->npin_out) : 0;
  /* The coroutines alive at the window's start, as the dropped chunks left them. */
  if (!rc)
    rc = ct_fsnap_emit(f->snap, put, ctx, &snapshot, &untracked);
  return rc ? rc : put_window(f, put, ctx, trigger, snapshot, untracked);
}

/* The signals whose death is a crash: their dump has its own budget. */
static const int crash_sigs[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};

int ct_flight_crash_trigger(int sig, char *why, size_t whylen) {
  for (size_t i = 0; i < sizeof crash_sigs / sizeof crash_sigs[0]; i++)
    if (sig == crash_sigs[i]) {
      snprintf(why, whylen, "SIG%s", sigabbrev_np(sig));
      return 1;
    }
  return 0;
}

/* 1 when trigger is a crash's (ct_flight_crash_trigger's words). */
static int is_crash(const char *trigger) {
  char why[16];
  for (size_t i = 0; i < sizeof crash_sigs / sizeof crash_sigs[0]; i++)
    if (ct_flight_crash_trigger(crash_sigs[i], why, sizeof why) && !strcmp(why, trigger))
      return 1;
  return 0;
}

/* Dump number seq's name: OUT, OUT.1, OUT.2, ... */
static void dump_path(const struct ct_flight *f, uint32_t seq, char *path, size_t n) {
  if (seq)
    snprintf(path, n, "%s.%u", f->out, seq);
  else
    snprintf(path, n, "%s", f->out);
}

/* Dump seq (bytes on disk) joins the kept ones; the oldest leave while the
 * kept pass the disk budget (the newest always stays) or the ring is full.
 * Returns how many were removed (one already gone counts too: its room is
 * free either way). */
static uint32_t keep(struct ct_flight *f, uint32_t seq, uint64_t bytes) {
  uint32_t removed = 0;
  while (f->nkept && (f->nkept == CT_FLIGHT_KEPT || f->kept_total + bytes > f->disk_budget)) {
    char path[4200];
    uint32_t i = f->kept_first;
    dump_path(f, f->kept_seq[i], path, sizeof path);
    (void)unlink(path); /* a link is removed, never what it leads to */
    f->kept_total -= f->kept_bytes[i];
    f->kept_first = (i + 1) % CT_FLIGHT_KEPT;
    f->nkept--;
    removed++;
  }
  uint32_t j = (f->kept_first + f->nkept++) % CT_FLIGHT_KEPT;
  f->kept_seq[j] = seq;
  f->kept_bytes[j] = bytes;
  f->kept_total += bytes;
  return removed;
}

/* The dump itself into o: file header, the window's start (pinned lines,
 * snapshot, window record: ct_flight_begin), the window's chunks; when no
 * chunk was dropped, the window record after the first chunk, the run's
 * meta's. 0 or the first write's -errno. */
static int write_dump(struct ct_flight *f, struct ct_outfile *o, const char *trigger) {
  struct ctr_file_hdr h = {.version = CTR_VERSION};
  memcpy(h.magic, CTR_MAGIC, CTR_MAGIC_LEN);
  int rc = put(o->fd, &h, sizeof h);
  struct put_to to = {.fd = o->fd, .f = f};
  if (!rc) {
    pthread_mutex_lock(&f->mu); /* the live view may be emitting it too */
    rc = ct_flight_begin(f, put_chunk, &to, trigger);
    pthread_mutex_unlock(&f->mu);
  }
  /* The chunks the window record describes, without mu (the live view's
   * copies do not wait for the disk): only this thread, the formatter's,
   * changes the list (ct_flight_chunk), and it is here, so none joins or
   * leaves between the record and the last chunk. The harvest thread only
   * moves lost_now on, which no chunk follows (each took its own when it
   * joined, before the record read it). */
  const struct fl_chunk *c = f->head;
  if (!rc && !f->dropped_chunks) { /* the first chunk holds the run's meta: the record follows it */
    if (c) {
      rc = put(o->fd, c->data, c->len);
      c = c->next;
    }
    pthread_mutex_lock(&f->mu); /* put_window's, as in ct_flight_begin */
    rc = rc ? rc : put_window(f, put_chunk, &to, trigger, 0, 0);
    pthread_mutex_unlock(&f->mu);
  }
  for (; c && !rc; c = c->next)
    rc = put(o->fd, c->data, c->len);
  return rc;
}

int ct_flight_dump(struct ct_flight *f, const char *trigger) {
  struct ct_outfile o = {.fd = -1};
  struct ct_flight_note n = {.ts = 0};
  int rc = 0, crash = is_crash(trigger) && !f->crashed;
  dump_path(f, f->ndumps, n.path, sizeof n.path);
  /* A crash has its own budget: the requests before it cannot spend it. */
  if (f->max_dumps && f->ndumps - (uint32_t)f->crashed >= f->max_dumps && !crash) {
    rc = -EDQUOT;
    goto out;
  }
  f->crashed |= crash;
  if ((rc = ct_outfile_open(&o, AT_FDCWD, n.path)))
    goto out;
  rc = write_dump(f, &o, trigger);
  struct stat st;
  n.written = fstat(o.fd, &st) == 0 ? (uint64_t)st.st_size : 0;
  /* Cut short (ENOSPC, EFBIG): what was written stays, and the note says it failed. */
  int crc = ct_outfile_commit(&o);
  rc = rc ? rc : crc;
  if (!crc)
    n.removed = keep(f, f->ndumps++, n.written);
out:
  n.err = -rc;
  n.ts = mono_now();
  snprintf(n.trigger, sizeof n.trigger, "%s", trigger);
  pthread_mutex_lock(&f->mu);
  n.start_ts = window_start(f);
  n.end_ts = window_end(f);
  n.bytes = f->total_bytes - f->dropped_bytes;
  n.dropped_bytes = f->dropped_bytes;
  f->refused += rc == -EDQUOT;
  f->failed += rc && rc != -EDQUOT;
  f->removed += n.removed;
  if (f->nnotes < CT_FLIGHT_NOTES) {
    f->notes[f->nnotes++] = n;
    atomic_store_explicit(&f->noted, f->nnotes, memory_order_release);
  }
  f->marks[f->nmarks++ % CT_FLIGHT_MARKS] = n; /* the live view's, whatever the notes' fate */
  pthread_mutex_unlock(&f->mu);
  return rc;
}

void ct_flight_lost(struct ct_flight *f, uint64_t lost) {
  atomic_store_explicit(&f->lost_now, lost, memory_order_relaxed);
}

size_t ct_flight_notes(struct ct_flight *f, struct ct_flight_note *out, size_t max) {
  if (!atomic_load_explicit(&f->noted, memory_order_acquire))
    return 0;
  pthread_mutex_lock(&f->mu);
  size_t n = f->nnotes < max ? f->nnotes : max;
  memcpy(out, f->notes, n * sizeof *out);
  memmove(f->notes, f->notes + n, (f->nnotes - n) * sizeof *out);
  f->nnotes -= n;
  atomic_store_explicit(&f->noted, f->nnotes, memory_order_release);
  pthread_mutex_unlock(&f->mu);
  return n;
}
