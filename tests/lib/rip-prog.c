/* rip-prog.c - writes a rip ring with snapshots at known lines, for test-rip.sh.
 *
 * rip-prog RING      threads snapshot at known sites; the program prints
 *                         "line SITE N" for each site, then "ready", and waits
 *                         to be killed (SIGKILL)
 * rip-prog tid RING  one snapshot in a ring sized by pid_max, in the record
 *                         of the main thread's tid (rip_init(0, ...)); prints
 *                         "tid TID LINE" and exits
 * rip-prog zlib IN OUT  copy IN to OUT as a zlib stream (stored blocks:
 *                         the test needs a zlib file and Debian has no zlib CLI)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rip.h"

RIP_DEFINE_STORAGE;

void dso_park(int *line); /* rip-dso.c */

/* Snapshot lines, written by the threads (several threads may write the same
 * value, hence atomics), printed by main once every thread has arrived. */
static int line_park_a, line_park_b, line_wrap, line_wrap_done, line_exit, line_resume, line_main,
    line_dso, line_spin;
#define SNAP_AT(var)                                                                               \
  do {                                                                                             \
    __atomic_store_n(&(var), __LINE__, __ATOMIC_RELAXED);                                          \
    rip_snap();                                                                                    \
  } while (0)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int arrived;

static void arrive(void) {
  pthread_mutex_lock(&lock);
  arrived++;
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&lock);
}

static void block_forever(void) {
  for (;;)
    pause();
}

static __attribute__((noinline)) void park(int which) {
  if (which == 0)
    SNAP_AT(line_park_a);
  else
    SNAP_AT(line_park_b);
}

static __attribute__((noinline)) void wrap_step(void) {
  SNAP_AT(line_wrap);
}
static __attribute__((noinline)) void wrap_done(void) {
  SNAP_AT(line_wrap_done);
}
static __attribute__((noinline)) void exit_path(void) {
  SNAP_AT(line_exit);
}
static __attribute__((noinline)) void resume_step(void) {
  SNAP_AT(line_resume);
}
static __attribute__((noinline)) void main_wait(void) {
  SNAP_AT(line_main);
}
static __attribute__((noinline)) void spin_step(void) {
  SNAP_AT(line_spin);
}
static int line_tid;
static __attribute__((noinline)) void tid_site(void) {
  SNAP_AT(line_tid);
}

enum role { PARK_A, PARK_B, WRAPPER, EXITER, DSO, RESUMER, SPINNER };
struct worker {
  pid_t id;
  const char *name;
  enum role role;
};
static const struct worker workers[] = {
    {2, "parker", PARK_A}, {3, "parker", PARK_A}, {4, "parker", PARK_B},   {5, "wrapper", WRAPPER},
    {6, "exiter", EXITER}, {7, "dso", DSO},       {8, "resumer", RESUMER}, {9, "spinner", SPINNER},
};
#define NWORKERS (int)(sizeof workers / sizeof *workers)

static void *work(void *arg) {
  const struct worker *w = arg;
  /* The resumer continues a coroutine's numbering: ring slot 30, counter 250,
   * so both its slots and its counters wrap. */
  if (w->role == RESUMER)
    rip_init(w->id, w->name, strlen(w->name), 30, 250);
  else
    rip_init(w->id, w->name, strlen(w->name), 0, 0);
  switch (w->role) {
  case PARK_A:
    park(0);
    break;
  case PARK_B:
    park(1);
    break;
  case WRAPPER:
    for (int i = 0; i < 300; i++)
      wrap_step(); /* the counter wraps past 255 */
    wrap_done();
    break;
  case EXITER:
    exit_path();
    rip_exit();
    arrive();
    return NULL;
  case DSO:
    dso_park(&line_dso);
    break;
  case RESUMER:
    for (int i = 0; i < 10; i++)
      resume_step();
    break;
  case SPINNER: /* keeps writing while the reader reads */
    spin_step();
    arrive();
    for (;;) {
      for (int i = 0; i < 1000; i++)
        spin_step();
      usleep(1000);
    }
  }
  arrive();
  block_forever();
  return NULL;
}

static int run(const char *ring) {
  if (!rip_create_ring(ring, 64)) {
    fprintf(stderr, "rip-prog: %s: %s\n", ring, strerror(errno));
    return 1;
  }
  rip_init(1, "main", 4, 0, 0);
  pthread_t tids[NWORKERS];
  for (int i = 0; i < NWORKERS; i++) {
    int e = pthread_create(&tids[i], NULL, work, (void *)&workers[i]);
    if (e != 0) {
      fprintf(stderr, "rip-prog: pthread_create: %s\n", strerror(e));
      return 1;
    }
  }
  pthread_mutex_lock(&lock);
  while (arrived < NWORKERS)
    pthread_cond_wait(&cond, &lock);
  pthread_mutex_unlock(&lock);
  main_wait();
  printf("line park_a %d\nline park_b %d\nline wrap %d\nline wrap_done %d\nline exit %d\n"
         "line resume %d\nline main %d\nline dso %d\nline spin %d\nready\n",
         line_park_a, line_park_b, line_wrap, line_wrap_done, line_exit, line_resume, line_main,
         __atomic_load_n(&line_dso, __ATOMIC_RELAXED),
         __atomic_load_n(&line_spin, __ATOMIC_RELAXED));
  fflush(stdout);
  block_forever();
  return 0;
}

/* The librip default: records indexed by tid, the file sized for pid_max. */
static int run_tid(const char *ring) {
  if (!rip_create_ring(ring, 0)) {
    fprintf(stderr, "rip-prog: %s: %s\n", ring, strerror(errno));
    return 1;
  }
  rip_init(0, "tid", 3, 0, 0);
  tid_site();
  printf("tid %ld %d\n", (long)rip_tid, line_tid);
  return 0;
}

/* zlib stream of IN in stored deflate blocks (RFC 1950/1951), Adler-32 last. */
static int zlib_copy(const char *in, const char *out) {
  FILE *fi = fopen(in, "rbe"), *fo = fopen(out, "wbe");
  int rc = 1;
  if (fi == NULL || fo == NULL)
    goto out;
  static unsigned char buf[65535];
  unsigned long a = 1, b = 0;
  fputc(0x78, fo);
  fputc(0x01, fo);
  size_t n;
  do {
    n = fread(buf, 1, sizeof buf, fi);
    int last = n < sizeof buf;
    unsigned char hdr[5] = {(unsigned char)last, n & 0xff, n >> 8, ~n & 0xff, (~n >> 8) & 0xff};
    fwrite(hdr, 1, 5, fo);
    fwrite(buf, 1, n, fo);
    for (size_t i = 0; i < n; i++) {
      a = (a + buf[i]) % 65521;
      b = (b + a) % 65521;
    }
  } while (n == sizeof buf);
  unsigned long adler = b << 16 | a;
  for (int s = 24; s >= 0; s -= 8)
    fputc((int)(adler >> s) & 0xff, fo);
  rc = ferror(fi) || ferror(fo) ? 1 : 0;
out:
  if (fi != NULL)
    fclose(fi);
  if (fo != NULL && fclose(fo) != 0)
    rc = 1;
  return rc;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "zlib") == 0)
    return zlib_copy(argv[2], argv[3]);
  if (argc == 3 && strcmp(argv[1], "tid") == 0)
    return run_tid(argv[2]);
  if (argc == 2)
    return run(argv[1]);
  fprintf(stderr, "usage: rip-prog RING | tid RING | zlib IN OUT\n");
  return 2;
}
