/* rings.pml - the v2 handshake (docs/PROTOCOL.md "v2"), for spin: per-thread
 * rings (publish by head, consume by tail), the engine's sleep and wake with
 * the writers' RELAXED look at tracer_sleeping (it may miss a flag just set)
 * and the engine's bounded timed wake, the lossless wait on harvest_epoch
 * (for ring room and for a free station), and station reuse (the engine
 * pushes a station only after it consumed the destroy in pass P and pass
 * P + 1 drained every ring).
 *
 * The story: thread A creates coroutine c (station s, gen 1) and writes NA
 * events of it into ring 0, then hands c over to thread B (a flag: the
 * program's own synchronization) and exits (ring 0 CLOSED). B destroys c
 * (ring 1), then creates a new coroutine: the file has one station, so B
 * waits (lossless) until the engine frees s, takes it (gen 2) and writes two
 * events of the new incarnation. Rings hold S records: A waits for room.
 *
 * Spin's interleaving is sequentially consistent; the weak orders are
 * modelled where the protocol relies on them being weak: a writer's relaxed
 * load of tracer_sleeping may return 0 while the flag is set (v2 has no
 * fence on the write path). The engine's timed wake (it sleeps at most
 * 100 ms while a ring is owned) is a wake the engine may take whenever it
 * has work it has not done (records in a ring, a station to free): a wake
 * that finds nothing changes nothing. The writers' own futex timeouts
 * (10 ms, lossless_ms) are not modelled: the properties hold without them.
 * The engine is one process here; ours is two threads: the harvest loop
 * copies, the formatter writes and pushes the station after it wrote pass
 * P + 1, i.e. no earlier than the model's engine does. A ring's writer moving
 * on to a spare ring when its own is full is the exit (CLOSED) and the claim
 * modelled here; the nudge of a napping engine is a hint no one waits for.
 *
 * Checked (spin -a; pan): no invalid end state (a writer asleep on the futex,
 * or the engine asleep, forever = a lost wake-up), no assertion violated:
 * every event harvested exactly once (no lost event), no record of an old
 * incarnation harvested after the new one began, no station pushed before
 * every record of its incarnation was harvested.
 *
 * Broken variants the test must see fail:
 *   -DBUG_EARLY_REUSE   push the station in the pass that consumed the destroy
 *   -DBUG_NO_RECHECK    a writer sleeps without re-checking after waiters++
 *   -DBUG_NO_TIMED_WAKE the engine sleeps until a byte: a missed flag hangs it */
#define S 2  /* records per ring */
#define NA 2 /* events of c (gen 1) after its create, by thread A */

#define CREATE 1
#define EVENT 2
#define DESTROY 5

byte head[2];        /* records published (writer's release store) */
byte tail[2];        /* records consumed (engine's release store) */
byte rgen[2 * S];    /* record contents: the station's gen when written */
byte rkind[2 * S];   /* and its kind */
byte stgen = 0;      /* station s's gen (the creator bumps it) */
byte qlen = 0;       /* free-station queue: s is on it */
bit sleeping;        /* tracer_sleeping */
chan sock = [1] of { bit }; /* wake-up bytes; a full socket drops (MSG_DONTWAIT) */
byte epoch;          /* harvest_epoch, the futex word */
byte waiters;
bit fsleep[2];       /* writer w blocked in FUTEX_WAIT */
bit handoff;         /* A handed c to B */
byte wdone;          /* writers finished (the engine then sees EOF) */
/* ghosts: records written / harvested per incarnation */
byte written[3];
byte harvested[3];

/* The v1 kick after a relaxed load: a set flag may be missed. */
inline look_kick() {
  atomic {
    if
    :: sleeping == 1 -> sleeping = 0; if :: nfull(sock) -> sock!1 :: full(sock) -> skip fi
    :: true -> skip /* relaxed: saw 0 */
    fi
  }
}

/* The lossless wait (corotracer__wait_room) for condition cond, writer w. */
inline wait_for(w, cond) {
  do
  :: cond -> break
  :: else ->
     look_kick();
     e0 = epoch;
     waiters++;
#ifndef BUG_NO_RECHECK
     if
     :: cond -> waiters--; break
     :: else ->
        atomic { if :: epoch == e0 -> fsleep[w] = 1 :: else -> skip fi };
        fsleep[w] == 0;
        waiters--
     fi
#else
     atomic { if :: epoch == e0 -> fsleep[w] = 1 :: else -> skip fi };
     fsleep[w] == 0;
     waiters--
#endif
  od
}

/* One event into ring r (writer r): wait for room (lossless), plain stores
 * of the record, release store of head, relaxed look at the flag. */
inline emit(r, k) {
  wait_for(r, head[r] - tail[r] < S);
  rgen[r * S + head[r] % S] = stgen;
  rkind[r * S + head[r] % S] = k;
  atomic { written[stgen]++; head[r]++ }
  look_kick()
}

proctype A() {
  byte e0;
  byte i = 0;
  stgen = 1; /* create: a fresh station, gen 1 */
  emit(0, CREATE);
  do
  :: i < NA -> emit(0, EVENT); i++
  :: else -> break
  od;
  handoff = 1;
  wdone++ /* the thread exits: ring 0 CLOSED */
}

proctype B() {
  byte e0;
  handoff == 1;
  emit(1, DESTROY);
  /* create: pop the free-station queue; lossless: wait for a push */
  do
  :: atomic { qlen > 0 -> qlen = 0 }; break
  :: else -> wait_for(1, qlen > 0)
  od;
  stgen++; /* gen 2 */
  emit(1, CREATE);
  emit(1, EVENT);
  wdone++
}

/* One pass of the engine: copy each ring's records (acquire head, release
 * tail), check each against the incarnation it knows, then the station
 * rule; then tell the writers (epoch, FUTEX_WAKE when waiters > 0). */
byte egen = 0;    /* the incarnation of s the engine has seen created */
byte pending = 0; /* 1: destroy consumed this pass; 2: push after the next full pass */
inline pass(found) {
  found = 0;
  start = pending;
  r = 0;
  do
  :: r < 2 ->
     do
     :: tail[r] < head[r] ->
        g = rgen[r * S + tail[r] % S];
        k = rkind[r * S + tail[r] % S];
        if
        :: k == CREATE -> assert(g == egen + 1); egen = g
        :: else -> assert(g == egen) /* never an old incarnation's record in a new one */
        fi;
        if
        :: k == DESTROY -> pending = 1
        :: else -> skip
        fi;
        harvested[g]++;
        tail[r]++;
        found = 1
     :: else -> break
     od;
     r++
  :: else -> break
  od;
#ifndef BUG_EARLY_REUSE
  if
  :: start == 2 -> assert(harvested[egen] == written[egen]); qlen = 1; pending = 0; found = 1
  :: start != 2 && pending == 1 -> pending = 2
  :: else -> skip
  fi;
#else
  if
  :: pending == 1 -> assert(harvested[egen] == written[egen]); qlen = 1; pending = 0; found = 1
  :: else -> skip
  fi;
#endif
  if
  :: found ->
     epoch++;
     if
     :: waiters > 0 -> fsleep[0] = 0; fsleep[1] = 0
     :: else -> skip
     fi
  :: else -> skip
  fi
}

proctype Engine() {
  bit found;
  byte r, g, k, start;
  do
  :: pass(found);
     if
     :: found -> skip
     :: else ->
        sleeping = 1; /* seq_cst store, then a full fence */
        pass(found);  /* the re-scan */
        if
        :: found -> sleeping = 0
        :: else ->
           if
           :: sock?_ -> skip /* a wake-up byte */
#ifndef BUG_NO_TIMED_WAKE
           :: head[0] != tail[0] || head[1] != tail[1] || pending != 0 -> skip /* timed wake */
#endif
           :: wdone == 2 -> break /* EOF: the writers are gone */
           fi;
           sleeping = 0
        fi
     fi
  od;
  pass(found); /* the final pass */
  assert(written[1] == NA + 2 && written[2] == 2);
  assert(harvested[1] == written[1] && harvested[2] == written[2])
}

init {
  atomic {
    run Engine();
    run A();
    run B()
  }
}
