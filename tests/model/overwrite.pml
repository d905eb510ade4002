/* overwrite.pml - the flight recorder's full ring (docs/PROTOCOL.md
 * "Overwrite mode", src/probe/ring.c ct_ring_overwrite, src/engine/rings.c
 * drain_ring): a writer that finds its ring full takes the oldest records
 * back by moving tail with a CAS and counts them lost; the engine copies
 * [tail, head), confirms the tail with a CAS that leaves it as it is (an RMW
 * reads the newest value), keeps only the records at or above it, and gives
 * the room back with a CAS to max(its end, the writer's tail), never a plain
 * store that would undo the writer's move.
 *
 * Each slot holds the number of the event written there. Spin's
 * interleaving is sequentially consistent; the protocol's orders are the
 * CASes' acq_rel (the writer's acquire orders the engine's copies before its
 * overwrites; the engine's CAS reads the writer's release), which SC gives.
 *
 * Checked: no assertion violated: every record the engine keeps is the
 * event its position says (no record written over while copied kept), every
 * event is harvested or counted lost exactly once (none lost uncounted, none
 * twice), in order.
 *
 * Broken variants the test must see fail:
 *   -DBUG_NO_CONFIRM  the engine keeps its whole copy without reading the
 *                     tail after it (a record written over is kept)
 *   -DBUG_PLAIN_TAIL  the engine gives the room back with a plain store
 *                     (the writer's move undone)
 *   -DBUG_LATE_CLAIM  the engine confirms the tail after its copy but gives
 *                     the room back only later (a record the writer takes
 *                     back in between is kept and counted lost: twice)
 *   -DBUG_TAIL_FIRST  tail read before head (more than a ring between) */
#define S 4    /* records per ring */
#define D 2    /* records the writer takes back when full */
#define N 9    /* events the writer writes */

byte head;     /* published (writer's release store) */
byte tail;     /* moved by both, by CAS */
byte slot[S];  /* the event number written there */
byte lost;     /* the writer's count of records it took back */
bit done;      /* the writer finished */
/* ghosts */
byte harvested;
byte next_ev;  /* the next event number the engine expects to keep */

proctype Writer() {
  byte i = 0, t;
  do
  :: i < N ->
     /* room: a full ring takes the oldest D back (CAS on tail) */
     do
     :: atomic {
          t = tail;
          if
          :: head + 1 <= t + S -> break /* the engine made room meanwhile */
          :: else -> tail = head + 1 - S + D - 1; lost = lost + (tail - t)
          fi
        }
     od;
     slot[head % S] = i; /* plain stores of the record */
     head++;             /* release */
     i++
  :: else -> break
  od;
  done = 1
}

proctype Engine() {
  byte rt = 0;      /* the tail the engine last knew */
  byte c, h, e, m, want;
  byte copy[S];
  bit fin = 0;
  do
  :: fin -> break
  :: else ->
     if
     :: done -> fin = 1 /* one more pass: then nothing is left */
     :: else -> skip
     fi;
     /* head first (acquire), then tail: the writer moves tail before it
      * publishes a head beyond tail + S, so the tail read after is at least
      * h - S; read the other way round, a writer that lapped the ring
      * between the two reads looks like a corrupt ring */
#ifndef BUG_TAIL_FIRST
     h = head;
     atomic { e = tail; if :: e > rt -> rt = e :: else -> skip fi };
#else
     atomic { e = tail; if :: e > rt -> rt = e :: else -> skip fi };
     h = head;
#endif
     c = rt;
     want = 0;
     if
     :: h > c -> want = h - c
     :: else -> skip
     fi;
     assert(want <= S);
     m = 0;
     do
     :: m < want -> copy[m] = slot[(c + m) % S]; m++
     :: else -> break
     od;
#ifdef BUG_NO_CONFIRM
     e = c;
     tail = h
#elif defined(BUG_PLAIN_TAIL)
     atomic { e = tail };
     tail = h /* later, a plain store */
#elif defined(BUG_LATE_CLAIM)
     /* confirm now, give the room back later: the writer may take back
      * records kept between the two */
     atomic { e = tail };
     atomic { if :: tail < h -> tail = h :: else -> skip fi }
#else
     /* claim what was copied: tail to h by CAS; the value it replaced is
      * the writer's: records below it were taken back (maybe written over
      * while copied), those at or above it are ours, and the writer takes
      * nothing below h from now on */
     if
     :: want > 0 -> atomic { e = tail; if :: e < h -> tail = h :: else -> skip fi }
     :: else -> e = c
     fi
#endif
     ;
     m = 0;
     do
     :: m < want ->
        if
        :: c + m >= e ->
           assert(copy[m] == c + m); /* not written over while copied */
           assert(copy[m] >= next_ev); /* in order; a gap is what the writer counted lost */
           next_ev = copy[m] + 1;
           harvested++
        :: else -> skip
        fi;
        m++
     :: else -> break
     od;
     if
     :: h > rt -> rt = h
     :: else -> skip
     fi
  od;
  assert(harvested + lost == N)
}

init {
  atomic {
    run Engine();
    run Writer()
  }
}
