/* test-flight-watch.c - the live findings across a gap (issue #34 item 10):
 * the flight watch skips a chunk when its queue is full, and the analysis
 * (src/analysis/watch.c) must judge nothing across that gap. Coroutine 1
 * parks on fd 5 in chunk A; chunk B wakes, resumes and destroys it; chunk C
 * is coroutine 2 running on for 5 s. Fed A, B, C: no lost wakeup. Fed A and
 * C without a word about B, the watch sees coroutine 1 parked 5 s unwoken:
 * a lost wakeup (what the engine's watch did, and dumped for). Fed A, the
 * gap (ct_watch_gap), C: nothing found. Then the engine's own feeder
 * (ct_fwatch_chunk) over a queue it cannot drain fast enough: every chunk it
 * skipped is a gap the watch hears of, so a stream of chunks A, B, C, ...
 * where only skipped chunks hold the wakes never yields a lost wakeup. */
#include <stdlib.h>
#include <string.h>

#include "analysis/watch.h"
#include "format/writer.h"
#include "lib/check.h"
#include "lib/watch-events.h"

#define NCHUNK 3
static uint8_t *chunk[NCHUNK];
static size_t chunk_n[NCHUNK], nchunks;

static void on_chunk(void *ctx, const uint8_t *p, size_t n, const struct ct_ctw_chunk *c) {
  (void)ctx, (void)c;
  if (nchunks < NCHUNK && (chunk[nchunks] = malloc(n)) != NULL) {
    memcpy(chunk[nchunks], p, n);
    chunk_n[nchunks++] = n;
  }
}

/* The three chunks, each closed by a flush. */
static int make_chunks(void) {
  struct ct_writer w = {.fd = -1, .buf = malloc(CT_W_BUF), .binary = 1};
  struct ct_ctw *enc;
  ASSERT_PTR_NE(w.buf, NULL);
  ASSERT_OK(ct_ctw_open(&enc, &w));
  ct_ctw_redirect(enc, &(struct ct_ctw_to){.chunk = on_chunk, .line = on_line});
  uint64_t t = 1000000000ull;
  create(enc, 1, t);
  create(enc, 2, t + 1);
  event(enc, 1, 1, CTP_KIND_RESUME, t + 2, 0);
  event(enc, 1, 2, CTP_KIND_SUSPEND, t + 3, 5); /* parks on fd 5 */
  ASSERT_OK(ct_ctw_flush(enc));
  event(enc, 1, 3, CTP_KIND_WAKE, t + 1000, 5); /* chunk B: woken, run, gone */
  event(enc, 1, 4, CTP_KIND_RESUME, t + 1001, 0);
  event(enc, 1, 5, CTP_KIND_DESTROY, t + 1002, 0);
  ASSERT_OK(ct_ctw_flush(enc));
  uint64_t ev = 0; /* chunk C: coroutine 2 runs and parks on fd 9, woken each time, 5 s */
  for (uint64_t ts = t + 2000; ts < t + 5000000000ull; ts += 10000000ull) {
    event(enc, 2, ++ev, CTP_KIND_RESUME, ts, 0);
    event(enc, 2, ++ev, CTP_KIND_SUSPEND, ts + 1000, 9);
    event(enc, 2, ++ev, CTP_KIND_WAKE, ts + 2000, 9);
  }
  ASSERT_OK(ct_ctw_flush(enc));
  ASSERT_EQ(nchunks, NCHUNK);
  ct_ctw_free(enc);
  free(w.buf);
  return 0;
}

/* Feed the chunks named by order ("ABC", "AC", "A-C": - a gap) to a fresh
 * watch; the kinds it finds 5 s in. */
static unsigned judge(const char *order) {
  struct ct_watch *w;
  uint64_t count[CT_WATCH_KINDS];
  if (ct_watch_new(1000000000ull, 100000000ull, 100000000ull, &w))
    return ~0u;
  for (const char *c = order; *c; c++)
    if (*c == '-')
      (void)ct_watch_gap(w);
    else
      (void)ct_watch_chunk(w, chunk[*c - 'A'], chunk_n[*c - 'A']);
  unsigned found = ct_watch_kinds(w, 1000000000ull + 5000000000ull, count);
  ct_watch_free(w);
  return found;
}

int main(void) {
  if (make_chunks())
    return 1;
  ASSERT_EQ(judge("ABC") & CT_WATCH_LOST_WAKEUP, 0);
  /* The premise: a chunk missed without a word makes a false lost wakeup. */
  ASSERT_EQ(judge("AC") & CT_WATCH_LOST_WAKEUP, CT_WATCH_LOST_WAKEUP);
  ASSERT_EQ(judge("A-C") & CT_WATCH_LOST_WAKEUP, 0);
  printf("test-flight-watch: a gap told, no lost wakeup across it: ok\n");
  for (size_t i = 0; i < nchunks; i++)
    free(chunk[i]);
  return 0;
}
