/* status.c - the live status line on stderr and the exit summary. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "engine/clock.h"
#include "engine/harvest.h"
#include "engine/status.h"

void ct_status_init(struct ct_status *s, int enabled) {
  s->live = enabled;
  s->tty = isatty(STDERR_FILENO);
  s->last_ns = ct_now_ns(CLOCK_MONOTONIC);
  s->last_harvested = 0;
  s->shown = 0;
}

int ct_status_due(const struct ct_status *s, uint64_t now_ns) {
  return s->live && now_ns - s->last_ns >= (uint64_t)CT_STATUS_MS * 1000000u;
}

void ct_status_tick(struct ct_status *s, uint64_t now_ns, const struct ct_harvest *h, uint32_t live,
                    uint32_t untraced) {
  double secs = (double)(now_ns - s->last_ns) / 1e9;
  double rate = (double)(h->harvested + h->captured - s->last_harvested) / secs;
  /* On a terminal the line is redrawn in place; elsewhere (--status into a
   * file or pipe) each update is a line of its own. */
  fprintf(stderr, "%scorotracer: %.0f ev/s, %u live, stations %u/%u, lost %llu, untraced %u%s",
          s->tty ? "\r" : "", rate, live, h->used, h->n,
          (unsigned long long)(h->live_lost + h->late), untraced, s->tty ? "\033[K" : "\n");
  fflush(stderr);
  s->last_ns = now_ns;
  s->last_harvested = h->harvested + h->captured;
  s->shown = s->tty;
}

void ct_status_clear(struct ct_status *s) {
  if (!s->shown)
    return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  s->shown = 0;
}

/* Stations ordered by lost events, most first. */
static const struct ct_harvest *sort_h;
static int by_lost(const void *a, const void *b) {
  const struct ct_station_state *x = &sort_h->st[*(const uint32_t *)a];
  const struct ct_station_state *y = &sort_h->st[*(const uint32_t *)b];
  uint64_t lx = x->events - x->harvested, ly = y->events - y->harvested;
  return lx < ly ? 1 : lx > ly ? -1 : 0;
}

void ct_status_summary(const struct ct_harvest *h, uint64_t events, uint64_t lost,
                       uint32_t untraced, double secs, const char *trace, const char *exit_desc) {
  fprintf(stderr,
          "corotracer: %s; %.2f s; %llu events harvested, %llu lost of %llu; %u coroutines traced, "
          "%u untraced (no free station); trace: %s\n",
          exit_desc, secs, (unsigned long long)h->harvested, (unsigned long long)lost,
          (unsigned long long)events, h->used - h->v2_stations + h->incarnations, untraced, trace);
  if (!lost || !h->used)
    return;
  uint32_t *idx = malloc(h->used * sizeof(*idx));
  if (!idx)
    return;
  for (uint32_t i = 0; i < h->used; i++)
    idx[i] = i;
  sort_h = h;
  qsort(idx, h->used, sizeof(*idx), by_lost);
  fprintf(stderr, "corotracer: most lost:");
  for (uint32_t i = 0; i < h->used && i < 3; i++) {
    const struct ct_station_state *st = &h->st[idx[i]];
    if (st->events == st->harvested)
      break;
    fprintf(stderr, "%s probe_id %llu (station %u) %llu of %llu", i ? "," : "",
            (unsigned long long)st->probe_id, idx[i],
            (unsigned long long)(st->events - st->harvested), (unsigned long long)st->events);
  }
  fputc('\n', stderr);
  free(idx);
}
