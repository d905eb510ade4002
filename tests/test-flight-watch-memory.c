/* test-flight-watch-memory.c - the live findings' memory over a server's
 * connections (issue #34 item 13). A server that serves each connection in a
 * coroutine of its own creates and destroys one per connection, for days:
 * the watch (--dump-on, src/analysis/watch.c) must hold what the coroutines
 * alive need, not one entry per connection ever served. 60000 connections
 * (created, parked on their fd, woken, run, destroyed, 50 at once) are fed
 * chunk by chunk, as the engine's watch thread feeds them, and the bytes the
 * analysis holds (its allocations, counted through the linker's --wrap, so
 * under every allocator and sanitizer) after the 6000th and the 60000th
 * must stay within 256 KiB of each other. Before, the report's 16384
 * destroyed coroutines were kept: 3.3 MB more, reached only after 16384
 * connections (half an hour of the soak), which a short soak could not tell
 * from arena growth. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/watch.h"
#include "format/writer.h"
#include "lib/check.h"
#include "lib/watch-events.h"

/* The bytes the linked objects hold: their malloc, calloc, realloc and free
 * are these (-Wl,--wrap), counted by the allocator's usable size. */
static long long held;
void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);

void *__wrap_malloc(size_t n) {
  void *p = __real_malloc(n);
  held += p ? (long long)malloc_usable_size(p) : 0;
  return p;
}

void *__wrap_calloc(size_t k, size_t n) {
  void *p = __real_calloc(k, n);
  held += p ? (long long)malloc_usable_size(p) : 0;
  return p;
}

void *__wrap_realloc(void *p, size_t n) {
  long long was = p ? (long long)malloc_usable_size(p) : 0;
  void *q = __real_realloc(p, n);
  if (q)
    held += (long long)malloc_usable_size(q) - was;
  return q;
}

void __wrap_free(void *p) {
  held -= p ? (long long)malloc_usable_size(p) : 0;
  __real_free(p);
}

#define CONNS 60000
#define AT_ONCE 50
#define EARLY 6000

static struct ct_watch *watch;
static long long held_early; /* held after EARLY connections (-1: not yet) */

static void on_chunk(void *ctx, const uint8_t *p, size_t n, const struct ct_ctw_chunk *c) {
  (void)ctx, (void)c;
  (void)ct_watch_chunk(watch, p, n);
}

/* Connection i's coroutine, its whole life from ts on (id: its number, as a
 * server's coroutine addresses are not reused while others are alive). */
static void connection(struct ct_ctw *enc, uint32_t i, uint64_t ts) {
  uint32_t id = i + 1;
  int fd = (int)(i % AT_ONCE) + 10;
  create(enc, id, ts);
  event(enc, id, 1, CTP_KIND_RESUME, ts + 10, 0);
  event(enc, id, 2, CTP_KIND_SUSPEND, ts + 20, fd);
  event(enc, id, 3, CTP_KIND_WAKE, ts + 1000, fd);
  event(enc, id, 4, CTP_KIND_RESUME, ts + 1010, 0);
  event(enc, id, 5, CTP_KIND_DESTROY, ts + 1020, 0);
}

int main(void) {
  struct ct_writer w = {.fd = -1, .buf = malloc(CT_W_BUF), .binary = 1};
  struct ct_ctw *enc;
  ASSERT_PTR_NE(w.buf, NULL);
  ASSERT_OK(ct_watch_new(1000000000ull, 100000000ull, 100000000ull, &watch));
  ASSERT_OK(ct_ctw_open(&enc, &w));
  ct_ctw_redirect(enc, &(struct ct_ctw_to){.chunk = on_chunk, .line = on_line});
  uint64_t t = 1000000000ull;
  for (uint32_t i = 0; i < CONNS; i++) {
    connection(enc, i, t + (uint64_t)i * 2000);
    if (i % AT_ONCE == AT_ONCE - 1) /* a chunk per 50 connections, as a 50 ms flush */
      ASSERT_OK(ct_ctw_flush(enc));
    if (i + 1 == EARLY)
      held_early = held;
  }
  ASSERT_OK(ct_ctw_flush(enc));
  /* Asked, as the watch thread asks: nothing lost, and no memory kept. */
  uint64_t count[CT_WATCH_KINDS];
  ASSERT_EQ(ct_watch_kinds(watch, t + (uint64_t)CONNS * 2000, count), 0);
  long long grew = held - held_early;
  printf("test-flight-watch-memory: %lld bytes held after %d connections, %lld after %d\n",
         held_early, EARLY, held, CONNS);
  ASSERT_GT(held_early, 0);
  ASSERT_LT(grew, 256 * 1024);
  ct_ctw_free(enc);
  free(w.buf);
  ct_watch_free(watch);
  return 0;
}
