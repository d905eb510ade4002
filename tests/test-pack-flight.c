/* test-pack-flight.c - packs in overwrite mode (corotracer run --flight, docs/ROUTE1.md
 * "Remaining" 4), the probe's side: a writer whose one ring nobody drains takes back its
 * oldest records again and again (src/probe/ring.c ct_ring_overwrite, ct_ring_forget).
 * The ring's tail must always be a record or a pack header (the engine reads from it),
 * and every event written must be either still in the ring (read from its packs'
 * entries) or charged lost to its station, exactly once. The file is laid out here as our
 * engine lays it out (tests/lib/v2-file.c); the body runs in a forked child, as the
 * probe attaches once per process. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/ctp.h"
#include "corotracer.h"
#include "format/pack_entry.h"
#include "lib/check.h"
#include "lib/probe-fixture.h"
#include "lib/v2-file.h"

#define NCO 24u        /* coroutines, stations 0 .. NCO - 1 */
#define NSWITCH 30000u /* hot switches: the ring of 128 records laps hundreds of times */

static char dir[256], shm_path[300], sock_path[300];

/* The probe's mapping, found from the handle on station 0. */
static char *base;
static struct ctp_header *H;

/* Events written per station, as the body counts them. */
static uint64_t written[NCO];

/* Events of ring 0's records [tail, head), per station, into in[]: each record
 * one event of its station (a switch record three), each pack its entries' (from: suspend and wake,
 * to: resume; a standalone wake's to: the wake). 0 when the walk, header to header from tail, lands
 * on head with every pack whole and its entries read; else -1 (a tail inside a pack reads entry
 * bytes as records). */
static int ring_events(uint64_t in[NCO]) {
  struct ctp_ring *rg = ctp_ring_at(base, H, 0);
  uint64_t cap = H->ring_bytes / sizeof(struct ctp_rec);
  const struct ctp_rec *recs = ctp_ring_recs(rg);
  uint64_t head = atomic_load_explicit(&rg->head, memory_order_acquire);
  uint64_t i = atomic_load_explicit(&rg->tail, memory_order_acquire);
  memset(in, 0, NCO * sizeof *in);
  while (i < head) {
    const struct ctp_rec *r = &recs[i % cap];
    if (r->kind == CTP_KIND_SWITCH) { /* a switch record: suspend, wake, resume */
      const struct ctp_swrec *sw = (const struct ctp_swrec *)r;
      if (sw->from >= NCO || sw->to >= NCO)
        return -1;
      in[sw->from] += 1u + ((sw->wait & CTP_SW_WAKE) != 0);
      in[sw->to]++;
      i++;
      continue;
    }
    if (r->kind != CTP_KIND_PACK) {
      if (r->kind == 0 || r->kind >= CTP_KIND_MAX_ || r->station >= NCO)
        return -1;
      in[r->station]++;
      i++;
      continue;
    }
    struct ctp_pack pk;
    memcpy(&pk, r, sizeof pk);
    if (pk.nrec >= CTP_PACK_RECS || pk.nbytes > pk.nrec * 32u || i + 1u + pk.nrec > head ||
        (i + 1u) % cap + pk.nrec > cap || pk.nent == 0)
      return -1;
    const uint8_t *p = (const uint8_t *)&recs[(i + 1u) % cap], *e = p + pk.nbytes;
    uint32_t cur = pk.from;
    uint64_t pobj = 0;
    unsigned wakes = 0, solos = 0;
    for (unsigned k = 0; k < pk.nent; k++) {
      struct ctp_pk_entry en;
      if (!(p = ctp_pk_get(p, e, cur, pobj, &en)) || en.from >= NCO || en.to >= NCO)
        return -1;
      pobj = ctp_pk_pobj(pobj, &en);
      in[en.from] += ctp_pk_from_events(&en);
      in[en.to]++;
      wakes += en.wake;
      solos += en.solo;
      cur = ctp_pk_cur(&en);
    }
    if (wakes != pk.nwake || solos != pk.nsolo)
      return -1;
    i += 1u + pk.nrec;
  }
  return i == head ? 0 : -1;
}

/* Switches between the coroutines, its ring full from the first lap on:
 * sites, waits, objs and wakes varied so packs close at every size, an
 * ordinary record now and then (it closes the open pack), the tail checked
 * every few switches; at the end, what the ring holds plus what each station
 * was charged is what was written. */
static int body_overwrite(void) {
  corotracer_co *co[NCO];
  for (unsigned i = 0; i < NCO; i++) {
    co[i] = corotracer_create(100 + i, NULL, (const void *)(uintptr_t)0x1000);
    written[i]++;
  }
  base = (char *)co[0] - CTP_HEADER_SIZE;
  H = (struct ctp_header *)base;
  ASSERT(H->mode & CTP_MODE_PACK);
  corotracer_resume(co[0]);
  written[0]++;
  uint32_t x = 12345, cur = 0;
  uint64_t in[NCO];
  for (unsigned s = 0; s < NSWITCH; s++) {
    x = x * 1103515245u + 12345u;
    uint32_t next = (cur + 1u + (x >> 8) % (NCO - 1u)) % NCO;
    uintptr_t site = 0x2000 + ((s / 37u) % 3u) * 0x10;
    int wake = (x >> 20) & 1;
    enum corotracer_wait wait = (x >> 21) % 4u == 0 ? COROTRACER_WAIT_PTR : COROTRACER_WAIT_NONE;
    uint64_t obj = wait == COROTRACER_WAIT_PTR ? (x >> 22) % 3000u : 0;
    /* Records around the wake below: a pack of that wake alone (one event
     * in two records: its publish counts one event less than records). */
    if (s % 202u == 100u || s % 202u == 101u) {
      wait = COROTRACER_WAIT_FD;
      obj = 3;
    }
    corotracer_switch(co[cur], (const void *)site, wait, obj, wake ? COROTRACER_SWITCH_RUNNABLE : 0,
                      co[next]);
    written[cur] += 1u + (unsigned)wake;
    written[next]++;
    cur = next;
    if (s % 101u == 100u) { /* a standalone wake: an entry of the open pack */
      uint32_t w = (cur + 1u) % NCO;
      corotracer_wake(co[w], (const void *)(uintptr_t)0x3000);
      written[w]++;
    }
    if (s % 17u == 0)
      ASSERT_EQ(ring_events(in), 0);
  }
  /* The open pack published: a record of the thread after it (a wait on
   * an fd is no pack's). */
  corotracer_suspend(co[cur], (const void *)(uintptr_t)0x3000, COROTRACER_WAIT_FD, 3);
  written[cur]++;
  ASSERT_EQ(ring_events(in), 0);
  struct ctp_ring *rg = ctp_ring_at(base, H, 0);
  uint64_t total = 0, kept = 0;
  for (unsigned i = 0; i < NCO; i++) {
    uint64_t lost = atomic_load(&ctp_station_at(base, i)->v2_lost);
    if (in[i] + lost != written[i])
      FAIL("station %u: %llu in the ring + %llu lost, %llu written", i, (unsigned long long)in[i],
           (unsigned long long)lost, (unsigned long long)written[i]);
    total += written[i];
    kept += in[i];
  }
  ASSERT_UINT64_GT(atomic_load(&rg->lost), total / 2); /* it did lap, many times */
  ASSERT_UINT64_EQ(kept + atomic_load(&rg->lost), total);
  uint64_t recorded, dropped;
  corotracer_stats(&recorded, &dropped);
  ASSERT_UINT64_EQ(recorded, total);
  ASSERT_UINT64_EQ(dropped, atomic_load(&rg->lost));
  return 0;
}

int main(void) {
  if (ct_make_tmpdir(dir, sizeof dir, "ct-pack-flight") != 0)
    return 1;
  snprintf(shm_path, sizeof shm_path, "%s/ctp", dir);
  snprintf(sock_path, sizeof sock_path, "%s/sock", dir);
  int listen_fd = ct_listen_unix(sock_path, 64);
  ASSERT(listen_fd >= 0);
  /* One ring (no spare to go on in) of the smallest size, never drained. */
  struct ct_v2_params prm = {.stations = NCO,
                             .rings = 1,
                             .ring_bytes = CTP_RING_BYTES_MIN,
                             .clock = CTP_CLOCK_MONO,
                             .mode = CTP_MODE_OVERWRITE | CTP_MODE_PACK,
                             .ext_version = 1};
  uint64_t len;
  void *file = ct_v2_create(shm_path, &prm, &len);
  ASSERT_NOT_NULL(file);
  char count[16];
  snprintf(count, sizeof count, "%u", prm.stations);
  int st = ct_run_forked(body_overwrite, shm_path, sock_path, count, NULL);
  int ok = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
  printf("%s overwrite mode: packs taken back whole, each event kept or charged once\n",
         ok ? "ok  " : "FAIL");
  close(listen_fd);
  unlink(sock_path);
  unlink(shm_path);
  rmdir(dir);
  return !ok;
}
