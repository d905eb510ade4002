/* test-engine-stress.c - seqlock stress: 4 writer threads hammer their own
 * coroutines (and wake each other's) under `corotracer run`; every harvested
 * line must check, per coroutine ev must increase, and harvested + lost must
 * equal what the writers wrote, exactly, per coroutine and in total.
 *
 * Run without arguments (tests/run.sh): runs itself as the target
 * (`--writer COUNTS EVENTS [pack]`) and checks the trace. Every payload proves
 * itself: a suspend's obj is a hash of (probe_id, site), its site lies in a 1 KiB
 * window of this program's code; a wake's `from` is a coroutine of the writing
 * thread. Then the --pack leg (docs/ROUTE1.md): `corotracer run --pack
 * --lossless`, a binary trace (read as the JSONL `export jsonl` makes of it);
 * the writers hand the thread from one coroutine to the other with
 * corotracer_switch, the hot case the probe packs (obj the hash's low 16 bits,
 * a site kept for 64 switches: a pack holds one site), and nothing is lost. */
#include <corotracer.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/check.h"
#include "lib/ctlib.h"

#define WRITERS 4
#define PER_WRITER 2
#define NCO (WRITERS * PER_WRITER)
#define SITE_SPAN 1024u

struct co {
  corotracer_co *h;
  uint64_t id, tid;
  _Atomic uint64_t written; /* probe calls made on it, by any thread */
};

static struct co cos[NCO];
static uint64_t per_writer_events;
static int pack; /* the --pack leg: switches, obj 16 bits */
static uint64_t site_base;
static pthread_barrier_t created, finished;

static uint64_t mix(uint64_t x) { /* splitmix64 finaliser */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
static uint64_t payload_hash(uint64_t id, uint64_t site) {
  uint64_t h = mix(id * 0x9e3779b97f4a7c15ULL ^ site);
  return pack ? h & 0xffff : h; /* a pack entry's obj is at most 0xffff */
}

/* At writer w's step i (a multiple of 16), a wake of a coroutine of the
 * next writer, from the coroutine running here; *n counts it. */
static void wake_next(int w, uint64_t i, uint64_t *n) {
  struct co *other = &cos[((w + 1) % WRITERS) * PER_WRITER + (int)(i / 16 % PER_WRITER)];
  corotracer_wake(other->h, (const void *)(uintptr_t)(site_base + (i * 7) % SITE_SPAN));
  atomic_fetch_add_explicit(&other->written, 1, memory_order_relaxed);
  ++*n;
}

/* The --pack leg's steps: the thread handed from one coroutine to the
 * other by a switch (a suspend of one, a resume of the other), a site kept
 * for 64 switches. */
static void switches(int w, struct co *mine) {
  uint64_t n = 0, i = 0;
  corotracer_resume(mine[0].h);
  atomic_fetch_add_explicit(&mine[0].written, 1, memory_order_relaxed);
  for (; n < per_writer_events; i++) {
    struct co *c = &mine[i % PER_WRITER], *to = &mine[(i + 1) % PER_WRITER];
    if (i % 128 == 0)
      wake_next(w, i / 8, &n); /* every 128th switch: a pack ends at a record */
    uint64_t site = site_base + (i / 64) % SITE_SPAN;
    corotracer_switch(c->h, (const void *)(uintptr_t)site, COROTRACER_WAIT_PTR,
                      payload_hash(c->id, site), 0, to->h);
    atomic_fetch_add_explicit(&c->written, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&to->written, 1, memory_order_relaxed);
    n += 2;
  }
  struct co *last = &mine[i % PER_WRITER];
  uint64_t site = site_base;
  corotracer_suspend(last->h, (const void *)(uintptr_t)site, COROTRACER_WAIT_PTR,
                     payload_hash(last->id, site));
  atomic_fetch_add_explicit(&last->written, 1, memory_order_relaxed);
}

static void *writer(void *arg) {
  int w = (int)(intptr_t)arg;
  struct co *mine = &cos[w * PER_WRITER];
  for (int k = 0; k < PER_WRITER; k++) {
    mine[k].id = 1000 + (uint64_t)(w * PER_WRITER + k);
    mine[k].tid = (uint64_t)gettid();
    mine[k].h = corotracer_create(mine[k].id, "stress", NULL);
    atomic_fetch_add(&mine[k].written, 1);
  }
  pthread_barrier_wait(&created); /* every handle exists before anyone wakes it */
  uint64_t n = 0;
  if (pack)
    switches(w, mine);
  for (uint64_t i = 0; !pack && n < per_writer_events; i++) {
    struct co *c = &mine[i % PER_WRITER];
    corotracer_resume(c->h);
    atomic_fetch_add_explicit(&c->written, 1, memory_order_relaxed);
    n++;
    if (i % 16 == 0) /* wake a coroutine of the next writer; from = c */
      wake_next(w, i, &n);
    uint64_t site = site_base + i % SITE_SPAN;
    corotracer_suspend(c->h, (const void *)(uintptr_t)site, COROTRACER_WAIT_PTR,
                       payload_hash(c->id, site));
    atomic_fetch_add_explicit(&c->written, 1, memory_order_relaxed);
    n++;
  }
  pthread_barrier_wait(&finished); /* nobody wakes a destroyed coroutine */
  for (int k = 0; k < PER_WRITER; k++) {
    corotracer_destroy(mine[k].h);
    atomic_fetch_add(&mine[k].written, 1);
  }
  return NULL;
}

static int writer_main(const char *counts, uint64_t events, int packs) {
  pack = packs;
  if (corotracer_init() != 0)
    FAIL("writer: not traced");
  per_writer_events = events / WRITERS;
  site_base = (uint64_t)(uintptr_t)&writer; /* sites inside our own code */
  pthread_barrier_init(&created, NULL, WRITERS);
  pthread_barrier_init(&finished, NULL, WRITERS);
  pthread_t t[WRITERS];
  for (int w = 0; w < WRITERS; w++)
    pthread_create(&t[w], NULL, writer, (void *)(intptr_t)w);
  for (int w = 0; w < WRITERS; w++)
    pthread_join(t[w], NULL);
  FILE *f = fopen(counts, "we");
  if (f == NULL)
    FAIL("%s: %s", counts, strerror(errno));
  fprintf(f, "base %llu\n", (unsigned long long)site_base);
  for (int i = 0; i < NCO; i++)
    fprintf(f, "co %llu %llu %llu\n", (unsigned long long)cos[i].id, (unsigned long long)cos[i].tid,
            (unsigned long long)atomic_load(&cos[i].written));
  if (fclose(f) != 0)
    FAIL("%s: %s", counts, strerror(errno));
  return 0;
}

/* ---- checker ------------------------------------------------------------- */

struct want {
  uint64_t id, tid, written;
  uint64_t harvested, last_ev, end_events, end_lost;
  int seen, ended;
};

static struct want want[NCO];
static uint64_t lineno;
static char dir[4096], trace[4200], counts[4200], bin[4200];

/* The trace is hundreds of MB: never leave it behind, pass or fail. */
static void remove_files(void) {
  unlink(trace);
  unlink(bin);
  unlink(counts);
  rmdir(dir);
}

static struct want *find(uint64_t id) {
  for (int i = 0; i < NCO; i++)
    if (want[i].id == id)
      return &want[i];
  return NULL;
}

static uint64_t field(const struct ct_jkv *kv, int n, const char *key) {
  const struct ct_jkv *f = ct_json_find(kv, n, key);
  uint64_t v;
  if (f == NULL || ct_parse_u64(f->val, f->vlen, &v) != 0)
    FAIL("line %llu: bad or missing %s", (unsigned long long)lineno, key);
  return v;
}

static int is(const struct ct_jkv *kv, int n, const char *key, const char *val) {
  const struct ct_jkv *f = ct_json_find(kv, n, key);
  return f != NULL && f->vlen == strlen(val) && memcmp(f->val, val, f->vlen) == 0;
}

/* One event line: everything it says must follow from what the writers did. */
static void check_event(const struct ct_jkv *kv, int n, uint64_t base) {
  uint64_t id = field(kv, n, "probe_id"), tid = field(kv, n, "tid"), ev = field(kv, n, "ev");
  struct want *c = find(id);
  if (c == NULL)
    FAIL("line %llu: torn or foreign probe_id %llu", (unsigned long long)lineno,
         (unsigned long long)id);
  if (c->harvested > 0 && ev <= c->last_ev)
    FAIL("line %llu: coroutine %llu: ev %llu after ev %llu (duplicate or out of order)",
         (unsigned long long)lineno, (unsigned long long)id, (unsigned long long)ev,
         (unsigned long long)c->last_ev);
  if (ev >= c->written)
    FAIL("line %llu: ev %llu beyond the %llu events written", (unsigned long long)lineno,
         (unsigned long long)ev, (unsigned long long)c->written);
  c->last_ev = ev;
  c->harvested++;
  if (field(kv, n, "ts") == 0)
    FAIL("line %llu: ts 0 (torn)", (unsigned long long)lineno);
  if (is(kv, n, "kind", "wake")) {
    uint64_t from = field(kv, n, "from"), site = field(kv, n, "site");
    struct want *w = find(from);
    if (w == NULL || w->tid != tid || site - base >= SITE_SPAN)
      FAIL("line %llu: wake with from %llu tid %llu site %#llx does not check",
           (unsigned long long)lineno, (unsigned long long)from, (unsigned long long)tid,
           (unsigned long long)site);
    return;
  }
  if (tid != c->tid)
    FAIL("line %llu: tid %llu is not the owner's %llu", (unsigned long long)lineno,
         (unsigned long long)tid, (unsigned long long)c->tid);
  if (is(kv, n, "kind", "suspend")) {
    uint64_t site = field(kv, n, "site"), obj = field(kv, n, "obj"), addr = field(kv, n, "addr");
    if (site - base >= SITE_SPAN || addr != site || obj != payload_hash(id, site) ||
        !is(kv, n, "wait", "ptr") || !is(kv, n, "is_active", "false"))
      FAIL("line %llu: torn suspend (site %#llx obj %#llx addr %#llx)", (unsigned long long)lineno,
           (unsigned long long)site, (unsigned long long)obj, (unsigned long long)addr);
  } else if (is(kv, n, "kind", "resume")) {
    if (field(kv, n, "addr") != 0 || !is(kv, n, "is_active", "true"))
      FAIL("line %llu: torn resume", (unsigned long long)lineno);
  } else if (is(kv, n, "kind", "create")) {
    if (ev != 0)
      FAIL("line %llu: create with ev %llu", (unsigned long long)lineno, (unsigned long long)ev);
  } else if (!is(kv, n, "kind", "destroy")) {
    FAIL("line %llu: unexpected kind", (unsigned long long)lineno);
  }
}

static void check_trace(const char *trace, uint64_t base) {
  FILE *f = fopen(trace, "re");
  if (f == NULL)
    FAIL("%s: %s", trace, strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  struct ct_jkv kv[32];
  int have_end = 0;
  uint64_t total_lines = 0, sum_written = 0, sum_lost = 0;
  while (getline(&line, &cap, f) > 0) {
    lineno++;
    int n = ct_json_split(line, kv, 32);
    if (n <= 0)
      FAIL("line %llu: not a JSON object: %.80s", (unsigned long long)lineno, line);
    if (have_end)
      FAIL("line %llu: after the end record", (unsigned long long)lineno);
    if (lineno == 1 && !is(kv, n, "type", "meta"))
      FAIL("first line is not meta");
    if (ct_json_find(kv, n, "type") == NULL) {
      check_event(kv, n, base);
      total_lines++;
    } else if (is(kv, n, "type", "station_end")) {
      struct want *c = find(field(kv, n, "probe_id"));
      if (c == NULL || c->ended++)
        FAIL("line %llu: unknown or repeated station_end", (unsigned long long)lineno);
      c->end_events = field(kv, n, "events");
      c->end_lost = field(kv, n, "lost");
      if (field(kv, n, "harvested") != c->harvested)
        FAIL("line %llu: station_end harvested %llu, trace has %llu lines",
             (unsigned long long)lineno, (unsigned long long)field(kv, n, "harvested"),
             (unsigned long long)c->harvested);
    } else if (is(kv, n, "type", "end")) {
      have_end = 1;
      for (int i = 0; i < NCO; i++) {
        sum_written += want[i].written;
        sum_lost += want[i].written - want[i].harvested;
      }
      if (field(kv, n, "events") != sum_written || field(kv, n, "harvested") != total_lines ||
          field(kv, n, "lost") != sum_lost || field(kv, n, "torn") != 0 ||
          field(kv, n, "untraced_coroutines") != 0)
        FAIL("end record %.300s does not match: written %llu, harvested %llu, lost %llu", line,
             (unsigned long long)sum_written, (unsigned long long)total_lines,
             (unsigned long long)sum_lost);
    }
  }
  free(line);
  fclose(f);
  if (!have_end)
    FAIL("no end record");
  for (int i = 0; i < NCO; i++) {
    struct want *c = &want[i];
    if (!c->ended)
      FAIL("coroutine %llu: no station_end", (unsigned long long)c->id);
    if (c->end_events != c->written || c->harvested + c->end_lost != c->written)
      FAIL("coroutine %llu: wrote %llu, station_end says events %llu, harvested %llu + lost %llu",
           (unsigned long long)c->id, (unsigned long long)c->written,
           (unsigned long long)c->end_events, (unsigned long long)c->harvested,
           (unsigned long long)c->end_lost);
  }
  if (pack && sum_lost)
    FAIL("--pack --lossless: %llu events lost", (unsigned long long)sum_lost);
  printf(
      "stress%s: %llu lines checked; written %llu, harvested %llu, lost %llu (%.1f%%), exact per "
      "coroutine\n",
      pack ? " --pack" : "", (unsigned long long)lineno, (unsigned long long)sum_written,
      (unsigned long long)total_lines, (unsigned long long)sum_lost,
      100.0 * (double)sum_lost / (double)sum_written);
}

/* One leg: this program as the target under the engine (with --pack
 * --lossless when pk, the trace then binary and converted), its trace
 * checked against the counts it wrote. */
static void leg(const char *engine, const char *self, int pk, uint64_t events) {
  char nev[32];
  pack = pk;
  lineno = 0;
  memset(want, 0, sizeof want);
  snprintf(nev, sizeof nev, "%llu", (unsigned long long)events);
  char *plain[] = {(char *)engine, "run",        "--quiet",  "-n",   "64", "-o", trace,
                   "--",           (char *)self, "--writer", counts, nev,  NULL};
  char *packs[] = {(char *)engine, "run", "--quiet", "--pack", "--lossless", "-n",
                   "64",           "-o",  bin,       "--",     (char *)self, "--writer",
                   counts,         nev,   "pack",    NULL};
  uint64_t t0 = ct_now_ns();
  int st = ct_wait(ct_spawn(pk ? packs : plain));
  uint64_t t1 = ct_now_ns();
  if (ct_exit_code(st) != 0)
    FAIL("engine exited %d", ct_exit_code(st));
  char *conv[] = {(char *)engine, "export", "jsonl", bin, "-o", trace, "-q", NULL};
  if (pk && ct_exit_code(ct_wait(ct_spawn(conv))) != 0)
    FAIL("export jsonl of the --pack trace failed");
  unlink(bin);

  FILE *f = fopen(counts, "re");
  if (f == NULL)
    FAIL("%s: %s", counts, strerror(errno));
  unsigned long long base, id, tid, w;
  if (fscanf(f, "base %llu\n", &base) != 1)
    FAIL("counts: no base");
  for (int i = 0; i < NCO; i++) {
    if (fscanf(f, "co %llu %llu %llu\n", &id, &tid, &w) != 3)
      FAIL("counts: short");
    want[i] = (struct want){.id = id, .tid = tid, .written = w};
  }
  fclose(f);
  struct stat sb;
  if (stat(trace, &sb) != 0)
    FAIL("%s: %s", trace, strerror(errno));
  printf("stress%s: run %.2f s, trace %.0f MB\n", pk ? " --pack" : "", (double)(t1 - t0) / 1e9,
         (double)sb.st_size / 1e6);
  check_trace(trace, base);
  printf("stress: checked in %.2f s\n", (double)(ct_now_ns() - t1) / 1e9);
  unlink(trace);
}

int main(int argc, char **argv) {
  if ((argc == 4 || (argc == 5 && strcmp(argv[4], "pack") == 0)) &&
      strcmp(argv[1], "--writer") == 0)
    return writer_main(argv[2], strtoull(argv[3], NULL, 10), argc == 5);
  const char *engine = getenv("COROTRACER"), *build = getenv("CT_BUILD"), *san = getenv("CT_SAN");
  if (engine == NULL || build == NULL)
    FAIL("run me through tests/run.sh");
  int sanitized = san != NULL && san[0] != '\0';
  char self[4096];
  snprintf(dir, sizeof dir, "%s/stress.XXXXXX", build); /* on disk: the trace is big */
  if (mkdtemp(dir) == NULL)
    FAIL("mkdtemp %s: %s", dir, strerror(errno));
  atexit(remove_files);
  CHECK_ATFAIL(remove_files);
  snprintf(trace, sizeof trace, "%s/trace.jsonl", dir);
  snprintf(bin, sizeof bin, "%s/trace.ctrace", dir);
  snprintf(counts, sizeof counts, "%s/counts", dir);
  ct_self_path(self, sizeof self);
  leg(engine, self, 0, sanitized ? 2000000 : 10000000);
  leg(engine, self, 1, sanitized ? 1000000 : 4000000);
  return 0;
}
