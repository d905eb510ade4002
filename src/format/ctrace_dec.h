/* ctrace_dec.h - the binary trace's decoder (ctrace_dec.c): file header, chunks, their entries as
 * events, lines and coroutines. Used by the readers and the flight window's snapshot. */
#ifndef CT_FORMAT_CTRACE_DEC_H
#define CT_FORMAT_CTRACE_DEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/ctp.h"
#include "format/ctrace.h"
#include "format/ctrace_like.h"
#include "format/ctrace_pack.h"
#include "format/line.h"

/* The file header at p (n bytes): its size, or -1 with the reason in why. */
int ct_ctr_file_header(const void *p, size_t n, char *why, size_t whylen);
/* The chunk at p (n bytes there, at file offset off): 1 when it is whole and
 * its checksum holds (*len: its size), 0 when more bytes are needed, -1 when
 * it is corrupt (the reason, with the offset, in why). */
int ct_ctr_chunk(const void *p, size_t n, uint64_t off, size_t *len, char *why, size_t whylen);
/* The entries of a chunk ct_ctr_chunk accepted, in order. */
struct ct_ctr_iter {
  const uint8_t *p, *e;
  uint32_t left, prev, nsites;
  int have_prev;
  int chk3; /* a CTR_CHUNK_TAG chunk: CTR_WAKER_* bytes, CTR_WAIT_AGAIN */
  uint64_t last_ts, last_tid;
  struct ctr_coro coro[CTR_COROS];
  uint64_t sites[CTR_SITES];
  /* A switch entry's events after its first, given by the next calls. */
  struct ct_ev_item pend[2];
  uint32_t npend, ipend;
  struct ctr_sw sw;
  struct ctr_like like;
  /* Packs (docs/ROUTE1.md): the stream's state across chunks (NULL until a
   * pack comes), and the entry read ahead while packs are open (la_k: its
   * ct_ctr_entry result, 0 none, 5 a pack, 6 the chunk's end). */
  struct ctr_stream *st;
  int la_k;
  struct ct_ev_item la_ev;
  struct ct_coro_item la_co;
  const char *la_line;
  size_t la_n;
  struct ctr_pack_ref la_pack;
};
/* An iterator before its first chunk (its stream state empty), and its end
 * (the stream state freed). Every reader of a trace's chunks in order calls
 * both: packs need the state of the chunks before. */
void ct_ctr_init(struct ct_ctr_iter *it);
void ct_ctr_fini(struct ct_ctr_iter *it);
/* Coroutine probe_id's pack events read so far (its ev beyond the engine's
 * numbering: a flight snapshot's "packed"); 0 in a trace without packs. */
uint64_t ct_ctr_packed(const struct ct_ctr_iter *it, uint64_t probe_id);
void ct_ctr_begin(struct ct_ctr_iter *it, const void *chunk);
/* The next entry: 1 an event (*ev), 2 a JSONL line (*line, *n: in the
 * chunk, without '\n'; ct_line_valid holds), 3 a coroutine (*co), 0 the
 * chunk's end, -1 an entry that does not decode, -2 a line that is not one
 * JSON object of valid UTF-8 (ct_line_valid). */
int ct_ctr_entry(struct ct_ctr_iter *it, struct ct_ev_item *ev, struct ct_coro_item *co,
                 const char **line, size_t *n);
/* ct_ctr_entry, but a pack entry is given as it is, not expanded nor
 * merged in time with the chunk's other entries: 5, its fields in
 * it->la_pack (valid until the next call), for ctr_stream_walk on it->st.
 * The other entries as ct_ctr_entry gives them, in the chunk's order. */
int ct_ctr_entry_packs(struct ct_ctr_iter *it, struct ct_ev_item *ev, struct ct_coro_item *co,
                       const char **line, size_t *n);
/* The events in a row of one coroutine that start at the next entry (up to
 * max), into ev as the normalized events of the lines ct_ctr_next would give,
 * numbered from line: each an event that decodes and is not torn, the ones
 * after the first marked as of the same coroutine. 0 when the next entry is
 * no such event: ct_ctr_next takes it. */
unsigned ct_ctr_run(struct ct_ctr_iter *it, struct ct_event *restrict ev, unsigned max,
                    uint64_t line);
/* Room for a coroutine's label as ct_line_from_coro writes it. */
#define CT_CTR_LABEL_MAX (6 * CTP_LABEL_MAX)
/* The same as a parsed line (*l, *err as ct_parse_line gives them); a
 * coroutine's label is written to label (CT_CTR_LABEL_MAX bytes), which
 * must live as long as *l. */
int ct_ctr_next(struct ct_ctr_iter *it, struct ct_line *l, enum ct_line_err *err, char *label);
/* The line a binary trace's coroutine stands for: *out as ct_parse_line
 * fills it from records.c's line for c (tests/test-ctrace.c checks), its
 * label escaped into label (CT_CTR_LABEL_MAX bytes). */
enum ct_line_err ct_line_from_coro(const struct ct_coro_item *c, struct ct_line *out, char *label);

#endif
