/* opts.c - command line of `corotracer run`, long options and the reference's
 * single-dash spellings (-n, -cmd, -out, -shm, -sock). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "html/live.h"

void ct_opts_usage(FILE *f) {
  fprintf(f,
          "usage: corotracer run [options] -- program [args...]\n"
          "       corotracer -n 256 -cmd \"./app args\" -out trace.jsonl\n"
          "options:\n"
          "  -o, --out FILE      trace file (default trace.jsonl; reference: -out)\n"
          "  -n, --stations N    coroutine stations in shared memory (default 128, max %u)\n"
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
          "      --rings N       per-thread event rings offered to our probe (default %u, max %u;\n"
          "                      0: stations only, as the reference engine)\n"
          "      --ring-kib K    size of one ring in KiB, a power of two (default %u, 4..%u)\n"
          "  -h, --help          this help\n"
          "The exit status is the program's (128+N when killed by signal N); see docs/ENGINE.md.\n",
          CTP_STATIONS_MAX, CT_RINGS_DEFAULT, CTP_RINGS_MAX, CT_RING_KIB_DEFAULT,
          CTP_RING_BYTES_MAX / 1024u);
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

/* Matches "--name", "-name" (when single_ok), "--name=value". *val is set to
 * the inline value or NULL. */
static int is_opt(const char *arg, const char *name, int single_ok, const char **val) {
  *val = NULL;
  const char *p;
  if (arg[0] == '-' && arg[1] == '-')
    p = arg + 2;
  else if (single_ok && arg[0] == '-')
    p = arg + 1;
  else
    return 0;
  size_t n = strlen(name);
  if (strncmp(p, name, n) != 0)
    return 0;
  if (p[n] == '\0')
    return 1;
  if (p[n] == '=' && arg[1] == '-') {
    *val = p + n + 1;
    return 1;
  }
  return 0;
}

int ct_opts_parse(struct ct_opts *o, int argc, char **argv, char *why, size_t whylen) {
  memset(o, 0, sizeof(*o));
  o->out = "trace.jsonl";
  o->stations = CT_STATIONS_DEFAULT;
  o->poll_ms = CT_POLL_MS_DEFAULT;
  o->lossless_ms = CT_LOSSLESS_MS_DEFAULT;
  o->rings = CT_RINGS_DEFAULT;
  o->ring_kib = CT_RING_KIB_DEFAULT;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    const char *val;
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (a[0] != '-' || a[1] == '\0')
      break; /* the program starts here */
    if (strcmp(a, "-h") == 0 || is_opt(a, "help", 0, &val)) {
      return 1;
    }
    int *flag = is_opt(a, "append", 0, &val)        ? &o->append
                : is_opt(a, "quiet", 0, &val)       ? &o->quiet
                : is_opt(a, "status", 0, &val)      ? &o->status
                : is_opt(a, "no-realtime", 0, &val) ? &o->no_rt
                : is_opt(a, "lossless", 0, &val)    ? &o->lossless
                                                    : NULL;
    if (flag) {
      if (val)
        return bad(why, whylen, a, "takes no value");
      *flag = 1;
      continue;
    }
    /* Options with a value: which one, and where its value is. */
    static const struct {
      const char *name, *shortname;
      int single_ok;
    } vopts[] = {{"out", "-o", 1},     {"stations", "-n", 0},    {"poll-ms", NULL, 0},
                 {"shm", NULL, 1},     {"sock", NULL, 1},        {"cmd", NULL, 1},
                 {"serve", NULL, 0},   {"lossless-ms", NULL, 0}, {"rings", NULL, 0},
                 {"ring-kib", NULL, 0}};
    int which = -1;
    for (size_t k = 0; k < sizeof(vopts) / sizeof(vopts[0]) && which < 0; k++) {
      if (vopts[k].shortname && strcmp(a, vopts[k].shortname) == 0) {
        which = (int)k;
        val = NULL;
      } else if (is_opt(a, vopts[k].name, vopts[k].single_ok, &val)) {
        which = (int)k;
      }
    }
    if (which < 0) {
      return bad(why, whylen, a, "unknown option (see corotracer run --help)");
    }
    if (!val) {
      if (i + 1 >= argc)
        return bad(why, whylen, a, "needs a value");
      val = argv[++i];
    }
    unsigned long v;
    switch (which) {
    case 0:
      if (!val[0])
        return bad(why, whylen, a, "needs a file name");
      o->out = val;
      break;
    case 1:
      if (parse_uint(why, whylen, a, val, 1, CTP_STATIONS_MAX, &v))
        return -EINVAL;
      o->stations = (uint32_t)v;
      break;
    case 2:
      if (parse_uint(why, whylen, a, val, 1, 3600000, &v))
        return -EINVAL;
      o->poll_ms = (int)v;
      break;
    case 3:
      if (!val[0])
        return bad(why, whylen, a, "needs a path");
      o->shm_path = val;
      break;
    case 4:
      if (!val[0])
        return bad(why, whylen, a, "needs a path");
      o->sock_path = val;
      break;
    case 6: {
      char ip[64];
      int port;
      if (ct_live_parse_addr(val, ip, sizeof ip, &port))
        return bad(why, whylen, a, "expects [ADDR:]PORT with an IPv4 ADDR");
      o->serve = val;
      break;
    }
    case 5:
      if (!val[0])
        return bad(why, whylen, a, "needs a command");
      o->cmd = val;
      break;
    case 7:
      if (parse_uint(why, whylen, a, val, 1, 600000, &v))
        return -EINVAL;
      o->lossless_ms = (int)v;
      break;
    case 8:
      if (parse_uint(why, whylen, a, val, 0, CTP_RINGS_MAX, &v))
        return -EINVAL;
      o->rings = (uint32_t)v;
      break;
    default:
      if (parse_uint(why, whylen, a, val, CTP_RING_BYTES_MIN / 1024u, CTP_RING_BYTES_MAX / 1024u,
                     &v))
        return -EINVAL;
      if (v & (v - 1))
        return bad(why, whylen, a, "must be a power of two (4, 8, 16, ... KiB)");
      o->ring_kib = (uint32_t)v;
      break;
    }
  }
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
  return 0;
}
