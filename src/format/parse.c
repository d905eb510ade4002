/* parse.c - the JSONL line parser (parse.h): a validating scanner for flat JSON
 * objects and a fast path for the lines the engines write most
 * (the streamers that feed it lines: trace_read.c). */
#include "format/parse.h"
#include "format/trace_keys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32

/* Value types of the keys we know. */
enum vt { V_SKIP, V_U64, V_I64, V_HEX, V_BOOL, V_STR, V_NESTED, V_OBJ, V_KIND, V_WAIT, V_TYPE };

struct key {
  int id; /* CT_K_*, or -1 for a key we validate but ignore */
  enum vt vt;
  uint16_t off; /* V_U64, V_HEX, V_STR: offset of the field it fills in ct_line */
};

/* A key's field and type, by value (inlined). */
_Static_assert(sizeof(struct ct_line) <= UINT16_MAX, "key.off holds any ct_line offset");
static struct key mk(int id, enum vt vt, size_t off) {
  return (struct key){id, vt, (uint16_t)off};
}
/* In key_of: when the key is s (a literal, so the compare is inlined), return
 * field id of type t; KEY_IN also names the ct_line member the value goes to. */
#define KEY(s, id, t)                                                                              \
  if (n == sizeof(s) - 1 && memcmp(k, s, sizeof(s) - 1) == 0)                                      \
  return mk(id, t, 0)
#define KEY_IN(s, id, t, member)                                                                   \
  if (n == sizeof(s) - 1 && memcmp(k, s, sizeof(s) - 1) == 0)                                      \
  return mk(id, t, offsetof(struct ct_line, member))

/* Which field a key fills, dispatched on length first (this runs for every key
 * of every line). Unknown keys are skipped, as the format requires. */
static struct key key_of(const char *k, size_t n) {
  switch (n) {
  case 2:
    KEY_IN(CT_KEY_TS, CT_K_TS, V_U64, ts);
    KEY_IN(CT_KEY_EV, CT_K_EV, V_U64, ev);
    break;
  case 3:
    KEY_IN(CT_KEY_TID, CT_K_TID, V_U64, tid);
    KEY_IN(CT_KEY_SEQ, CT_K_SEQ, V_U64, seq);
    KEY(CT_KEY_OBJ, CT_K_OBJ, V_OBJ);
    KEY_IN(CT_KEY_PID, CT_K_PID, V_U64, pid);
    KEY_IN(CT_KEY_END, CT_K_END, V_HEX, end);
    break;
  case 4:
    KEY_IN(CT_KEY_ADDR, CT_K_ADDR, V_HEX, addr);
    KEY(CT_KEY_KIND, CT_K_KIND, V_KIND);
    KEY_IN(CT_KEY_SITE, CT_K_SITE, V_HEX, site);
    KEY(CT_KEY_WAIT, CT_K_WAIT, V_WAIT);
    KEY_IN(CT_KEY_FROM, CT_K_FROM, V_U64, from);
    KEY(CT_KEY_TYPE, CT_K_TYPE, V_TYPE);
    KEY_IN(CT_KEY_HOST, CT_K_HOST, V_STR, host);
    KEY_IN(CT_KEY_PATH, CT_K_PATH, V_STR, path);
    KEY(CT_KEY_EXIT, CT_K_EXIT, V_NESTED);
    KEY_IN(CT_KEY_FILE, CT_K_FILE, V_STR, file);
    KEY_IN(CT_KEY_LINE, CT_K_LINE, V_U64, line);
    KEY_IN(CT_KEY_LOST, CT_K_LOST, V_U64, lost);
    KEY_IN(CT_KEY_TORN, CT_K_TORN, V_U64, torn);
    KEY(CT_KEY_CODE, CT_K_CODE, V_I64);
    KEY_IN(CT_KEY_NAME, CT_K_NAME, V_STR, exit_name);
    break;
  case 5:
    KEY_IN(CT_KEY_START, CT_K_START, V_HEX, start);
    KEY_IN(CT_KEY_EVENT, CT_K_EVENT, V_STR, event);
    KEY(CT_KEY_CLOCK, -1, V_NESTED);
    KEY_IN(CT_KEY_LABEL, CT_K_LABEL, V_STR, label);
    KEY_IN(CT_KEY_ERROR, CT_K_ERROR, V_STR, error);
    KEY_IN(CT_KEY_STATE, CT_K_STATE, V_STR, state);
    break;
  case 6:
    KEY_IN(CT_KEY_PARENT, CT_K_PARENT, V_U64, parent);
    KEY_IN(CT_KEY_OFFSET, CT_K_OFFSET, V_HEX, offset);
    KEY_IN(CT_KEY_FORMAT, CT_K_FORMAT, V_STR, format);
    KEY_IN(CT_KEY_RUN_ID, CT_K_RUN_ID, V_STR, run_id);
    KEY_IN(CT_KEY_REASON, CT_K_REASON, V_STR, reason);
    KEY_IN(CT_KEY_EVENTS, CT_K_EVENTS, V_U64, events);
    KEY(CT_KEY_SIGNAL, CT_K_SIGNAL, V_I64);
    break;
  case 7:
    KEY_IN(CT_KEY_STATION, CT_K_STATION, V_U64, station);
    KEY_IN(CT_KEY_WALL_NS, CT_K_WALL_NS, V_U64, wall_ns);
    KEY_IN(CT_KEY_MONO_NS, CT_K_MONO_NS, V_U64, mono_ns);
    KEY(CT_KEY_CORRUPT, CT_K_CORRUPT, V_BOOL);
    KEY_IN(CT_KEY_WOKE_TS, CT_K_WOKE_TS, V_U64, woke_ts);
    KEY_IN(CT_KEY_TRIGGER, CT_K_TRIGGER, V_STR, trigger);
    break;
  case 8:
    KEY_IN(CT_KEY_PROBE_ID, CT_K_PROBE_ID, V_U64, probe_id);
    KEY_IN(CT_KEY_FUNCTION, CT_K_FUNCTION, V_STR, function);
    KEY_IN(CT_KEY_BIRTH_TS, CT_K_BIRTH_TS, V_U64, birth_ts);
    KEY_IN(CT_KEY_BUILD_ID, CT_K_BUILD_ID, V_STR, build_id);
    KEY_IN(CT_KEY_START_TS, CT_K_START_TS, V_U64, start_ts);
    break;
  case 9:
    KEY(CT_KEY_IS_ACTIVE, CT_K_IS_ACTIVE, V_BOOL);
    KEY_IN(CT_KEY_HARVESTED, CT_K_HARVESTED, V_U64, harvested);
    break;
  case 10:
    KEY_IN(CT_KEY_TARGET_PID, CT_K_TARGET_PID, V_U64, target_pid);
    KEY_IN(CT_KEY_DROPPED_TS, CT_K_DROPPED_TS, V_U64, dropped_ts);
    break;
  case 11:
    KEY_IN(CT_KEY_CREATE_SITE, CT_K_CREATE_SITE, V_HEX, create_site);
    break;
  case 12:
    KEY_IN(CT_KEY_DROPPED_LOST, CT_K_DROPPED_LOST, V_U64, dropped_lost);
    break;
  case 19:
    KEY_IN(CT_KEY_UNTRACED_COROUTINES, CT_K_UNTRACED, V_U64, untraced);
    break;
  }
  return mk(-1, V_SKIP, 0);
}

static const char *skip_ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\r'))
    p++;
  return p;
}

static int is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A string at *pp ('"' included); NULL on a syntax error. */
static const char *scan_string(const char *p, const char *e, struct ct_str *out) {
  if (p >= e || *p != '"')
    return NULL;
  const char *s = ++p;
  int esc = 0;
  for (; p < e; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '"') {
      *out = (struct ct_str){s, (size_t)(p - s), esc};
      return p + 1;
    }
    if (c < 0x20)
      return NULL;
    if (c == '\\') {
      esc = 1;
      if (++p >= e)
        return NULL;
      if (*p == 'u') {
        if (e - p < 5 || !is_hex(p[1]) || !is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]))
          return NULL;
        p += 4;
      } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
        return NULL;
      }
    }
  }
  return NULL;
}

/* A JSON number; *kind: 0 = non-negative integer (in *v, -1 if it overflowed
 * u64), 1 = negative integer (in *neg), 2 = fraction or exponent. */
static const char *scan_number(const char *p, const char *e, uint64_t *v, int64_t *neg, int *kind) {
  int minus = p < e && *p == '-';
  if (minus)
    p++;
  if (p >= e || *p < '0' || *p > '9')
    return NULL;
  uint64_t x = 0;
  int over = 0;
  for (; p < e && *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (x > (UINT64_MAX - d) / 10)
      over = 1;
    x = x * 10 + d;
  }
  *kind = minus ? 1 : 0;
  if (p < e && *p == '.') {
    *kind = 2;
    if (++p >= e || *p < '0' || *p > '9')
      return NULL;
    while (p < e && *p >= '0' && *p <= '9')
      p++;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    *kind = 2;
    if (++p < e && (*p == '+' || *p == '-'))
      p++;
    if (p >= e || *p < '0' || *p > '9')
      return NULL;
    while (p < e && *p >= '0' && *p <= '9')
      p++;
  }
  if (over)
    *kind = *kind == 0 ? 3 : 2; /* 3: integer too large for u64 */
  *v = x;
  *neg = minus && x <= (uint64_t)INT64_MAX ? -(int64_t)x : 0;
  return p;
}

static const char *scan_lit(const char *p, const char *e, const char *lit) {
  size_t n = strlen(lit);
  if ((size_t)(e - p) < n || memcmp(p, lit, n) != 0)
    return NULL;
  return p + n;
}

/* Any JSON value, validated and skipped. */
static const char *skip_value(const char *p, const char *e, int depth) {
  if (p >= e || depth > MAX_DEPTH)
    return NULL;
  struct ct_str s;
  uint64_t v;
  int64_t neg;
  int kind;
  switch (*p) {
  case '"':
    return scan_string(p, e, &s);
  case 't':
    return scan_lit(p, e, "true");
  case 'f':
    return scan_lit(p, e, "false");
  case 'n':
    return scan_lit(p, e, "null");
  case '{':
  case '[': {
    char close = *p == '{' ? '}' : ']';
    int obj = *p == '{';
    p = skip_ws(p + 1, e);
    if (p < e && *p == close)
      return p + 1;
    for (;;) {
      if (obj) {
        if (!(p = scan_string(p, e, &s)))
          return NULL;
        p = skip_ws(p, e);
        if (p >= e || *p != ':')
          return NULL;
        p = skip_ws(p + 1, e);
      }
      if (!(p = skip_value(p, e, depth + 1)))
        return NULL;
      p = skip_ws(p, e);
      if (p < e && *p == ',') {
        p = skip_ws(p + 1, e);
        continue;
      }
      if (p < e && *p == close)
        return p + 1;
      return NULL;
    }
  }
  default:
    return scan_number(p, e, &v, &neg, &kind);
  }
}

int ct_line_is_trace(enum ct_line_err err, const struct ct_line *l) {
  static const uint32_t traced = 1u << CT_LINE_EVENT | 1u << CT_LINE_META | 1u << CT_LINE_MODULE |
                                 1u << CT_LINE_STATION_END | 1u << CT_LINE_END;
  return err == CT_LINE_OK && (traced >> l->type & 1);
}

int ct_line_valid(const char *line, size_t len) {
  /* skip_value's grammar keeps a newline out (skip_ws takes none, a string
   * no control byte); UTF-8 is checked apart, as JSON itself does not. */
  for (size_t i = 0, k; i < len; i += k)
    if (!(k = ct_utf8_len(line + i, len - i)))
      return 0;
  const char *e = line + len, *p = skip_ws(line, e);
  if (p >= e || *p != '{' || !(p = skip_value(p, e, 0)))
    return 0;
  return skip_ws(p, e) == e;
}

/* "0x" + 1..16 hex digits, as a string. */
static int parse_hex(const struct ct_str *s, uint64_t *out) {
  if (s->esc || s->n < 3 || s->n > 18 || s->p[0] != '0' || (s->p[1] != 'x' && s->p[1] != 'X'))
    return -1;
  uint64_t x = 0;
  for (size_t i = 2; i < s->n; i++) {
    char c = s->p[i];
    unsigned d;
    if (c >= '0' && c <= '9')
      d = (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = (unsigned)(c - 'A' + 10);
    else
      return -1;
    x = x << 4 | d;
  }
  *out = x;
  return 0;
}

/* Index of s in the NULL-terminated names, or -1. */
static int name_in(struct ct_str s, const char *const *names) {
  for (int i = 0; names[i]; i++)
    if (strlen(names[i]) == s.n && memcmp(s.p, names[i], s.n) == 0)
      return i;
  return -1;
}

/* One value of a known key into l; *shape set when JSON-valid but mistyped. */
static const char *parse_value(const char *p, const char *e, struct key k, struct ct_line *l,
                               int depth, int *shape);

/* An object's members (p at '{'). Nested objects fill the same line. */
static const char *parse_object(const char *p, const char *e, struct ct_line *l, int depth,
                                int *shape) {
  if (p >= e || *p != '{' || depth > MAX_DEPTH)
    return NULL;
  p = skip_ws(p + 1, e);
  if (p < e && *p == '}')
    return p + 1;
  for (;;) {
    struct ct_str name;
    if (!(p = scan_string(p, e, &name)))
      return NULL;
    p = skip_ws(p, e);
    if (p >= e || *p != ':')
      return NULL;
    p = skip_ws(p + 1, e);
    struct key k = name.esc ? mk(-1, V_SKIP, 0) : key_of(name.p, name.n);
    if (!(p = parse_value(p, e, k, l, depth, shape)))
      return NULL;
    p = skip_ws(p, e);
    if (p < e && *p == ',') {
      p = skip_ws(p + 1, e);
      continue;
    }
    if (p < e && *p == '}')
      return p + 1;
    return NULL;
  }
}

static const char *parse_value(const char *p, const char *e, struct key k, struct ct_line *l,
                               int depth, int *shape) {
  struct ct_str s;
  uint64_t v;
  int64_t neg;
  int nk;
  const char *q;
  switch (k.vt) {
  case V_SKIP:
    return skip_value(p, e, depth + 1);
  case V_NESTED:
    if (p < e && *p == '{')
      q = parse_object(p, e, l, depth + 1, shape);
    else if ((q = skip_value(p, e, depth + 1)))
      *shape = 1;
    if (q && k.id >= 0)
      l->have |= 1ull << k.id;
    return q;
  case V_U64:
  case V_I64:
    if (p >= e || (*p != '-' && (*p < '0' || *p > '9')))
      break;
    if (!(q = scan_number(p, e, &v, &neg, &nk)))
      return NULL;
    if (k.vt == V_U64 && nk == 0)
      *(uint64_t *)((char *)l + k.off) = v;
    else if (k.vt == V_I64 && nk <= 1 && (nk == 1 || v <= INT64_MAX))
      *(k.id == CT_K_CODE ? &l->exit_code : &l->exit_signal) = nk == 1 ? neg : (int64_t)v;
    else
      *shape = 1;
    l->have |= 1ull << k.id;
    return q;
  case V_BOOL:
    if ((q = scan_lit(p, e, "true")))
      *(k.id == CT_K_CORRUPT ? &l->corrupt : &l->is_active) = 1;
    else if ((q = scan_lit(p, e, "false")))
      *(k.id == CT_K_CORRUPT ? &l->corrupt : &l->is_active) = 0;
    else
      break;
    l->have |= 1ull << k.id;
    return q;
  case V_OBJ:
    if (p < e && (*p == '-' || (*p >= '0' && *p <= '9'))) {
      /* An fd; the engine prints it signed, so -1 is possible. */
      if (!(q = scan_number(p, e, &v, &neg, &nk)))
        return NULL;
      if (nk > 1)
        *shape = 1;
      l->obj = nk == 1 ? (uint64_t)neg : v;
      l->obj_is_str = 0;
      l->have |= 1ull << k.id;
      return q;
    }
    /* fall through: a "0x..." string */
  case V_HEX:
  case V_STR:
  case V_KIND:
  case V_WAIT:
  case V_TYPE:
    if (p >= e || *p != '"')
      break;
    if (!(q = scan_string(p, e, &s)))
      return NULL;
    l->have |= 1ull << k.id;
    if (k.vt == V_STR) {
      *(struct ct_str *)((char *)l + k.off) = s;
    } else if (k.vt == V_HEX || k.vt == V_OBJ) {
      if (parse_hex(&s, k.vt == V_OBJ ? &l->obj : (uint64_t *)((char *)l + k.off)))
        *shape = 1;
      if (k.vt == V_OBJ)
        l->obj_is_str = 1;
    } else if (k.vt == V_KIND) {
      static const char *const names[] = {"create", "suspend", "resume", "wake", "destroy", NULL};
      static const enum ct_ev_kind kinds[] = {CT_EV_CREATE, CT_EV_SUSPEND, CT_EV_RESUME, CT_EV_WAKE,
                                              CT_EV_DESTROY};
      int i = name_in(s, names);
      if (i < 0)
        *shape = 1;
      else
        l->kind = kinds[i];
    } else if (k.vt == V_WAIT) {
      static const char *const names[] = {"fd", "ptr", "exit", "coroutine", NULL};
      static const enum ctp_wait waits[] = {CTP_WAIT_FD, CTP_WAIT_PTR, CTP_WAIT_EXIT,
                                            CTP_WAIT_COROUTINE};
      int i = name_in(s, names);
      if (i < 0)
        *shape = 1;
      else
        l->wait = waits[i];
    } else {
      static const char *const names[] = {"meta",        "process", "module", "coroutine",
                                          "station_end", "end",     "cut",    "site",
                                          "snapshot",    "window",  NULL};
      static const enum ct_line_type types[] = {
          CT_LINE_META, CT_LINE_PROCESS, CT_LINE_MODULE, CT_LINE_COROUTINE, CT_LINE_STATION_END,
          CT_LINE_END,  CT_LINE_CUT,     CT_LINE_SITE,   CT_LINE_SNAPSHOT,  CT_LINE_WINDOW};
      int i = name_in(s, names);
      l->type = i < 0 ? CT_LINE_OTHER : types[i];
    }
    return q;
  }
  /* A valid value of the wrong type for this key. */
  *shape = 1;
  return skip_value(p, e, depth + 1);
}

/* A key's have bit; NEED: 1 when line l has every key of bits (K(a) | K(b)...). */
#define K(k) (1ull << (k))
#define NEED(l, bits) (((l)->have & (bits)) == (bits))

/* An event line's checks, after its keys are parsed (type not set). */
static enum ct_line_err check_event(struct ct_line *out) {
  out->type = CT_LINE_EVENT;
  if (!NEED(out, K(CT_K_PROBE_ID) | K(CT_K_TS)) ||
      !(CT_HAS(out, CT_K_IS_ACTIVE) || CT_HAS(out, CT_K_KIND)))
    return CT_LINE_SHAPE;
  /* A slot copied while it was being rewritten: zeros and stray bits. Thread
   * ids are 32-bit on Linux; a ts at or above 2^62 ns (146 years) is noise. */
  if (out->probe_id == 0 || out->ts == 0 || out->ts >= (1ull << 62) ||
      (CT_HAS(out, CT_K_TID) && (out->tid == 0 || out->tid > UINT32_MAX)))
    return CT_LINE_TORN;
  ct_line_event(out);
  return CT_LINE_OK;
}

/* A snapshot line's checks (docs/TRACE_FORMAT.md "Flight windows"): a
 * coroutine, its state, since when (ts) and its last event index; a wait
 * object only with a wait. */
static enum ct_line_err check_snapshot(const struct ct_line *out) {
  if (!NEED(out, K(CT_K_PROBE_ID) | K(CT_K_STATE) | K(CT_K_TS) | K(CT_K_EV)) ||
      out->probe_id == 0 || out->ts == 0 || out->ts >= (1ull << 62) ||
      (CT_HAS(out, CT_K_OBJ) && !out->wait))
    return CT_LINE_SHAPE;
  return CT_LINE_OK;
}

enum ct_line_err ct_parse_line_general(const char *line, size_t len, struct ct_line *out) {
  const char *e = line + len;
  memset(out, 0, offsetof(struct ct_line, exit_code));
  int shape = 0;
  const char *p = skip_ws(line, e);
  p = parse_object(p, e, out, 0, &shape);
  if (!p || skip_ws(p, e) != e)
    return CT_LINE_SYNTAX;
  if (shape)
    return CT_LINE_SHAPE;
  if (CT_HAS(out, CT_K_TYPE)) {
    switch (out->type) {
    case CT_LINE_MODULE:
      return NEED(out, K(CT_K_START) | K(CT_K_END) | K(CT_K_OFFSET) | K(CT_K_PATH)) ? CT_LINE_OK
                                                                                    : CT_LINE_SHAPE;
    case CT_LINE_COROUTINE:
    case CT_LINE_STATION_END:
      return NEED(out, K(CT_K_PROBE_ID)) ? CT_LINE_OK : CT_LINE_SHAPE;
    case CT_LINE_SITE:
      return NEED(out, K(CT_K_PID) | K(CT_K_SITE) | K(CT_K_FILE) | K(CT_K_LINE) | K(CT_K_FUNCTION))
                 ? CT_LINE_OK
                 : CT_LINE_SHAPE;
    case CT_LINE_SNAPSHOT:
      return check_snapshot(out);
    default:
      return CT_LINE_OK;
    }
  }
  return check_event(out);
}

/* The fast path: event lines as the engines write them (most of a trace),
 * and our engine's coroutine lines (one per coroutine). */

/* Hex digit values + 1; 0 for any other byte. */
static const uint8_t hex1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16};

/* SWAR: 8 bytes of the line as one word, the first byte lowest. */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
static uint64_t load8(const char *p) {
  uint64_t x;
  memcpy(&x, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  x = __builtin_bswap64(x);
#endif
  return x;
}

/* Bytes of x (all below 0x80) in [lo, hi]: their high bit set. */
static uint64_t in_range8(uint64_t x, unsigned lo, unsigned hi) {
  return (x + ONES * (0x80 - lo)) & ~(x + ONES * (0x7f - hi)) & HIGHS;
}

/* The 8 hex digits at p, first most significant, into *out; 0 if any is not one. */
static int hex8(const char *p, uint64_t *out) {
  uint64_t x = load8(p);
  if (x & HIGHS)
    return 0;
  uint64_t alpha = in_range8(x | ONES * 0x20, 'a', 'f');
  if ((in_range8(x, '0', '9') | alpha) != HIGHS)
    return 0;
  uint64_t v = (x & ONES * 0x0f) + (alpha >> 7) * 9; /* a nibble a byte */
  v = ((v & 0x00FF00FF00FF00FFull) << 4) | ((v & 0xFF00FF00FF00FF00ull) >> 8);
  v = ((v & 0x0000FFFF0000FFFFull) << 8) | ((v & 0xFFFF0000FFFF0000ull) >> 16);
  *out = ((v & 0xFFFFFFFFull) << 16) | (v >> 32);
  return 1;
}

/* How many of the 8 bytes at p are decimal digits before the first that is
 * not (0..8). */
static unsigned digits8(const char *p) {
  uint64_t d = load8(p) - ONES * '0';
  /* A byte below '0' borrows from the bytes after it only: the first
   * non-digit is found exactly, what follows it is not used. */
  uint64_t nd = (d | (d + ONES * (0x80 - 10))) & HIGHS;
  return nd ? (unsigned)__builtin_ctzll(nd) / 8 : 8;
}

/* The value of the 8 decimal digits at p. */
static uint64_t dec8(const char *p) {
  uint64_t d = load8(p) - ONES * '0';
  d = (d * 2561) >> 8;
  d = ((d & 0x00FF00FF00FF00FFull) * 6553601) >> 16;
  return ((d & 0x0000FFFF0000FFFFull) * 42949672960001ull) >> 32;
}

/* 1..19 decimal digits (so no overflow); NULL for anything else. The caller
 * checks what follows (a fraction or an exponent is not a ',' or '}'). */
static const char *fast_u64(const char *p, const char *e, uint64_t *out) {
  const char *s = p;
  uint64_t x = 0;
  /* Eight at a time while there are (a ts has 13), the rest one by one. */
  while (e - p >= 8 && digits8(p) == 8) {
    x = x * 100000000 + dec8(p); /* wraps when too long: refused below */
    p += 8;
  }
  while (p < e && (unsigned)(*p - '0') < 10u)
    x = x * 10 + (unsigned)(*p++ - '0');
  if (p == s || p - s > 19)
    return NULL;
  *out = x;
  return p;
}

/* "0x" + 1..16 hex digits, quoted, as parse_hex takes it; NULL otherwise. */
static const char *fast_hex(const char *p, const char *e, uint64_t *out) {
  if (e - p < 5 || p[0] != '"' || p[1] != '0' || p[2] != 'x')
    return NULL;
  uint64_t hi, lo;
  if (e - p >= 20 && p[19] == '"' && hex8(p + 3, &hi) && hex8(p + 11, &lo)) {
    *out = hi << 32 | lo; /* the engines' 16 digits */
    return p + 20;
  }
  const char *s = p += 3;
  uint64_t x = 0;
  unsigned d;
  while (p < e && (d = hex1[(unsigned char)*p])) {
    x = x << 4 | (d - 1);
    p++;
  }
  if (p == s || p - s > 16 || p >= e || *p != '"')
    return NULL;
  *out = x;
  return p + 1;
}

/* At *pp: the quoted key lit ("name":, n bytes) of field id, not yet seen in
 * the line, and at least one byte after it: skipped and marked seen, so the
 * caller may look at the value's first byte. Inlined, so the compare is of
 * constants. */
static inline int fast_key(const char **pp, const char *e, const char *lit, size_t n,
                           struct ct_line *l, int id) {
  if ((size_t)(e - *pp) <= n || memcmp(*pp, lit, n) != 0 || CT_HAS(l, id))
    return 0;
  *pp += n;
  l->have |= 1ull << id;
  return 1;
}
#define FAST_KEY(lit, id) fast_key(&p, e, lit, sizeof(lit) - 1, l, id)

/* At *pp: the literal value lit (n bytes), skipped. */
static inline int fast_lit(const char **pp, const char *e, const char *lit, size_t n) {
  if ((size_t)(e - *pp) < n || memcmp(*pp, lit, n) != 0)
    return 0;
  *pp += n;
  return 1;
}
#define FAST_LIT(lit) fast_lit(&p, e, lit, sizeof(lit) - 1)

/* At *pp: key lit of field id and its number, parsed by parse (fast_u64 or
 * fast_hex, inlined as a constant) into *dst; *pp is NULL when the number is
 * malformed. 0 when the key is not there. */
static inline int fast_num(const char **pp, const char *e, const char *lit, size_t n,
                           struct ct_line *l, int id,
                           const char *(*parse)(const char *, const char *, uint64_t *),
                           uint64_t *dst) {
  if (!fast_key(pp, e, lit, n, l, id))
    return 0;
  *pp = parse(*pp, e, dst);
  return 1;
}
#define FAST_NUM(K, parse, field)                                                                  \
  fast_num(&p, e, CT_KQ(K), sizeof(CT_KQ(K)) - 1, l, CT_K_##K, parse, &l->field)

/* Parses an event line or a coroutine record written without whitespace, of
 * their keys only, each once, with values in the forms the engines write
 * (unsigned numbers of up to 19 digits, "0x" hex, the known kind and wait
 * names, a label without escapes): fills *l exactly as parse_object would (l
 * zeroed by the caller) and returns 1. Returns 0 for anything else; the
 * general scanner then parses the line from its start. */
static int parse_fast(const char *p, const char *e, struct ct_line *l) {
  if (p >= e || *p++ != '{')
    return 0;
  for (;;) {
    if (e - p < 4 || *p != '"')
      return 0;
    switch (p[1]) {
    case 'p':
      if (!FAST_NUM(PROBE_ID, fast_u64, probe_id) && !FAST_NUM(PARENT, fast_u64, parent) &&
          !FAST_NUM(PID, fast_u64, pid))
        return 0;
      break;
    case 't':
      if (FAST_NUM(TS, fast_u64, ts) || FAST_NUM(TID, fast_u64, tid))
        break;
      if (!FAST_KEY(CT_KQ(TYPE), CT_K_TYPE) || !FAST_LIT("\"coroutine\""))
        return 0;
      l->type = CT_LINE_COROUTINE;
      break;
    case 'b':
      if (!FAST_NUM(BIRTH_TS, fast_u64, birth_ts))
        return 0;
      break;
    case 'c':
      if (!FAST_NUM(CREATE_SITE, fast_hex, create_site))
        return 0;
      break;
    case 'l': { /* a label without escapes */
      if (!FAST_KEY(CT_KQ(LABEL), CT_K_LABEL) || *p != '"')
        return 0;
      const char *q = ++p;
      while (q < e && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
        q++;
      if (q >= e || *q != '"')
        return 0;
      l->label = (struct ct_str){p, (size_t)(q - p), 0};
      p = q + 1;
      break;
    }
    case 'a':
      if (!FAST_NUM(ADDR, fast_hex, addr))
        return 0;
      break;
    case 's':
      if (!FAST_NUM(SEQ, fast_u64, seq) && !FAST_NUM(SITE, fast_hex, site) &&
          !FAST_NUM(STATION, fast_u64, station))
        return 0;
      break;
    case 'i':
      if (!FAST_KEY(CT_KQ(IS_ACTIVE), CT_K_IS_ACTIVE))
        return 0;
      if (FAST_LIT("true"))
        l->is_active = 1;
      else if (!FAST_LIT("false"))
        return 0;
      break;
    case 'k':
      if (!FAST_KEY(CT_KQ(KIND), CT_K_KIND))
        return 0;
      if (FAST_LIT("\"suspend\""))
        l->kind = CT_EV_SUSPEND;
      else if (FAST_LIT("\"resume\""))
        l->kind = CT_EV_RESUME;
      else if (FAST_LIT("\"wake\""))
        l->kind = CT_EV_WAKE;
      else if (FAST_LIT("\"create\""))
        l->kind = CT_EV_CREATE;
      else if (FAST_LIT("\"destroy\""))
        l->kind = CT_EV_DESTROY;
      else
        return 0;
      break;
    case 'e':
      if (!FAST_NUM(EV, fast_u64, ev))
        return 0;
      break;
    case 'w':
      if (!FAST_KEY(CT_KQ(WAIT), CT_K_WAIT))
        return 0;
      if (FAST_LIT("\"fd\""))
        l->wait = CTP_WAIT_FD;
      else if (FAST_LIT("\"ptr\""))
        l->wait = CTP_WAIT_PTR;
      else if (FAST_LIT("\"exit\""))
        l->wait = CTP_WAIT_EXIT;
      else if (FAST_LIT("\"coroutine\""))
        l->wait = CTP_WAIT_COROUTINE;
      else
        return 0;
      break;
    case 'o':
      if (!FAST_KEY(CT_KQ(OBJ), CT_K_OBJ))
        return 0;
      if (*p == '"') {
        p = fast_hex(p, e, &l->obj);
        l->obj_is_str = 1;
      } else if (*p == '-') { /* an fd, signed: -1 is possible */
        uint64_t v;
        if (!(p = fast_u64(p + 1, e, &v)) || v > INT64_MAX)
          return 0;
        l->obj = (uint64_t) - (int64_t)v;
      } else {
        p = fast_u64(p, e, &l->obj);
      }
      break;
    case 'f':
      if (!FAST_NUM(FROM, fast_u64, from))
        return 0;
      break;
    default:
      return 0;
    }
    if (!p || p >= e)
      return 0;
    if (*p == '}')
      return p + 1 == e;
    if (*p++ != ',')
      return 0;
  }
}

enum ct_line_err ct_parse_line(const char *line, size_t len, struct ct_line *out) {
  memset(out, 0, offsetof(struct ct_line, exit_code));
  if (parse_fast(line, line + len, out)) {
    if (!CT_HAS(out, CT_K_TYPE))
      return check_event(out);
    return CT_HAS(out, CT_K_PROBE_ID) ? CT_LINE_OK : CT_LINE_SHAPE; /* a coroutine line */
  }
  return ct_parse_line_general(line, len, out);
}
