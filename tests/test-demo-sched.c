/* test-demo-sched.c - the demo scheduler (examples/demo): context switches
 * keep every coroutine's stack and registers across thousands of coroutines,
 * coroutines migrate between worker threads (work stealing), no wake is lost
 * under a ping-pong and thread-wake stress, I/O and sleep through the reactor.
 * Runs under ASan and TSan too (counts are smaller there). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../examples/demo/scheduler.h"
#include "lib/check.h"

static int scale = 1; /* divides the counts under sanitizers */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- 1. switches keep the stack: many coroutines, each checks its frame ---- */

#define WORDS 48
struct stack_job {
  uint64_t seed;
  int yields;
  _Atomic int errors;
  unsigned workers_seen; /* bitmask of worker indices it ran on */
};

static _Atomic int stack_errors;

static __attribute__((noinline)) double mix(double x, uint64_t k) {
  return x * 1.0000001 + (double)(k & 7);
}

static void stack_co(void *p) {
  struct stack_job *j = p;
  volatile uint64_t words[WORDS];
  volatile uint64_t *where = words;
  uint64_t a = j->seed * 0x9E3779B97F4A7C15ull, b = ~j->seed, c = j->seed << 7;
  double f = (double)j->seed;
  for (int i = 0; i < WORDS; i++)
    words[i] = j->seed * 1000003u + (uint64_t)i;
  for (int y = 0; y < j->yields; y++) {
    j->workers_seen |= 1u << sch_worker_index();
    a = a * 6364136223846793005ull + 1;
    b ^= a;
    c += b;
    f = mix(f, a);
    uint64_t ea = a, eb = b, ec = c;
    double ef = f;
    sch_yield();
    /* Same frame (same address), same contents, same values in registers. */
    if (where != words)
      atomic_fetch_add(&stack_errors, 1);
    for (int i = 0; i < WORDS; i++)
      if (words[i] != j->seed * 1000003u + (uint64_t)i)
        atomic_fetch_add(&stack_errors, 1);
    if (ea != a || eb != b || ec != c || ef != f)
      atomic_fetch_add(&stack_errors, 1);
  }
  j->workers_seen |= 1u << sch_worker_index();
}

struct spawner {
  struct stack_job *jobs;
  int n;
};

/* Spawned from one coroutine: they all start on one worker's queue, so any
 * coroutine seen on another worker was stolen. */
static void spawn_all(void *p) {
  struct spawner *s = p;
  for (int i = 0; i < s->n; i++)
    if (!sch_spawn(stack_co, &s->jobs[i], "stack", NULL))
      atomic_fetch_add(&stack_errors, 1000000);
}

static void test_stacks(int workers) {
  int n = 4000 / scale;
  struct stack_job *jobs = calloc((size_t)n, sizeof *jobs);
  struct spawner sp = {jobs, n};
  for (int i = 0; i < n; i++)
    jobs[i] = (struct stack_job){.seed = (uint64_t)i + 1, .yields = 20};
  struct sch_stats before, after;
  sch_get_stats(&before);
  ASSERT_NOT_NULL(sch_spawn(spawn_all, &sp, "spawner", NULL));
  long left = sch_wait_idle(30000);
  ASSERT_EQ(left, 0); /* coroutines still alive after 30 s */
  sch_get_stats(&after);
  int migrated = 0;
  unsigned all = 0;
  for (int i = 0; i < n; i++) {
    all |= jobs[i].workers_seen;
    if (__builtin_popcount(jobs[i].workers_seen) > 1)
      migrated++;
  }
  ASSERT_EQ(atomic_load(&stack_errors), 0); /* stack/register mismatches across switches */
  ASSERT_UINT64_EQ(after.finished - before.finished, (uint64_t)n + 1);
  ASSERT_UINT64_GE(after.switches - before.switches, (uint64_t)n * 21);
  ASSERT_UINT64_GT(after.steals, before.steals); /* a coroutine was stolen */
  ASSERT_GE(__builtin_popcount(all), 2);         /* not all coroutines ran on one worker */
  printf("stacks: %d coroutines x 20 yields, %llu switches, %llu steals, %d ran on 2+ threads, "
         "workers mask %#x/%d\n",
         n, (unsigned long long)(after.switches - before.switches),
         (unsigned long long)(after.steals - before.steals), migrated, all, workers);
  free(jobs);
}

/* ---- 2. no lost wakeup: ping-pong between coroutines ----------------------- */

struct pair {
  _Atomic int turn; /* 0 or 1: whose move */
  sch_co *co[2];
  _Atomic int ready;
  int rounds;
};
struct player {
  struct pair *p;
  int me;
};

static _Atomic long wakes_sent;

static void player_co(void *arg) {
  struct player *pl = arg;
  struct pair *p = pl->p;
  /* Wait until both coroutines exist (the spawner fills co[] then sets ready). */
  while (!atomic_load(&p->ready))
    sch_yield();
  for (int r = 0; r < p->rounds; r++) {
    /* Check, prepare, re-check, park: the partner's wake may land anywhere
     * in between, including after the re-check and before the park. */
    while (atomic_load(&p->turn) != pl->me) {
      sch_park_prepare(NULL, COROTRACER_WAIT_PTR, (uint64_t)(uintptr_t)p);
      if (atomic_load(&p->turn) == pl->me) {
        sch_park(); /* may return at once (a wake is pending), or after a wake */
        break;
      }
      sch_park();
    }
    atomic_store(&p->turn, !pl->me);
    /* Player 1's last move comes after player 0's last: 0 may be gone. */
    if (pl->me == 1 && r == p->rounds - 1)
      break;
    atomic_fetch_add_explicit(&wakes_sent, 1, memory_order_relaxed);
    sch_wake(p->co[!pl->me]);
  }
}

/* ---- 3. no lost wakeup: plain threads wake coroutines ---------------------- */

struct mailbox {
  _Atomic long tokens;
  long target;
  sch_co *co;
  _Atomic int ready;
  _Atomic long woken;    /* wakes the producers completed */
  unsigned workers_seen; /* bitmask of worker indices it ran on */
};

static void consumer_co(void *arg) {
  struct mailbox *m = arg;
  long got = 0;
  while (got < m->target) {
    m->workers_seen |= 1u << sch_worker_index();
    long t = atomic_exchange(&m->tokens, 0);
    if (t > 0) {
      got += t;
      continue;
    }
    sch_park_prepare(NULL, COROTRACER_WAIT_PTR, (uint64_t)(uintptr_t)m);
    if (atomic_load(&m->tokens) == 0)
      sch_park();
    else
      sch_park(); /* a wake is on its way or already pending: consumes it */
  }
  /* Stay alive until the producers' last sch_wake on us has returned. */
  while (atomic_load(&m->woken) < m->target)
    sch_yield();
}

struct producer {
  struct mailbox *boxes;
  int nboxes, first, step;
  long per_box;
};

static void *producer_thread(void *arg) {
  struct producer *pr = arg;
  for (long k = 0; k < pr->per_box; k++)
    for (int b = pr->first; b < pr->nboxes; b += pr->step) {
      while (!atomic_load(&pr->boxes[b].ready))
        sched_yield();
      atomic_fetch_add(&pr->boxes[b].tokens, 1);
      atomic_fetch_add_explicit(&wakes_sent, 1, memory_order_relaxed);
      sch_wake(pr->boxes[b].co);
      atomic_fetch_add(&pr->boxes[b].woken, 1);
    }
  return NULL;
}

static void test_wakes(void) {
  int npairs = 64, rounds = 4000 / scale;
  int nboxes = 32, nthreads = 2;
  long per_box = 4000 / scale;
  struct pair *pairs = calloc((size_t)npairs, sizeof *pairs);
  struct player *players = calloc((size_t)npairs * 2, sizeof *players);
  struct mailbox *boxes = calloc((size_t)nboxes, sizeof *boxes);
  pthread_t th[2];
  struct producer prs[2];
  struct sch_stats before, after;
  sch_get_stats(&before);
  atomic_store(&wakes_sent, 0);
  uint64_t t0 = now_ns();
  for (int i = 0; i < npairs; i++) {
    pairs[i].rounds = rounds;
    for (int k = 0; k < 2; k++) {
      players[2 * i + k] = (struct player){&pairs[i], k};
      pairs[i].co[k] = sch_spawn(player_co, &players[2 * i + k], "player", NULL);
      ASSERT_NOT_NULL(pairs[i].co[k]);
    }
    atomic_store(&pairs[i].ready, 1);
  }
  for (int b = 0; b < nboxes; b++) {
    boxes[b].target = per_box;
    boxes[b].co = sch_spawn(consumer_co, &boxes[b], "consumer", NULL);
    ASSERT_NOT_NULL(boxes[b].co);
    atomic_store(&boxes[b].ready, 1);
  }
  for (int t = 0; t < nthreads; t++) {
    /* Each thread feeds half of the boxes, so each box gets per_box tokens. */
    prs[t] = (struct producer){boxes, nboxes, t, nthreads, per_box};
    pthread_create(&th[t], NULL, producer_thread, &prs[t]);
  }
  for (int t = 0; t < nthreads; t++)
    pthread_join(th[t], NULL);
  long left = sch_wait_idle(30000);
  uint64_t ms = (now_ns() - t0) / 1000000u;
  long sent = atomic_load(&wakes_sent);
  sch_get_stats(&after);
  uint64_t sw = after.switches - before.switches;
  ASSERT_EQ(left, 0); /* coroutines stuck: a wake was lost */
  int migrated = 0;
  for (int b = 0; b < nboxes; b++)
    migrated += __builtin_popcount(boxes[b].workers_seen) > 1;
  ASSERT_EQ(sent, (long)npairs * (2 * rounds - 1) + (long)nboxes * per_box);
  ASSERT_UINT64_GT(sw, (uint64_t)sent / 8); /* else the stress did not park */
  printf("wakes: %ld wakes (%d ping-pong pairs x %d rounds, %d threads -> %d coroutines), %llu "
         "switches, %llu ms, "
         "%ld stuck, %d of %d consumers resumed on 2+ threads\n",
         sent, npairs, rounds, nthreads, nboxes, (unsigned long long)sw, (unsigned long long)ms,
         left, migrated, nboxes);
  if (left == 0) { /* the coroutines still reference these when stuck */
    free(pairs);
    free(players);
    free(boxes);
  }
}

/* ---- 4. reactor: I/O over a socketpair, sleep ---------------------------- */

struct io_job {
  int fd;
  int msgs;
  _Atomic int ok;
};

static void io_echo_co(void *arg) { /* echo until EOF */
  struct io_job *j = arg;
  char buf[256];
  ssize_t r;
  while ((r = sch_read(j->fd, buf, sizeof buf)) > 0)
    if (sch_write(j->fd, buf, (size_t)r) != r)
      return;
  if (r == 0)
    atomic_store(&j->ok, 1);
  close(j->fd);
}

static void io_client_co(void *arg) {
  struct io_job *j = arg;
  char msg[64], back[64];
  for (int i = 0; i < j->msgs; i++) {
    int n = snprintf(msg, sizeof msg, "message %d", i);
    if (sch_write(j->fd, msg, (size_t)n) != n)
      return;
    for (int got = 0; got < n;) { /* a stream: the echo may come in pieces */
      ssize_t r = sch_read(j->fd, back + got, (size_t)(n - got));
      if (r <= 0)
        return;
      got += (int)r;
    }
    if (memcmp(msg, back, (size_t)n) != 0)
      return;
  }
  atomic_store(&j->ok, 1);
  close(j->fd);
}

/* Sleepers are woken by the reactor thread, and wakes from plain threads are
 * spread over the workers: each sleeper should come back on several threads. */
#define SLEEPERS 16
static _Atomic uint64_t slept_ns;
static unsigned sleeper_seen[SLEEPERS];
static void sleeper_co(void *arg) {
  unsigned *seen = arg;
  for (int i = 0; i < 5; i++) {
    *seen |= 1u << sch_worker_index();
    uint64_t t = now_ns();
    ASSERT_OK(sch_sleep_ns(1000 * 1000));
    uint64_t d = now_ns() - t;
    if (d < 1000000u)
      atomic_store(&slept_ns, d); /* too short: reported below */
  }
  *seen |= 1u << sch_worker_index();
}

static void test_reactor(void) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
  struct io_job server = {.fd = sv[0]}, client = {.fd = sv[1], .msgs = 2000 / scale};
  ASSERT_NOT_NULL(sch_spawn(io_echo_co, &server, "echo", NULL));
  ASSERT_NOT_NULL(sch_spawn(io_client_co, &client, "client", NULL));
  atomic_store(&slept_ns, 0);
  for (int i = 0; i < SLEEPERS; i++)
    ASSERT_NOT_NULL(sch_spawn(sleeper_co, &sleeper_seen[i], "sleeper", NULL));
  long left = sch_wait_idle(30000);
  ASSERT_EQ(left, 0);              /* I/O coroutines stuck */
  ASSERT(atomic_load(&client.ok)); /* echo over the socketpair */
  ASSERT(atomic_load(&server.ok));
  ASSERT_UINT64_EQ(atomic_load(&slept_ns), 0); /* else: how long a 1 ms sleep took */
  int migrated = 0;
  for (int i = 0; i < SLEEPERS; i++)
    migrated += __builtin_popcount(sleeper_seen[i]) > 1;
  ASSERT_GT(migrated, 0); /* a sleeper was resumed on two different threads */
  printf("reactor: %d echoes over a socketpair; %d of %d sleepers resumed on 2+ threads\n",
         client.msgs, migrated, SLEEPERS);
}

int main(void) {
  const char *san = getenv("CT_SAN");
  if (san && *san)
    scale = 2;
  int workers = 4;
  struct sch_opts o = {.workers = workers, .stack_size = 128 * 1024};
  int rc = sch_start(&o);
  ASSERT_OK(rc); /* sch_start */
  test_stacks(workers);
  test_wakes();
  test_reactor();
  struct sch_stats st;
  sch_get_stats(&st);
  ASSERT_EQ(st.reactor_error, 0);
  ASSERT_UINT64_EQ(st.bug_closed, 0); /* fds closed by the bug */
  sch_stop();
  printf("ok\n");
  return 0;
}
