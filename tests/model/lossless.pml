/* lossless.pml - the handshake between a probe writer and the engine, for
 * spin: ring publish and in-order consume, the engine's sleep (flag, re-scan,
 * wake-up byte), and the lossless wait (harvested_ev, waiters, futex word
 * harvest_epoch). docs/PROTOCOL.md "Sleep / wake" and "Lossless mode".
 *
 * Spin's interleaving is sequentially consistent: it checks the seq_cst pairs
 * (the protocol's Dekker pairs) as the code performs them. No timeouts are
 * modelled (not the engine's fallback poll, not the writer's 10 ms sleeps, not
 * --lossless-ms): the properties must hold without them.
 *
 * Checked (spin -a; pan): no invalid end state (a writer asleep on the futex
 * or an engine asleep on the socket forever = a lost wake-up), no assertion
 * violated: every event harvested, in order, none overwritten before the
 * engine copied it. W writers, each with its own ring of S slots (v2: a ring
 * per thread; v1 extension: a station per coroutine, same rule). */
#define S 2      /* slots per ring */
#define N 3      /* events per writer */
#define W 2      /* writers */

byte slot[W * S];       /* event index + 1 published in the slot, 0 = empty */
byte harvested_ev[W];   /* engine: events below it are copied */
byte epoch;             /* futex word */
byte waiters;
bit fsleep[W];          /* writer w is blocked in FUTEX_WAIT */
bit sleeping;           /* tracer_sleeping */
chan sock = [1] of { bit };  /* wake-up bytes; a full socket drops (MSG_DONTWAIT) */
byte enext[W];          /* engine: next index expected per ring */
byte wdone;             /* writers finished (the engine then sees EOF) */

inline kick() {
  atomic {
    if
    :: sleeping == 1 -> sleeping = 0; if :: nfull(sock) -> sock!1 :: full(sock) -> skip fi
    :: else -> skip
    fi
  }
}

proctype Writer(byte w) {
  byte k = 0;
  byte e0;
  do
  :: k < N ->
     /* lossless wait: room once event k - S was harvested */
     do
     :: harvested_ev[w] + S > k -> break
     :: else ->
        kick();
        e0 = epoch;
        waiters++;
#ifndef BUG_NO_RECHECK
        if
        :: harvested_ev[w] + S > k -> waiters--; break
        :: else ->
           /* FUTEX_WAIT(epoch, e0): sleeps only if the word still holds e0 */
           atomic { if :: epoch == e0 -> fsleep[w] = 1 :: else -> skip fi };
           fsleep[w] == 0;
           waiters--
        fi
#else
        /* the bug: sleep without re-checking after announcing ourselves */
        atomic { if :: epoch == e0 -> fsleep[w] = 1 :: else -> skip fi };
        fsleep[w] == 0;
        waiters--
#endif
     od;
     assert(k < S || enext[w] > k - S);   /* never overwrite an unharvested event */
     slot[w * S + k % S] = k + 1;          /* publish (release store) */
     kick();                               /* after a seq_cst publish: Dekker with sleeping */
     k++
  :: else -> break
  od;
  wdone++
}

/* One pass over the rings: copy what is published in order, then tell the
 * writers (harvested_ev, epoch, futex wake when waiters > 0). */
inline scan(found) {
  found = 0;
  w = 0;
  do
  :: w < W ->
     do
     :: enext[w] < N && slot[w * S + enext[w] % S] == enext[w] + 1 -> enext[w]++; found = 1
     :: else -> break
     od;
     harvested_ev[w] = enext[w];
     w++
  :: else -> break
  od;
  if
  :: found ->
     epoch++;
     if
     :: waiters > 0 -> w = 0; do :: w < W -> fsleep[w] = 0; w++ :: else -> break od
     :: else -> skip
     fi
  :: else -> skip
  fi
}

proctype Engine() {
  bit found;
  byte w;
  do
  :: scan(found);
     if
     :: found -> skip
     :: else ->
        sleeping = 1;          /* seq_cst store, then a full fence */
#ifndef BUG_NO_RESCAN
        scan(found);           /* the re-scan closes the race */
#endif
        if
        :: found -> sleeping = 0
        :: else ->
           if
           :: sock?_ -> skip   /* a wake-up byte */
           :: wdone == W -> break   /* EOF: the writers are gone */
           fi;
           sleeping = 0
        fi
     fi
  od;
  scan(found);                 /* the final scan */
  w = 0;
  do
  :: w < W -> assert(enext[w] == N); w++
  :: else -> break
  od
}

init {
  atomic {
    run Engine();
    run Writer(0);
    run Writer(1)
  }
}
