/* opts.c - command line of `corotracer run`, long options and the reference's
 * single-dash spellings (-n, -cmd, -out, -shm, -sock). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/defaults.h"
#include "common/args.h"
#include "common/ctp.h"
#include "engine/flight.h"
#include "engine/opts.h"
#include "html/live.h"
#include "run/flight_watch.h"

void ct_opts_usage(FILE *f) {
  fprintf(f,
          "usage: corotracer run [options] -- program [args...]\n"
          "       corotracer -n 256 -cmd \"./app args\" -out trace.jsonl\n"
          "options:\n"
          "  -o, --out FILE      trace file (default trace.ctrace; reference: -out, JSONL)\n"
          "      --format F      ctrace (compact binary, the default) or jsonl (the default\n"
          "                      for -o NAME.jsonl and the reference's -out and -cmd)\n"
          "      --also-jsonl FILE  the same events as JSONL in FILE too (comparisons)\n"
          "  -n, --stations N    live coroutines traced at once (default %u, max %u)\n"
          "      --append        append to the trace instead of truncating it\n"
          "      --poll-ms MS    fallback wake-up interval when idle (default 1000)\n"
          "      --shm PATH      shared-memory file to create (default: a private memfd)\n"
          "      --sock PATH     socket to create (default: in a private directory)\n"
          "      --cmd STRING    run STRING through /bin/sh -c (reference: -cmd)\n"
          "      --serve [ADDR:]PORT  live dashboard at http://ADDR:PORT (default ADDR\n"
          "                      127.0.0.1; the URL with its token is printed; docs/DASHBOARD.md)\n"
          "      --quiet         no status line, no summary\n"
          "      --status        live status line even when stderr is not a terminal\n"
          "      --no-realtime   do not ask for SCHED_FIFO priority (see docs/ENGINE.md)\n"
          "      --lossless      a writer whose ring is full waits for the engine (bounded)\n"
          "      --lossless-ms MS  longest such wait of one event (default 1000), then it counts a "
          "loss\n"
          "      --no-pack       switch records instead of packs (by default, in the binary\n"
          "                      trace, --flight too, the probe packs a scheduler's switches,\n"
          "                      the engine moves the packs, readers expand them: docs/ROUTE1.md)\n"
          "      --pack          packs (the default wherever allowed)\n"
          "      --rings N       per-thread event rings offered to our probe (default %u, max %u;\n"
          "                      0: stations only, as the reference engine)\n"
          "      --ring-kib K    size of one ring in KiB, a power of two (default %u, %u with\n"
          "                      --flight --lossless; 4..%u)\n"
          "      --capture-mib M  memory for records not yet written as lines (default %u);\n"
          "                      beyond it they wait in a file next to the trace; under\n"
          "                      --flight no file: %u, %u with --lossless (docs/FLIGHT.md)\n"
          "      --flight SIZE[K|M|G]  flight recorder: keep only the newest SIZE of trace in\n"
          "                      memory, write it to -o OUT (OUT.1, ...) on a trigger: SIGUSR1\n"
          "                      to the engine, the program killed by a fatal signal\n"
          "      --flight-age DURATION  also drop what is older than DURATION (500ms, 30s,\n"
          "                      5m, 1h) behind the newest event; SIZE still bounds it\n"
          "      --flight-max N  dumps at most (default: no cap); a crash's is written anyway\n"
          "      --flight-disk SIZE[K|M|G]  keep the newest dumps within SIZE, the oldest\n"
          "                      removed (default %u windows)\n"
          "      --dump-on LIST  with --flight, more triggers (comma-separated): exit (the\n"
          "                      program's end), lost_wakeup, deadlock, blocker, starvation\n"
          "                      (a live finding, as the report finds it), any (all four)\n"
          "      --stuck-ms MS   --dump-on, --serve: parked this long unwoken is lost (%d)\n"
          "      --runnable-ms MS  --dump-on, --serve: runnable this long while others ran (%d)\n"
          "      --blocker-ms MS --dump-on, --serve: a run this long without suspending (%d)\n"
          "      --ship URL      each dump (without --flight: the trace at exit) to PostgreSQL,\n"
          "                      by a shipper of its own; queued in a spool while the\n"
          "                      database is away (docs/FLEET.md)\n"
          "      --ship-spool DIR  that spool (default ~/.local/state/corotracer/spool)\n"
          "  -h, --help          this help\n"
          "The exit status is the program's (128+N when killed by signal N); see docs/ENGINE.md.\n",
          CT_STATIONS_DEFAULT, CTP_STATIONS_MAX, CT_RINGS_DEFAULT, CTP_RINGS_MAX,
          CT_RING_KIB_DEFAULT, CT_FLIGHT_LOSSLESS_RING_KIB, CTP_RING_BYTES_MAX / 1024u,
          CT_CAPTURE_MIB_DEFAULT, CT_FLIGHT_CAPTURE_MIB, CT_FLIGHT_LOSSLESS_CAPTURE_MIB,
          CT_FLIGHT_DISK_WINDOWS, CT_STUCK_MS, CT_RUNNABLE_MS, CT_BLOCKER_MS);
}

/* Word the error "opt: what" into why; return -EINVAL. */
static int bad(char *why, size_t whylen, const char *opt, const char *what) {
  snprintf(why, whylen, "%s: %s", opt, what);
  return -EINVAL;
}

/* Parse a decimal in [lo, hi]; 0, or -EINVAL with the reason in why. */
static int parse_uint(char *why, size_t whylen, const char *opt, const char *s, unsigned long lo,
                      unsigned long hi, unsigned long *out) {
  char *end;
  errno = 0;
  if (!s[0] || s[0] == '-' || s[0] == '+')
    return bad(why, whylen, opt, "expects a positive integer");
  unsigned long v = strtoul(s, &end, 10);
  if (*end)
    return bad(why, whylen, opt, "expects a positive integer");
  if (errno == ERANGE || v < lo || v > hi) {
    char msg[96];
    snprintf(msg, sizeof(msg), "must be between %lu and %lu", lo, hi);
    return bad(why, whylen, opt, msg);
  }
  *out = v;
  return 0;
}

enum {
  O_OUT = 1,
  O_REF_OUT,
  O_FORMAT,
  O_ALSO_JSONL,
  O_STATIONS,
  O_POLL_MS,
  O_SHM,
  O_SOCK,
  O_CMD,
  O_SERVE,
  O_LOSSLESS_MS,
  O_RINGS,
  O_RING_KIB,
  O_CAPTURE_MIB,
  O_FLIGHT,
  O_FLIGHT_MAX,
  O_FLIGHT_DISK,
  O_FLIGHT_AGE,
  O_DUMP_ON,
  O_APPEND,
  O_QUIET,
  O_STATUS,
  O_NO_RT,
  O_LOSSLESS,
  O_PACK,
  O_NO_PACK,
  O_SHIP,
  O_SHIP_SPOOL,
  O_HELP
};

/* Every spelling, ours and the reference's single-dash ones. */
static const struct ct_opt run_opts[] = {{"-o --out", O_OUT, 1},
                                         {"-out", O_REF_OUT, 1},
                                         {"--format", O_FORMAT, 1},
                                         {"--also-jsonl", O_ALSO_JSONL, 1},
                                         {"-n --stations", O_STATIONS, 1},
                                         {"--poll-ms", O_POLL_MS, 1},
                                         {"--shm -shm", O_SHM, 1},
                                         {"--sock -sock", O_SOCK, 1},
                                         {"--cmd -cmd", O_CMD, 1},
                                         {"--serve", O_SERVE, 1},
                                         {"--lossless-ms", O_LOSSLESS_MS, 1},
                                         {"--rings", O_RINGS, 1},
                                         {"--ring-kib", O_RING_KIB, 1},
                                         {"--capture-mib", O_CAPTURE_MIB, 1},
                                         {"--flight", O_FLIGHT, 1},
                                         {"--flight-max", O_FLIGHT_MAX, 1},
                                         {"--flight-disk", O_FLIGHT_DISK, 1},
                                         {"--flight-age", O_FLIGHT_AGE, 1},
                                         {"--dump-on", O_DUMP_ON, 1},
                                         CT_ARGS_THRESHOLD_OPTS,
                                         {"--ship", O_SHIP, 1},
                                         {"--ship-spool", O_SHIP_SPOOL, 1},
                                         {"--append", O_APPEND, 0},
                                         {"--quiet", O_QUIET, 0},
                                         {"--status", O_STATUS, 0},
                                         {"--no-realtime", O_NO_RT, 0},
                                         {"--lossless", O_LOSSLESS, 0},
                                         {"--pack", O_PACK, 0},
                                         {"--no-pack", O_NO_PACK, 0},
                                         {"-h --help", O_HELP, 0},
                                         {NULL, 0, 0}};

/* A size with an optional K, M or G suffix (powers of 1024), 1 MiB to 1 TiB. */
static int parse_size(char *why, size_t whylen, const char *opt, const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  if (s[0] < '0' || s[0] > '9')
    return bad(why, whylen, opt, "expects a size such as 64M");
  unsigned long long v = strtoull(s, &end, 10);
  int shift = !*end                ? 0
              : strchr("kK", *end) ? 10
              : strchr("mM", *end) ? 20
              : strchr("gG", *end) ? 30
                                   : -1;
  if (shift < 0 || (*end && end[1]) || errno == ERANGE || v > (1ull << 40) >> shift)
    return bad(why, whylen, opt, "expects a size such as 64M (K, M or G; at most 1T)");
  if ((v << shift) < (1ull << 20))
    return bad(why, whylen, opt, "must be at least 1M");
  *out = (uint64_t)v << shift;
  return 0;
}

/* A duration: a decimal and its unit, ms, s, m or h; 1 ms to 30 days. */
static int parse_duration(char *why, size_t whylen, const char *opt, const char *s, uint64_t *ns) {
  static const struct {
    const char *unit;
    uint64_t ns;
  } units[] = {
      {"ms", 1000000ull}, {"s", 1000000000ull}, {"m", 60000000000ull}, {"h", 3600000000000ull}};
  char *end;
  errno = 0;
  unsigned long long v = s[0] >= '0' && s[0] <= '9' ? strtoull(s, &end, 10) : 0;
  for (size_t i = 0; v && errno != ERANGE && i < sizeof units / sizeof units[0]; i++)
    if (!strcmp(end, units[i].unit) && v <= 2592000000000000ull / units[i].ns) {
      *ns = v * units[i].ns;
      return 0;
    }
  return bad(why, whylen, opt, "expects a duration such as 500ms, 30s, 5m or 1h (at most 30 days)");
}

/* Store one option's value (opt: the spelling used, for the error). */
static int set_value(struct ct_opts *o, int id, const char *opt, const char *val, int *fmt,
                     char *why, size_t whylen) {
  unsigned long v;
  switch (id) {
  case O_SHIP:
  case O_SHIP_SPOOL:
    if (!val[0])
      return bad(why, whylen, opt, "needs a value");
    *(id == O_SHIP ? &o->ship : &o->ship_spool) = val;
    return 0;
  case O_OUT:
  case O_REF_OUT:
  case O_ALSO_JSONL:
    if (!val[0])
      return bad(why, whylen, opt, "needs a file name");
    *(id == O_ALSO_JSONL ? &o->also_jsonl : &o->out) = val;
    return 0;
  case O_FORMAT:
    if (strcmp(val, "ctrace") && strcmp(val, "jsonl"))
      return bad(why, whylen, opt, "expects ctrace or jsonl");
    *fmt = strcmp(val, "jsonl") ? CT_FORMAT_CTRACE : CT_FORMAT_JSONL;
    return 0;
  case O_STATIONS:
    if (parse_uint(why, whylen, opt, val, 1, CTP_STATIONS_MAX, &v))
      return -EINVAL;
    o->stations = (uint32_t)v;
    return 0;
  case O_POLL_MS:
    if (parse_uint(why, whylen, opt, val, 1, 3600000, &v))
      return -EINVAL;
    o->poll_ms = (int)v;
    return 0;
  case O_SHM:
  case O_SOCK:
    if (!val[0])
      return bad(why, whylen, opt, "needs a path");
    *(id == O_SHM ? &o->shm_path : &o->sock_path) = val;
    return 0;
  case O_CMD:
    if (!val[0])
      return bad(why, whylen, opt, "needs a command");
    o->cmd = val;
    return 0;
  case O_SERVE: {
    char ip[64];
    int port;
    if (ct_live_parse_addr(val, ip, sizeof ip, &port))
      return bad(why, whylen, opt, "expects [ADDR:]PORT with an IPv4 ADDR");
    o->serve = val;
    return 0;
  }
  case O_LOSSLESS_MS:
    if (parse_uint(why, whylen, opt, val, 1, 600000, &v))
      return -EINVAL;
    o->lossless_ms = (int)v;
    return 0;
  case O_RINGS:
    if (parse_uint(why, whylen, opt, val, 0, CTP_RINGS_MAX, &v))
      return -EINVAL;
    o->rings = (uint32_t)v;
    return 0;
  case O_CAPTURE_MIB:
    if (parse_uint(why, whylen, opt, val, 1, 65536, &v))
      return -EINVAL;
    o->capture_mib = (uint32_t)v;
    return 0;
  case O_FLIGHT:
    return parse_size(why, whylen, opt, val, &o->flight);
  case O_FLIGHT_DISK:
    return parse_size(why, whylen, opt, val, &o->flight_disk);
  case O_FLIGHT_AGE:
    return parse_duration(why, whylen, opt, val, &o->flight_age_ns);
  case O_FLIGHT_MAX:
    if (parse_uint(why, whylen, opt, val, 1, 100000, &v))
      return -EINVAL;
    o->flight_max = (uint32_t)v;
    return 0;
  case O_DUMP_ON:
    if (ct_fwatch_parse(val, &o->dump_on, &o->dump_on_exit))
      return bad(why, whylen, opt,
                 "expects a list of exit, lost_wakeup, deadlock, blocker, starvation, any");
    return 0;
  default: /* O_RING_KIB */
    if (parse_uint(why, whylen, opt, val, CTP_RING_BYTES_MIN / 1024u, CTP_RING_BYTES_MAX / 1024u,
                   &v))
      return -EINVAL;
    if (v & (v - 1))
      return bad(why, whylen, opt, "must be a power of two (4, 8, 16, ... KiB)");
    o->ring_kib = (uint32_t)v;
    return 0;
  }
}

/* What --flight cannot be combined with (it keeps a binary window, no file). */
static int flight_check(const struct ct_opts *o, char *why, size_t whylen) {
  if (!o->flight)
    return o->dump_on_exit || o->dump_on ? bad(why, whylen, "--dump-on", "needs --flight")
           : o->flight_age_ns            ? bad(why, whylen, "--flight-age", "needs --flight")
           : o->flight_max || o->flight_disk
               ? bad(why, whylen, o->flight_max ? "--flight-max" : "--flight-disk",
                     "needs --flight")
               : 0;
  if (o->format != CT_FORMAT_CTRACE)
    return bad(why, whylen, "--flight", "keeps the binary trace (not --format jsonl, -out)");
  if (o->append || o->also_jsonl)
    return bad(why, whylen, "--flight",
               o->append ? "cannot be combined with --append"
                         : "cannot be combined with --also-jsonl");
  return 0;
}

int ct_opts_parse(struct ct_opts *o, int argc, char **argv, char *why, size_t whylen) {
  memset(o, 0, sizeof(*o));
  o->out = NULL;
  int fmt = -1, reference = 0, rc; /* --format; a reference spelling (-out, -cmd) seen */
  o->stations = CT_STATIONS_DEFAULT;
  o->poll_ms = CT_POLL_MS_DEFAULT;
  o->lossless_ms = CT_LOSSLESS_MS_DEFAULT;
  o->rings = CT_RINGS_DEFAULT;
  o->ring_kib = 0;    /* CT_RING_KIB_DEFAULT, or CT_FLIGHT_LOSSLESS_RING_KIB, unless given */
  o->capture_mib = 0; /* CT_CAPTURE_MIB_DEFAULT, or a CT_FLIGHT_*CAPTURE_MIB, unless given */
  o->th = CT_THRESHOLDS_DEFAULT; /* the report's: a dump is judged as a report is */
  struct ct_args it;
  const char *val;
  int id;
  int i = argc; /* index of the program's first argument */
  /* getopt's '+': the program's own options after its name are not ours. */
  ct_args_init(&it, argc, argv, CT_ARGS_GETOPT);
  for (;;) {
    /* The spelling used, for errors: the argument itself (or its cluster). */
    const char *opt = !it.cluster && it.i < argc ? argv[it.i] : it.letter;
    if ((id = ct_args_next(&it, run_opts, &val)) == CT_ARGS_END)
      break;
    int *flag = id == O_APPEND     ? &o->append
                : id == O_QUIET    ? &o->quiet
                : id == O_STATUS   ? &o->status
                : id == O_NO_RT    ? &o->no_rt
                : id == O_LOSSLESS ? &o->lossless
                : id == O_PACK     ? &o->pack
                : id == O_NO_PACK  ? &o->no_pack
                                   : NULL;
    if (id == CT_ARGS_POSITIONAL) {
      i = it.i - 1;
      break;
    } else if (id == O_HELP) {
      return 1;
    } else if (id == CT_ARGS_UNKNOWN) {
      return bad(why, whylen, val, "unknown option (see corotracer run --help)");
    } else if (id == CT_ARGS_NO_VALUE) {
      return bad(why, whylen, val, "needs a value");
    } else if (id == CT_ARGS_HAS_VALUE) {
      return bad(why, whylen, val, "takes no value");
    } else if (flag) {
      *flag = 1;
    } else if ((rc = ct_args_threshold(&o->th, id, val, why, whylen)) <= 0) {
      if (rc)
        return -EINVAL;
    } else if (set_value(o, id, opt, val, &fmt, why, whylen)) {
      return -EINVAL;
    }
    reference |= id == O_REF_OUT || (id == O_CMD && !strcmp(opt, "-cmd"));
  }
  /* The reference's users, and a file named .jsonl, get the JSONL they
   * expect; everyone else the compact binary trace. */
  size_t n = o->out ? strlen(o->out) : 0;
  int jsonl_name = n >= 6 && !strcmp(o->out + n - 6, ".jsonl");
  if (fmt < 0)
    fmt = reference || jsonl_name ? CT_FORMAT_JSONL : CT_FORMAT_CTRACE;
  o->format = (enum ct_format)fmt;
  if (!o->out)
    o->out = fmt == CT_FORMAT_JSONL ? "trace.jsonl" : "trace.ctrace";
  if (o->cmd && i < argc)
    return bad(why, whylen, argv[i], "give either -cmd or a program after --, not both");
  if (o->cmd) {
    o->sh_argv[0] = "/bin/sh";
    o->sh_argv[1] = "-c";
    o->sh_argv[2] = (char *)o->cmd;
    o->sh_argv[3] = NULL;
    o->argv = o->sh_argv;
  } else if (i < argc) {
    o->argv = argv + i;
  } else {
    return bad(why, whylen, "run",
               "no program given (corotracer run [options] -- program [args...])");
  }
  if (o->quiet && o->status)
    return bad(why, whylen, "--status", "cannot be combined with --quiet");
  if (!o->capture_mib)
    o->capture_mib = !o->flight    ? CT_CAPTURE_MIB_DEFAULT
                     : o->lossless ? CT_FLIGHT_LOSSLESS_CAPTURE_MIB
                                   : CT_FLIGHT_CAPTURE_MIB;
  if (!o->ring_kib)
    o->ring_kib = o->flight && o->lossless ? CT_FLIGHT_LOSSLESS_RING_KIB : CT_RING_KIB_DEFAULT;
  /* Packs are the binary trace's (--flight too: a writer in overwrite mode
   * takes back whole packs, docs/ROUTE1.md "Remaining" 4). */
  if (o->pack && o->no_pack)
    return bad(why, whylen, "--no-pack", "cannot be combined with --pack");
  if (o->pack && (o->format != CT_FORMAT_CTRACE || o->also_jsonl || !o->rings))
    return bad(why, whylen, "--pack", "needs the binary trace and rings (not jsonl, --also-jsonl)");
  /* The default, where packs hold every guarantee: the binary trace with
   * rings, the flight recorder's too (since the gap entry: a loss in the
   * middle of a coroutine's pack events, routine with overwrite mode's
   * take-backs, moves its numbering at once; docs/ROUTE1.md "Remaining" 4
   * and 10). */
  if (!o->no_pack && o->format == CT_FORMAT_CTRACE && !o->also_jsonl && o->rings)
    o->pack = 1;
  return flight_check(o, why, whylen);
}
