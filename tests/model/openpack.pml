/* openpack.pml - the open pack in the ring (docs/ROUTE1.md "Latency", docs/PROTOCOL.md
 * "v2"), for spin: one writer appends N switches to packs of at most K entries, each
 * pack written in place beyond head (entries, then its count: the release store of the
 * header's counts word; ring->open once a pack, after its first entry) and published by a
 * head store when it closes. The engine, each pass, first gives the published packs (a
 * pack whose first entries it took while open gives only the rest), then, when nothing
 * published waits, may take the open pack's entries it has not taken (src/engine/
 * rings_open.c: taken when it stayed the same for a pass, or its writer is gone: here at
 * any pass, which covers every such choice). The writer may be killed (KILLED): its open
 * pack is never published and the final pass takes it.
 *
 * Spin's interleaving is sequentially consistent: the release/acquire pairs (entry bytes
 * before counts, counts and header before open, the engine's head, open, counts in that
 * order) are what makes the real machine's order the one modelled here; each shared word
 * is one step.
 *
 * Checked (spin -a; pan): every switch the writer recorded reaches the trace exactly once
 * and in order (assertions on each one given and at the end), no invalid end state.
 *
 * Broken variants the test must see fail:
 *   -DBUG_NO_REST      a published pack is given whole, though entries were taken open
 *   -DBUG_COUNT_FIRST  the writer stores the count before the entry it counts
 *   -DBUG_OPEN_STALE   the engine takes the pack at open without checking it is at head */
#define N 4 /* switches */
#define K 2 /* entries a pack holds */
#define P 4 /* packs at most (N / 1) */

byte ent[P * K]; /* entry bytes: the switch's number (1..N), 0 never written */
byte cnt[P];     /* each pack's counts word: its entries */
byte head;       /* packs published (the ring's head, in packs here) */
byte open;       /* 1 + the pack open at head, 0 none yet */
bit done;        /* the writer exited (its last pack published) or was killed */

proctype Writer() {
  byte e = 1, p;
  bit isopen = 0;
  do
  :: e <= N ->
     if
     :: isopen && cnt[p] == K -> head++; isopen = 0 /* full: published */
     :: else -> skip
     fi;
     if
     :: !isopen -> /* a new pack at head */
        p = head;
#ifndef BUG_COUNT_FIRST
        ent[p * K] = e;
        cnt[p] = 1;
#else
        cnt[p] = 1;
        ent[p * K] = e;
#endif
        open = p + 1; /* after the header and the first count */
        isopen = 1
     :: else ->
#ifndef BUG_COUNT_FIRST
        ent[p * K + cnt[p]] = e;
        cnt[p] = cnt[p] + 1
#else
        cnt[p] = cnt[p] + 1;
        ent[p * K + cnt[p] - 1] = e
#endif
     fi;
     e++
  :: else -> break
  od;
#ifndef KILLED
  if
  :: isopen -> head++ /* the thread's exit publishes its last pack */
  :: else -> skip
  fi;
#endif
  done = 1
}

byte next = 1; /* the next switch the trace must get */

/* The trace gets entries [k0, k1) of pack p. */
inline give(p, k0, k1) {
  k = k0;
  do
  :: k < (k1) -> assert(ent[(p) * K + k] == next); next++; k++
  :: else -> break
  od
}

proctype Engine() {
  byte t = 0;         /* packs consumed (the ring's tail) */
  byte taken_at = 255, taken_n = 0;
  byte h, o, c, k, k0;
  bit fin = 0;
  do
  :: fin -> break
  :: else ->
     if
     :: done -> fin = 1 /* one more pass, the final one */
     :: else -> skip
     fi;
     h = head; /* acquire */
     do
     :: t < h ->
#ifndef BUG_NO_REST
        k0 = (taken_at == t -> taken_n : 0);
#else
        k0 = 0;
#endif
        give(t, k0, cnt[t]);
        t++
     :: else -> break
     od;
     o = open; /* acquire, after head */
#ifndef BUG_OPEN_STALE
     if
     :: o == h + 1 && t == h ->
#else
     if
     :: o > 0 && t == h ->
#endif
        c = cnt[o - 1]; /* acquire: the entries below it are there */
        k0 = (taken_at == o - 1 -> taken_n : 0);
        if
        :: c > k0 -> give(o - 1, k0, c); taken_at = o - 1; taken_n = c
        :: else -> skip
        fi
     :: !fin -> skip /* still growing: left for a later pass (not the final one) */
     :: else -> skip /* none open at head */
     fi
  od;
  /* Whatever the writer recorded is in the trace: a killed writer's open
   * pack was taken by the final pass. */
  assert(next == N + 1)
}

init {
  atomic {
    run Writer();
    run Engine()
  }
}
