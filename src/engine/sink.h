/* sink.h - the formatter thread: its queue of items and capture blocks to the trace (sink.c). */
#ifndef CT_ENGINE_SINK_H
#define CT_ENGINE_SINK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "format/ctrace.h"
#include "format/ctw.h"
#include "format/records.h"
#include "format/writer.h"

struct ct_flight;
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
   * free blocks. The formatter's: scratch blocks, spilled blocks are read
   * back into (free ones, and those the handler holds: held_scratch). */
  ct_sink_block_fn *on_block;
  void *block_ctx;
  char *cur, *stage;
  char *scratch[CT_SINK_HELD_MAX + 1]; /* held ones, and the one being read */
  uint32_t nscratch;
  size_t cur_len;
  char **free_blk;
  uint32_t nfree, nblk, max_blk;
  char *region; /* producer: the budget's blocks, reserved at the first (sink.c) */
  size_t region_len;
  uint8_t *popd;                /* producer: per block of the region, 1 once its pages are in */
  char *held[CT_SINK_HELD_MAX]; /* formatter: blocks the handler kept */
  uint32_t nheld, held_scratch; /* held_scratch: bit i, held[i] is a scratch block */
  int spill_fd;                 /* -1 until the first spill */
  int spill_broken;             /* the spill file failed: wait for memory instead */
  uint64_t spill_end;           /* producer: bytes written to the spill file, in all */
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
/* Formatter thread (sink_cut.c): after a write error (ENOSPC) the trace w
 * (binary when binary is set) is cut back to its last whole record and ends
 * with the cut marker, so readers say why it ends there
 * (docs/TRACE_FORMAT.md "Cut traces"). Best effort: w's error stays. */
void ct_sink_cut(struct ct_writer *w, int binary);
/* Formatter thread: the blocks the handler kept go back to the producer. */
void ct_sink_release_held(struct ct_sink *s);
/* Room for at least `min` bytes (<= CT_SINK_BLOCK) at the end of the block
 * being filled, pushing the current block first when it has less; *avail
 * gets the room there is. NULL only when no block can be had (ENOMEM and no
 * spill file): the caller keeps its data for later. */
char *ct_sink_room(struct ct_sink *s, size_t min, size_t *avail);
/* n bytes of the room returned by ct_sink_room are filled. */
void ct_sink_fill(struct ct_sink *s, size_t n);
/* The next n bytes of the current block are about to be written at once: a
 * new block's pages come in one call, not a fault each (producer). */
void ct_sink_populate(struct ct_sink *s, size_t n);
/* Queue the block being filled (if any) and wake the formatter. */
void ct_sink_push_block(struct ct_sink *s);
/* Everything queued so far is written to the file. 0 or -errno. */
int ct_sink_sync(struct ct_sink *s);
/* First write error (errno) of the trace, 0 if none. */
int ct_sink_err(const struct ct_sink *s);
/* Write everything, stop the formatter, close the file: 0 or -errno. Safe on
 * a zeroed sink. */
int ct_sink_close(struct ct_sink *s);

#endif /* CT_ENGINE_SINK_H */
