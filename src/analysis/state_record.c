/* state_record.c - the records of a trace other than events (meta, module,
 * coroutine, station_end, end, cut, site, and a flight dump's snapshot and
 * window) into the state, by their one meaning (record.h): what the report
 * knows of the run, its modules, its coroutines' facts and labels. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/record.h"
#include "analysis/state.h"
#include "common/grow.h"

#define CT_SITE_TEXT_MAX 1024 /* a text site's file or function, decoded */

/* Copies string key of l, when l has it, into buf (n bytes). */
static void copy_str(const struct ct_line *l, int key, const struct ct_str *str, char *buf,
                     size_t n) {
  if (CT_HAS(l, key))
    ct_str_copy(str, buf, n);
}

/* FNV-1a of a label's text: its key in the label map. */
static uint64_t label_hash(const char *t) {
  uint64_t h = 1469598103934665603ull;
  for (; *t; t++)
    h = (h ^ (unsigned char)*t) * 1099511628211ull;
  return h;
}

/* The index of label str among the run's (one copy per distinct text) into
 * *ix, 0 for an empty one; 0 or -ENOMEM. Two texts of one hash (unlikely)
 * both stay: the second is found by its index only. */
static int intern_label(struct ct_state *s, const struct ct_str *str, uint32_t *ix) {
  char buf[64];
  ct_str_copy(str, buf, sizeof buf);
  *ix = 0;
  if (!buf[0])
    return 0;
  uint64_t h = label_hash(buf);
  uint32_t *known = ct_map_get(&s->labelmap, h, 0);
  if (known && !strcmp(s->labels[*known], buf)) {
    *ix = *known;
    return 0;
  }
  char *dup = NULL;
  int fresh = 0;
  if (s->nlabels == UINT32_MAX ||
      ct_grow((void **)&s->labels, &s->caplabels, s->nlabels + 1, sizeof *s->labels, 16) ||
      !(dup = strdup(buf)) || (!known && !(known = ct_map_put(&s->labelmap, h, 0, &fresh)))) {
    free(dup);
    return -ENOMEM;
  }
  if (fresh)
    *known = s->nlabels;
  s->labels[s->nlabels] = dup;
  *ix = s->nlabels++;
  return 0;
}

int ct_state_record(struct ct_state *s, uint64_t lineno, const struct ct_line *l) {
  struct ct_coro *c;
  switch (l->type) {
  case CT_LINE_EVENT:
    return 0; /* (ct_state_line's own) */
  case CT_LINE_META: {
    struct ct_rec_meta mt;
    ct_rec_meta(l, &mt);
    s->has_meta = 1;
    if (mt.run_id)
      ct_str_copy(mt.run_id, s->run_id, sizeof s->run_id);
    if (mt.host)
      ct_str_copy(mt.host, s->host, sizeof s->host);
    if (mt.has_mono)
      s->meta_mono_ns = mt.mono_ns;
    if (mt.has_target_pid)
      s->target_pid = mt.target_pid;
    return 0;
  }
  case CT_LINE_MODULE: {
    char path[PATH_MAX];
    ct_str_copy(&l->path, path, sizeof path);
    s->modules++;
    int rc = ct_symbolizer_add_module(s->sym, (uint32_t)l->pid, l->start, l->end, l->offset, path);
    if (!rc && CT_HAS(l, CT_K_BUILD_ID)) { /* a rebuilt file must not name lines */
      char id[129];
      ct_str_copy(&l->build_id, id, sizeof id);
      rc = ct_symbolizer_set_build_id(s->sym, path, id);
    }
    if (rc && !s->sym_err)
      s->sym_err = rc; /* a bad module line costs symbols, not the report */
    return 0;
  }
  case CT_LINE_COROUTINE: {
    struct ct_rec_coro rc;
    if (!(c = ct_state_coro(s, l->probe_id)))
      return -ENOMEM;
    if (ct_rec_new_incarnation(c->state == CT_CS_DESTROYED, l))
      ct_state_new_incarnation(s, c); /* its id reused */
    c->created = 1;
    ct_rec_coro(l, &rc);
    if (rc.has_station)
      c->station = (uint32_t)rc.station + 1;
    if (rc.has_pid)
      c->pid = (uint32_t)rc.pid;
    if (rc.label && intern_label(s, rc.label, &c->label))
      return -ENOMEM;
    if (rc.has_create_site)
      c->create_site = rc.create_site;
    if (rc.has_birth)
      c->birth_ts = rc.birth_ts;
    return 0;
  }
  case CT_LINE_STATION_END:
    s->stations++;
    /* A sum of counts the target may have written: saturate, never wrap. */
    s->station_lost =
        s->station_lost + l->lost < s->station_lost ? UINT64_MAX : s->station_lost + l->lost;
    s->corrupt_stations += CT_HAS(l, CT_K_CORRUPT) && l->corrupt;
    /* With a reused id, only the station of its current incarnation counts. */
    if (l->lost && (c = ct_map_get(&s->coros, l->probe_id, 0)) &&
        (!c->station || !CT_HAS(l, CT_K_STATION) || c->station == l->station + 1))
      c->station_lost += l->lost;
    return 0;
  case CT_LINE_END: {
    struct ct_rec_end e;
    char why[160];
    if (ct_rec_end(l, s->has_end, &e, why, sizeof why)) {
      if (!s->record_damage[0])
        snprintf(s->record_damage, sizeof s->record_damage, "line %" PRIu64 ": %s", lineno, why);
      ct_state_bad_line(s, lineno, CT_LINE_SHAPE);
      return 0;
    }
    s->has_end = 1;
    if (e.has_ts)
      s->end_ts = e.ts;
    s->exit_has_code = e.has_code;
    s->exit_has_signal = e.has_signal;
    s->exit_code = e.code;
    s->exit_signal = e.signal;
    copy_str(l, CT_K_NAME, &l->exit_name, s->exit_name, sizeof s->exit_name);
    s->has_end_counts = e.has_counts;
    s->end_events = e.events;
    s->end_harvested = e.harvested;
    s->end_lost = e.lost;
    s->untraced = e.untraced;
    copy_str(l, CT_K_ERROR, &l->error, s->end_error, sizeof s->end_error);
    return 0;
  }
  case CT_LINE_PROCESS:
    return 0;
  case CT_LINE_CUT:
    copy_str(l, CT_K_REASON, &l->reason, s->cut_reason, sizeof s->cut_reason);
    if (!s->cut_reason[0])
      strcpy(s->cut_reason, "a write error");
    return 0;
  case CT_LINE_OTHER:
    s->other_records++;
    return 0;
  case CT_LINE_SNAPSHOT:
    return ct_state_snapshot(s, lineno, l);
  case CT_LINE_WINDOW:
    ct_state_window(s, l);
    return 0;
  case CT_LINE_SITE: { /* a text site (corotracer_site): named, not symbolized */
    char file[CT_SITE_TEXT_MAX], function[CT_SITE_TEXT_MAX];
    ct_str_copy(&l->file, file, sizeof file);
    ct_str_copy(&l->function, function, sizeof function);
    int rc = ct_symbolizer_add_text(s->sym, l->site, file, l->line > INT32_MAX ? 0 : (int)l->line,
                                    function);
    if (rc && rc != -EINVAL && !s->sym_err)
      s->sym_err = rc; /* as for a module line: symbols lost, not the report */
    return 0;
  }
  }
  return 0;
}
