/* ctw.h - the binary trace encoder's interface (ctrace_enc.c; its inline part: ctrace_enc.h). */
#ifndef CT_FORMAT_CTW_H
#define CT_FORMAT_CTW_H

#include <stddef.h>
#include <stdint.h>

#include "format/ctrace.h"
#include "format/writer.h"

struct ct_ctw;
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
/* A pack entry (format/ctrace.h CTR_F_PACK): the n bytes at p (a struct
 * ctp_pack and its entries) of thread tid, ts0 at ns0, mult ns a tick. */
void ct_ctw_pack(struct ct_ctw *e, uint64_t tid, uint64_t ns0, uint64_t mult, const void *p,
                 size_t n);
/* Chunks from now on are CTR_CHUNK_TAG_PACK (the trace holds packs): the
 * engine's --pack, before its first chunk is written. */
void ct_ctw_packs(struct ct_ctw *e);
/* A gap entry (format/ctrace.h CTR_B_GAP): coroutine probe_id's next ev is
 * ev (the formatter's numbering, with the lost events counted), at ns. */
void ct_ctw_gap(struct ct_ctw *e, uint64_t probe_id, uint64_t ev, uint64_t ns);
/* hold 1: the chunk is not closed when full, it grows (a pass with packs:
 * the decoder merges a pack with the entries of its own chunk); hold 0: as
 * before, and a chunk past its size is written now. */
void ct_ctw_hold(struct ct_ctw *e, int hold);
/* Write the chunk being filled. 0 or -errno. */
int ct_ctw_flush(struct ct_ctw *e);
void ct_ctw_free(struct ct_ctw *e);
/* Entries of the chunk being filled, not yet written. */
size_t ct_ctw_pending(const struct ct_ctw *e);
/* A whole chunk of the one line s (n bytes, no '\n') at out, which has room
 * for sizeof(struct ctr_chunk_hdr) + 11 + n bytes. Returns its size. */
size_t ct_ctw_frame_line(const char *s, size_t n, uint8_t *out);

/* What a chunk handed to ct_ctw_to's chunk holds beside its bytes: its
 * first and last event's ts (0 when it has none), and its rebinds: the
 * coroutine lines and gap entries in it, each of which changes which
 * coroutine, or which ev, a pack's station number means from its time on,
 * and the standalone wakes in its packs (a header's nsolo), each of which
 * the walk would put before the wakee's suspend in another thread's pack
 * written after it (the flight snapshot walks a chunk of packs without
 * them, merges one with them: flight_snap.c). */
struct ct_ctw_chunk {
  uint64_t ts0, ts1;
  uint32_t rebinds;
};
/* Where the encoder's chunks go instead of its writer (the flight recorder):
 * chunk gets each whole chunk (header and payload, n bytes; *c what it
 * holds, the call's), line each JSONL record line as it becomes an entry.
 * Both run on the encoder's thread. */
struct ct_ctw_to {
  void (*chunk)(void *ctx, const uint8_t *p, size_t n, const struct ct_ctw_chunk *c);
  void (*line)(void *ctx, const char *s, size_t n);
  void *ctx;
};
/* Send e's chunks to *to (copied) from now on; the writer gets none. */
void ct_ctw_redirect(struct ct_ctw *e, const struct ct_ctw_to *to);

#endif /* CT_FORMAT_CTW_H */
