/* opts.h - `corotracer run`'s options, their defaults, and the engine's exit statuses (opts.c). */
#ifndef CT_ENGINE_OPTS_H
#define CT_ENGINE_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/args.h"

/* Exit statuses of the engine itself (the target's status otherwise). */
#define CT_EXIT_USAGE 2  /* bad option or value */
#define CT_EXIT_FAIL 1   /* setup failed, or the trace is incomplete */
#define CT_EXIT_EXEC 127 /* the program could not be executed */

/* Stations: 2^17 covers 10^5 live coroutines. A station's 1 KiB of shared
 * memory costs nothing until a coroutine takes it (pages untouched stay
 * unallocated), and the harvest scans only stations handed out. */
#define CT_STATIONS_DEFAULT 131072u
#define CT_POLL_MS_DEFAULT 1000
#define CT_LOSSLESS_MS_DEFAULT 1000
#define CT_RINGS_DEFAULT 64u       /* --rings: writer threads with a ring at once */
#define CT_RING_KIB_DEFAULT 1024u  /* --ring-kib: 32768 records of 32 bytes per ring */
#define CT_CAPTURE_MIB_DEFAULT 64u /* --capture-mib: captured records in memory, then a file */
/* --capture-mib under --flight: no spill file, so the engine's bound, faulted
 * in at the start (docs/FLIGHT.md "Memory"). Past it the harvest waits for the
 * formatter while the writer's ring fills: with 16, a lagged back-to-back burst
 * lost a tenth of its events in some rounds (issue #32). --lossless keeps 16:
 * its writer waits instead of losing, and its RSS bound holds (#21). */
#define CT_FLIGHT_CAPTURE_MIB 32u
#define CT_FLIGHT_LOSSLESS_CAPTURE_MIB 16u
/* --ring-kib under --flight --lossless: the writer waits rather than loses, so
 * a ring's size buys it nothing, while the spares a lossless burst fills (3/4
 * of the rings) count in the engine's RSS, within its bound (docs/FLIGHT.md
 * "Memory"). Without --lossless the default ring: half of it lost a tenth of
 * a lagged back-to-back burst (issue #32, docs/ENGINE.md "Flight mode"). */
#define CT_FLIGHT_LOSSLESS_RING_KIB 512u

/* The trace's format (--format; docs/TRACE_FORMAT.md). */
enum ct_format { CT_FORMAT_CTRACE, CT_FORMAT_JSONL };

struct ct_opts {
  const char *out;        /* trace path */
  enum ct_format format;  /* --format, else from -o's name (.jsonl) or -out */
  const char *also_jsonl; /* --also-jsonl: the same events as JSONL too, or NULL */
  uint32_t stations;
  int append;
  int poll_ms;
  const char *shm_path;  /* NULL: private memfd */
  const char *sock_path; /* NULL: private runtime directory */
  int quiet;
  int status;           /* 1: live status even when stderr is not a tty */
  int no_rt;            /* --no-realtime: stay SCHED_OTHER */
  int lossless;         /* --lossless: writers wait for room (bounded) */
  int lossless_ms;      /* --lossless-ms: longest wait of one event */
  int pack;             /* writers pack hot switches (docs/ROUTE1.md): --pack, or the default */
  int no_pack;          /* --no-pack: switch records */
  uint32_t rings;       /* --rings: v2 rings offered (0: v1 stations only) */
  uint32_t ring_kib;    /* --ring-kib: record area of one ring, KiB (power of two) */
  uint32_t capture_mib; /* --capture-mib: capture blocks kept in memory, MiB */
  uint32_t clock;       /* not an option: enum ctp_clock the run offers (ct_clock_pick) */
  const char *cmd;      /* -cmd string (run through /bin/sh -c), or NULL */
  const char *serve;    /* --serve [ADDR:]PORT: the live dashboard (src/html/live.h), or NULL */
  uint64_t flight;      /* --flight: bytes of the flight recorder's window (0: a full trace) */
  uint32_t flight_max;  /* --flight-max: dumps at most, a crash's aside (0: no cap) */
  uint64_t
      flight_disk; /* --flight-disk: the kept dumps' bytes (0: CT_FLIGHT_DISK_WINDOWS windows) */
  uint64_t flight_age_ns; /* --flight-age: drop what is older than this behind the newest (0: no) */
  int dump_on_exit;       /* --dump-on exit: a dump at the program's end, whatever its status */
  unsigned dump_on;       /* --dump-on lost_wakeup,...: finding kinds (analysis/watch.h bits) */
  struct ct_thresholds th;       /* --stuck-ms, --runnable-ms, --blocker-ms (src/common/args.h) */
  const char *ship, *ship_spool; /* --ship URL, --ship-spool DIR (src/ship: docs/FLEET.md) */
  char **argv;      /* program argv (NULL-terminated); points into the caller's argv or sh_argv */
  char *sh_argv[4]; /* storage for {"/bin/sh", "-c", cmd, NULL} */
};

/* Parse argv as handed to ct_run_main. Never prints: returns 0, 1 when
 * --help was asked (the caller prints ct_opts_usage, exit 0), or -EINVAL with
 * the one-line reason "<option>: <what is wrong>" in why (the caller prints
 * it, exit CT_EXIT_USAGE). o->argv points into argv, which must outlive o. */
int ct_opts_parse(struct ct_opts *o, int argc, char **argv, char *why, size_t whylen);
/* The help text of `corotracer run` (the CLI prints it to f). */
void ct_opts_usage(FILE *f);

#endif /* CT_ENGINE_OPTS_H */
