/* hello.c - a first corotracer target: four coroutines on three threads.
 *
 *   corotracer run -o trace.jsonl -- hello [--events FILE] [--pace-us N]
 *   corotracer report trace.jsonl
 *
 * There is no real context switch here, only the calls a scheduler makes to the
 * probe SDK at the moments that matter: a coroutine is created (spawn), starts
 * running on a thread (run), parks waiting for an fd, a pointer or nothing
 * (block), is made runnable by another coroutine or by a plain thread (wake),
 * and ends (finish). Threads hand the coroutines to each other with semaphores.
 *
 * --events FILE writes what was recorded, one line per fact, in the order the
 * probe saw it (tests compare it with the trace):
 *   co <probe_id> <label> <create_site> <parent>
 *   ev <probe_id> <ev> <kind> <site> <wait> <obj> <from> <parent>   ("-": absent,
 *   "*": a site the probe picks itself, i.e. corotracer_destroy's caller)
 *
 * --pace-us N sleeps N microseconds after every event. Unpaced, the reader
 * coroutine writes its 9 events within a few hundred microseconds: more than
 * its 8-slot ring holds if the engine gets no CPU meanwhile, so a few are
 * (correctly) counted lost. Tests that want every event use it; a real
 * scheduler never waits for the tracer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2; examples build with plain `cc` and pkg-config too */
#endif
#include <corotracer.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct coro {
  corotracer_co *trace; /* NULL when untraced: every probe call accepts it */
  uint64_t id;
  const char *label;
  uint64_t events; /* events recorded so far = the next event's index (ev) */
};

/* Every probe call happens under this lock, so the --events list is in the same
 * order as the probe's event indexes. A real scheduler needs no lock for the
 * probe; it is here only to make the list exact. */
static pthread_mutex_t record_mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *events_file;
static uint64_t next_id = 100;
static _Thread_local struct coro *running; /* the coroutine this thread runs */
static long pace_us;                       /* --pace-us */

static void pace(void) {
  struct timespec ts = {pace_us / 1000000, pace_us % 1000000 * 1000};
  if (pace_us > 0)
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static uint64_t addr(const void *p) {
  return (uint64_t)(uintptr_t)p;
}

static void note(const struct coro *co, const char *kind, const char *site, const char *wait,
                 const char *obj, const char *from, const char *parent) {
  if (events_file != NULL)
    fprintf(events_file, "ev %llu %llu %s %s %s %s %s %s\n", (unsigned long long)co->id,
            (unsigned long long)co->events, kind, site, wait, obj, from, parent);
}

/* noinline everywhere below: COROTRACER_CALLER must be the return address into
 * the story code (the line worth showing), as in a real scheduler primitive. */
__attribute__((noinline)) static struct coro *spawn(const char *label) {
  const void *site = COROTRACER_CALLER;
  struct coro *co = calloc(1, sizeof *co);
  if (co == NULL)
    abort();
  co->label = label;
  pthread_mutex_lock(&record_mu);
  co->id = next_id++;
  uint64_t parent = running != NULL ? running->id : 0; /* the probe records the same */
  co->trace = corotracer_create(co->id, label, site);
  char s[24], p[24];
  snprintf(s, sizeof s, "0x%016llx", (unsigned long long)addr(site));
  snprintf(p, sizeof p, "%llu", (unsigned long long)parent);
  if (events_file != NULL)
    fprintf(events_file, "co %llu %s %s %s\n", (unsigned long long)co->id, label, s, p);
  note(co, "create", s, "-", "-", "-", p);
  co->events++;
  pthread_mutex_unlock(&record_mu);
  pace();
  return co;
}

static void run(struct coro *co) {
  pthread_mutex_lock(&record_mu);
  corotracer_resume(co->trace);
  running = co;
  note(co, "resume", "-", "-", "-", "-", "-");
  co->events++;
  pthread_mutex_unlock(&record_mu);
  pace();
}

__attribute__((noinline)) static void block(struct coro *co, enum corotracer_wait wait,
                                            uint64_t obj) {
  const void *site = COROTRACER_CALLER;
  pthread_mutex_lock(&record_mu);
  corotracer_suspend(co->trace, site, wait, obj);
  running = NULL;
  char s[24], o[24];
  snprintf(s, sizeof s, "0x%016llx", (unsigned long long)addr(site));
  if (wait == COROTRACER_WAIT_FD)
    snprintf(o, sizeof o, "%llu", (unsigned long long)obj);
  else
    snprintf(o, sizeof o, "0x%016llx", (unsigned long long)obj);
  note(co, "suspend", s,
       wait == COROTRACER_WAIT_FD    ? "fd"
       : wait == COROTRACER_WAIT_PTR ? "ptr"
                                     : "-",
       wait == COROTRACER_WAIT_NONE ? "-" : o, "-", "-");
  co->events++;
  pthread_mutex_unlock(&record_mu);
  pace();
}

/* The waker is whatever coroutine runs on this thread, or none (a plain thread). */
__attribute__((noinline)) static void wake(struct coro *co) {
  const void *site = COROTRACER_CALLER;
  pthread_mutex_lock(&record_mu);
  corotracer_wake(co->trace, site);
  char s[24], f[24];
  snprintf(s, sizeof s, "0x%016llx", (unsigned long long)addr(site));
  snprintf(f, sizeof f, "%llu", (unsigned long long)(running != NULL ? running->id : 0));
  note(co, "wake", s, "-", "-", f, "-");
  co->events++;
  pthread_mutex_unlock(&record_mu);
  pace();
}

static void finish(struct coro *co) {
  pthread_mutex_lock(&record_mu);
  corotracer_destroy(co->trace);
  running = NULL;
  note(co, "destroy", "*", "-", "-", "-", "-");
  pthread_mutex_unlock(&record_mu);
  pace();
  printf("hello: %s (%llu) done after %llu events\n", co->label, (unsigned long long)co->id,
         (unsigned long long)co->events + 1);
  free(co);
}

/* ---- the story ----------------------------------------------------------- */

static struct coro *reader, *consumer, *producer;
static int pipefd[2];
static int channel; /* consumer parks on its address until producer fills it */
static sem_t reader_parked, reader_woken, consumer_parked, consumer_woken;

/* Worker 1 runs reader (parks on a pipe, spawns a child), then producer. */
static void *worker1(void *arg) {
  (void)arg;
  run(reader);
  block(reader, COROTRACER_WAIT_FD, (uint64_t)pipefd[0]);
  sem_post(&reader_parked);
  sem_wait(&reader_woken); /* the poller saw data and woke reader */
  run(reader);
  char c;
  if (read(pipefd[0], &c, 1) != 1)
    abort();
  struct coro *logger = spawn("logger");  /* parent: reader */
  block(reader, COROTRACER_WAIT_NONE, 0); /* yield to the child */
  run(logger);
  wake(reader); /* waker: logger */
  finish(logger);
  run(reader);
  finish(reader);

  run(producer);
  sem_wait(&consumer_parked);
  channel = 42;
  wake(consumer); /* waker: producer */
  sem_post(&consumer_woken);
  finish(producer);
  return NULL;
}

/* Worker 2 runs consumer, which waits on the channel's address. */
static void *worker2(void *arg) {
  (void)arg;
  run(consumer);
  block(consumer, COROTRACER_WAIT_PTR, addr(&channel));
  sem_post(&consumer_parked);
  sem_wait(&consumer_woken);
  run(consumer);
  printf("hello: consumer got %d\n", channel);
  finish(consumer);
  return NULL;
}

/* A plain thread, like an epoll reactor: it wakes reader on behalf of no coroutine. */
static void *poller(void *arg) {
  (void)arg;
  sem_wait(&reader_parked);
  if (write(pipefd[1], "x", 1) != 1)
    abort();
  wake(reader); /* waker: a thread (from 0) */
  sem_post(&reader_woken);
  return NULL;
}

static int usage(void) {
  fprintf(stderr, "usage: hello [--events FILE] [--pace-us N]   (N: 0..1000000)\n");
  return 2;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i += 2) {
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (val != NULL && strcmp(argv[i], "--events") == 0) {
      events_file = fopen(val, "we");
      if (events_file == NULL) {
        perror(val);
        return 1;
      }
    } else if (val != NULL && strcmp(argv[i], "--pace-us") == 0) {
      pace_us = strtol(val, &end, 10);
      if (end == val || *end != '\0' || pace_us < 0 || pace_us > 1000000)
        return usage();
    } else {
      return usage();
    }
  }
  int rc = corotracer_init();
  printf("hello: %s\n", rc == 0 ? "traced" : "not traced (run me under `corotracer run --`)");
  if (pipe2(pipefd, O_CLOEXEC) != 0)
    abort();
  sem_init(&reader_parked, 0, 0);
  sem_init(&reader_woken, 0, 0);
  sem_init(&consumer_parked, 0, 0);
  sem_init(&consumer_woken, 0, 0);

  reader = spawn("reader"); /* parent: 0, main is a plain thread */
  consumer = spawn("consumer");
  producer = spawn("producer");
  pthread_t t[3];
  pthread_create(&t[0], NULL, worker1, NULL);
  pthread_create(&t[1], NULL, worker2, NULL);
  pthread_create(&t[2], NULL, poller, NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(t[i], NULL);

  uint64_t recorded, dropped;
  corotracer_stats(&recorded, &dropped);
  printf("hello: the probe recorded %llu events, dropped %llu\n", (unsigned long long)recorded,
         (unsigned long long)dropped);
  close(pipefd[0]);
  close(pipefd[1]);
  if (events_file != NULL && fclose(events_file) != 0) {
    perror("hello: --events");
    return 1;
  }
  return 0;
}
