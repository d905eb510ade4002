/* ctrace_pack.h - the binary decoder's pack expansion (ctrace_pack.c, docs/ROUTE1.md): the
 * state a stream of chunks keeps for packs (station -> coroutine, each coroutine's event
 * numbering and last time), the open packs of a chunk, and what the decoder (ctrace_dec.c)
 * asks of them. Not for the readers: they see ct_ctr_init/ct_ctr_fini only. */
#ifndef CT_FORMAT_CTRACE_PACK_H
#define CT_FORMAT_CTRACE_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "format/ctrace.h"

/* A pack entry as the decoder read it: its bytes (in the chunk), thread,
 * and the time of its first entry. */
struct ctr_pack_ref {
  const uint8_t *p;
  uint32_t n;
  uint64_t tid, ns0, mult;
};

struct ctr_stream;

/* A new, empty stream state, or NULL (no memory). */
struct ctr_stream *ctr_stream_new(void);
void ctr_stream_free(struct ctr_stream *s);
/* The chunk's open packs are forgotten (a new chunk, or damage). */
void ctr_stream_chunk(struct ctr_stream *s);
/* Packs still open in this chunk. */
unsigned ctr_stream_open(const struct ctr_stream *s);
/* Open the pack r: 0 (a header that cannot be true: refused, counted, not
 * opened), or -1 when no memory. */
int ctr_stream_add(struct ctr_stream *s, const struct ctr_pack_ref *r);
/* The ts of the earliest next event of the open packs (*ts), 1; 0 when none
 * is open (a pack whose next entry does not decode is closed, counted). */
int ctr_stream_peek(struct ctr_stream *s, uint64_t *ts);
/* A gap entry (g's probe_id, ev: format/ctrace.h CTR_B_GAP): the
 * coroutine's ordinary numbering goes on from g->ev, its pack events after
 * the hole numbered past it. */
void ctr_stream_gap(struct ctr_stream *s, const struct ct_ev_item *g);
/* The earliest next event of the open packs into *ev (ctr_stream_peek said
 * there is one): its coroutine, ev, seq and clamped ts from the stream's
 * state. 1, or 0 when it names a station no coroutine line named (refused,
 * counted: ask again). */
int ctr_stream_take(struct ctr_stream *s, struct ct_ev_item *ev);
/* One switch of a pack as ctr_stream_walk gives it, not expanded into its
 * events: the entry's time (raw: before any clamp, what the merge orders
 * by), thread, site, wait and obj, and for each side
 * (0: `from`, its suspend and the wake after it when wake; 1: `to`, its
 * resume) the coroutine (0: a station no coroutine line named, refused,
 * counted), its ev (from's suspend's: its wake's is the next) and its time
 * clamped as ctr_stream_take clamps it. solo: a standalone wake
 * (CTP_PK_SOLO): side 1 alone, `to`'s wake, obj its waker's coroutine (0:
 * none named), id[0] 0. */
struct ctr_pack_sw {
  uint64_t raw, tid, site, obj;
  uint64_t id[2], ev[2], ts[2];
  uint8_t wait, wake, solo;
};
/* Pack r's switches, in order, to fn (the flight snapshot's tracker:
 * flight_snap.c), numbered and clamped as ctr_stream_take numbers them,
 * the stream's state moved as taking all its events would move it, but
 * without the merge in time with the chunk's other entries (the caller
 * orders what it needs by the times). 0 (a pack refused, or the rest of
 * one whose entry does not decode: counted), -1 when r is shorter than a
 * pack's header. */
int ctr_stream_walk(struct ctr_stream *s, const struct ctr_pack_ref *r,
                    void (*fn)(void *ctx, const struct ctr_pack_sw *sw), void *ctx);
/* An entry the decoder gives that is not a pack's (k as ct_ctr_entry's
 * result): a coroutine names its station; an event's ev and seq move by
 * the pack events of its coroutine given before it. */
void ctr_stream_post(struct ctr_stream *s, int k, struct ct_ev_item *ev,
                     const struct ct_coro_item *co);

/* A text line the decoder gives, when packs came before it: a station_end
 * line's events and harvested, and an end line's events, count the pack
 * events too (the engine counted none of them: docs/ROUTE1.md); *line then
 * points into s, valid until the next call. Other lines stay as they are; a
 * snapshot line (a flight dump's) seeds its coroutine's state. */
void ctr_stream_line(struct ctr_stream *s, const char **line, size_t *n);
/* Coroutine probe_id's pack events given since its coroutine line (or its
 * snapshot line): what its events' ev are beyond the formatter's numbering. */
uint64_t ctr_stream_packed(struct ctr_stream *s, uint64_t probe_id);

#endif
