/* flight_watch.h - the flight recorder's live findings (flight_watch.c): a
 * watch thread fed the window's chunks through the engine's watch callback
 * (engine/flight.h), feeding analysis/watch.c, for `run --dump-on`. */
#ifndef CT_RUN_FLIGHT_WATCH_H
#define CT_RUN_FLIGHT_WATCH_H

#include <stddef.h>
#include <stdint.h>

/* --dump-on's list (exit, lost_wakeup, deadlock, blocker, starvation, any,
 * comma-separated) as finding kinds (analysis/watch.h bits) and exit.
 * 0 or -EINVAL. */
int ct_fwatch_parse(const char *list, unsigned *mask, int *on_exit);
struct ct_fwatch;
/* A watch thread (normal priority: call it before the harvest loop takes a
 * real-time one) for the kinds in mask, with the report's thresholds (ns);
 * window_bytes: the window's size (a kind dumps again only once the window
 * has turned over). 0 or -errno. */
int ct_fwatch_start(struct ct_fwatch **out, unsigned mask, uint64_t stuck_ns, uint64_t runnable_ns,
                    uint64_t blocker_ns, uint64_t window_bytes);
/* A chunk the window took (the formatter thread, ctx the watch): copied for
 * the watch thread, or skipped when it is 64 chunks behind (never waits);
 * the watch is told of the gap and judges nothing across it. */
void ct_fwatch_chunk(void *ctx, const uint8_t *p, size_t n);
/* The fd (an eventfd) readable when kinds were found: the harvest loop
 * polls it, then calls ct_fwatch_take. -1 for NULL. */
int ct_fwatch_fd(const struct ct_fwatch *fw);
/* The kinds found since the last take (bits), for the harvest thread (the
 * fd drained). */
unsigned ct_fwatch_take(struct ct_fwatch *fw);
/* Stop and free the watch (NULL: nothing). Returns the chunks it skipped. */
uint64_t ct_fwatch_stop(struct ct_fwatch *fw);

#endif /* CT_RUN_FLIGHT_WATCH_H */
