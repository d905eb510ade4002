/* findings_behind.c - the stuck coroutines behind others (findings_stuck.c):
 * those waiting for a stuck one to finish, down a chain of joins, and those
 * held behind coroutines that keep what they wait on; each reported in its
 * root's finding, with the chain as its evidence. Calls none of
 * findings_stuck.c's functions. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/findings.h"
#include "analysis/findings_stuck.h"

/* The stuck entry of c (idx: id -> sk index), or NULL. */
const struct stuck *ct_stuck_of(const struct stuck *sk, struct ct_map *idx,
                                const struct ct_coro *c) {
  uint64_t *ix = ct_map_get(idx, c->id, 0);
  return ix && sk[*ix].c == c ? &sk[*ix] : NULL;
}

/* Marks each coroutine that waits for a stuck one to finish (wait 4),
 * directly or down a chain of joins, as behind the chain's end: the first
 * coroutine on it that waits on something else, or is in a deadlock. */
void ct_stuck_mark_behind(struct stuck *sk, size_t n, struct ct_map *idx) {
  for (size_t i = 0; i < n; i++) {
    size_t k = i, steps = 0;
    while (sk[k].c->wait == CTP_WAIT_COROUTINE && sk[k].waits_for && sk[k].cat != CAT_DEADLOCK &&
           steps++ <= n) {
      uint64_t *next = ct_map_get(idx, sk[k].waits_for, 0);
      if (!next)
        break;
      k = (size_t)*next;
    }
    if (k != i && steps <= n && sk[i].cat != CAT_DEADLOCK) {
      sk[i].behind = 1;
      sk[i].root = k;
    }
  }
}

/* Marks each stuck coroutine parked on a ptr whose waiters only coroutines
 * created at one other site ever woke (released it), some of them stuck too,
 * as held behind one of those: it waits for what they hold (a connection slot
 * the stranded connections keep), one root cause with theirs. Not a
 * coroutine others are behind already, nor behind a root that is itself. */
int ct_stuck_mark_held(const struct ct_state *st, struct stuck *sk, size_t n) {
  struct ct_map roots; /* (create site, pid) -> 1 + the first stuck coroutine made there */
  ct_map_init(&roots, sizeof(uint64_t));
  int fresh, rc = -ENOMEM;
  for (size_t i = 0; i < n; i++) {
    uint64_t *k;
    if (!sk[i].behind && sk[i].cat <= CAT_EXIT && sk[i].c->create_site) {
      if (!(k = ct_map_put(&roots, sk[i].c->create_site, sk[i].c->pid, &fresh)))
        goto out;
      if (fresh)
        *k = i + 1;
    }
  }
  for (size_t i = 0; i < n; i++) {
    const struct ct_coro *c = sk[i].c;
    const struct ct_wakers *w =
        c->wait == CTP_WAIT_PTR ? ct_map_get(&st->objs, c->obj, CTP_WAIT_PTR) : NULL;
    const uint64_t *k =
        w && !w->by_thread && !w->waker_mixed && w->waker_site && w->waker_site != c->create_site
            ? ct_map_get(&roots, w->waker_site, c->pid)
            : NULL;
    if (!k || sk[i].behind || sk[i].cat > CAT_EXIT || sk[*k - 1].behind)
      continue;
    int rooted = 0; /* a join chain ends at it: it stays a root */
    for (size_t j = 0; j < n && !rooted; j++)
      rooted = sk[j].behind && sk[j].root == i;
    if (!rooted) {
      sk[i].behind = sk[i].held = 1;
      sk[i].root = *k - 1;
    }
  }
  for (size_t i = 0; i < n; i++) /* a root marked held after: no finding would list it */
    if (sk[i].held && sk[sk[i].root].behind)
      sk[i].behind = sk[i].held = 0;
  rc = 0;
out:
  ct_map_free(&roots);
  return rc;
}

/* Appends to cs[0..m) the coroutines behind one of them (a finding of cat;
 * cs has room for n); returns how many, *nheld of them held (mark_held). */
size_t ct_stuck_add_behind(const struct stuck *sk, size_t n, const struct ct_coro **cs, size_t m,
                           enum cat cat, size_t *nheld) {
  size_t nb = 0;
  *nheld = 0;
  for (size_t i = 0; i < n; i++)
    if (sk[i].behind && sk[sk[i].root].cat == cat && !sk[sk[i].root].behind) {
      cs[m + nb++] = sk[i].c;
      *nheld += (size_t)sk[i].held;
    }
  return nb;
}

/* "coroutine 3 (consumer)" into buf. */
static void fmt_coro(const struct ct_state *st, const struct ct_coro *c, char *buf, size_t n) {
  const char *label = ct_label_of(st, c);
  snprintf(buf, n, "coroutine %" PRIu64 "%s%s%s", c->id, label ? " (" : "", label ? label : "",
           label ? ")" : "");
}

/* One hop of a chain to k, "coroutine 3 (consumer)", into buf; when k is
 * a lost completion's root (an operation destroyed without running: an
 * adapter's stand-in, which a thread waiting in a future's get() joins), the
 * operation by its start site: "the operation started at f (x.cpp:9)
 * (coroutine 3 (async_receive))". */
static void fmt_hop(const struct ct_state *st, const struct stuck *k, int root, char *buf,
                    size_t n) {
  char who[128], site[400];
  fmt_coro(st, k->c, who, sizeof who);
  if (!root || k->cat != CAT_DROPPED) {
    snprintf(buf, n, "%s", who);
    return;
  }
  struct ct_rsite rs = {.site = k->c->susp_site, .pid = k->c->pid};
  ct_symbolize_site(st, &rs);
  snprintf(buf, n, "the operation started at %s (%s)", ct_fmt_site(&rs, site, sizeof site), who);
}

/* The chain from b to its root: "waits for coroutine 3 (consumer), which
 * waits on ptr 0x..." into buf. */
static void fmt_chain(const struct ct_state *st, const struct stuck *sk, struct ct_map *idx,
                      const struct stuck *b, char *buf, size_t n) {
  size_t o = 0;
  const struct stuck *k = b;
  for (size_t hops = 0; o < n && k != &sk[b->root] && hops < 8; hops++) {
    uint64_t *next = ct_map_get(idx, k->waits_for, 0);
    if (!next)
      break;
    k = &sk[*next];
    char who[560];
    fmt_hop(st, k, k == &sk[b->root], who, sizeof who);
    o += (size_t)snprintf(buf + o, n - o, "%s%s", hops ? ", which waits for " : "waits for ", who);
  }
  if (o < n && k != &sk[b->root])
    o += (size_t)snprintf(buf + o, n - o, ", ...");
  const struct stuck *r = &sk[b->root];
  char obj[336];
  ct_fmt_obj(st, r->c, obj, sizeof obj);
  if (o >= n)
    return;
  if (r->cat == CAT_DEADLOCK)
    snprintf(buf + o, n - o, ", which is in a deadlock");
  else if (r->cat == CAT_DROPPED)
    snprintf(buf + o, n - o, ", on %s, destroyed without running", obj);
  else if (r->cat >= CAT_SCHED)
    snprintf(buf + o, n - o, ", which was woken and never resumed");
  else if (r->c->wait && r->c->wait != CTP_WAIT_COROUTINE)
    snprintf(buf + o, n - o, ", which waits on %s", obj);
  else
    snprintf(buf + o, n - o, ", which is suspended with no wait object");
}

/* Why held coroutine b is behind its root: "waits on mailbox, which only
 * coroutines created at f (x.c:9) ever released (64 of them stuck here):
 * it waits for what they hold" into buf. */
static void fmt_held(const struct ct_state *st, const struct stuck *sk, size_t n,
                     const struct stuck *b, char *buf, size_t len) {
  const struct ct_coro *root = sk[b->root].c;
  struct ct_rsite rs = {.site = root->create_site, .pid = root->pid};
  char site[400], obj[48];
  size_t holders = 0;
  for (size_t i = 0; i < n; i++)
    holders += !sk[i].behind && sk[i].c->create_site == root->create_site &&
               sk[i].c->pid == root->pid && sk[i].cat == sk[b->root].cat;
  ct_symbolize_site(st, &rs);
  ct_fmt_obj(st, b->c, obj, sizeof obj);
  snprintf(buf, len,
           "waits on %s, which only coroutines created at %s ever released (%zu of them are "
           "stuck above): it waits for what they hold",
           obj, ct_fmt_site(&rs, site, sizeof site), holders);
}

/* Why b is behind its root: what it holds (fmt_held), or the chain of joins. */
static void fmt_behind(const struct ct_state *st, const struct stuck *sk, struct ct_map *idx,
                       const struct stuck *b, char *buf, size_t n) {
  if (b->held)
    fmt_held(st, sk, idx->n, b, buf, n); /* idx: one entry per stuck coroutine */
  else
    fmt_chain(st, sk, idx, b, buf, n);
}

/* Per-coroutine evidence of one behind another: the chain. */
int ct_stuck_behind_evidence(const struct ct_report *r, const struct ct_state *st,
                             const struct stuck *sk, struct ct_map *idx, const struct stuck *b,
                             struct ct_rcoro *rc_) {
  char chain[CT_COROEV_MAX - 160], t[32], ev[CT_COROEV_MAX];
  fmt_behind(st, sk, idx, b, chain, sizeof chain);
  rc_->waits_for = b->waits_for;
  rc_->never_destroyed = ct_stuck_leak_worthy(r, b->c);
  snprintf(ev, sizeof ev, "since %s it %s%s, not a separate finding%s",
           ct_at(r, b->c->susp_ts, t, sizeof t), chain, b->held ? "" : ": stuck behind it",
           rc_->never_destroyed ? "; also never destroyed (not repeated as a leak)" : "");
  return ct_keep_evidence(rc_, ev);
}

/* Appends the nb coroutines behind the finding's to its title: those that
 * wait for them to finish, and the nheld among them that wait on what they
 * hold. */
void ct_stuck_title_behind(struct ct_finding *f, size_t nb, size_t nheld) {
  size_t tl = strlen(f->title), nj = nb - nheld;
  if (nj && tl < sizeof f->title)
    tl += (size_t)snprintf(f->title + tl, sizeof f->title - tl,
                           "; %zu more wait%s for them to finish", nj, nj == 1 ? "s" : "");
  if (nheld && tl < sizeof f->title)
    snprintf(f->title + tl, sizeof f->title - tl, "; %zu more wait%s on what they hold", nheld,
             nheld == 1 ? "s" : "");
}

/* The finding's line for its nb coroutines behind others: the first chain. */
int ct_stuck_behind_summary(const struct ct_report *r, const struct ct_state *st,
                            const struct stuck *sk, struct ct_map *idx, struct ct_finding *f,
                            size_t nb) {
  (void)r;
  for (size_t i = 0; i < f->ncoros; i++) {
    const struct ct_coro *c = ct_map_get(&st->coros, f->coros[i].probe_id, 0);
    const struct stuck *b = c ? ct_stuck_of(sk, idx, c) : NULL;
    if (!b || !b->behind)
      continue;
    char who[128], chain[640];
    fmt_coro(st, c, who, sizeof who);
    fmt_behind(st, sk, idx, b, chain, sizeof chain);
    ct_add_evidence(f, "%s %s%s", who, chain,
                    nb > 1 ? "; the others listed as behind wait for them the same way"
                           : ": one bug, one finding");
    return 0;
  }
  return 0;
}
