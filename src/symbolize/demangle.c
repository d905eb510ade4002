/* demangle.c - a demangler for the common Itanium C++ forms (nested names,
 * anonymous namespaces, constructors, destructors, template arguments shown
 * as <...>, no parameter list), because __cxa_demangle would pull libstdc++
 * into a C binary; anything else (operators, lambdas, substitutions in the
 * name) stays mangled. Used by symbolize.c only. */
#include "symbolize/demangle.h"

#include <stdlib.h>
#include <string.h>

struct dm {
  const char *p, *e; /* the mangled name still to read */
  char *o;           /* output, NUL-terminated */
  size_t n, len;
  int ok;
};

static void put(struct dm *d, const char *str, size_t k) {
  if (d->len + k + 1 > d->n) {
    d->ok = 0;
    return;
  }
  memcpy(d->o + d->len, str, k);
  d->len += k;
  d->o[d->len] = 0;
}

/* <length><identifier>: *id, *k; 0 if malformed. */
static int source_name(struct dm *d, const char **id, size_t *k) {
  size_t v = 0;
  if (d->p >= d->e || *d->p < '1' || *d->p > '9')
    return 0;
  for (; d->p < d->e && *d->p >= '0' && *d->p <= '9'; d->p++)
    if ((v = v * 10 + (size_t)(*d->p - '0')) > 4096)
      return 0;
  if ((size_t)(d->e - d->p) < v)
    return 0;
  *id = d->p;
  *k = v;
  d->p += v;
  return 1;
}

static void put_id(struct dm *d, const char *id, size_t k) {
  if (k >= 10 && memcmp(id, "_GLOBAL__N", 10) == 0)
    put(d, "(anonymous namespace)", 21);
  else
    put(d, id, k);
}

/* Skips template arguments from their 'I' through the matching 'E' (only the
 * end matters: they are shown as <...>). 0 on a form it does not know. */
static int skip_template_args(struct dm *d) {
  int depth = 0;
  do {
    if (d->p >= d->e)
      return 0;
    char c = *d->p;
    const char *id;
    size_t k;
    if (c >= '1' && c <= '9') {
      if (!source_name(d, &id, &k))
        return 0;
      continue;
    }
    if (strchr("INJXF", c)) {
      depth++;
    } else if (c == 'E') {
      depth--;
    } else if (c == 'L' || c == 'S' || c == 'T' || c == 'A') {
      /* literal L..E; substitution S_ / S<seq>_ (St Sa Ss...: two letters);
       * template parameter T_ / T<n>_; array A<n>_ */
      if (c == 'L' && d->p + 1 < d->e && d->p[1] == 'Z')
        return 0;
      if (c == 'S' && d->p + 1 < d->e && d->p[1] && strchr("tabsiod", d->p[1])) {
        d->p += 2;
        continue;
      }
      const char *end = memchr(d->p, c == 'L' ? 'E' : '_', (size_t)(d->e - d->p));
      if (!end)
        return 0;
      d->p = end;
    } else if (c == 'D') {
      d->p++; /* Dp, Dn, Da...: two letters */
    } else if (!((c >= 'a' && c <= 'z') || strchr("PRKVOMCG", c))) {
      return 0; /* builtin types, qualifiers, pointers: one letter */
    }
    d->p++;
  } while (depth > 0);
  return 1;
}

/* demangle.h: the name part, a clone suffix kept. */
int ct_demangle(const char *m, char *out, size_t n) {
  struct dm d = {m + 2, m + strlen(m), out, n, 0, 1};
  const char *id = NULL, *dot = strrchr(m, '.');
  size_t k = 0;
  out[0] = 0;
  if (strncmp(m, "_Z", 2) != 0)
    return 0;
  if (d.p < d.e && *d.p == 'L')
    d.p++; /* internal linkage */
  if (d.p < d.e && *d.p == 'N') {
    d.p++;
    while (d.p < d.e && strchr("rVKRO", *d.p))
      d.p++; /* qualifiers of a member function */
    for (int first = 1; d.ok && d.p < d.e && *d.p != 'E'; first = 0) {
      char c = *d.p;
      if (!first && c != 'I')
        put(&d, "::", 2);
      if (c == 'S' && d.p + 1 < d.e && d.p[1] == 't' && first) {
        put(&d, "std", 3);
        d.p += 2;
      } else if (c >= '1' && c <= '9') {
        if (!source_name(&d, &id, &k))
          return 0;
        put_id(&d, id, k);
      } else if ((c == 'C' || c == 'D') && id && d.p + 1 < d.e && strchr("012345", d.p[1])) {
        if (c == 'D')
          put(&d, "~", 1); /* constructor or destructor: the class's name */
        put_id(&d, id, k);
        d.p += 2;
      } else if (c == 'I' && !first) {
        if (!skip_template_args(&d))
          return 0;
        put(&d, "<...>", 5);
      } else {
        return 0; /* operators, lambdas, substitutions... */
      }
    }
    if (d.p >= d.e)
      return 0;
  } else {
    if (d.p + 1 < d.e && d.p[0] == 'S' && d.p[1] == 't') {
      put(&d, "std::", 5);
      d.p += 2;
    }
    if (!source_name(&d, &id, &k))
      return 0;
    put_id(&d, id, k);
    if (d.p < d.e && *d.p == 'I') {
      if (!skip_template_args(&d))
        return 0;
      put(&d, "<...>", 5);
    }
  }
  /* A clone suffix in letters (".cold", ".actor"; not ".part.0"). */
  if (dot && dot[1] && strspn(dot + 1, "abcdefghijklmnopqrstuvwxyz_") == strlen(dot + 1))
    put(&d, dot, strlen(dot));
  return d.ok;
}
