/* status.h - the live status line and the exit summary on stderr (status.c). */
#ifndef CT_ENGINE_STATUS_H
#define CT_ENGINE_STATUS_H

#include <stdint.h>

#include "engine/harvest.h"

#define CT_STATUS_MS 250
struct ct_status {
  int live; /* live status line enabled */
  int tty;  /* stderr is a terminal: redraw in place */
  uint64_t last_ns, last_harvested;
  int shown; /* a status line is on screen */
};

/* enabled: draw the live line (stderr a terminal, or --status). */
void ct_status_init(struct ct_status *s, int enabled);
/* 1 when the status line is shown and CT_STATUS_MS have passed. */
int ct_status_due(const struct ct_status *s, uint64_t now_ns);
/* Redraw the status line. */
void ct_status_tick(struct ct_status *s, uint64_t now_ns, const struct ct_harvest *h, uint32_t live,
                    uint32_t untraced);
/* Erase the status line. */
void ct_status_clear(struct ct_status *s);
/* The exit summary (stderr). */
void ct_status_summary(const struct ct_harvest *h, uint64_t events, uint64_t lost,
                       uint32_t untraced, double secs, const char *trace, const char *exit_desc);

#endif /* CT_ENGINE_STATUS_H */
