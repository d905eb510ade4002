/* findings_objs.c - what the stuck findings say about a wait object: its
 * name in the evidence, the last wake of its waiters (the root cause's last
 * trace), the fd reused under a waiter, a wake that went past one, and the
 * likely-idle test built on them (findings_stuck.c's and findings_sched.c's).
 * Helpers of the finding builders, like findings.c, which they build on. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/findings.h"

/* What c waits on, as evidence ("fd 7", "ptr mailbox (app.c:12)", "ptr 0x...") into buf. */
void ct_fmt_obj(const struct ct_state *st, const struct ct_coro *c, char *buf, size_t n) {
  char name[320];
  if (c->wait == CTP_WAIT_PTR && ct_fmt_data(st, c->pid, c->obj, name, sizeof name))
    snprintf(buf, n, "ptr %s", name); /* a global or static, by its name */
  else if (c->wait == CTP_WAIT_FD)
    snprintf(buf, n, "fd %" PRId64, (int64_t)c->obj);
  else if (c->wait == CTP_WAIT_PTR)
    snprintf(buf, n, "ptr 0x%016" PRIx64, c->obj);
  else if (c->wait == CTP_WAIT_COROUTINE)
    snprintf(buf, n, "coroutine %" PRIu64, c->obj);
  else
    snprintf(buf, n, "no wait object");
}

/* "coroutine 7 (label) at SITE" or "a plain thread (tid 101) at SITE"; a
 * wake without a site (COROTRACER_SITE_UNKNOWN: an adapter's wake from the
 * runtime's own loop, for a remote notify or a timer) says why. */
void ct_fmt_waker(const struct ct_state *st, const struct ct_coro *c, struct ct_rwake *w, char *buf,
                  size_t n) {
  char site[400];
  const struct ct_coro *wc = w->from ? ct_map_get(&st->coros, w->from, 0) : NULL;
  const char *label = wc ? ct_label_of(st, wc) : NULL;
  w->site.pid = c->pid;
  ct_symbolize_site(st, &w->site);
  ct_fmt_site(&w->site, site, sizeof site);
  const char *how = w->site.site ? "" : " (woken by the runtime's scheduler loop)";
  if (w->from)
    snprintf(buf, n, "coroutine %" PRIu64 "%s%s%s at %s%s", w->from, label ? " (" : "",
             label ? label : "", label ? ")" : "", site, how);
  else if (w->tid)
    snprintf(buf, n, "a plain thread (tid %u) at %s%s", w->tid, site, how);
  else
    snprintf(buf, n, "a plain thread at %s%s", site, how);
}

/* The coroutine that parked on c's fd number after c did (so the fd was
 * closed and reused under c; before its destroy, for a destroyed one), or 0. */
uint64_t ct_fd_reused_by(const struct ct_state *st, const struct ct_coro *c) {
  const struct ct_fduse *fu = c->wait == CTP_WAIT_FD ? ct_map_get(&st->fds, c->obj, c->pid) : NULL;
  return fu && fu->id != c->id && fu->ts > c->susp_ts &&
                 (c->state != CT_CS_DESTROYED || fu->ts < c->destroy_ts)
             ? fu->id
             : 0;
}

/* Another coroutine parked on c's wait object was woken after c parked
 * (before its destroy, for a destroyed one): wakes kept coming to that
 * object's waiters, just not to c (a notify_one to a pool of workers that
 * should have been a notify_all). */
int ct_waiter_woken_since(const struct ct_state *st, const struct ct_coro *c) {
  const struct ct_wakers *w = c->wait ? ct_map_get(&st->objs, c->obj, c->wait) : NULL;
  return w && w->last_ts > c->susp_ts &&
         (c->state != CT_CS_DESTROYED || w->last_ts < c->destroy_ts);
}

/* Parked where its last CT_IDLE_WAKES or more woken suspensions were, its fd not
 * reused, no other waiter on its object woken since: more likely waiting for
 * work that did not come (an accept loop) than lost. */
int ct_likely_idle(const struct ct_state *st, const struct ct_coro *c) {
  return ct_parked_idle(st, c) && !ct_waiter_woken_since(st, c);
}

/* findings.h: the first half of ct_likely_idle. For an operation dropped at
 * a stop, whose own drop wakes its object's waiters. */
int ct_parked_idle(const struct ct_state *st, const struct ct_coro *c) {
  return c->woken_here >= CT_IDLE_WAKES && c->woken_site == c->susp_site && !ct_fd_reused_by(st, c);
}

/* findings.h: by the name of the text site (a token with CT_SYM_TEXT_BIT;
 * any other site is code). */
int ct_dropped(const struct ct_state *st, const struct ct_coro *c) {
  struct ct_sym sym;
  return c->state == CT_CS_SUSPENDED && c->woken && (c->woke_site & CT_SYM_TEXT_BIT) && st->sym &&
         ct_symbolize(st->sym, c->pid, c->woke_site, 0, &sym) == 0 && sym.function &&
         strcmp(sym.function, CT_DROPPED_FUNCTION) == 0;
}

/* The last wake of a coroutine parked on c's wait object (an fd or a ptr),
 * into rc_->obj_wake (NULL when none was ever woken), and said after
 * buf[0..o): who woke it, where, when, and whether before c parked (the
 * wake it needed went to an earlier waiter) or after (to another waiter,
 * not to c). Returns the new o, or -1 on ENOMEM. */
long ct_obj_last_wake(const struct ct_report *r, const struct ct_state *st, const struct ct_coro *c,
                      struct ct_rcoro *rc_, char *buf, size_t n, size_t o) {
  const struct ct_wakers *w = ct_map_get(&st->objs, c->obj, c->wait);
  char who[512], t[32];
  if (o >= n)
    return (long)o;
  if (!w || !w->last_ts)
    return (long)(o + (size_t)snprintf(buf + o, n - o,
                                       "; no coroutine parked on its object was ever woken"));
  if (!(rc_->obj_wake = malloc(sizeof *rc_->obj_wake)))
    return -1;
  *rc_->obj_wake = (struct ct_rwake){
      .from = w->last_from, .ts = w->last_ts, .tid = w->last_tid, .site = {.site = w->last_site}};
  ct_fmt_waker(st, c, rc_->obj_wake, who, sizeof who);
  return (long)(o + (size_t)snprintf(buf + o, n - o, "; its object's last wake: at %s by %s, %s",
                                     ct_at(r, w->last_ts, t, sizeof t), who,
                                     w->last_ts <= c->susp_ts
                                         ? "before it parked"
                                         : "after it parked, to another waiter"));
}
