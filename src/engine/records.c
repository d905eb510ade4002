/* records.c - the engine's own records (docs/TRACE_FORMAT.md): meta, with what
 * only the engine knows (its clocks, host, a run id, its version), and module,
 * from its reading of the target's maps; every other line is written by
 * src/format/records.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/ctp.h"
#include "corotracer.h"
#include "engine/clock.h"
#include "engine/procs.h"
#include "engine/records.h"
#include "format/trace_keys.h"
#include "format/writer.h"

#define CT_ENGINE_VERSION "corotracer " COROTRACER_VERSION /* include/corotracer.h */

static const char *clock_name(uint32_t c) {
  return c == CTP_CLOCK_TSC ? "tsc" : c == CTP_CLOCK_CNTVCT ? "cntvct" : "mono";
}

void ct_rec_meta(struct ct_writer *w, const struct ct_meta *m) {
  unsigned char id[16] = {0};
  size_t got = 0;
  while (got < sizeof(id)) {
    ssize_t k = getrandom(id + got, sizeof(id) - got, 0);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break; /* no entropy source: a zero-padded id still parses */
    got += (size_t)k;
  }
  char hex[33];
  for (size_t i = 0; i < sizeof(id); i++)
    snprintf(hex + 2 * i, 3, "%02x", id[i]);
  char host[256] = "";
  gethostname(host, sizeof(host) - 1);
  uint64_t mono = ct_now_ns(CLOCK_MONOTONIC), wall = ct_now_ns(CLOCK_REALTIME);
  ct_w_str(w, "{" CT_KQ(TYPE) "\"meta\"," CT_KQ(FORMAT) "\"corotracer-trace\",");
  ct_w_str(w, CT_KQ(FORMAT_VERSION) "1," CT_KQ(RUN_ID) "\"");
  ct_w_str(w, hex);
  ct_w_str(w, "\"," CT_KQ(HOST));
  ct_w_json(w, host, strlen(host));
  ct_w_str(w, "," CT_KQ(ENGINE) "\"" CT_ENGINE_VERSION "\"," CT_KQ(COMMAND) "[");
  for (char *const *a = m->argv; *a; a++) {
    if (a != m->argv)
      ct_w_str(w, ",");
    ct_w_json(w, *a, strlen(*a));
  }
  ct_w_str(w, "]," CT_KQ(ENGINE_PID));
  ct_w_u64(w, m->engine_pid);
  ct_w_str(w, "," CT_KQ(TARGET_PID));
  ct_w_u64(w, m->target_pid);
  ct_w_str(w, "," CT_KQ(STATIONS));
  ct_w_u64(w, m->stations);
  ct_w_str(w, "," CT_KQ(CLOCK) "{" CT_KQ(MONO_NS));
  ct_w_u64(w, mono);
  ct_w_str(w, "," CT_KQ(WALL_NS));
  ct_w_u64(w, wall);
  ct_w_str(w, "}," CT_KQ(POLL_MS));
  ct_w_u64(w, (uint64_t)m->poll_ms);
  if (m->rings) {
    ct_w_str(w, "," CT_KQ(RINGS));
    ct_w_u64(w, m->rings);
    ct_w_str(w, "," CT_KQ(RING_BYTES));
    ct_w_u64(w, m->ring_bytes);
    ct_w_str(w, "," CT_KQ(TS_CLOCK) "\"");
    ct_w_str(w, clock_name(m->clock));
    ct_w_str(w, "\"");
  }
  ct_w_str(w, "}\n");
}

void ct_rec_module(struct ct_writer *w, pid_t pid, const struct ct_module *m) {
  ct_w_str(w, "{" CT_KQ(TYPE) "\"module\"," CT_KQ(PID));
  ct_w_u64(w, (uint64_t)pid);
  ct_w_str(w, "," CT_KQ(START));
  ct_w_hex(w, m->start);
  ct_w_str(w, "," CT_KQ(END));
  ct_w_hex(w, m->end);
  ct_w_str(w, "," CT_KQ(OFFSET));
  ct_w_hex(w, m->offset);
  ct_w_str(w, "," CT_KQ(PATH));
  ct_w_json(w, m->path, strlen(m->path));
  if (m->build_id[0]) {
    ct_w_str(w, "," CT_KQ(BUILD_ID) "\"");
    ct_w_str(w, m->build_id);
    ct_w_str(w, "\"");
  }
  ct_w_str(w, "}\n");
}
